"""Boundary tests: each pins one comparison or constant at its edge, where a neighbouring value
(``<`` for ``<=``, 1.5x for 2x, the interval's high end for its low end) would give another answer.
Each was written against a mutant of the line it names that survived the rest of the suite
(issue 33, "tests that bite")."""
from types import SimpleNamespace

import numpy as np
import pytest

from etscope.analysis import stats
from etscope.analysis.diff.compare import _gate
from etscope.analysis.qnn.htp_timeline import lanes
from etscope.analysis.llm import phases
from etscope.analysis.qnn.clock import clock_estimate
from etscope.analysis.qnn.model import ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, QnnSeries
from etscope.formats.qnn_profile import _separated


# ---- analysis/stats.py: warm-up is judged against the runs *after* the run ----------------------
def test_warmup_median_excludes_the_run_itself():
    # median of the runs after run 0 is 2, so 4.5 > 2 x 2 is warm-up; with run 0 itself in the
    # median (3) it would not be (4.5 < 6).
    assert stats.leading_warmup(np.array([4.5, 1.0, 1.0, 3.0, 3.0])) == 1


def test_warmup_factor_is_strictly_more_than_twice():
    assert stats.leading_warmup(np.array([2.0, 1.0, 1.0, 1.0, 1.0])) == 0
    assert stats.leading_warmup(np.array([2.0001, 1.0, 1.0, 1.0, 1.0])) == 1


def test_warmup_needs_four_runs():
    assert stats.leading_warmup(np.array([9.0, 1.0, 1.0])) == 0
    assert stats.leading_warmup(np.array([9.0, 1.0, 1.0, 1.0])) == 1


# ---- analysis/qnn/clock.py: which bound the estimate is ------------------------------------------
def _series(roots: dict) -> QnnSeries:
    n = len(next(iter(roots.values())))
    return QnnSeries(key="graph 0", instruction_id=None, runs=np.arange(n), roots=roots, node_names=[],
                     node_values=np.zeros((0, n)), node_unit=[])


def test_clock_is_between_only_with_both_times():
    cyc, excl, wait = np.array([47827.0, 32837.0]), np.array([22.0, 15.0]), np.array([46.0, 25.0])
    both = clock_estimate(_series({ACCEL_CYCLES: cyc, ACCEL_EXCL_WAIT_US: excl, ACCEL_US: wait}))
    assert both["bound"] == "between"
    only_excl = clock_estimate(_series({ACCEL_CYCLES: cyc, ACCEL_EXCL_WAIT_US: excl}))
    assert only_excl["bound"] == "upper"
    assert np.isnan(only_excl["bound_lo"]).all()
    only_wait = clock_estimate(_series({ACCEL_CYCLES: cyc, ACCEL_US: wait}))
    assert only_wait["bound"] == "lower"


# ---- analysis/llm/phases.py ------------------------------------------------------------------------
def test_two_token_prompt_is_a_prefill():
    """Token counts: any run of more than one token is a prefill (a 2-token prompt included)."""
    n = np.arange(4)
    phase, names, how = phases.find_phases([], np.zeros(4, np.int64), n, n, np.ones(4), np.array([2, 1, 1, 1]),
                                           ["tokens from input shapes"], [])
    assert how.by == "token counts"
    assert names[phase[0]] == "prefill" and {names[p] for p in phase[1:]} == {"decode"}


def test_costlier_means_at_least_twice():
    assert phases._costlier(0, [2.0, 1.0], [0.0, 0.0])
    assert not phases._costlier(0, [1.8, 1.0], [0.0, 0.0])
    assert phases._costlier(1, [1.0, 1.2], [10.0, 20.0])       # twice the HTP cycles
    assert not phases._costlier(1, [1.0, 1.2], [10.0, 19.0])


def test_structure_groups_up_to_max_groups_are_kept():
    """Exactly MAX_GROUPS distinct run structures (each repeated) are still structure groups."""
    k = phases.MAX_GROUPS
    sig = np.repeat(np.arange(k, dtype=np.uint64) * np.uint64(1_000_003), 2)   # k groups of 2 runs
    f = SimpleNamespace(sig_full=sig, sig_instr=np.zeros(sig.size, dtype=np.uint64), source="a", profile=None)
    groups, how = phases._structure_groups([f], np.zeros(sig.size, dtype=np.int64), np.arange(sig.size))
    assert how == "events per run" and int(groups.max()) + 1 == k
    sig2 = np.repeat(np.arange(k + 1, dtype=np.uint64) * np.uint64(1_000_003), 2)
    f2 = SimpleNamespace(sig_full=sig2, sig_instr=np.zeros(sig2.size, dtype=np.uint64), source="a", profile=None)
    _, how2 = phases._structure_groups([f2], np.zeros(sig2.size, dtype=np.int64), np.arange(sig2.size))
    assert how2 == "instruction sequence per run"


# ---- formats/qnn_profile.py: ranges that touch overlap --------------------------------------------
def test_touching_ranges_are_not_separated():
    assert _separated([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert not _separated([np.array([1.0, 2.0]), np.array([2.0, 4.0])])


# ---- analysis/qnn/htp_timeline.py: a slice ending with its parent nests in it -------------------------
def test_slice_ending_with_its_parent_nests():
    assert lanes(np.array([0.0, 5.0]), np.array([10.0, 10.0])).tolist() == [0, 0]
    assert lanes(np.array([0.0, 5.0]), np.array([10.0, 11.0])).tolist() == [0, 1]


# ---- analysis/diff/compare.py: the regression gate reads the interval's low end --------------------------
def test_regression_gate_reads_the_low_end():
    assert not _gate("regression", 20.0, 3.0, 40.0, 5.0, False, [], []).fail
    assert _gate("regression", 20.0, 6.0, 40.0, 5.0, False, [], []).fail


# ---- profile/build.py: an allocation event's value is bytes -------------------------------------
def _etdump(runs) -> bytes:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
    import generators

    return generators.build_etdump_shared(runs)


def test_allocation_values_are_bytes(tmp_path):
    from etscope import profile as P
    from etscope import units

    ev = [("P", "Method::execute", 0, -1, None, None, 100, 900), ("A", 0, 4096)]
    path = tmp_path / "alloc.etdump"
    path.write_bytes(_etdump([{"events": ev, "allocators": ["planned"]}] * 2))
    p = P.load(str(path))
    kind = np.asarray(p.events["kind"])
    alloc = np.nonzero(kind == 1)[0]
    assert alloc.size == 2
    assert (np.asarray(p.events["unit"])[alloc] == units.BYTES).all()
    assert (np.asarray(p.events["value"])[alloc] == 4096).all()


# ---- profile/accumulation.py: two executes are enough to see accumulation ------------------------
def test_accumulation_detected_over_two_executes(tmp_path):
    from etscope import profile as P

    def run(t, copies):
        ev = [("P", "Method::execute", 0, -1, None, None, t, t + 1000),
              ("P", "DELEGATE_CALL", 0, 0, None, None, t + 10, t + 900)]
        for value in copies:
            ev.append(("P", None, 0, 0, None, "MatMul_0:OpId_1 (cycles)", 0, value))
        return {"events": ev}

    path = tmp_path / "acc2.etdump"
    path.write_bytes(_etdump([run(0, [500]), run(5000, [500, 700])]))
    p = P.load(str(path))
    assert p.accumulation is not None
    assert p.accumulation.events_removed == {0: 1}
