"""Several QNN graphs in one basic-level QNN profile (no per-op names): split by execute order when
the finalize blocks say how many graphs there are, else a warning that the executes mix graphs.

Fixtures ``synthetic_multigraph*`` are made by ``tools/synth_qnn_multigraph.py`` from real
single-graph files; the oracle is each source file's own values (shared data, skipped if absent)."""
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis import qnn
from etscope.formats.qnn_csv import read_qnn_csv
from etscope.formats.qnn_profile_files import read_qnn_profile
from tests.conftest import shared_or_skip
from qnn_typed import plain

Q = Path(__file__).parents[1] / "fixtures" / "qnn"
ACCEL = ("Accelerator (execute) time", "us")
QNN_EXEC = ("QNN (execute) time", "us")


def _source_values(rel: str, name: str) -> list[float]:
    p = read_qnn_csv(shared_or_skip(f"qnn-htp-emulator/{rel}/basic/qnn_profile.csv"))
    return [b.root_value(name, "us") for b in p.execute_blocks()]


def _report(path):
    return plain(qnn.qnn_report(qnn_profile=read_qnn_profile(str(path))))


def test_real_vit_basic_two_graphs():
    """Real emulator file (2 QNN partitions, 6 executes each): p50 per graph, not one mixed p50."""
    r = _report(Q / "emulator_vit_mixed_qdq_basic.qnn_profile.csv")
    parts = r["partitions"]
    assert [p["key"] for p in parts] == ["graph 0", "graph 1"]
    assert [p["runs"] for p in parts] == [6, 6]
    # the harness's own per-position medians (meta.json by_partition_position)
    assert parts[0]["accel_us"] == 12326.0 and parts[1]["accel_us"] == 284.5
    assert parts[0]["qnn_execute_us"] == 12356.0 and parts[1]["qnn_execute_us"] == 322.5
    assert any("assigned to graphs by their order" in w for w in r["warnings"])
    assert all(any("execute order" in n for n in p["notes"]) for p in parts)


@pytest.mark.parametrize("fname, sources", [
    ("synthetic_multigraph2_basic.qnn_profile.csv", ["cnn_small_qdq", "tblock_qdq"]),
    ("synthetic_multigraph3_basic.qnn_profile.csv", ["cnn_small_fp32", "cnn_small_qdq", "tblock_qdq"]),
])
def test_synthetic_basic_split_matches_sources(fname, sources):
    r = _report(Q / fname)
    parts = r["partitions"]
    assert len(parts) == len(sources)
    for p, src in zip(parts, sources):
        accel = _source_values(src, "Accelerator (execute) time")
        qexec = _source_values(src, "QNN (execute) time")
        assert p["runs"] == len(accel) == 6
        assert p["per_run"]["accel_us"] == accel
        assert p["accel_us"] == float(np.median(accel))
        assert p["qnn_execute_us"] == float(np.median(qexec))


@pytest.mark.parametrize("fname, words", [
    ("synthetic_multigraph2_basic_odd.qnn_profile.csv", "not a multiple of 2"),
    ("synthetic_multigraph2_basic_nofinalize.qnn_profile.csv", "alternate with period 2"),
    ("synthetic_multigraph2_basic.profile.txt", "does not show how many graphs"),
])
def test_cannot_split_says_so(fname, words):
    r = _report(Q / fname)
    assert len(r["partitions"]) == 1
    assert any(words in w for w in r["warnings"]), r["warnings"]


def test_json_two_graphs_by_names():
    """Viewer JSON with per-op sub-events: graphs told apart by their NODE names, not merged."""
    p = read_qnn_profile(str(Q / "synthetic_multigraph2.qnn_profile.json"))
    assert [b.graph_index for b in p.execute_blocks()] == [0, 1, 0, 1] and p.graph_split == "node names"
    r = plain(qnn.qnn_report(qnn_profile=p))
    assert [x["runs"] for x in r["partitions"]] == [2, 2]
    assert r["partitions"][1]["per_run"]["accel_cycles"] == [47827.0, 32837.0]


@pytest.mark.parametrize("rel", ["cnn_small_qdq/basic", "tblock_qdq/basic", "cnn_small_fp32/basic"])
def test_real_single_graph_basic_unchanged(rel):
    path = shared_or_skip(f"qnn-htp-emulator/{rel}/qnn_profile.csv")
    qp = read_qnn_csv(path)
    assert qp.graph_split is None and not qp.warnings
    r = plain(qnn.qnn_report(qnn_profile=qp))
    (p,) = r["partitions"]
    accel = [b.root_value("Accelerator (execute) time", "us") for b in qp.execute_blocks()]
    assert p["key"] == "graph 0" and p["runs"] == 6 and p["accel_us"] == float(np.median(accel))
    assert not p["notes"]
