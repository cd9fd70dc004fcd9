"""Issue 16, done when: on the 4-shard fixture, each QHAS/optrace lands on its own partition with
the right numbers. The files (tools/synth_qnn_shards.py) name 8 of each shard's QNN ops; the truth
file says which partition each belongs to and the per-op cycles it carries."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_hybrid"
STEM = HERE / "synthetic_qnn_4shard"
TRUTH = json.loads((HERE / "synthetic_qnn_4shard.qnn_files.truth.json").read_text())


def _qnn_json(order):
    args = ["qnn", f"{STEM}.etdump", "--etrecord", f"{STEM}.etrecord", "--json"]
    for k in order:
        args += ["--qhas", f"{STEM}.shard{k}.qhas.json", "--optrace", f"{STEM}.shard{k}.optrace.json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["qnn"]


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 1, 0, 2)])
def test_each_file_lands_on_its_own_partition(order):
    q = _qnn_json(order)
    placed = {(f["kind"], Path(f["path"]).name): f["partition"] for f in q["shards"]["files"]}
    assert len(placed) == 8
    for k, part in enumerate(TRUTH["partitions"]):
        want = f"instruction {part['instruction_id']}"
        assert placed[("qhas", Path(part["qhas"]).name)] == want
        assert placed[("optrace", Path(part["optrace"]).name)] == want


def test_each_partition_carries_its_own_files_numbers():
    q = _qnn_json((0, 1, 2, 3))
    parts = {p["instruction_id"]: p for p in q["partitions"]}
    files = {Path(f["path"]).name: f for f in q["shards"]["files"] if f["kind"] == "qhas"}
    for truth in TRUTH["partitions"]:
        part = parts[truth["instruction_id"]]
        by_base = {}
        for op in part["ops"]:
            if op.get("qhas_cycles") is not None:
                by_base[op["base"]] = op["qhas_cycles"]
        renamed = set(truth["renamed_ops"].values())
        assert renamed <= set(by_base), sorted(renamed - set(by_base))
        for name in renamed:                      # the file's cycles for the shard's own ops
            assert by_base[name] == truth["qhas_op_cycles"][name]
        res = files[Path(truth["qhas"]).name]["qhas"]["resources"]
        assert [(r["type"], r["cycles_used"]) for r in res] == [(h["type"], h["cycles_used"]) for h in truth["hmx_hvx"]]
