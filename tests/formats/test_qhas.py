"""QHAS (QNN HTP Analysis Summary) reader."""
import copy
import json
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.qhas import KNOWN_TABLES, field_unit, parse_qhas, read_qhas, sniff

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


@pytest.fixture(scope="module")
def chain8():
    return read_qhas(FIX / "chain8_sm8650.qhas.json")


def test_chain8_header_and_overall(chain8):
    q = chain8
    assert q.version == (1, 0, 0) and q.header["artifact_type"] == "QHAS"
    assert q.model_id == "model_encoded"
    assert q.unknown_tables == [] and q.warnings == []
    assert set(q.tables) == set(KNOWN_TABLES) | {"dominant_path_htp_0"}
    o = q.overall
    assert o["timeline_cycles"] == 64829 and o["time_us"] == 797 and o["graph_execute_us"] == 86
    assert o["peak_vtcm_alloc"] == 671744 and o["total_dram"] == 671744
    assert o["qnn_nodes"] == 11 and o["htp_nodes"] == 45
    assert abs(o["percent_utilization"] + o["percent_idle"] - 100) < 1e-9
    res = q.htp_resources
    assert [(r["type"], r["tid"]) for r in res] == [("HMX", 256), ("HVX", 512), ("HVX", 514)]
    assert res[0]["cycles_used"] == 38764 and abs(res[0]["utilization"] - 59.794) < 1e-3
    assert len(q.overall_rows) == 1


def test_chain8_documented_invariants(chain8):
    q = chain8
    # every table sums to 68,626 cycles
    for t in ("qnn_op_types", "qnn_op_instances_nodes", "htp_op_types", "htp_op_instances"):
        assert q.column(t, "cycles").sum() == 68626, t
        assert sum(r["cycles"] for r in q.tables[t]) == 68626
    # dominant path sums to timeline_cycles
    dp = q.dominant_path_htp_0
    assert len(dp) == 88 and q.dominant_paths.keys() == {0}
    assert sum(r["dp_cycles"] for r in dp) == q.overall["timeline_cycles"] == 64829
    assert sum(r["cycles"] for r in dp) == 70399          # "cycles" is not the dominant-path share
    assert any(r["htp_op"] == "Accumulated Idle" for r in dp)
    assert len(q.qnn_op_instances_nodes) == 11 and len(q.htp_op_instances) == 45
    # the per-QNN-op numbers add up from the HTP instances
    per_op = {}
    for r in q.htp_op_instances:
        per_op[r["qnn_op"]] = per_op.get(r["qnn_op"], 0) + r["cycles"]
    assert per_op == {r["qnn_op"]: r["cycles"] for r in q.qnn_op_instances_nodes}
    flags = q.column("htp_op_instances", "hmx", dtype=object)
    assert flags.dtype == object and set(flags) <= {True, False}
    assert sum(r["hmx"] for r in q.htp_op_instances) == 8


def test_resnet50_trimmed_tables_tolerated():
    q = read_qhas(FIX / "resnet50_ortqnn_trimmed.qhas.json")
    assert q.htp_op_instances == [] and q.dominant_path_htp_0 == []
    assert q.dominant_paths == {0: []}
    assert q.overall["timeline_cycles"] == 1582526
    res = q.htp_resources
    assert [r["type"] for r in res] == ["HMX", "HVX", "HVX", "HVX", "HVX"]
    assert abs(res[0]["utilization"] - 83.49) < 0.01
    assert len(q.qnn_op_types) == 5 and len(q.qnn_op_instances_nodes) == 10
    assert q.column("htp_op_instances", "cycles").shape == (0,)


def test_synthetic_extra_fields_and_missing_tables():
    q = read_qhas(FIX / "synthetic_qhas_extra_fields.json")
    assert q.version == (1, 3, 7)
    assert q.unknown_tables == ["htp_memory_timeline"]
    assert q.tables["htp_memory_timeline"][1] == {"cycle": 3000, "vtcm_bytes": 0}
    assert q.htp_op_types == [] and q.htp_op_instances == [] and q.dominant_paths == {}
    assert "table htp_op_types is missing" in q.warnings
    assert q.overall["power_state"] == "turbo" and q.overall["new_metric_cycles"] == 17
    assert q.htp_resources[0]["color"] == "red"
    assert q.htp_resources[1]["num_dominant_path_cycles"] is None
    assert [r["htp"] for r in q.overall_rows] == [0, 1] and q.overall_rows[1]["htp_resources"] == []
    assert q.qnn_op_types[0]["vendor_note"] == "x"
    np.testing.assert_array_equal(q.column("qnn_op_types", "num_dominant_path_cycles_htp_0"), [1400, np.nan])


@pytest.mark.parametrize("name, unit", [
    ("cycles", "cycles"), ("start_cycle", "cycles"), ("timeline_cycles", "cycles"), ("dp_cycles", "cycles"),
    ("num_dominant_path_cycles_htp_0", "cycles"), ("percent_dominant_path_cycles_htp_3", "percent"),
    ("time_us", "us"), ("graph_execute_us", "us"), ("utilization", "percent"), ("percent_idle", "percent"),
    ("dram_read", "bytes"), ("total_vtcm_write", "bytes"), ("peak_vtcm_alloc", "bytes"),
    ("num_htp_ops", "count"), ("inf_per_s", "1/s"), ("tid", "id"), ("htp", "index"),
    ("op", None), ("hmx", None), ("qnn_op_type", None),
])
def test_field_units(name, unit):
    assert field_unit(name) == unit


def test_every_numeric_field_in_real_files_has_a_unit(chain8):
    q2 = read_qhas(FIX / "resnet50_ortqnn_trimmed.qhas.json")
    for q in (chain8, q2):
        for rows in q.tables.values():
            for r in rows:
                for k, v in r.items():
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        assert field_unit(k) is not None, k
                for res in r.get("htp_resources", []) if isinstance(r.get("htp_resources"), list) else []:
                    for k, v in res.items():
                        if isinstance(v, (int, float)) and not isinstance(v, bool):
                            assert field_unit(k) is not None, k


def _base():
    return json.loads((FIX / "chain8_sm8650.qhas.json").read_text())


def _mut(path, value):
    d = _base()
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return d


@pytest.mark.parametrize("doc, what", [
    ([], "top level"),
    ({"data": {}}, "header"),
    ({"header": {"artifact_type": "OP_TRACE"}}, "artifact_type"),
    (_mut(["header", "version"], {"major": "1"}), "version.major"),
    (_mut(["data"], [1, 2]), "'data'"),
    (_mut(["data", "qnn_op_types", "data"], {"a": 1}), "list of rows"),
    (_mut(["data", "qnn_op_types", "data", 0, "cycles"], "lots"), r"qnn_op_types.data\[0\].cycles"),
    (_mut(["data", "htp_op_instances", "data", 3, "hmx"], "yes"), "true/false"),
    (_mut(["data", "htp_op_instances", "data", 3, "qnn_op"], 7), "string"),
    (_mut(["data", "htp_op_instances", "data", 3, "dims"], "1x2"), "list"),
    (_mut(["data", "htp_op_instances", "data", 3], "row"), "expected an object"),
    (_mut(["data", "htp_overall_summary", "data", 0, "htp_resources"], {"data": [{"utilization": "hi"}]}),
     "utilization"),
    (_mut(["data", "qnn_op_types", "data", 0, "num_dominant_path_cycles_htp_0"], True), "number"),
])
def test_hostile_structures(doc, what):
    with pytest.raises(FormatError, match=what) as ei:
        parse_qhas(json.dumps(doc), name="bad.json")
    assert ei.value.file == "bad.json"


def test_tolerated_oddities():
    d = _base()
    d["data"]["qnn_op_types"]["data"][0]["brand_new"] = {"nested": [1, 2]}
    d["data"]["qnn_op_types"]["extra_key"] = 1
    d["data"]["dominant_path_htp_1"] = {"data": []}
    d["data"]["weird_table"] = {"columns": ["a"]}            # no "data": empty table
    del d["data"]["htp_op_types"]
    d["data"]["htp_op_instances"]["data"][0]["hmx"] = 1     # 0/1 accepted for flags
    q = parse_qhas(json.dumps(d))
    assert q.dominant_paths.keys() == {0, 1} and q.tables["weird_table"] == []
    assert "weird_table" in q.unknown_tables and q.htp_op_types == []
    assert parse_qhas(d).version == (1, 0, 0)               # already-loaded dicts too


@pytest.mark.parametrize("data", [b"", b"{", b"\xff\xfe\xd8", b"[" * 100000, b'{"header": {"artifact_type": "QHAS"}, "data": {"t": {"data": [' + b"9" * 5000 + b"]}}}"])
def test_unparseable(data):
    with pytest.raises(FormatError):
        parse_qhas(data)


def test_truncations_and_size_cap():
    raw = (FIX / "resnet50_ortqnn_trimmed.qhas.json").read_bytes()
    for n in range(0, len(raw), 97):
        with pytest.raises(FormatError):
            parse_qhas(raw[:n])
    with pytest.raises(FormatError, match="limit"):
        read_qhas(FIX / "resnet50_ortqnn_trimmed.qhas.json", max_bytes=1000)


def test_random_type_swaps_raise_only_format_error():
    import random
    rng = random.Random(3)
    base = _base()
    rows = base["data"]["htp_op_instances"]["data"]
    for _ in range(200):
        d = copy.copy(base)                                  # copy only the mutated path
        d["data"] = dict(base["data"])
        new_rows = list(rows)
        d["data"]["htp_op_instances"] = {"data": new_rows}
        j = rng.randrange(len(rows))
        r = new_rows[j] = dict(rows[j])
        k = rng.choice(list(r))
        r[k] = rng.choice([None, "s", 1, 1.5, True, [], {}, [1, "x"]])
        try:
            parse_qhas(d)
        except FormatError:
            pass


def test_sniff():
    for f in ("chain8_sm8650.qhas.json", "resnet50_ortqnn_trimmed.qhas.json", "synthetic_qhas_extra_fields.json"):
        assert sniff((FIX / f).read_bytes()[:4096])
    assert not sniff((FIX / "chain8_sm8650.optrace.json").read_bytes()[:4096])
    assert not sniff(b'"QHAS"')
