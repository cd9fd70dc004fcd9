"""Inclusive time per source module (``nn_module_stack`` of the ETRecord's graph nodes): each
transformer layer, its attention and MLP, CPU kernels and delegated ops alike.

Every instruction's time (mean per run, the same events as the summary's split of
Method::execute) is handed out to modules, so the root's total is Method::execute minus framework
overhead, nothing counted twice or lost:

- a CPU kernel goes to its graph node's module ("measured"); a kernel covering several nodes is
  split evenly over them ("estimated");
- a delegate call's per-op times go to their nodes' modules: XNNPACK events "matched by kind and
  order" (``analysis.ops.delegate_ops``; scaled down to fit the call, and then "estimated", when they
  add up to more than the call measured), QNN ops "estimated": each op's share of the measured
  accelerator time by cycles, per run, within the DELEGATE_CALL (``analysis.qnn.container``; what
  it is a share of is in ``estimates``);
- the rest of a delegate call (ops left unmatched, the backend's own layout ops, call overhead)
  goes to the deepest module holding all the partition's nodes ("partition");
- instructions without graph nodes (prim ops, moves) go to "(no graph node)" under the root.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass, field

import numpy as np

from etscope import profile as P
from etscope.analysis.ops.delegate_ops import MATCHED_HOW, match_delegate_ops
from etscope.analysis.ops.nodes import graph_for_views, qnn_ops_by_node
from etscope.analysis.ops.placement import instruction_times, per_run_parts
from etscope.analysis.stats import runs_counted, steady_or_default
from etscope.arrays import unique_inverse


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

MEASURED, MATCHED, PARTITION, ESTIMATED = "measured", MATCHED_HOW, "partition", "estimated"
HOW = (MEASURED, MATCHED, PARTITION, ESTIMATED)
NO_NODE = "(no graph node)"
HOW_TEXT = {
    MEASURED: "CPU kernels, measured",
    MATCHED: "delegate per-op events matched to nodes by kind and order",
    PARTITION: "delegate time not split by op, at the deepest module holding the partition",
    ESTIMATED: "estimated (QNN cycles ÷ clock, or a kernel split evenly over its nodes)",
}

# With QNN per-op times (``analysis.qnn.container``): what "estimated" then is.
ESTIMATED_QNN = ("estimated (QNN ops: their share of the measured accelerator time, by cycles; a kernel split "
                 "evenly over its nodes)")


@dataclass
class Module:
    path: str                  # "" for the model itself, e.g. "m.layers.0.attention"
    type: str | None           # e.g. "torch.nn.modules.linear.Linear"
    depth: int
    self_us: float = 0.0
    total_us: float = 0.0
    how_us: dict[str, float] = field(default_factory=dict)        # inclusive, by HOW
    placement_us: dict[str, float] = field(default_factory=dict)  # inclusive, by backend / cpu
    nodes: int = 0             # graph operator nodes in it (inclusive)
    first: int = 0             # graph position of its first node (display order)


def _parent(path: str) -> str | None:
    if path == "":
        return None
    if path == NO_NODE or "." not in path:
        return ""
    return path.rsplit(".", 1)[0]


def _common_module(paths: list[str]) -> str:
    """The deepest module holding all ``paths`` ("" when they share none)."""
    if not paths:
        return ""
    split = [p.split(".") if p else [] for p in paths]
    common = []
    for parts in zip(*split):
        if any(x != parts[0] for x in parts):
            break
        common.append(parts[0])
    return ".".join(common)


@dataclass(frozen=True)
class ModuleRow:
    """One module of the tree, its times inclusive of its children's (mean per run, µs)."""

    path: str                         # "" for the model itself, e.g. "m.layers.0.attention"
    name: str                         # the attribute name ("(model)" for the root)
    type: str | None
    depth: int
    parent: str | None
    total_us: float
    self_us: float
    how_us: dict[str, float]          # by HOW, in HOW's order
    placement_us: dict[str, float]    # by backend / cpu, largest first
    nodes: int


@dataclass(frozen=True)
class QnnEstimate:
    """What one QNN partition's per-op times are (``analysis.qnn.container``), in words."""

    instruction_id: int | None
    container: str | None
    text: str


@dataclass(frozen=True)
class ModuleTimes:
    """The module tree (``etscope ops --by module``; schema ``etscope.modules/1`` less its header)."""

    graph: str
    method_execute_us: float | None
    framework_overhead_us: float | None
    attributed_us: float              # the root's total: Method::execute minus framework overhead
    how: dict[str, str]               # HOW -> what it means here
    modules: tuple[ModuleRow, ...]    # depth first, children in graph order
    estimates: tuple[QnnEstimate, ...] = field(default=(), metadata={"omit_empty": True})


def module_times(profile: P.Profile, ops: list[OpRow], qnn=None, steady: np.ndarray | None = None) -> ModuleTimes | None:
    """The module tree with inclusive time per module (mean per run, µs), or None without an
    ETRecord graph; over the steady runs (``steady``: the op table's; default ``stats.steady_runs``)."""
    g = graph_for_views(profile)
    if g is None:
        return None
    module_of = {n.name: n.module_path or "" for n in g.nodes}
    steady = steady_or_default(profile, steady)
    mods = _module_tree(g, module_of, _time_pieces(profile, ops, qnn, g, module_of, steady))
    parts = per_run_parts(profile)
    latency = parts["latency"][steady]
    estimates = qnn_estimates(qnn)
    return ModuleTimes(
        graph=g.name,
        method_execute_us=float(np.nanmean(latency)) / 1e3 if latency.size else None,
        framework_overhead_us=float(np.nanmean(parts["framework_overhead"][steady])) / 1e3 if latency.size else None,
        attributed_us=mods[""].total_us,
        # what the QNN ops' times are, only where there are some
        how={**HOW_TEXT, ESTIMATED: ESTIMATED_QNN} if estimates else dict(HOW_TEXT),
        modules=tuple(_row(m) for m in _tree_order(mods)),
        estimates=estimates)


def qnn_estimates(qnn) -> tuple[QnnEstimate, ...]:
    """Per QNN partition with per-op times: what they are (``analysis.qnn.container``), in words."""
    out = []
    for p in (qnn.partitions if qnn is not None else ()):
        ot = p.op_times
        if ot.estimate and ot.ops_us_mean:
            iid = p.instruction_id
            where = f"DELEGATE_CALL #{iid}" if iid is not None else str(p.key)
            out.append(QnnEstimate(iid, ot.container, f"{where}: QNN op times are an {ot.estimate} ({ot.how})"))
    return tuple(out)


def _time_pieces(profile: P.Profile, ops: list[OpRow], qnn, g, module_of: dict[str, str], steady: np.ndarray
                 ) -> list[tuple[str, float, str, str]]:
    """Each instruction's mean time per run (µs) cut into (module, µs, placement, how) pieces:
    a CPU kernel on its node(s), a delegate call on its matched / estimated nodes, the rest of the
    call at the deepest module holding the partition's nodes."""
    n_runs = runs_counted(profile, steady)
    it = instruction_times(profile)
    ins_us: dict[int, float] = {}
    if len(it["instruction_id"]):
        ids, inv = unique_inverse(it["instruction_id"])
        weights = it["ns"] if steady.all() else np.where(steady[it["execute"]], it["ns"], 0.0)
        sums = np.bincount(inv.reshape(-1), weights=weights)
        ins_us = {int(i): float(s) / 1e3 / n_runs for i, s in zip(ids, sums)}
    pieces: list[tuple[str, float, str, str]] = []
    matched = match_delegate_ops(profile, ops, g, steady)
    qnn_nodes = qnn_ops_by_node(qnn)
    for iid in sorted(ins_us):
        t = ins_us[iid]
        ins = profile.instructions.get(iid)
        placement = ins.backend if ins else P.UNKNOWN_DELEGATE
        nodes = [n for n in dict.fromkeys(ins.nodes if ins else []) if n in module_of]
        if ins is not None and ins.kind == "cpu" and nodes:
            how = MEASURED if len(nodes) == 1 else ESTIMATED
            pieces += [(module_of[n], t / len(nodes), placement, how) for n in nodes]
            continue
        per_node, how = _delegate_node_times(iid, matched, qnn_nodes, module_of)
        nodes += [n for n in per_node if n not in nodes]
        if not nodes:
            pieces.append((NO_NODE, t, placement, MEASURED))
            continue
        s = sum(per_node.values())
        scale = t / s if s > t > 0 else 1.0      # estimates above the measured call: fit them in
        if scale < 1.0:
            how = ESTIMATED
        pieces += [(module_of[n], us * scale, placement, how) for n, us in per_node.items()]
        pieces.append((_common_module([module_of[n] for n in nodes]), max(t - s * scale, 0.0), placement, PARTITION))
    return pieces


def _module_tree(g, module_of: dict[str, str], pieces: list[tuple[str, float, str, str]]) -> dict[str, Module]:
    """Every module of the graph (by path, "" the root) with its node count and the pieces' time
    added to it and to every module above it."""
    types: dict[str, str] = {}
    first: dict[str, int] = {}
    for pos, n in enumerate(g.nodes):
        for _, (path, ty) in n.nn_module_stack:
            types.setdefault(path or "", ty)
        if n.op == "call_function":
            first.setdefault(module_of[n.name], pos)
    mods: dict[str, Module] = {}

    def module(path: str) -> Module:
        m = mods.get(path)
        if m is None:
            parent = _parent(path)
            depth = 0 if parent is None else module(parent).depth + 1
            m = mods[path] = Module(path, types.get(path), depth, first=first.get(path, 1 << 30))
        return m

    module("")
    for n in g.nodes:
        if n.op == "call_function":
            path = module_of[n.name]
            while path is not None:
                module(path).nodes += 1
                path = _parent(path)
    for path, us, placement, how in pieces:
        module(path).self_us += us
        p = path
        while p is not None:
            m = module(p)
            m.total_us += us
            m.how_us[how] = m.how_us.get(how, 0.0) + us
            m.placement_us[placement] = m.placement_us.get(placement, 0.0) + us
            p = _parent(p)
    for m in list(mods.values()):           # a module comes where its first node comes
        p = _parent(m.path)
        while p is not None:
            mods[p].first = min(mods[p].first, m.first)
            p = _parent(p)
    return mods


def _delegate_node_times(iid: int, matched: dict, qnn_nodes: dict, module_of: dict) -> tuple[dict[str, float], str]:
    """Per-node times inside one delegate instruction and how they were obtained."""
    if iid in matched:
        return {n: us for n, us in matched[iid].node_us.items() if n in module_of}, MATCHED
    return {n: q["est_us"] for n, q in qnn_nodes.items()
            if q["partition"] == iid and q["est_us"] and n in module_of}, ESTIMATED


def _tree_order(mods: dict[str, Module]) -> list[Module]:
    """Depth first, children in graph order (their first node), "(no graph node)" last."""
    children: dict[str, list[Module]] = {}
    for m in mods.values():
        parent = _parent(m.path)
        if parent is not None:
            children.setdefault(parent, []).append(m)
    out: list[Module] = []
    stack = [mods[""]]
    while stack:
        m = stack.pop()
        out.append(m)
        kids = sorted(children.get(m.path, []), key=lambda k: (k.path == NO_NODE, k.first, k.path))
        stack.extend(reversed(kids))
    return out


def _row(m: Module) -> ModuleRow:
    return ModuleRow(path=m.path, name=m.path.rsplit(".", 1)[-1] if m.path else "(model)", type=m.type,
                     depth=m.depth, parent=_parent(m.path), total_us=m.total_us, self_us=m.self_us,
                     how_us={h: m.how_us[h] for h in HOW if h in m.how_us},
                     placement_us=dict(sorted(m.placement_us.items(), key=lambda kv: -kv[1])),
                     nodes=m.nodes)
