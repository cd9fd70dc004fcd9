"""The Perfetto / Chrome trace: Trace Event Format, µs, nesting, QNN ops laid out as estimates."""
import json

import pytest

import etscope
from etscope import api
from etscope.analysis.views.trace import trace_view
from trace_format import validate

from etscope.render.trace import build_trace, write_trace
from views_helpers import REAL, qnn_fixture


def x_events(t, **match):
    return [e for e in t["traceEvents"] if e["ph"] == "X" and all(e.get(k) == v for k, v in match.items())]


@pytest.mark.parametrize("name", ["cnn", "gen_multipart", "gen_llama", "llama"])
def test_real_fixtures_give_valid_traces(tmp_path, name):
    p = etscope.load(REAL / f"{name}.etdump")
    t = build_trace(trace_view(p))
    assert validate(t) == []
    path = tmp_path / "t.json"
    write_trace(str(path), t)
    back = json.loads(path.read_text())
    assert back == json.loads(json.dumps(t))          # round-trips through JSON
    assert back["displayTimeUnit"] == "ms" and back["otherData"]["time_unit"] == "us"
    methods = x_events(back, name="Method::execute")
    assert len(methods) == p.n_runs
    # Runs in sequence at their real times (µs = ns / 1000 from the first timed event).
    ts = [e["ts"] for e in methods]
    assert ts == sorted(ts) and min(e["ts"] for e in x_events(back)) == 0
    lat_us = [e["dur"] for e in methods]
    assert lat_us == pytest.approx(list(p.runs["latency_ns"] / 1e3), abs=0.002)
    for e in x_events(back):
        assert e["dur"] >= 0 and e["ts"] >= 0


def test_partition_tracks_hold_backend_events_inside_their_call():
    p = etscope.load(REAL / "gen_multipart.etdump")
    t = build_trace(trace_view(p))
    names = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    delegate_tracks = [n for n in names if n.startswith("partition:")]
    assert len(delegate_tracks) == 3                   # one track per XNNPACK partition
    calls = x_events(t, cat="delegate_call")
    inner = x_events(t, cat="delegate_internal")
    assert inner
    by_track = {}
    for c in calls:
        if c["tid"] != 1:
            by_track.setdefault(c["tid"], []).append(c)
    for e in inner:
        parents = [c for c in by_track[e["tid"]] if c["ts"] <= e["ts"] + 1e-6 and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 2e-3]
        assert parents, e


def test_qnn_ops_laid_out_from_cycles_and_marked_estimated():
    path = qnn_fixture("synthetic_qnn_vit_2part")
    p = etscope.load(path, etrecord=path.with_suffix(".etrecord"))
    q = api.qnn(p)
    t = build_trace(trace_view(p, qnn=q))
    assert validate(t) == []
    est = x_events(t, cat="qnn_op_estimated")
    assert est and all(e["args"]["estimated"] is True and e["args"]["cycles"] >= 0 for e in est)
    clock = {part.instruction_id: part for part in q.partitions}
    e = next(e for e in est if e["args"]["cycles"] > 0 and "compressed_to_fit" not in e["args"])
    part = clock[e["args"]["instruction_id"]]
    run_clock = part.per_run.clock_mhz_est[e["args"]["run"]]
    assert e["dur"] == pytest.approx(e["args"]["cycles"] / run_clock, abs=0.002)
    # Without the QNN analysis the rows are left out, with a note.
    t2 = build_trace(trace_view(p, qnn=None))
    assert not x_events(t2, cat="qnn_op_estimated")
    assert any("no clock estimate" in n for n in t2["otherData"]["notes"])
    # QNN's other values (µs, counts) go into the DELEGATE_CALL's args, with their unit.
    call = next(c for c in x_events(t, cat="delegate_call") if c["tid"] != 1)
    assert any(v.endswith(("ms", "µs")) for v in call["args"]["backend_values"].values())


def test_accumulating_qnn_keeps_one_copy_per_op():
    path = qnn_fixture("synthetic_qnn_accumulate")
    p = etscope.load(path)
    q = api.qnn(p)
    t = build_trace(trace_view(p, qnn=q))
    assert validate(t) == []
    per_run = {}
    for e in x_events(t, cat="qnn_op_estimated"):
        per_run.setdefault(e["args"]["run"], []).append(e["name"])
    counts = {len(v) for v in per_run.values()}
    assert len(counts) == 1                              # same number of ops in every run
    assert all(len(v) == len(set(v)) for v in per_run.values())


def test_run_selection():
    p = etscope.load(REAL / "gen_llama.etdump")
    t = build_trace(trace_view(p, runs=[0, 5]))
    assert {e["args"]["run"] for e in x_events(t, name="Method::execute")} == {0, 5}


def test_validate_catches_broken_traces():
    ok = {"traceEvents": [{"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                          {"name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 3}]}
    assert validate(ok) == []
    bad_nesting = {"traceEvents": ok["traceEvents"] + [{"name": "c", "ph": "X", "pid": 1, "tid": 1, "ts": 8, "dur": 5}]}
    assert validate(bad_nesting)
    negative = {"traceEvents": [{"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": -1}]}
    assert validate(negative)
    missing = {"traceEvents": [{"name": "a", "ph": "X", "pid": 1, "ts": 0, "dur": 1}]}
    assert validate(missing)
    assert validate({"nope": []})


def test_trace_view_is_a_frozen_result_with_its_slices_as_columns():
    """Issue 33 item 1: the view is frozen (tracks and notes tuples, no dict of extras) and its slices
    are columns, one entry per slice, not an object per slice (millions of events); the trace writes
    one event per slice from them, and with the units' slices its X events are all of them."""
    import dataclasses

    from etscope.analysis.qnn.htp_units import Slices

    path = qnn_fixture("synthetic_qnn_vit_2part")
    p = etscope.load(path, etrecord=path.with_suffix(".etrecord"))
    v = trace_view(p, qnn=api.qnn(p))
    assert type(v).__dataclass_params__.frozen and isinstance(v.tracks, tuple) and isinstance(v.notes, tuple)
    assert isinstance(v.slices, Slices) and all(isinstance(c, tuple) and len(c) == len(v.slices)
                                                for c in dataclasses.astuple(v.slices))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.notes = ()
    t = build_trace(v, notes_before=("first",))
    n_units = len(v.units.slices) if v.units is not None else 0
    assert len(x_events(t)) == len(v.slices) + n_units and t["otherData"]["notes"] == ["first", *v.notes]
    assert t["otherData"]["clock_rule"] == v.clock_rule and "time_unit_of_htp_ops" not in t["otherData"]
