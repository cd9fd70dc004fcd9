"""QNN HTP optrace (OP_TRACE Chrome trace, ts/dur in cycles) reader."""
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.optrace import parse_optrace, read_optrace, sniff
from etscope.formats.qhas import read_qhas

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"
BASE_CYCLE = 7997466066654          # README: ts = Start Cycle - 7997466066654


@pytest.fixture(scope="module")
def trace():
    return read_optrace(FIX / "chain8_sm8650.optrace.json")


@pytest.fixture(scope="module")
def qhas():
    return read_qhas(FIX / "chain8_sm8650.qhas.json")


def test_header_and_metadata(trace):
    t = trace
    # the header is a top-level key next to traceEvents, not an event
    assert t.header["artifact_type"] == "OP_TRACE" and t.version == (1, 1, 0)
    assert t.warnings == [] and t.other == {}
    assert t.process_names[0] == "Core 0 Overview" and t.overview_pids == [0]
    assert t.qnn_op_pids[3] == "MatMul_0" and t.process_args[3] == {"opid": "0x0000000000000012"}
    assert set(t.qnn_op_pids.values()) == {"Input", "Output", "SystemService_0"} | {f"MatMul_{i}" for i in range(8)}
    assert t.process_sort_index[3] == 18
    assert t.thread_names[(0, 256)] == "Type: HMX"
    assert t.thread_names[(3, 512)] == "Core:0 Type: HVX Tid: 512"
    assert t.tracks[(0, 256)] == "HMX" and t.tracks[(0, 512)] == "HVX" and t.tracks[(0, 514)] == "HVX"
    assert t.tracks[(0, 1)] == "non_executed" and t.track_kind(99, 99) == "other"


def test_event_columns(trace):
    e = trace.events
    assert len(e) == 112 + 51 + 51                        # X + flow starts + flow ends
    assert Counter(e.ph) == {"X": 112, "s": 51, "f": 51}
    assert e.ts_cycles.dtype == np.float64 and e.pid.dtype == np.int64
    x = e.ph == "X"
    assert not np.isnan(e.dur_cycles[x]).any() and np.isnan(e.dur_cycles[~x]).all()
    assert set(e.cat[e.ph == "s"]) == {"input_output", "sequencer"}
    assert set(e.cat[x]) == {""}
    assert all(isinstance(i, int) for i in e.flow_id[~x]) and all(i is None for i in e.flow_id[x])
    # ts is Start Cycle minus one per-file base, dur is Duration (cycles)
    for i in np.nonzero(x)[0]:
        a = e.args[i]
        if "Start Cycle" in a:
            assert e.ts_cycles[i] == a["Start Cycle"] - BASE_CYCLE
            assert e.dur_cycles[i] == a["Duration (cycles)"]
    c = trace.counters
    assert len(c) == 262 and set(c.series) == {""} and set(c.unit) == {"bytes"}
    assert Counter(c.name) == {"VTCM read": 56, "VTCM write": 56, "DRAM read": 56, "DRAM write": 56, "VTCM alloc": 38}


def test_45_op_events_equal_qhas_htp_op_instances(trace, qhas):
    e = trace.events
    idx = trace.op_event_indices()
    assert len(idx) == 45 == len(qhas.htp_op_instances)
    ops = {int(e.args[i]["ID"], 16): (e.name[i], int(e.dur_cycles[i]), int(e.tid[i]),
                                      int(e.ts_cycles[i]) + BASE_CYCLE, e.args[i]["QNN Op Name"]) for i in idx}
    rows = {int(r["op_id"], 16): (r["htp_op"], r["cycles"], r["tid"], r["start_cycle"], r["qnn_op"])
            for r in qhas.htp_op_instances}
    assert ops == rows
    assert {e.name[i] for i in idx} == {r["htp_op"] for r in qhas.htp_op_instances}
    assert e.dur_cycles[idx].sum() == 68626
    # every executed op is repeated once under its QNN op's process
    per_op = [i for i in np.nonzero(e.ph == "X")[0] if e.pid[i] in trace.qnn_op_pids]
    assert len(per_op) == 45
    assert Counter(trace.qnn_op_pids[e.pid[i]] for i in per_op)["MatMul_3"] == 7
    # flags agree with QHAS booleans
    flags = {int(e.args[i]["ID"], 16): set(e.args[i].get("Flags", [])) for i in idx}
    for r in qhas.htp_op_instances:
        f = flags[int(r["op_id"], 16)]
        assert r["hmx"] == ("uses_hmx" in f) and r["hvx"] == ("uses_hvx" in f) and r["sync"] == ("sync" in f)
    # the HMX *track* carries DMA and HVX-flagged ops too: track type is not the unit an op used
    on_hmx_track = [i for i in idx if trace.tracks[(int(e.pid[i]), int(e.tid[i]))] == "HMX"]
    assert len(on_hmx_track) == 43 and sum("uses_hmx" in e.args[i].get("Flags", []) for i in on_hmx_track) == 8


def test_counters_match_qhas_bytes(trace, qhas):
    c, o = trace.counters, qhas.overall
    assert c.value[c.name == "VTCM alloc"].max() == o["peak_vtcm_alloc"]
    assert c.value[c.name == "DRAM read"].sum() == o["total_dram_read"]
    assert c.value[c.name == "DRAM write"].sum() == o["total_dram_write"]
    assert c.value[c.name == "VTCM read"].sum() == o["total_vtcm_read"]
    assert c.value[c.name == "VTCM write"].sum() == o["total_vtcm_write"]


def test_synthetic_bare_list():
    t = read_optrace(FIX / "synthetic_optrace_bare_list.json")
    assert t.header is None and t.version is None and t.warnings
    assert t.tracks == {(0, 256): "HMX", (0, 512): "HVX", (0, 768): "DMA", (0, 1): "non_executed"}
    assert t.qnn_op_pids == {2: "aten_mm_default"}
    idx = t.op_event_indices()
    assert list(t.events.name[idx]) == ["q::MatMul", "q::Add", "DmaCopy"]
    assert t.events.ts_cycles[idx[1]] == 1510.0
    assert t.events.args[idx[0]]["Future Field"] == {"a": 1}
    assert list(t.events.flow_id[t.events.ph == "s"]) == ["f1"]
    assert t.events.args[list(t.events.name).index("$Const")] == {}
    assert np.isnan(t.events.dur_cycles[list(t.events.name).index("marker")])
    c = t.counters
    assert list(zip(c.name, c.series, c.value, c.unit)) == [
        ("VTCM alloc", "", 4096.0, "bytes"), ("Bandwidth", "read", 1.5, "unknown"), ("Bandwidth", "write", 0.25, "unknown")]
    assert c.tid[1] == -1


def test_bare_list_with_header_element_and_loaded_objects():
    events = [{"header": {"artifact_type": "OP_TRACE", "version": {"major": 2, "minor": 0, "patch": 0}}},
              {"name": "a", "ph": "X", "pid": 0, "tid": 256, "ts": 1, "dur": 2}]
    t = parse_optrace(events)
    assert t.version == (2, 0, 0) and len(t.events) == 1
    t = parse_optrace(json.loads((FIX / "chain8_sm8650.optrace.json").read_text()))
    assert len(t.op_event_indices()) == 45


def _doc(events, header=None):
    return {"header": header or {"artifact_type": "OP_TRACE"}, "traceEvents": events}


@pytest.mark.parametrize("doc, what", [
    ("x", "top level"),
    ({"events": []}, "traceEvents"),
    ({"traceEvents": {"a": 1}}, "expected a list"),
    (_doc([], {"artifact_type": "HTP_GRAPH"}), "artifact_type"),
    ({"header": [1], "traceEvents": []}, "header"),
    (_doc([], {"artifact_type": "OP_TRACE", "version": {"major": 1.5}}), "version"),
    (_doc([1]), "expected an object"),
    (_doc([{"ph": "X", "name": "a", "ts": "soon"}]), "ts"),
    (_doc([{"ph": "X", "name": "a", "ts": 1, "dur": True}]), "boolean"),
    (_doc([{"ph": "X", "name": "a", "pid": 1.5}]), "pid"),
    (_doc([{"ph": "X", "name": {"n": 1}}]), "name"),
    (_doc([{"ph": "X", "name": "a", "args": [1]}]), "args"),
    (_doc([{"ph": "C", "name": "c", "args": {"v": "high"}}]), "not|number"),
    (_doc([{"ph": "M", "name": "thread_name", "pid": 0, "tid": "t", "args": {"name": "x"}}]), "tid"),
    (_doc([{"ph": 5}]), "ph"),
])
def test_hostile(doc, what):
    with pytest.raises(FormatError, match=what) as ei:
        parse_optrace(json.dumps(doc), name="bad.json")
    assert ei.value.file == "bad.json"


def test_fuzz_raises_only_format_error():
    rng = random.Random(11)
    base = json.loads((FIX / "chain8_sm8650.optrace.json").read_text())
    for _ in range(200):
        d = dict(base, traceEvents=list(base["traceEvents"]))      # copy only what is mutated
        j = rng.randrange(len(d["traceEvents"]))
        ev = d["traceEvents"][j] = dict(d["traceEvents"][j])
        k = rng.choice(list(ev) + ["args"])
        ev[k] = rng.choice([None, "s", -1, 1.5, True, [], {}, {"": "x"}, 2 ** 70])
        try:
            parse_optrace(d)
        except FormatError:
            pass
    raw = (FIX / "chain8_sm8650.optrace.json").read_bytes()
    for n in range(0, len(raw), 4999):
        with pytest.raises(FormatError):
            parse_optrace(raw[:n])


def test_size_cap():
    with pytest.raises(FormatError, match="limit"):
        read_optrace(FIX / "chain8_sm8650.optrace.json", max_bytes=10_000)


def test_sniff():
    assert sniff((FIX / "chain8_sm8650.optrace.json").read_bytes()[:4096])
    assert not sniff((FIX / "chain8_sm8650.qhas.json").read_bytes()[:4096])
    assert not sniff((FIX / "synthetic_optrace_bare_list.json").read_bytes()[:4096])   # no header, no HTP args
    assert not sniff(b"OP_TRACE")
