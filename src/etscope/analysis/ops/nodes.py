"""The ETRecord graph as plain data for the views: each node with its placement and time.

Joins what analysis already computed (instructions' nodes, the op table, the QNN per-op rows) onto
the graph's nodes; computes nothing new. Used by the HTML graph view and the Model Explorer overlay.

Time per node (mean per run, µs):
- CPU kernel instruction: its OPERATOR_CALL time, split evenly over the graph nodes it covers
  (normally one).
- QNN per-op rows: each op's share of the partition's measured container (cycles share × the
  measured accelerator time, per run, within DELEGATE_CALL: ``analysis.qnn.container``), ``estimated``.
- Other delegates (XNNPACK ...): the backend's per-op events matched to the partition's nodes by
  op kind and order (``analysis.ops.delegate_ops``); nodes where that is ambiguous stay untimed (with
  the reason) and their time stays with the partition as a whole.

``time_how`` says which of these a node's time is: "measured" (CPU kernel), "estimate: share of
measured <container>" (QNN), "matched by kind and order" (XNNPACK and other delegates).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

from etscope import profile as P
from etscope.analysis.ops.delegate_ops import MATCHED_HOW, match_delegate_ops
from etscope.analysis.stats import runs_counted
from etscope.formats.backends import QNN_BACKEND_ID


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

MEASURED = "measured"
ESTIMATED_FROM_CYCLES = "estimate: share of measured accelerator time"    # when a partition does not say


def graph_for_views(profile: P.Profile):
    """The graph whose node names the instructions refer to: the lowering input, else the edge graph."""
    rec = profile.etrecord
    if rec is None:
        return None
    method = profile.method or "forward"
    g = None
    lowering_input = getattr(rec, "lowering_input", None)
    if callable(lowering_input):
        try:
            g = lowering_input(method)
        except Exception:  # noqa: BLE001 - a view must not fail on an odd ETRecord
            g = None
    if g is None:
        g = (getattr(rec, "graphs", None) or {}).get(method)
    return g


def qnn_ops_by_node(qnn) -> dict[str, dict]:
    """Graph node name -> {"est_us", "cycles", "op_type", "qnn_names", "hmx", "hvx", "partition",
    "estimate"}: ``est_us`` the node's QNN ops' share of their partition's measured container (mean
    per run, ``analysis.qnn.container``), ``estimate`` what that is a share of."""
    out: dict[str, dict] = {}
    if not qnn:
        return out
    for part in qnn.partitions:
        for op in part.ops:
            node = op.node
            if not node:
                continue
            d = out.setdefault(node, {"est_us": None, "cycles": 0.0, "op_type": op.op_type,
                                      "qnn_names": [], "hmx": None, "hvx": None,
                                      "partition": part.instruction_id,
                                      "estimate": part.op_times.estimate or ESTIMATED_FROM_CYCLES})
            est = op.us_in_container
            if isinstance(est, (int, float)):
                d["est_us"] = (d["est_us"] or 0.0) + float(est)
            cyc = op.cycles_p50
            if isinstance(cyc, (int, float)):
                d["cycles"] += float(cyc)
            if op.qnn_name:
                d["qnn_names"].append(str(op.qnn_name))
            for k, x in (("hmx", op.hmx), ("hvx", op.hvx)):
                if x is not None:
                    d[k] = bool(d[k]) or bool(x)
    return out


def module_instances(node) -> list[tuple[str, str]]:
    """(module instance path, module type) of each level of the node's ``nn_module_stack``, outer
    first. An instance path is the module path with each call of a reused module told apart:
    ``pool@1`` for the second call of ``pool`` (torch.export's stack keys end in ``@N`` for calls
    after the first), so a collapsed module is one place in the graph."""
    out: list[tuple[str, str]] = []
    acc = prev = ""
    for key, (path, ty) in node.nn_module_stack:
        if not path:
            continue
        suffix = "@" + str(key).rsplit("@", 1)[1] if "@" in str(key) else ""
        rel = path[len(prev) + 1:] if prev and path.startswith(prev + ".") else path
        acc = f"{acc}.{rel}{suffix}" if acc else rel + suffix
        out.append((acc, ty))
        prev = path
    return out


def instruction_us(profile: P.Profile, ops: list[OpRow], steady: np.ndarray | None = None) -> dict[int, float]:
    """Time of each instruction (mean per run, µs; all its calls in a run) from the op table's
    level-0 time rows (``steady``: the runs the table is over; default ``stats.steady_runs``)."""
    n_runs = runs_counted(profile, steady)
    out: dict[int, float] = {}
    for r in ops:
        if r.level == 0 and r.unit == "ns" and r.instruction_id is not None:
            out[r.instruction_id] = out.get(r.instruction_id, 0.0) + (r.total or 0.0) / 1e3 / n_runs
    return out


@dataclass(frozen=True)
class NodeRow:
    """One operator node of the ETRecord graph with where it ran and its time (mean µs per run)."""

    name: str
    op: str
    target: str | None
    module: str                       # nn_module_stack path ("" for none)
    module_type: str | None
    module_instance: str
    inputs: tuple[int, ...]           # positions of its input nodes in ``NodeTable.nodes``
    input_kind: str | None
    placement: str | None             # backend id or "cpu"
    instruction_id: int | None
    time_us: float | None
    estimated: bool
    time_how: str | None              # how the time was obtained (None when untimed)
    untimed_why: str | None           # why a node has no time
    cycles: float | None              # QNN per-op cycles (QNN nodes)
    hmx: bool | None
    hvx: bool | None
    source: str | None


@dataclass(frozen=True)
class NodeTable:
    graph: str
    method: str | None
    nodes: tuple[NodeRow, ...]
    module_types: dict[str, str]      # module instance -> type


def node_table(profile: P.Profile, ops: list[OpRow], qnn=None, steady: np.ndarray | None = None) -> NodeTable | None:
    """Nodes of the graph with placement and time, or None without an ETRecord graph."""
    g = graph_for_views(profile)
    if g is None:
        return None
    instr_us = instruction_us(profile, ops, steady)
    placement: dict[str, str] = {}
    instr_of: dict[str, int] = {}
    time_us: dict[str, float] = {}
    how: dict[str, str] = {}
    estimated: set[str] = set()
    for ins in sorted(profile.instructions.values(), key=lambda i: i.id):
        for name in ins.nodes:
            placement.setdefault(name, ins.backend)
            instr_of.setdefault(name, ins.id)
        if ins.kind == "cpu" and ins.nodes and ins.id in instr_us:
            share = instr_us[ins.id] / len(ins.nodes)
            for name in ins.nodes:
                time_us[name] = time_us.get(name, 0.0) + share
                how[name] = MEASURED
    matched = match_delegate_ops(profile, ops, g, steady)
    untimed: dict[str, str] = {}
    for part in matched.values():
        for name, us in part.node_us.items():
            time_us[name] = time_us.get(name, 0.0) + us
            how.setdefault(name, MATCHED_HOW)
        for name, why in part.untimed.items():
            untimed.setdefault(name, f"{part.backend} (instruction {part.instruction_id}): {why}")
    qnn_nodes = qnn_ops_by_node(qnn)
    for name, q in qnn_nodes.items():
        if q["est_us"] is not None:
            time_us[name] = time_us.get(name, 0.0) + q["est_us"]
            estimated.add(name)
            how.setdefault(name, q["estimate"])
        if name not in placement:
            placement[name] = QNN_BACKEND_ID
        if q["partition"] is not None:
            instr_of.setdefault(name, q["partition"])
    nodes = []
    index = {n.name: i for i, n in enumerate(g.nodes)}
    module_types: dict[str, str] = {}
    for n in g.nodes:
        q = qnn_nodes.get(n.name)
        instances = module_instances(n)
        for inst, ty in instances:
            module_types.setdefault(inst, ty)
        nodes.append(NodeRow(
            name=n.name, op=n.op, target=n.target,
            module=n.module_path or "", module_type=n.module_type,
            module_instance=instances[-1][0] if instances else "",
            inputs=tuple(index[i] for i in n.inputs if i in index),
            input_kind=n.input_kind,
            placement=placement.get(n.name),
            instruction_id=instr_of.get(n.name),
            time_us=time_us.get(n.name),
            estimated=n.name in estimated,
            time_how=how.get(n.name) if n.name in time_us else None,
            untimed_why=untimed.get(n.name) if n.name not in time_us else None,
            cycles=q["cycles"] if q else None,
            hmx=q["hmx"] if q else None, hvx=q["hvx"] if q else None,
            source=n.source))
    return NodeTable(graph=g.name, method=g.method, nodes=tuple(nodes), module_types=module_types)
