"""qnn-profile-viewer JSON (QNN_PROFILE) reader."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.qnn_csv import ACCEL_CYCLES
from etscope.formats.qnn_json import parse_qnn_json, read_qnn_json, sniff

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


def test_tiny_sm8750():
    p = read_qnn_json(FIX / "tiny_sm8750.qnn_profile.json")
    assert p.source == "qnn_json" and p.warnings == []
    assert p.metadata["backendVersion"] == "v2.49.0.260730134355"
    assert [(b.kind, b.label, b.complete) for b in p.blocks] == [
        ("init", "BACKEND_CREATE_FROM_BINARY", True), ("execute", "BACKEND_EXECUTE", True),
        ("deinit", "BACKEND_DEINIT", True)]
    b = p.execute_blocks()[0]
    assert b.node_names == ["Input OpId_2 (cycles)", "fc:OpId_17 (cycles)", "bias_add:OpId_21 (cycles)",
                            "act:OpId_23 (cycles)", "Output OpId_3 (cycles)"]
    assert np.sum(b.node_cycles) == b.accel_cycles == 29239
    assert b.node_parent == ACCEL_CYCLES
    assert b.roots["Number of HVX threads used"] == (6.0, "count")
    assert b.roots["QNN (execute) time"] == (3001.0, "us")       # MICROSEC -> us
    assert b.graph_index == 0
    assert p.app_stats == [("APP_EXECUTE_IPS", "numInferences", 1.0, "count"),
                           ("APP_EXECUTE_IPS", "duration", 3309.0, "us")]
    assert list(p.events.type[:4]) == ["", "", "", "INIT"]
    assert (p.events.line == -1).all()


def _doc(events, method="BACKEND_EXECUTE", header=True):
    d = {"messages": [{"method": method, "profilingEvents": events}]}
    if header:
        d["header"] = {"artifact_type": "QNN_PROFILE"}
    return d


def test_nested_subevents_unknown_keys_and_dict_input():
    ev = [{"identifier": "Accelerator (execute) time (cycles)", "unit": "CYCLES", "value": 5, "future": [1],
           "sub-events": [{"identifier": "a:OpId_1 (cycles)", "unit": "CYCLES", "type": "NODE", "value": 5,
                           "sub-events": [{"identifier": "inner", "unit": "CYCLES", "value": 2}]}]},
          {"identifier": "Unknown event type", "unit": "OBJECT", "value": None},
          {"identifier": "QNN (execute) time", "unit": "MICROSEC", "type": "EXECUTE", "value": "7"}]
    p = parse_qnn_json(_doc(ev))
    assert list(p.events.name) == ["Accelerator (execute) time (cycles)", "a:OpId_1 (cycles)", "inner",
                                   "Unknown event type", "QNN (execute) time"]
    assert list(p.events.parent) == [-1, 0, 1, -1, -1]
    b = p.blocks[0]
    assert b.sub_events == [("a:OpId_1 (cycles)", "inner", 2.0, "cycles")]
    assert math.isnan(b.roots["Unknown event type"][0]) and b.roots["QNN (execute) time"] == (7.0, "us")
    p2 = parse_qnn_json(json.dumps(_doc(ev, header=False)).encode())
    assert p2.warnings and len(p2.events) == 5


@pytest.mark.parametrize("doc, what", [
    ([], "top level"),
    ({"header": {"artifact_type": "QHAS"}, "messages": []}, "artifact_type"),
    ({"header": {"artifact_type": "QNN_PROFILE"}}, "messages"),
    ({"messages": {"a": 1}}, "expected a list"),
    ({"messages": [1]}, "expected an object"),
    (_doc([{"identifier": 5.5, "value": True}]), "boolean"),
    (_doc([{"identifier": ["x"], "value": 1}]), "expected a string"),
    (_doc([{"identifier": "x", "value": "abc"}]), "not a number"),
    (_doc([{"identifier": "x", "value": 1, "sub-events": "no"}]), "expected a list"),
    (_doc([{"identifier": "x", "value": {"a": 1}}]), "not a number"),
])
def test_hostile_json(doc, what):
    with pytest.raises(FormatError, match=what) as ei:
        parse_qnn_json(json.dumps(doc), name="bad.json")
    assert ei.value.file == "bad.json"


@pytest.mark.parametrize("data", [b"", b"{", b"[" * 200000 + b"]" * 200000, b"\xff\xfe\x00\xd8", b"nul"])
def test_unparseable_json(data):
    with pytest.raises(FormatError):
        parse_qnn_json(data)


def test_truncations_raise_only_format_error():
    raw = (FIX / "tiny_sm8750.qnn_profile.json").read_bytes()
    for n in range(0, len(raw), 37):
        try:
            parse_qnn_json(raw[:n])
        except FormatError:
            pass


def test_sniff():
    assert sniff((FIX / "tiny_sm8750.qnn_profile.json").read_bytes()[:4096])
    assert not sniff((FIX / "chain8_sm8650.qhas.json").read_bytes()[:4096])
    assert not sniff(b"QNN_PROFILE")
