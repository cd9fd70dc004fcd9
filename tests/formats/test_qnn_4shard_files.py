"""The 4-shard fixture's QHAS/optrace pairs (tools/synth_qnn_shards.py): each pair names only its
own partition's QNN ops (so joining by op names can place it), carries the numbers its truth file
states, and reads with etscope's readers."""
import json
from pathlib import Path

import numpy as np
import pytest

from etscope import profile as P
from etscope.formats.optrace import read_optrace
from etscope.formats.qhas import read_qhas

D = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_hybrid"
TRUTH = json.loads((D / "synthetic_qnn_4shard.qnn_files.truth.json").read_text())


def _etdump_ops_by_instruction() -> dict[int, set[str]]:
    p = P.load(str(D / "synthetic_qnn_4shard.etdump"))
    ev = p.events
    out: dict[int, set[str]] = {}
    sel = ev["delegate_id_str"] >= 0
    for i, c in zip(ev["instruction_id"][sel], ev["delegate_id_str"][sel]):
        name = p.strings[int(c)]
        if ":OpId_" in name:
            out.setdefault(int(i), set()).add(name.split(":OpId_")[0])
    return out


@pytest.mark.parametrize("part", TRUTH["partitions"], ids=lambda t: f"instr{t['instruction_id']}")
def test_each_pair_names_only_its_own_partitions_ops(part):
    ops = _etdump_ops_by_instruction()
    q = json.loads((D / part["qhas"]).read_text())
    o = json.loads((D / part["optrace"]).read_text())
    named_q = {r["qnn_op"] for r in q["data"]["qnn_op_instances_nodes"]["data"]} - {"Input", "Output"}
    named_q = {n for n in named_q if not n.startswith("SystemService")}
    named_o = {e["args"]["QNN Op Name"] for e in o["traceEvents"] if e.get("ph") == "X" and "QNN Op Name" in e["args"]}
    named_o = {n for n in named_o if n not in ("Input", "Output") and not n.startswith("SystemService")}
    assert named_q == named_o == set(part["renamed_ops"].values()) and len(named_q) == 8
    for instr, names in ops.items():
        assert (named_q <= names) == (instr == part["instruction_id"]), instr
    # The numbers the truth states are the file's.
    rows = q["data"]["qnn_op_instances_nodes"]["data"]
    assert sum(r["cycles"] for r in rows) == part["qhas_qnn_op_cycles"]
    assert {r["qnn_op"]: r["cycles"] for r in rows} == part["qhas_op_cycles"]
    assert read_qhas(str(D / part["qhas"])) is not None
    assert set(read_optrace(str(D / part["optrace"])).qnn_op_pids.values()) >= named_o   # QNN::<op> processes renamed too


def test_shards_carry_different_numbers():
    totals = [p["qhas_qnn_op_cycles"] for p in TRUTH["partitions"]]
    assert len(set(totals)) == 4
    assert np.all(np.array([p["scale"] for p in TRUTH["partitions"]]) > 0)
