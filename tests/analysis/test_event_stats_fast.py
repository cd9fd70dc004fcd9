"""The fast path of ops.event_stats (runs with identical event sequences) gives exactly the rows and
samples of the general path."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.ops import per_op as ops
from etscope.profile import load

FIX = Path(__file__).resolve().parents[1] / "fixtures"
FILES = sorted(FIX.glob("real/*.etdump")) + sorted(FIX.glob("qnn_etdump/*.etdump"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fast_path_equals_general_path(path):
    p = load(path)
    table = ops.event_table(p)          # the fast path where it applies
    fast, fast_samples = table.rows, table.samples(table.rows, p.n_runs)
    general = ops.general_event_table(p)
    gen, gen_samples = general.rows, general.samples(general.rows, p.n_runs)

    def strip(rows):
        return [dataclasses.replace(r, group=0) for r in rows]

    assert strip(fast) == strip(gen)
    np.testing.assert_array_equal(fast_samples, gen_samples)


def test_fast_path_is_used_on_static_graphs():
    p = load(FIX / "real" / "gen_llama.etdump")
    assert ops.template_event_table(p) is not None
    assert ops.event_table(p).rows == ops.template_event_table(p).rows


def test_fast_path_reads_the_value_column_in_place_and_leaves_it_as_it_was():
    """The runs' values are one slice of the value column when the runs lie back to back: the
    statistics then read it where it lies, and must not reorder it (fractional values take the
    partition of a copy, integers an int32 copy)."""
    p = load(FIX / "real" / "gen_llama.etdump")
    for shift in (0.0, 0.25):
        values = p.events["value"] + shift
        p.events["value"] = values
        kept = values.copy()
        fast = ops.template_event_table(p)
        assert fast is not None
        np.testing.assert_array_equal(p.events["value"], kept)
        general = ops.general_event_table(p)
        assert [dataclasses.replace(r, group=0) for r in fast.rows] == \
               [dataclasses.replace(r, group=0) for r in general.rows]


@pytest.mark.parametrize("name", ["cnn.etdump", "gen_llama.etdump"])
@pytest.mark.parametrize("pattern", ["leading", "holes"])
def test_fast_path_equals_general_path_over_some_runs(name, pattern):
    """The statistics over the steady runs only (stats.steady_runs, or a view's phases'): the fast
    path reads a slice of the runs (warm-up runs lead) or a copy of some rows (the steady runs of
    several phases pooled), the general path leaves the others' events out: the same rows; the
    samples keep every run; the value column is left as it was."""
    p = load(FIX / "real" / name)
    steady = np.ones(p.n_runs, dtype=bool)
    if pattern == "leading":
        steady[:2] = False
    else:
        steady[::3] = False
    kept = p.events["value"].copy()
    fast = ops.template_event_table(p, steady)
    assert fast is not None
    general = ops.general_event_table(p, steady)
    assert [dataclasses.replace(r, group=0) for r in fast.rows] == \
           [dataclasses.replace(r, group=0) for r in general.rows]
    np.testing.assert_array_equal(p.events["value"], kept)
    every = ops.general_event_table(p, np.ones(p.n_runs, dtype=bool))
    samples = every.samples(every.rows, p.n_runs)
    for row, values in zip(general.rows, samples):
        if row.block == "Execute":      # each row's statistics are its samples' in the kept runs
            v = values[steady][~np.isnan(values[steady])]
            assert row.runs == v.size and row.total == pytest.approx(float(v.sum()), rel=1e-12)
            if v.size:
                assert row.p50 == pytest.approx(float(np.percentile(v, 50)), rel=1e-12)
