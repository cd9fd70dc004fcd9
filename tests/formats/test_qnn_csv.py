"""QNN profile CSV reader and the shared QnnProfile block model."""
import json
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats import optrace, qhas, qnn_csv, qnn_json, qnn_names, qnn_text
from etscope.formats.qnn_csv import ACCEL_CYCLES, parse_qnn_csv, read_qnn_csv

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"
EMU = SHARED / "qnn-htp-emulator"

FINALIZE_STEPS = ["Graph Preparation Initializing", "Graph Optimizations", "Post Graph Optimization",
                  "Graph Sequencing for Target", "VTCM Allocation", "Parallelization Optimization",
                  "Finalizing Graph Sequence", "Completion"]


def _assert_node_sum(p):
    for b in p.execute_blocks():
        if b.node_names:
            assert b.accel_cycles is not None
            assert np.sum(b.node_cycles) == b.accel_cycles, (p.path, b.index)


# ---- device CSV (ONNX Runtime QNN EP on a Snapdragon phone) ---------------------------------------

def test_resnet50_device_csv():
    p = read_qnn_csv(FIX / "resnet50_ortqnn.profile.csv")
    assert p.source == "qnn_csv" and p.warnings == []
    assert len(p.events) == 462                         # every row but the header
    assert [b.kind for b in p.blocks] == ["finalize"] + ["execute"] * 5
    assert all(b.complete for b in p.blocks)
    fin = p.blocks[0]
    assert list(fin.roots) == ["RPC (finalize) time", "QNN accelerator (finalize) time",
                               "Accelerator (finalize) time", "QNN (finalize) time"]
    assert fin.roots["QNN (finalize) time"] == (561285.0, "us")
    assert [s[1] for s in fin.sub_events] == FINALIZE_STEPS
    assert {s[0] for s in fin.sub_events} == {"QNN (finalize) time"}
    ex = p.execute_blocks()
    assert [len(b.node_names) for b in ex] == [79] * 5
    assert [b.graph_index for b in ex] == [0] * 5 and [b.graph_execute_index for b in ex] == [0, 1, 2, 3, 4]
    assert [b.execute_index for b in ex] == [0, 1, 2, 3, 4]
    assert p.n_graphs == 1 and len(p.graph_node_names[0]) == 79
    b0 = ex[0]
    assert b0.label == "QNN (execute) time" and b0.node_parent == ACCEL_CYCLES
    assert b0.roots[ACCEL_CYCLES] == (3755250.0, "cycles")
    assert b0.roots["Number of HVX threads used"] == (4.0, "count")
    assert b0.roots["Accelerator (execute excluding wait) time"] == (1132.0, "us")
    assert b0.root_value("QNN (execute) time", "us") == 9308.0
    assert b0.root_value("QNN (execute) time", "cycles") is None
    # "Unknown event type": Time UNKNOWN, unit OBJECT -> kept, NaN, "object"
    v, unit = b0.roots["Unknown event type"]
    assert math.isnan(v) and unit == "object"
    unk = p.events.name == "Unknown event type"
    assert unk.sum() == 5 and np.isnan(p.events.value[unk]).all()
    assert set(p.events.type) == {"BACKEND", "FINALIZE", "UNKNOWN", "EXECUTE", "NODE"}
    assert set(p.events.unit) == {"us", "count", "cycles", "object"}
    assert (p.events.line[:2] == [2, 3]).all()
    assert (p.events.extra["msg_timestamp"] == 0).all()
    assert set(p.events.extra["timing_source"]) == {"BACKEND"}
    _assert_node_sum(p)
    # block / parent columns are consistent with the blocks
    for b in p.blocks:
        assert (p.events.block[b.row_start:b.row_stop] == b.index).all()
    subs = p.events.level == "SUB-EVENT"
    assert (p.events.parent[subs] >= 0).all() and (p.events.parent[~subs] == -1).all()
    assert (p.events.level[p.events.parent[subs]] == "ROOT").all()


def test_crlf_and_lf_read_alike():
    # the emulator (Windows QnnHtp.dll) writes CRLF; the device CSV from winml-cli has LF
    assert b"\r\n" not in (FIX / "resnet50_ortqnn.profile.csv").read_bytes()
    raw = (FIX / "emulator_vit_mixed_qdq_detailed.qnn_profile.csv").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")
    a = parse_qnn_csv(raw)
    b = parse_qnn_csv(raw.replace(b"\r\n", b"\n").decode())
    assert list(a.events.name) == list(b.events.name)
    np.testing.assert_array_equal(a.events.value, b.events.value)


# ---- emulator CSVs --------------------------------------------------------------------------------

def test_vit_two_partitions_detailed():
    p = read_qnn_csv(FIX / "emulator_vit_mixed_qdq_detailed.qnn_profile.csv")
    kinds = [b.kind for b in p.blocks]
    assert kinds == ["finalize"] * 3 + ["execute"] * 12
    # finalize blocks repeat: g1, g1, g2
    fins = p.blocks_of_kind("finalize")
    assert fins[0].roots == fins[1].roots and fins[0].sub_events == fins[1].sub_events
    assert fins[0].roots["QNN (finalize) time"] == (60432.0, "us")
    assert fins[2].roots["QNN (finalize) time"] == (16689.0, "us")
    assert sum(b.row_stop - b.row_start for b in fins) == 27
    ex = p.execute_blocks()
    assert [b.graph_index for b in ex] == [0, 1] * 6
    assert [b.graph_execute_index for b in ex] == [i for i in range(6) for _ in (0, 1)]
    assert p.n_graphs == 2 and [len(g) for g in p.graph_node_names] == [87, 6]
    assert len(p.execute_blocks(graph=1)) == 6
    assert ex[0].accel_cycles == 13554100 and ex[1].accel_cycles == 126500
    assert [b.row_stop - b.row_start for b in ex[:2]] == [94, 13]
    assert set(p.graph_node_names[0]) & set(p.graph_node_names[1]) == {"Input OpId_2 (cycles)",
                                                                       "Output OpId_3 (cycles)"}
    _assert_node_sum(p)


def test_vit_basic_split_by_execute_order():
    """Real 2-graph basic CSV: no NODE names; finalize g1 | g1 g2 says 2 graphs, executed in turn."""
    p = read_qnn_csv(FIX / "emulator_vit_mixed_qdq_basic.qnn_profile.csv")
    ex = p.execute_blocks()
    assert len(ex) == 12 and len(p.blocks_of_kind("finalize")) == 3
    assert all(not b.node_names for b in ex)
    assert [b.graph_index for b in ex] == [0, 1] * 6
    assert [b.graph_execute_index for b in ex] == [i for i in range(6) for _ in (0, 1)]
    assert p.n_graphs == 2 and p.graph_split == "execute order"
    assert any("assigned to graphs by their order" in w for w in p.warnings)
    assert list(ex[0].roots) == ["Number of HVX threads used", "Accelerator (execute) time", "QNN (execute) time"]
    assert ex[0].accel_cycles is None and ex[0].roots["Accelerator (execute) time"] == (12397.0, "us")


def test_cnn_tokens():
    p = read_qnn_csv(FIX / "emulator_cnn_small_qdq_detailed.qnn_profile.csv")
    assert [len(b.node_names) for b in p.execute_blocks()] == [38] * 6
    assert "Transpose_token_118:OpId_17 (cycles)" in p.graph_node_names[0]
    _assert_node_sum(p)


def _emulator_csvs():
    return sorted(EMU.glob("*/*/qnn_profile.csv")) if EMU.is_dir() else []


@pytest.mark.skipif(not EMU.is_dir(), reason="shared emulator data not present")
@pytest.mark.parametrize("path", _emulator_csvs(), ids=lambda p: "/".join(p.parts[-3:-1]))
def test_every_emulator_csv_against_its_meta(path):
    """Σ NODE cycles == accelerator cycles in every block; structure matches meta.json."""
    p = read_qnn_csv(path)
    meta = json.loads((path.parent / "meta.json").read_text())["qnn_csv"]
    assert len(p.events) == meta["rows"]
    ex = p.execute_blocks()
    assert len(ex) == meta["execute_blocks"]
    assert sum(b.row_stop - b.row_start for b in p.blocks_of_kind("finalize")) == meta["finalize_rows"]
    assert all(b.complete for b in p.blocks)
    for b, m in zip(ex, meta["per_execute"]):
        assert b.row_stop - b.row_start == m["n_events"]
        assert b.root_value("QNN (execute) time", "us") == m["qnn_execute_us"]
        assert b.root_value("Accelerator (execute) time", "us") == m["accel_us"]
        if "accel_cycles" in m:
            assert b.accel_cycles == m["accel_cycles"]
            assert len(b.node_names) == m["n_node_events"]
            assert np.sum(b.node_cycles) == b.accel_cycles == m["node_cycles_sum"]
    if meta.get("node_event_names_first_block"):
        assert ex[0].node_names == meta["node_event_names_first_block"]
        assert p.n_graphs == meta["execute_blocks_per_run"]
        assert [b.graph_index for b in ex] == [i % p.n_graphs for i in range(len(ex))]
    else:
        # basic level: graphs counted from the finalize blocks, executes assigned by order
        per_run = meta["execute_blocks_per_run"]
        assert p.n_graphs == (per_run if per_run > 1 else 0)
        if per_run > 1:
            assert [b.graph_index for b in ex] == [i % per_run for i in range(len(ex))]
        else:
            assert all(b.graph_index is None for b in ex) and not p.warnings


# ---- synthetic edge cases -------------------------------------------------------------------------

def test_synthetic_edge_cases():
    p = read_qnn_csv(FIX / "synthetic_qnn_profile_edge_cases.csv")
    assert [b.kind for b in p.blocks] == ["finalize", "execute", "execute", "execute"]
    assert [b.complete for b in p.blocks] == [True, True, True, False]
    ex = p.execute_blocks()
    assert ex[0].node_names == ["Input OpId_2 (cycles)", "/layer,0/MatMul_token_4:OpId_17 (cycles)",
                                "/a,b,c/Add:OpId_18 (cycles)"]
    assert ex[0].roots["Peak memory"] == (4096.0, "bytes")
    assert ex[1].roots["QNN (execute) time"] == (3.0, "us")       # MICROSEC
    assert [b.graph_index for b in ex] == [0, 1, 0]
    assert [b.graph_execute_index for b in ex] == [0, 0, 1]
    assert ex[2].accel_cycles == 310 and np.sum(ex[2].node_cycles) == 310
    assert ex[2].label == ""                                          # no closing row
    assert math.isnan(ex[0].roots["Unknown event type"][0])


def test_orphan_sub_event_and_repeated_header():
    text = ("Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
            "0,UNKNOWN,5,US,BACKEND,SUB-EVENT,orphan\n"
            "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
            "0,EXECUTE,7,US,BACKEND,ROOT,QNN (execute) time\n")
    p = parse_qnn_csv(text)
    assert list(p.events.level) == ["ROOT", "ROOT"]
    assert p.warnings and "orphan" in p.warnings[0]
    assert [b.kind for b in p.blocks] == ["execute"]


def test_header_only_and_reordered_columns():
    p = parse_qnn_csv("Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\r\n")
    assert len(p.events) == 0 and p.blocks == []
    p = parse_qnn_csv("Event Identifier,Time,Event Level\nQNN (execute) time,7,ROOT\n")
    assert p.blocks[0].roots == {"QNN (execute) time": (7.0, "")}


# ---- hostile inputs -------------------------------------------------------------------------------

HEADER = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"


@pytest.mark.parametrize("data, what", [
    (b"", "empty"),
    (b"\x00\x01\x02garbage", "header"),
    (b"hello,world\n1,2\n", "header"),
    (b"\xff\xfe\xfd", "UTF"),
    (HEADER + "0,NODE,abc,CYCLES,BACKEND,SUB-EVENT,x\n", "not a number"),
    (HEADER + "0,NODE,1,CYCLES,BACKEND,LEAF,x\n", "neither ROOT"),
    (HEADER + "0,NODE,1\n", "fields"),
    (b"Event Identifier,Time,Event Level\nx,1\n", "fields"),
    (HEADER.encode() + b"0,NODE,1,CYCLES,BACKEND,ROOT,\xc3\x28\n", "UTF"),
])
def test_hostile_csv(data, what):
    with pytest.raises(FormatError, match=what) as ei:
        parse_qnn_csv(data, name="bad.csv")
    assert ei.value.file == "bad.csv"


def test_size_cap(tmp_path, monkeypatch):
    f = tmp_path / "p.csv"
    f.write_bytes((FIX / "resnet50_ortqnn.profile.csv").read_bytes())
    with pytest.raises(FormatError, match="limit"):
        read_qnn_csv(f, max_bytes=1000)
    monkeypatch.setattr(qnn_names, "MAX_INPUT_BYTES", 1000)
    with pytest.raises(FormatError, match="limit"):
        read_qnn_csv(f)
    with pytest.raises(FormatError, match="limit"):
        parse_qnn_csv(f.read_bytes())


def test_missing_file(tmp_path):
    with pytest.raises(FormatError, match="no such file|cannot read"):
        read_qnn_csv(tmp_path / "nope.csv")


def test_fuzzed_real_csv_raises_only_format_error():
    raw = (FIX / "emulator_vit_mixed_qdq_detailed.qnn_profile.csv").read_bytes()[:6000]
    rng = random.Random(1234)
    for i in range(300):
        b = bytearray(raw[: rng.randrange(len(raw))] if i % 3 == 0 else raw)
        for _ in range(rng.randrange(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.choice(b",\r\n\"\x00\xffA9-.")
        try:
            parse_qnn_csv(bytes(b))
        except FormatError:
            pass


# ---- sniffing -------------------------------------------------------------------------------------

SNIFFERS = {"qnn_csv": qnn_csv.sniff, "qnn_text": qnn_text.sniff, "qnn_json": qnn_json.sniff,
            "qhas": qhas.sniff, "optrace": optrace.sniff}
KIND_OF = {
    "resnet50_ortqnn.profile.csv": "qnn_csv",
    "emulator_vit_mixed_qdq_detailed.qnn_profile.csv": "qnn_csv",
    "emulator_vit_mixed_qdq_basic.qnn_profile.csv": "qnn_csv",
    "emulator_cnn_small_qdq_detailed.qnn_profile.csv": "qnn_csv",
    "synthetic_qnn_profile_edge_cases.csv": "qnn_csv",
    "chain8_sm8650.profile.txt": "qnn_text",
    "indep8_native_sm8650.profile.txt": "qnn_text",
    "indep8_customop_sm8650.profile.txt": "qnn_text",
    "tiny_sm8750.qnn_profile.json": "qnn_json",
    "chain8_sm8650.qhas.json": "qhas",
    "resnet50_ortqnn_trimmed.qhas.json": "qhas",
    "synthetic_qhas_extra_fields.json": "qhas",
    "chain8_sm8650.optrace.json": "optrace",
    "synthetic_optrace_bare_list.json": None,     # no header: only parse_optrace takes it
    "executorch_qnn_inspector_table_sm8750.md": None,
    "README.md": None,
}


@pytest.mark.parametrize("fname", sorted(KIND_OF))
def test_sniff_matrix(fname):
    head = (FIX / fname).read_bytes()[:4096]
    hits = {k for k, f in SNIFFERS.items() if f(head)}
    expected = KIND_OF[fname]
    assert hits == ({expected} if expected else set())


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared data not present")
def test_sniff_rejects_other_shared_files():
    others = [SHARED / "qnn-device/chain8_sm8650.htp_graph.json", SHARED / "qnn-device/chain8_sm8650.runtrace.json",
              SHARED / "qnn-device/chain8_sm8650.viewer_config.json",
              *sorted(EMU.glob("*/*/ort_profile.json"))[:2], *sorted(EMU.glob("*/partitioning.txt"))[:1]]
    for f in others:
        if f.exists():
            head = f.read_bytes()[:4096]
            assert not any(s(head) for s in SNIFFERS.values()), f


def test_sniff_never_raises():
    for s in SNIFFERS.values():
        for head in [b"", b"\xff\xfe\x00", "text", b"{" * 10000, bytearray(b"abc")]:
            assert s(head) in (True, False)


def test_finalize_repeats_count_graphs():
    """Basic level: graphs counted from finalize blocks (each once, or g1 | g1 g2 | g1 g2 g3);
    any other repeat pattern counts nothing, and 10k repeated finalize blocks stay fast."""
    head = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"

    def fin(v):
        return f"0,FINALIZE,{v},US,BACKEND,ROOT,QNN (finalize) time\n"

    def ex(v):
        return (f"0,BACKEND,{v},US,BACKEND,ROOT,Accelerator (execute) time\n"
                f"0,EXECUTE,{v + 30},US,BACKEND,ROOT,QNN (execute) time\n")

    execs = "".join(ex(v) for v in (100, 5000, 90000) * 2)
    cases = [(fin(1) + fin(2) + fin(3), 3), (fin(1) + fin(1) + fin(2) + fin(1) + fin(2) + fin(3), 3),
             (fin(1) + fin(2) + fin(2) + fin(3), None), (fin(1) * 10_000 + fin(2), None)]
    for fins, graphs in cases:
        p = parse_qnn_csv(head + fins + execs)
        if graphs:
            assert [b.graph_index for b in p.execute_blocks()] == [0, 1, 2] * 2 and p.n_graphs == 3
        else:
            # graph count unknown; execute times alternate with period 3: said, not split
            assert p.n_graphs == 0 and any("period 3" in w for w in p.warnings)


def test_graphs_executed_one_after_the_other_are_not_split_by_turn():
    """2 graphs finalized, but the times say 'all of graph A, then all of graph B': no i mod 2 split."""
    head = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
    fins = "0,FINALIZE,1,US,BACKEND,ROOT,QNN (finalize) time\n" * 2 + "0,FINALIZE,2,US,BACKEND,ROOT,QNN (finalize) time\n"
    execs = "".join(f"0,BACKEND,{v},US,BACKEND,ROOT,Accelerator (execute) time\n"
                    f"0,EXECUTE,{v + 30},US,BACKEND,ROOT,QNN (execute) time\n"
                    for v in (12000, 12500, 11800, 300, 280, 310))
    p = parse_qnn_csv(head + fins + execs)
    assert p.n_graphs == 0 and all(b.graph_index is None for b in p.execute_blocks())
    assert any("not by turn" in w for w in p.warnings)
