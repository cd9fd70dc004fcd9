"""HMX/HVX/DMA timeline from an optrace (analysis.qnn.htp_timeline) and its Perfetto tracks.

Real SM8650 chain8 files: the optrace's 45 executed ops (= QHAS htp_nodes) on HMX tid 256 and HVX
tids 512/514; QHAS htp_resources cycles_used 38,764 / 24,061 / 5,801, timeline 64,829 cycles,
graph execute 86 µs; the runtrace's first Graph Execute 806.365 MHz."""
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.qnn.htp_timeline import htp_timeline, lanes
from etscope.formats.optrace import parse_optrace, read_optrace
from etscope.formats.qhas import read_qhas
from etscope.formats.runtrace import read_runtrace
from trace_format import validate
from etscope.analysis.qnn.htp_units import htp_units
from etscope.render.trace import _unit_events
from qnn_typed import plain

Q = Path(__file__).parents[1] / "fixtures" / "qnn"
OT, QH, RT = Q / "chain8_sm8650.optrace.json", Q / "chain8_sm8650.qhas.json", Q / "chain8_sm8650.runtrace.json"


def test_tracks_match_qhas_units():
    t = plain(htp_timeline(read_optrace(OT), read_qhas(QH)).view())
    assert [(x["kind"], x["tid"]) for x in t["tracks"]] == [("HMX", 256), ("HVX", 512), ("HVX", 514)]
    qhas = {r["tid"]: r["cycles_used"] for r in read_qhas(QH).overall["htp_resources"]}
    assert {x["tid"]: x["busy_cycles"] for x in t["tracks"]} == qhas
    assert t["span_cycles"] == 64829                               # QHAS timeline_cycles
    assert sum(len(x["slices"]["op"]) for x in t["tracks"]) == 45   # QHAS htp_nodes
    hmx = t["tracks"][0]["slices"]
    assert hmx["category"].count("hmx") == 8                        # the 8 MatMuls' ConvLayer_s1.opt
    assert all(q.startswith("MatMul_") for q, c in zip(hmx["qnn_op"], hmx["category"]) if c == "hmx")
    assert t["hidden_tracks"] == 0


def test_clock_preference_runtrace_then_qhas_then_etdump():
    ot = read_optrace(OT)
    t = htp_timeline(ot, read_qhas(QH), read_runtrace(RT), 1868.0)
    assert (t.clock_source, t.clock_is_estimate) == ("runtrace", False)
    assert t.clock_mhz == pytest.approx(806.365)
    t = htp_timeline(ot, read_qhas(QH), None, 1868.0)
    assert (t.clock_source, t.clock_is_estimate) == ("qhas", True)
    assert t.clock_mhz == pytest.approx(64829 / 86)
    assert t.view().span_us == pytest.approx(86)
    t = htp_timeline(ot, None, None, 1868.0)
    assert (t.clock_source, t.clock_mhz, t.clock_is_estimate) == ("etdump", 1868.0, True)
    t = htp_timeline(ot)
    assert t.clock_mhz is None and t.view().span_us is None


def test_empty_unit_tracks_are_hidden():
    meta = [{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "Core 0 Overview"}}] + [
        {"ph": "M", "pid": 0, "tid": tid, "name": "thread_name", "args": {"name": f"Type: {k}"}}
        for tid, k in ((256, "HMX"), (512, "HVX"), (514, "HVX"), (768, "DMA"))]
    ops = [{"ph": "X", "pid": 0, "tid": 256, "name": "q::Conv", "ts": 0, "dur": 100, "args": {"Flags": ["uses_hmx"]}},
           {"ph": "X", "pid": 0, "tid": 768, "name": "q::Copy", "ts": 10, "dur": 5, "args": {"Flags": ["dma"]}}]
    t = htp_timeline(parse_optrace({"header": {"artifact_type": "OP_TRACE"}, "traceEvents": meta + ops}))
    assert [(x.kind, x.tid) for x in t.tracks] == [("HMX", 256), ("DMA", 768)]
    assert t.hidden == 2                  # both HVX threads ran nothing
    assert [x.category for x in t.tracks] == [["hmx"], ["dma"]]


def test_units_table_and_optrace_summary_agree_on_every_track():
    """One definition of a unit's ops and busy cycles: the units table and the optrace summary
    (which also lists idle tracks) give the same numbers; an op without a timestamp counts in
    neither (it has no place on a timeline)."""
    from etscope.analysis.qnn.op_tables import optrace_summary

    meta = [{"ph": "M", "pid": 0, "tid": tid, "name": "thread_name", "args": {"name": f"Type: {k}"}}
            for tid, k in ((256, "HMX"), (512, "HVX"), (514, "HVX"))]
    ops = [{"ph": "X", "pid": 0, "tid": 256, "name": "q::Conv", "ts": 0, "dur": 100, "args": {}},
           {"ph": "X", "pid": 0, "tid": 256, "name": "q::Conv", "ts": 120, "dur": 30, "args": {}},
           {"ph": "X", "pid": 0, "tid": 512, "name": "q::Add", "dur": 7, "args": {}}]   # no ts
    for ot in (read_optrace(OT), parse_optrace({"header": {"artifact_type": "OP_TRACE"}, "traceEvents": meta + ops})):
        table = {(x.tid, x.slices_total, x.busy_cycles) for x in htp_timeline(ot).tracks}
        summary = optrace_summary(ot)
        busy = {(t.tid, t.ops, t.busy_cycles) for t in summary.tracks if t.ops}
        assert table == busy and table
        assert summary.ops == sum(n for _, n, _ in table)
    assert table == {(256, 2, 130.0)}


def test_overlapping_slices_get_lanes_nested_ones_do_not():
    s = np.array([0.0, 1, 5, 6, 20])
    e = np.array([10.0, 4, 12, 8, 21])   # [1,4] nests in [0,10]; [5,12] overlaps it; [6,8] fits lane 0 again
    assert lanes(s, e).tolist() == [0, 0, 1, 0, 0]


def test_perfetto_tracks_valid_and_labelled():
    tl = htp_timeline(read_optrace(OT), read_qhas(QH)).view()
    notes = []
    ev = _unit_events(htp_units(tl, notes))
    assert not validate({"traceEvents": ev}) and not notes
    names = [e["args"]["name"] for e in ev if e["name"] == "thread_name"]
    assert names == ["HMX (tid 256)", "HVX (tid 512)", "HVX (tid 514)"]
    proc = next(e for e in ev if e["name"] == "process_name")["args"]["name"]
    assert "754 MHz estimated" in proc
    slices = [e for e in ev if e["ph"] == "X"]
    assert len(slices) == 45 and all(e["args"]["estimated"] for e in slices)
    last = max(slices, key=lambda e: e["ts"] + e["dur"])
    assert last["ts"] + last["dur"] == pytest.approx(86, abs=0.01)   # 64,829 cycles at 754 MHz


def test_perfetto_tracks_left_out_without_clock():
    notes = []
    assert htp_units(htp_timeline(read_optrace(OT)).view(), notes) is None
    assert notes and "no clock" in notes[0]
