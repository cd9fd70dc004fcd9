"""qnn-profile-viewer text output reader."""
import math
import random
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.qhas import read_qhas
from etscope.formats.qnn_csv import ACCEL_CYCLES
from etscope.formats.qnn_names import parse_qnn_event_name
from etscope.formats.qnn_text import parse_qnn_text, read_qnn_text, sniff

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"

EXEC_ROOTS = ["Number of HVX threads used", "RPC (execute) time", "QNN accelerator (execute) time",
              "Num times yield occured", "Time for initial VTCM acquire",
              "Time for HVX + HMX power on and acquire", ACCEL_CYCLES, "Accelerator (execute) time",
              "Accelerator (execute excluding wait) time", "Unknown event type", "QNN (execute) time"]


def test_chain8_structure():
    p = read_qnn_text(FIX / "chain8_sm8650.profile.txt")
    assert p.source == "qnn_text" and p.warnings == []
    assert p.metadata["qnn-profile-viewer"] == "v2.45.0.260326154327"
    assert p.metadata["Backend"] == "v2.45.0.260326154327"
    assert p.metadata["Time Scale"] == "1e-06"
    assert p.metadata["Epoch Timestamp"] == "1780423295833671"
    assert p.metadata["Steady Clock Timestamp"] == "1615942927823"
    assert [(b.kind, b.label) for b in p.blocks] == [
        ("init", "Create From Binary Stats"), ("execute", "Execute Stat 1"),
        ("execute", "Execute Stat 2"), ("execute", "Execute Stat 3")]
    assert all(b.complete for b in p.blocks)
    init = p.blocks[0]
    assert init.roots["QNN (load binary) time"] == (24883.0, "us")
    ex = p.execute_blocks()
    for b in ex:
        assert list(b.roots) == EXEC_ROOTS
        assert len(b.node_names) == 12 and b.node_parent == ACCEL_CYCLES
        assert np.sum(b.node_cycles) == b.accel_cycles
        v, unit = b.roots["Unknown event type"]
        assert math.isnan(v) and unit == "object"
    assert [b.accel_cycles for b in ex] == [68365, 47827, 32837]
    assert [b.root_value("Accelerator (execute excluding wait) time", "us") for b in ex] == [86, 22, 15]
    assert ex[0].roots["Time for HVX + HMX power on and acquire"] == (11947.0, "us")   # cold first run
    assert ex[0].node_names[:3] == ["Input OpId_2 (cycles)", "MatMul_0_pre_reshape:OpId_16 (cycles)",
                                    "MatMul_0:OpId_18 (cycles)"]
    assert [b.graph_index for b in ex] == [0, 0, 0] and [b.graph_execute_index for b in ex] == [0, 1, 2]
    # app-level summary (before "Printing All Data Received From Back End")
    assert ("Init Stats", "NetRun", 24900.0, "us") in p.app_stats
    assert ("De-Init Stats", "Backend (QNN (deinit) time)", 3441.0, "us") in p.app_stats
    assert ("Compose Graphs Stats", "NetRun", 0.0, "us") in p.app_stats
    # text rows: NODE type only on indented per-op lines; line numbers point into the file
    assert (p.events.type == "NODE").sum() == 36
    lines = (FIX / "chain8_sm8650.profile.txt").read_text().split("\n")
    for i in range(len(p.events)):
        assert lines[p.events.line[i] - 1].strip().startswith(p.events.name[i])


def test_chain8_first_execute_equals_qhas_nodes():
    """README: Execute Stat 1 per-op cycles equal QHAS qnn_op_instances_nodes (QHAS = first execute)."""
    p = read_qnn_text(FIX / "chain8_sm8650.profile.txt")
    q = read_qhas(FIX / "chain8_sm8650.qhas.json")
    qhas_cycles = {r["qnn_op"]: r["cycles"] for r in q.qnn_op_instances_nodes}
    b = p.execute_blocks()[0]
    text_cycles = {parse_qnn_event_name(n).base: c for n, c in zip(b.node_names, b.node_cycles)}
    for op, c in qhas_cycles.items():
        if op in text_cycles:
            assert text_cycles[op] == c, op
    # QHAS has one system op the text lacks; the text has two 0-cycle reshapes QHAS lacks
    assert set(qhas_cycles) - set(text_cycles) == {"SystemService_ChunkPreload_1269"}
    assert set(text_cycles) - set(qhas_cycles) == {"MatMul_0_pre_reshape", "MatMul_7_post_reshape"}
    assert sum(qhas_cycles.values()) == b.accel_cycles + qhas_cycles["SystemService_ChunkPreload_1269"] == 68626


def test_indep8_native_and_customop():
    nat = read_qnn_text(FIX / "indep8_native_sm8650.profile.txt")
    cus = read_qnn_text(FIX / "indep8_customop_sm8650.profile.txt")
    for p, n_nodes in ((nat, 26), (cus, 28)):
        ex = p.execute_blocks()
        assert len(ex) == 3 and [len(b.node_names) for b in ex] == [n_nodes] * 3
        for b in ex:
            assert np.sum(b.node_cycles) == b.accel_cycles
    names = cus.execute_blocks()[0].node_names
    assert "OpId_17 (cycles)" in names and "OpId_18 (cycles)" in names
    assert parse_qnn_event_name("OpId_17 (cycles)").base == ""
    assert sum(1 for n in nat.graph_node_names[0] if "reshape" in n) == 16
    zero = [n for n, c in zip(nat.execute_blocks()[0].node_names, nat.execute_blocks()[0].node_cycles) if c == 0]
    assert len(zero) == 16                       # the reshapes cost nothing
    assert cus.execute_blocks()[0].accel_cycles == 317465


def test_minimal_backend_only_text():
    text = ("Execute Stat 1\n"
            "Accelerator (execute) time (cycles) : 30  cycles\n"
            "    a:OpId_1 (cycles) : 10  cycles\n"
            "    OpId_2 (cycles) : 20  cycles\n"
            "QNN (execute) time : 5  us\n"
            "Execute Stat 2\n"
            "Accelerator (execute) time (cycles) : 7  cycles\n")
    p = parse_qnn_text(text)
    assert [(b.kind, b.complete) for b in p.blocks] == [("execute", True), ("execute", False)]
    assert p.blocks[0].node_names == ["a:OpId_1 (cycles)", "OpId_2 (cycles)"]
    assert p.blocks[1].accel_cycles == 7


def test_unindented_section_with_two_graphs_splits_at_closing_root():
    text = ("Execute Stat 1\n"
            "Accelerator (execute) time (cycles) : 10  cycles\n"
            "    a:OpId_1 (cycles) : 10  cycles\n"
            "QNN (execute) time : 5  us\n"
            "Accelerator (execute) time (cycles) : 3  cycles\n"
            "    b:OpId_1 (cycles) : 3  cycles\n"
            "QNN (execute) time : 1  us\n")
    p = parse_qnn_text(text)
    assert [b.graph_index for b in p.execute_blocks()] == [0, 1]
    assert [b.label for b in p.blocks] == ["Execute Stat 1", "Execute Stat 1"]


@pytest.mark.parametrize("data, what", [
    (b"", "not qnn-profile-viewer"),
    (b"\x00\x01binary", "not qnn-profile-viewer"),
    (b"{\"json\": 1}", "not qnn-profile-viewer"),
    (b"Execute Stat 1\nQNN (execute) time : abc  us\n", "not a number"),
    (b"Execute Stat 1\nQNN (execute) time : 1 us extra words\n", "cannot read"),
    (b"\xff\xfe\xfd\xfc", "UTF|not qnn"),
])
def test_hostile_text(data, what):
    with pytest.raises(FormatError, match=what) as ei:
        parse_qnn_text(data, name="bad.txt")
    assert ei.value.file == "bad.txt"


def test_fuzzed_text_raises_only_format_error():
    raw = (FIX / "chain8_sm8650.profile.txt").read_bytes()
    rng = random.Random(7)
    for i in range(300):
        b = bytearray(raw[: rng.randrange(len(raw))] if i % 3 == 0 else raw)
        for _ in range(rng.randrange(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.choice(b" :\n\t\x00\xffx9-.")
        try:
            parse_qnn_text(bytes(b))
        except FormatError:
            pass


def test_size_cap():
    with pytest.raises(FormatError, match="limit"):
        read_qnn_text(FIX / "chain8_sm8650.profile.txt", max_bytes=100)


def test_sniff():
    for f in ("chain8_sm8650.profile.txt", "indep8_native_sm8650.profile.txt", "indep8_customop_sm8650.profile.txt"):
        assert sniff((FIX / f).read_bytes()[:4096])
    assert not sniff((FIX / "README.md").read_bytes())
    assert not sniff((FIX / "resnet50_ortqnn.profile.csv").read_bytes()[:4096])
