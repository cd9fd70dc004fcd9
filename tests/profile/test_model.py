"""profile/model.py: the Profile and its parts (what an instruction's op type is, what removing
accumulated copies reports, which runs a method holds)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from etscope.profile import Accumulation, Instruction, MethodSplit, guess_op_from_kernel, load

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_op_from_kernel_name_is_a_guess_in_the_aten_namespace():
    assert guess_op_from_kernel("native_call_cumsum.out") == "aten.cumsum.out"
    assert guess_op_from_kernel("native_call_index_put") == "aten.index_put"
    assert guess_op_from_kernel("native_call_add.Scalar_out") == "aten.add.Scalar_out"
    assert guess_op_from_kernel("my_ns::my_op") == "my_ns.my_op"      # not a kernel name: as written


def test_op_type_prefers_the_graph_then_the_pte_then_the_kernel():
    assert Instruction(0, "cpu", "cpu", kernel="native_call_cumsum.out").op_type == "aten.cumsum.out"
    assert Instruction(0, "cpu", "cpu", kernel="native_call_cumsum.out",
                       operator="aten::cumsum.out").op_type == "aten.cumsum.out"
    assert Instruction(0, "cpu", "cpu", operator="aten::mm.out", op_types=["aten.mm.default"]).op_type == \
        "aten.mm.default"
    five = [f"aten.op{i}.default" for i in range(5)]
    assert Instruction(0, "delegate", "QnnBackend", op_types=five).op_type == \
        "aten.op0.default, aten.op1.default, aten.op2.default (+2)"
    assert Instruction(0, "delegate", "QnnBackend", op_types=five[:3]).op_type == ", ".join(five[:3])
    assert Instruction(0, "delegate", "XnnpackBackend").op_type is None


def test_accumulation_reports_what_was_removed():
    a = Accumulation(events_removed={3: 40, 1: 10}, file_events=1000)
    assert a.total_removed == 50
    w = a.warning()
    assert w.startswith("delegate instruction(s) 1, 3:") and "50 older copies of 1,000 events removed" in w
    assert len(w) <= 200                     # one line of the summary's warnings


def test_method_split_lists_each_method_s_runs():
    split = MethodSplit(names=["prefill", "decode"], of_run=np.array([0, 1, 1, 0, 1]), profiles={})
    assert split.runs_of("prefill").tolist() == [0, 3]
    assert split.runs_of("decode").tolist() == [1, 2, 4]


def test_a_profile_is_equal_only_to_itself():
    a, b = load(REAL / "cnn.etdump"), load(REAL / "cnn.etdump")
    assert a == a and a != b and len({a, b}) == 2     # hashable by identity (analysis memoises per profile)
    assert a.n_runs == 10 and a.name_of(-1) == "" and a.names(np.array([-1])) == [""]
    assert a.backends() == ["XnnpackBackend"]


FIXTURES = REAL.parent


def test_end_times_give_back_the_file_s_end_time_of_every_event():
    """Bit for bit, on every ETDump fixture (interval and value events, allocation and debug
    events, accumulated copies removed, runs of several methods split): the profile keeps no end
    column where its values give it back."""
    from etscope.formats.etdump import read_etdump
    from etscope.profile import end_times, event_runs

    checked = 0
    for path in sorted(FIXTURES.glob("**/*.etdump")):
        raw = read_etdump(path).events
        p = load(path)
        profiles = p.method_split.profiles.values() if p.method_split else (p,)
        for q in profiles:
            file_end = raw["end"][q.events["file_event"]] if "file_event" in q.events else raw["end"]
            assert "end" not in q.events and "end" not in q.etdump.events, path
            np.testing.assert_array_equal(end_times(q), file_end, err_msg=str(path))
            assert end_times(q).dtype == np.uint64
            # The RunData index of each event, whole and at some positions (the runs' RunData
            # keep the file's indices; a subset's events keep their run).
            file_run = raw["run"][q.events["file_event"]] if "file_event" in q.events else raw["run"]
            assert "run" not in q.events and "run" not in q.etdump.events, path
            np.testing.assert_array_equal(event_runs(q), file_run, err_msg=str(path))
            some = np.arange(0, q.n_events, 7)
            np.testing.assert_array_equal(event_runs(q, some), file_run[some], err_msg=str(path))
            checked += 1
    assert checked >= 40


def test_end_times_past_the_exact_range_of_a_float_stay_a_column():
    """A duration (or value) of 2**53 or more has no exact float value: the end column is kept and
    returned as read. Timestamps past 2**63 with short durations are given back exactly."""
    import dataclasses

    from etscope.formats.etdump import read_etdump
    from etscope.profile import build, end_times

    data = read_etdump(REAL / "cnn.etdump")
    ev = dict(data.events)
    prof = np.flatnonzero(ev["kind"] == 0)
    # Shift every timestamp past 2**63: durations unchanged, so the end column still goes.
    past = np.where(ev["kind"] == 0, np.uint64(1 << 63), np.uint64(0))
    shifted = dataclasses.replace(data, events={**ev, "start": ev["start"] + past, "end": ev["end"] + past})
    p = build(shifted)
    assert "end" not in p.events
    np.testing.assert_array_equal(end_times(p), shifted.events["end"])
    # One event lasting 2**53 + 1 ticks: kept, and identical.
    end = ev["end"].copy()
    end[prof[3]] = ev["start"][prof[3]] + np.uint64((1 << 53) + 1)
    long = dataclasses.replace(data, events={**ev, "end": end})
    p = build(long)
    assert "end" in p.events
    np.testing.assert_array_equal(end_times(p), end)
    # Built from columns it may reuse (as load does): the same profile; the end times it keeps are
    # the ones read (the differences written over them are taken back).
    for case, kept in ((shifted, False), (long, True)):
        own = dataclasses.replace(case, events={k: v.copy() for k, v in case.events.items()})
        q = build(own, reuse_columns=True)
        assert ("end" in q.events) is kept
        np.testing.assert_array_equal(end_times(q), case.events["end"])
        for col in ("value", "execute", "unit", "role"):
            assert np.array_equal(q.events[col], build(case).events[col], equal_nan=True), col


def test_a_run_column_the_run_data_do_not_describe_is_kept():
    """Events out of run order (a crafted file could not give this, a caller's data could): the
    column stays and is what event_runs returns."""
    import dataclasses

    from etscope.formats.etdump import read_etdump
    from etscope.profile import build, event_runs

    data = read_etdump(REAL / "cnn.etdump")
    run = data.events["run"].copy()
    last = data.runs[-1]
    run[last.first_event] = len(data.runs) - 2          # the last run's first event said to be the previous run's
    p = build(dataclasses.replace(data, events={**data.events, "run": run}))
    assert "run" in p.events
    np.testing.assert_array_equal(event_runs(p), run)
    q = build(dataclasses.replace(data, events={**data.events, "run": run.copy()}), reuse_columns=True)
    assert "run" in q.events                # not given back: not reused either
    np.testing.assert_array_equal(event_runs(q), run)
    np.testing.assert_array_equal(q.events["execute"], p.events["execute"])


def test_a_profile_built_over_its_read_columns_is_the_same():
    """load reuses the columns it read (run and end become execute and value in place): every
    column of every fixture's profile is the one built from an untouched copy."""
    from etscope.formats.etdump import read_etdump
    from etscope.profile import build

    for path in sorted(FIXTURES.glob("**/*.etdump")):
        a, b = build(read_etdump(path)), load(path)
        for x, y in zip(a.method_split.profiles.values() if a.method_split else (a,),
                        b.method_split.profiles.values() if b.method_split else (b,)):
            assert x.events.keys() == y.events.keys(), path
            for col in x.events:
                assert x.events[col].dtype == y.events[col].dtype, (path, col)
                assert np.array_equal(x.events[col], y.events[col], equal_nan=True), (path, col)
