"""ONNX Runtime's profile JSON (issue 35 item 5), on the real QNN EP emulator sessions copied from
shared/data: every figure checked against a plain reading of the JSON (json + numpy), the join to
the QNN profile written by the same session, and the wrong-kind hints of the input-kind registry."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis.qnn.ort_view import ort_view
from etscope.cli import main
from etscope.errors import FormatError
from etscope.formats.ort_profile import parse_ort_profile, read_ort_profile
from tests.shared_data import SHARED

EMU = SHARED / "qnn-htp-emulator"
SESSIONS = sorted(EMU.glob("*/*/ort_profile.json"))


def _plain(path):
    """model_run durations and Node events straight from the JSON."""
    doc = json.loads(path.read_text())
    runs = sorted((e["ts"], e["dur"]) for e in doc if e.get("cat") == "Session" and e["name"] == "model_run")
    nodes = [e for e in doc if e.get("cat") == "Node"]
    return runs, nodes


def test_every_emulator_session_is_there():
    assert len(SESSIONS) >= 6


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_reader_and_view_agree_with_a_plain_reading(path):
    runs, nodes = _plain(path)
    o = read_ort_profile(path)
    assert o.n_runs == len(runs) and len(o.node_name) == len(nodes)
    assert (o.node_run >= 0).all()                       # every node inside a model_run here
    assert np.bincount(o.node_run).min() == np.bincount(o.node_run).max()     # same nodes per run
    v = ort_view(o)
    steady = np.array([d for _, d in runs])[len(v.warmup_runs):]
    assert v.run_p50_us == pytest.approx(float(np.median(steady)))
    qnn = [e for e in nodes if e["args"]["provider"] == "QNN"]
    names = {e["args"]["op_name"] for e in qnn}
    assert {p.name for p in v.partitions} == names
    for p in v.partitions:
        durs = [e["dur"] for e in qnn if e["args"]["op_name"] == p.name]
        assert p.p50_us == pytest.approx(float(np.median(durs[len(v.warmup_runs):])))
        assert p.calls_per_run == pytest.approx(len(durs) / len(runs))
    cpu = [e for e in nodes if e["args"]["provider"] == "CPUExecutionProvider"]
    assert {c.name for c in v.cpu_nodes} == {e["name"] for e in cpu}
    assert 0.0 <= v.qnn_share + v.cpu_share <= 1.0 + 1e-9
    assert v.qnn_share + v.cpu_share + v.other_share == pytest.approx(1.0)


def test_partitions_in_execution_order_join_the_qnn_profile_graphs():
    """vit_mixed_qdq: QNN -> CPU (ReduceSumSquare) -> QNN; the QNN profile ORT wrote beside it has
    two graphs, numbered in the order they run."""
    from etscope.api import qnn_from_files

    d = EMU / "vit_mixed_qdq" / "detailed"
    r = qnn_from_files(qnn_csv=str(d / "qnn_profile.csv"), ort_profile=str(d / "ort_profile.json"))
    parts = r.ort.partitions
    assert [p.qnn_graph for p in parts] == ["graph 0", "graph 1"]
    assert [p.name.rsplit("_", 1)[1] for p in parts] == ["2", "3"]      # ORT's own numbering, same order
    for p, q in zip(parts, r.partitions):
        assert p.qnn_execute_us == q.qnn_execute_us and p.accel_us == q.accel_us
        assert p.accel_us <= p.qnn_execute_us <= p.p50_us     # the levels nest
    assert "joined by execution order" in r.ort.joined


def test_a_different_partition_count_is_not_joined():
    from etscope.api import qnn_from_files

    r = qnn_from_files(qnn_csv=str(EMU / "tblock_qdq" / "detailed" / "qnn_profile.csv"),
                       ort_profile=str(EMU / "vit_mixed_qdq" / "detailed" / "ort_profile.json"))
    assert r.ort.joined.startswith("not joined") and all(p.qnn_graph is None for p in r.ort.partitions)


def test_qnn_command_reads_it_alone_and_with_the_qnn_profile():
    d = EMU / "vit_mixed_qdq" / "detailed"
    alone = CliRunner().invoke(main, ["qnn", "--ort-profile", str(d / "ort_profile.json")], env={"COLUMNS": "100"})
    assert alone.exit_code == 0, alone.output
    assert "ONNX Runtime session" in alone.output and "ReduceSumSquare" in alone.output
    both = CliRunner().invoke(main, ["qnn", "--ort-profile", str(d / "ort_profile.json"), "--qnn-csv",
                                     str(d / "qnn_profile.csv"), "--json"])
    assert both.exit_code == 0, both.output
    assert json.loads(both.output)["qnn"]["ort"]["partitions"][1]["qnn_graph"] == "graph 1"


@pytest.mark.parametrize("bad", [b"", b"[", b"{}", b"[1, 2]", b'[{"cat": "Node", "ts": "x", "dur": -5}]', b"[" * 5000,
                                 b'[{"cat": "Session", "name": "model_run", "ts": 1e400, "dur": 1}]'])
def test_hostile_input_is_one_clear_error_or_a_bounded_reading(bad):
    try:
        o = parse_ort_profile(bad, "crafted.json")
    except FormatError as e:
        assert "crafted.json" in str(e)
        return
    v = ort_view(o)       # what it read is analysed without error
    assert v.runs == o.n_runs


KIND_HINTS = [
    (SHARED / "qnn-device" / "chain8_sm8650.profile.txt", "--qnn-csv"),
    (SHARED / "qnn-device" / "chain8_sm8650.qhas.json", "--qhas"),
    (SHARED / "qnn-device" / "chain8_sm8650.optrace.json", "--optrace"),
    (SHARED / "qnn-device" / "chain8_sm8650.runtrace.json", "--runtrace"),
    (SHARED / "qnn-device" / "resnet50_ortqnn.profile.csv", "--qnn-csv"),
    (SHARED / "qnn-device" / "tiny_sm8750.qnn_profile.json", "--qnn-csv"),
    (EMU / "tblock_qdq" / "detailed" / "ort_profile.json", "--ort-profile"),
]


@pytest.mark.parametrize("path,option", KIND_HINTS, ids=lambda x: getattr(x, "name", x))
def test_summary_names_the_option_that_reads_a_file_of_another_kind(path, option):
    res = CliRunner().invoke(main, ["summary", str(path)])
    assert res.exit_code == 2
    assert option in res.output and "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_qnn_options_name_the_right_one():
    d = SHARED / "qnn-device"
    cases = [(["--qhas", str(d / "chain8_sm8650.optrace.json")], "--optrace"),
             (["--optrace", str(d / "chain8_sm8650.qhas.json")], "--qhas"),
             (["--runtrace", str(d / "chain8_sm8650.qhas.json")], "--qhas"),
             (["--qnn-csv", str(EMU / "tblock_qdq" / "basic" / "ort_profile.json")], "--ort-profile"),
             (["--ort-profile", str(d / "chain8_sm8650.qhas.json")], "--qhas")]
    for args, option in cases:
        res = CliRunner().invoke(main, ["qnn", *args])
        assert res.exit_code == 2 and option in res.output, (args, res.output)


def test_report_shows_the_session_in_its_qnn_section(tmp_path):
    import re

    d = EMU / "vit_mixed_qdq" / "detailed"
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", "--ort-profile", str(d / "ort_profile.json"), "--qnn-csv",
                                    str(d / "qnn_profile.csv"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    blob = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', out.read_text(), re.S).group(1)
    ort = json.loads(blob)["qnn"]["ort"]
    assert [p["qnn_graph"] for p in ort["partitions"]] == ["graph 0", "graph 1"]
    bad = CliRunner().invoke(main, ["report", str(SHARED.parent / "real" / "cnn.etdump"), "--ort-profile",
                                    str(d / "ort_profile.json"), "-o", str(tmp_path / "x.html")])
    assert bad.exit_code == 2 and "QNN files alone" in bad.output
