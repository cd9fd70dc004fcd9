"""Module totals against ExecuTorch's Inspector (``find_total_for_module``, recorded by
tools/inspector_module_totals.py in tests/fixtures/real/inspector_module_totals.json).

The Inspector sums kernel events (not their OPERATOR_CALL wrappers), leaves out instructions
without graph nodes and counts a delegate call whole in every module it touches. So:
- the model (root): etscope's total minus "(no graph node)" minus each CPU instruction's
  OPERATOR_CALL-over-kernel time equals the Inspector's total exactly;
- every module: etscope's total minus that OPERATOR_CALL-over-kernel time of its nodes is at most
  the Inspector's (which counts whole partitions where etscope splits them by op)."""
import json

import numpy as np
import pytest

from etscope.analysis.ops.modules import NO_NODE, module_times
from etscope.analysis.ops.per_op import op_table
from etscope.profile import load


def _wrapper_time_per_module(p, ops) -> dict[str, float]:
    """µs per run of OPERATOR_CALL beyond its kernel event, per module path (inclusive), each CPU
    instruction's split evenly over its nodes as etscope splits its time."""
    g = p.etrecord.graphs[p.method]
    n = p.n_runs
    out: dict[str, float] = {}
    for iid, ins in p.instructions.items():
        nodes = [x for x in ins.nodes if x in g.by_name]
        if ins.kind != "cpu" or not nodes:
            continue
        wrapper = sum(r.total for r in ops if r.instruction_id == iid and r.role == "operator_call")
        kernel = sum(r.total for r in ops if r.instruction_id == iid and r.role == "kernel")
        for x in nodes:
            path = g.by_name[x].module_path or ""
            parts = path.split(".") if path else []
            for k in range(len(parts) + 1):
                key = ".".join(parts[:k])
                out[key] = out.get(key, 0.0) + (wrapper - kernel) / n / 1e3 / len(nodes)
    return out


@pytest.mark.parametrize("name, etrecord", [("cnn", "cnn"), ("llama_nodebug", "llama")])
def test_module_totals_agree_with_the_inspector(real, name, etrecord):
    oracle = json.loads((real / "inspector_module_totals.json").read_text())["fixtures"][name]["module_total_us"]
    p = load(real / f"{name}.etdump", real / f"{etrecord}.etrecord", real / f"{etrecord}.pte")
    every = np.ones(p.n_runs, dtype=bool)       # the Inspector counts every run (the views: the steady ones)
    ops = op_table(p, every)
    by = {m.path: m for m in module_times(p, ops, None, every).modules}
    wrapper = _wrapper_time_per_module(p, ops)
    no_node = by[NO_NODE].total_us if NO_NODE in by else 0.0
    assert by[""].total_us - no_node - wrapper.get("", 0.0) == pytest.approx(oracle[""], rel=1e-9)
    compared = 0
    for path, theirs in oracle.items():
        if path in by:
            ours = by[path].total_us - wrapper.get(path, 0.0) - (no_node if path == "" else 0.0)
            assert ours <= theirs * (1 + 1e-9) + 1e-9, path
            compared += 1
    assert compared == len(oracle)
