"""Explicit memoisation (analysis.memo.per_profile): each memoised analysis runs once per profile,
again when the profile's events are replaced, and keeps no profile alive."""
from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.ops import per_op as ops
from etscope.analysis.ops import placement
from etscope.analysis.memo import per_profile
from etscope.analysis.stats import steady_runs
from etscope.profile import load

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_computed_once_per_profile_and_again_when_events_change():
    calls = []

    @per_profile
    def n_events(profile):
        calls.append(profile)
        return profile.n_events

    a, b = load(REAL / "cnn.etdump"), load(REAL / "cnn.etdump")
    assert n_events(a) == n_events(a) == n_events(b)
    assert len(calls) == 2                                 # once for a, once for b
    a.events = {k: v[:10] for k, v in a.events.items()}    # replaced, as removing accumulated copies does
    assert n_events(a) == 10 and len(calls) == 3


@pytest.mark.parametrize("fast", [True, False])
def test_event_stats_and_samples_share_one_computation(monkeypatch, fast):
    seen = []
    template, general = ops.template_event_table, ops.general_event_table
    monkeypatch.setattr(ops, "template_event_table",
                        lambda p, *a: seen.append("template") or (template(p, *a) if fast else None))
    monkeypatch.setattr(ops, "general_event_table", lambda p, *a: seen.append("general") or general(p, *a))
    p = load(REAL / "gen_llama.etdump")
    rows = ops.event_stats(p, execute_only=True)
    assert ops.event_stats(p) is ops.event_stats(p)
    assert seen == (["template"] if fast else ["template", "general"])
    values = ops.samples(p, rows)
    ops.op_table(p)
    assert len(seen) == (1 if fast else 2)                 # samples and op_table recompute nothing
    assert values.shape == (len(rows), p.n_runs)
    # Each row's statistics are those of its samples in the steady runs (samples keep every run).
    steady = steady_runs(p)
    for i in (0, len(rows) // 2, len(rows) - 1):
        v = values[i][steady][~np.isnan(values[i][steady])]
        assert v.size == rows[i].runs and np.median(v) == pytest.approx(rows[i].p50)


def test_placement_tables_are_copies_of_one_computation():
    p = load(REAL / "gen_llama.etdump")
    a, b = placement.per_run_parts(p), placement.per_run_parts(p)
    assert a is not b and all(a[k] is b[k] for k in a)     # the caller's dict is its own; the columns shared
    a.clear()
    assert placement.per_run_parts(p).keys() == b.keys()
    # Only the rows are kept per profile; each caller gets columns of its own.
    assert placement.instruction_rows(p) is placement.instruction_rows(p)
    t, u = placement.instruction_times(p), placement.instruction_times(p)
    assert t["ns"] is not u["ns"] and all(np.array_equal(t[k], u[k]) for k in t)


def test_memoised_results_keep_no_profile_alive():
    p = load(REAL / "gen_llama.etdump")
    ops.samples(p, ops.event_stats(p))
    ops.op_table(p)
    placement.per_run_parts(p)
    gone = weakref.ref(p)
    del p
    gc.collect()
    assert gone() is None
