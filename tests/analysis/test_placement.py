import numpy as np
import pytest

from etscope.analysis.ops import latency, placement
from etscope.analysis.ops.per_op import event_stats
from etscope.profile import load


@pytest.mark.parametrize("name", ["cnn", "llama_nodebug", "llama"])
def test_breakdown_adds_up_to_latency(real, name):
    p = load(real / f"{name}.etdump")
    lat = latency.latency_summary(p).latency_ms
    rows = placement.breakdown(p)
    assert sum(r.mean_ms for r in rows) == pytest.approx(lat.mean, rel=0.01)
    assert sum(r.share for r in rows) == pytest.approx(1.0, rel=0.01)
    parts = placement.per_run_parts(p)
    # Overhead is a remainder, but it must never be negative: instruction events nest in Method::execute.
    assert (parts["framework_overhead"] >= 0).all()


def test_cnn_breakdown_is_the_measured_events(real):
    p = load(real / "cnn.etdump")
    every = np.ones(p.n_runs, dtype=bool)        # the Inspector's averages are over every run
    rows = {r.kind: r for r in placement.breakdown(p, every)}
    # From the Inspector's table on this file: DELEGATE_CALL avg 0.0416194 ms, Method::execute avg 0.0461109 ms.
    assert rows["delegate"].backend == "XnnpackBackend"
    assert rows["delegate"].mean_ms == pytest.approx(0.0416194, rel=1e-6)
    assert rows["delegate"].calls_per_run == 1
    assert latency.latency_summary(p, every).latency_ms.mean == pytest.approx(0.0461109, rel=1e-6)
    # The views' default: run 0 (0.145 ms, 4.6x the later runs' median) is warm-up, left out, as llm does.
    lat = latency.latency_summary(p)
    assert lat.warmup.runs == (0,) and lat.latency_ms.p50 == pytest.approx(0.031547, rel=1e-9)
    assert placement.breakdown(p)[0].mean_ms == pytest.approx(0.0338264444, rel=1e-6)


def test_fallback_ops_one_entry_per_cpu_instruction(real):
    p = load(real / "llama_nodebug.etdump")
    fb = placement.fallback_ops(p)
    ids = [f.instruction_id for f in fb]
    assert ids == sorted(set(ids))
    cpu_ids = {i.id for i in p.instructions.values() if i.kind == "cpu"}
    assert set(ids) == cpu_ids
    # The KV-cache update of the tiny Llama runs on the CPU: 4 index_put instructions (2 layers × k, v).
    assert sum(1 for f in fb if f.kernel == "native_call_index_put.out") == 4
    assert len([i for i in p.instructions.values() if i.kind == "delegate"]) == 23


def test_same_name_events_in_one_run_are_all_kept(real):
    p = load(real / "llama_nodebug.etdump")
    stats = [s for s in event_stats(p, steady=np.ones(p.n_runs, dtype=bool)) if s.name == "native_call_index_put.out"]
    assert len(stats) == 4
    assert {s.instruction_id for s in stats} == {54, 65, 102, 113}
    assert all(s.runs == 24 for s in stats)


def _fixture_profiles():
    """(path, profile) of every fixture ETDump, one per method when it splits by method."""
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("**/*.etdump")):
        p = load(path)
        for q in (p.method_split.profiles.values() if p.method_split else (p,)):
            yield path, q


def test_fallback_ops_same_with_the_dense_table_and_the_sorted_keys(monkeypatch):
    """The per (instruction, run) totals come from a dense table when it is small, else from
    sorted keys: both give the same rows, to the bit, on every fixture with CPU ops."""
    monkeypatch.setattr(placement, "_run_template", lambda prof: None)   # identical runs: tested below
    compared = 0
    for path, q in _fixture_profiles():
        dense = placement.fallback_ops(q)
        with monkeypatch.context() as m:
            m.setattr(placement, "DENSE_TABLE_FACTOR", 0)
            m.setattr(placement, "DENSE_TABLE_MIN_CELLS", 0)
            assert placement.fallback_ops(q) == dense, path
        compared += bool(dense)
    assert compared >= 20


def test_instruction_rows_of_identical_runs_are_those_of_every_event(monkeypatch):
    from etscope.profile.repeats import identical_runs

    taken = 0
    for path, q in _fixture_profiles():
        fast = placement.instruction_rows.__wrapped__(q)
        with monkeypatch.context() as m:
            m.setattr(placement, "identical_runs", lambda prof: None)
            m.setattr(placement, "_run_template", lambda prof: None)      # (memoised: computed above)
            full = placement.instruction_rows.__wrapped__(q)
        assert fast.dtype == full.dtype and np.array_equal(fast, full), path
        taken += identical_runs(q) is not None
    assert taken >= 10


def test_totals_of_identical_runs_are_those_of_the_bincount(monkeypatch):
    """Per-run parts and CPU-kernel rows read column by column from identical runs equal, to the
    bit, what the bincount over every event gives, on every fixture with identical runs."""
    from etscope.profile.repeats import identical_runs

    taken = 0
    for path, q in _fixture_profiles():
        fast_parts = placement._per_run_parts.__wrapped__(q)
        fast_rows = placement.fallback_ops(q)
        with monkeypatch.context() as m:
            m.setattr(placement, "_run_template", lambda prof: None)
            full_parts = placement._per_run_parts.__wrapped__(q)
            assert placement.fallback_ops(q) == fast_rows, path
        assert fast_parts.keys() == full_parts.keys()
        for key, col in fast_parts.items():
            assert col.dtype == full_parts[key].dtype and np.array_equal(col, full_parts[key], equal_nan=True), \
                (path, key)
        taken += identical_runs(q) is not None and bool(fast_rows)
    assert taken >= 5


def test_values_of_identical_runs_read_through_the_runs_view_are_the_gathered_ones():
    """The (runs x events) values of identical runs, taken along the value column's view of the
    runs at one run's positions, are those of gathering every event of those positions, for every
    selection the analyses make (all instruction-level events, delegate calls, CPU ones)."""
    taken = 0
    for path, q in _fixture_profiles():
        template = placement._run_template(q)
        if template is None or q.n_runs < 2:
            continue
        for cols in (template.at, template.at[template.is_call], template.at[~template.is_call]):
            if cols.size == 0:
                continue
            rows = placement._template_rows(q, template, cols)
            assert np.array_equal(template.values(q, cols), q.events["value"][rows].reshape(q.n_runs, cols.size),
                                  equal_nan=True), path
            taken += 1
    assert taken >= 5


def test_tables_of_identical_runs_read_from_one_run_are_those_of_every_event():
    """identical_instruction_table (positions of one run) gives the table made from every event's
    gathered values, for all instruction-level events and for the CPU ones (cpu_rows), and None
    exactly where the runs are not identical or the column sums would not be cheap; the template's
    rows are instruction_rows."""
    from etscope.profile.repeats import identical_runs

    taken = 0
    for path, q in _fixture_profiles():
        for cpu_only, rows in ((False, placement.instruction_rows(q)), (True, placement.cpu_rows(q))):
            got = placement.identical_instruction_table(q, cpu_only)
            n = q.n_runs
            per_run = rows.size // n if n and rows.size % n == 0 else 0
            if identical_runs(q) is None or not placement._added_by_columns(per_run, n):
                assert got is None, path
                continue
            want = placement._table_of_identical_runs(q.events["instruction_id"][rows[:per_run]],
                                                      q.events["value"][rows].reshape(n, per_run))
            assert (got is None) == (want is None), path
            if got is not None:
                assert all(np.array_equal(a, b) for a, b in zip(got, want)), path
                taken += 1
        if identical_runs(q) is not None:
            template = placement._run_template(q)
            assert np.array_equal(placement._template_rows(q, template, template.at), placement.instruction_rows(q))
    assert taken >= 5


def test_cpu_totals_of_identical_runs_add_repeated_calls_in_file_order():
    """An instruction called several times per run (a loop): its calls add up in file order, as the
    bincount over (instruction, run) keys does, bit for bit on values whose sum depends on order."""
    rng = np.random.default_rng(7)
    instr = np.array([5, 3, 5, 9, 3, 5, 1])
    n = 50
    values = rng.standard_normal((n, instr.size)) * 10.0 ** rng.integers(-8, 9, (n, instr.size))
    uniq, calls, table = placement._table_of_identical_runs(instr, values)
    key = np.searchsorted(uniq, np.tile(instr, n)) + uniq.size * np.repeat(np.arange(n), instr.size)
    want = np.bincount(key, weights=values.reshape(-1), minlength=uniq.size * n).reshape(n, uniq.size)
    assert uniq.tolist() == [1, 3, 5, 9] and calls.tolist() == [n, 2 * n, 3 * n, n]
    assert np.array_equal(table, want)
    assert placement._table_of_identical_runs(np.zeros(placement.IDENTICAL_RUNS_MAX_CALLS + 1, dtype=int),
                                                   np.ones((2, placement.IDENTICAL_RUNS_MAX_CALLS + 1))) is None
