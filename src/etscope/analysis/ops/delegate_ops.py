"""Per-op times inside delegate partitions whose events carry no graph link (XNNPACK), matched to
the partition's graph nodes by op kind and order.

XNNPACK logs one event per runtime operator, named by the operator only
(``Convolution (NHWC, F32) IGEMM #1``, delegate debug id -1; ``XNNProfiler::submit_trace``), in
the order its runtime runs them, which is the order of the partition's nodes in the graph. The
partition's nodes come from the ETRecord (the instruction's debug handles). So, per delegate call:

- each event and each node gets a coarse kind (``analysis.ops.kinds``, partition kinds included);
- for each kind with as many nodes as events, the k-th node of that kind (graph order) gets the
  k-th event of that kind: "matched by kind and order";
- a kind whose counts differ is ambiguous (fused ops such as a relu folded into the convolution's
  clamp, decompositions, debug handles shared with other partitions): its nodes stay untimed and
  its events unmatched;
- a kind whose nodes the graph leaves in no fixed order (graph order and a first-come
  topological order differ) is ambiguous too;
- when the matched events would run a node before a node it depends on, the whole call is left
  unmatched (the assumption does not hold there).

Events with no node (XNNPACK's own layout transposes) and the part of the delegate call outside
its events stay with the partition as a whole. QNN per-op rows carry the node name and are joined
by ``analysis.qnn``, not here.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from etscope import profile as P
from etscope.formats.backends import events_name_nodes
from etscope.analysis.ops.kinds import kind_of_delegate_event, kind_of_op_type
from etscope.analysis.ops.per_op import OpRow, inner_rows_by_call
from etscope.analysis.stats import runs_counted

MATCHED_HOW = "matched by kind and order"
SKIP_TARGETS = ("operator.getitem", "executorch_call_delegate")


@dataclass
class PartitionOps:
    """One delegate instruction's per-op events and the graph nodes they were matched to (times in
    µs, mean per run, summed over the instruction's calls in a run)."""

    instruction_id: int
    backend: str
    call_us: float                                         # the DELEGATE_CALL time
    events_us: float = 0.0                                 # sum of its per-op events
    node_us: dict[str, float] = field(default_factory=dict)        # node -> matched event time
    node_events: dict[str, list[str]] = field(default_factory=dict)  # node -> matched event names
    unmatched_events: dict[str, float] = field(default_factory=dict)  # event name -> µs
    untimed: dict[str, str] = field(default_factory=dict)           # node -> why it has no time
    # (call occurrence, index of the event row in ``inner_rows_by_call``) -> the node it was matched
    # to: lets views name an event by its node (only nodes that keep their time).
    event_node: dict[tuple[int, int], str] = field(default_factory=dict)

    @property
    def matched_us(self) -> float:
        return sum(self.node_us.values())


def partition_nodes(graph, ins: P.Instruction, pos: dict[str, int]) -> list:
    """The instruction's operator nodes in graph order (``pos``: node name -> graph position;
    getitem and delegate-call nodes left out)."""
    nodes = [graph.by_name[n] for n in dict.fromkeys(ins.nodes) if n in graph.by_name]
    nodes = [n for n in nodes if n.op == "call_function" and not any(s in (n.target or "") for s in SKIP_TARGETS)]
    return sorted(nodes, key=lambda n: pos[n.name])


def _topological_order(nodes: list) -> list:
    """The partition's nodes in first-come topological order (Kahn's algorithm, seeded in graph
    order): a backend may run independent nodes in this order rather than the graph's."""
    names = {n.name for n in nodes}
    users: dict[str, list] = {}
    indegree = {}
    for n in nodes:
        ins = [i for i in dict.fromkeys(n.inputs) if i in names]
        indegree[n.name] = len(ins)
        for i in ins:
            users.setdefault(i, []).append(n)
    queue = deque(n for n in nodes if indegree[n.name] == 0)
    out = []
    while queue:
        n = queue.popleft()
        out.append(n)
        for u in users.get(n.name, ()):
            indegree[u.name] -= 1
            if indegree[u.name] == 0:
                queue.append(u)
    return out if len(out) == len(nodes) else nodes


def _respects_dependencies(nodes: list, pairs: dict[str, int]) -> bool:
    """Whether every matched node's event comes after the events of the matched nodes it depends
    on inside the partition (through unmatched nodes too): any order the backend runs must."""
    names = {n.name for n in nodes}
    latest: dict[str, int] = {}          # latest event among a node and its matched ancestors
    for n in nodes:                      # graph order is a topological order
        before = max((latest[i] for i in n.inputs if i in names and i in latest), default=-1)
        own = pairs.get(n.name)
        if own is not None and own <= before:
            return False
        latest[n.name] = max(before, own if own is not None else -1)
    return True


def match_call(nodes: list, events: list[tuple[str, float]], backend: str | None = None
               ) -> tuple[dict[str, int], dict[str, str]]:
    """Pairs (node name -> event index) of one call and the reasons for nodes left untimed;
    ``backend``: the delegate's (its naming rule for per-op events)."""
    by_kind_n: dict[str | None, list] = {}
    for n in nodes:
        by_kind_n.setdefault(kind_of_op_type(n.target, in_partition=True), []).append(n)
    by_kind_topo: dict[str | None, list] = {}
    for n in _topological_order(nodes):
        by_kind_topo.setdefault(kind_of_op_type(n.target, in_partition=True), []).append(n)
    by_kind_e: dict[str | None, list[int]] = {}
    for i, (name, _) in enumerate(events):
        by_kind_e.setdefault(kind_of_delegate_event(name, backend=backend, in_partition=True), []).append(i)
    pairs: dict[str, int] = {}
    why: dict[str, str] = {}
    for kind, ns in by_kind_n.items():
        es = by_kind_e.get(kind, []) if kind is not None else []
        if kind is None:
            reason = f"{ns[0].target}: no op kind to match the backend's events by"
        elif len(ns) != len(es):
            reason = (f"ambiguous: {len(ns)} {kind} node(s) in the partition, {len(es)} {kind} event(s) "
                      "(fused, decomposed, or nodes shared with other partitions)")
        elif [n.name for n in ns] != [n.name for n in by_kind_topo[kind]]:
            reason = (f"ambiguous: the graph does not fix the order of the partition's {kind} nodes "
                      "(graph order and topological order differ)")
        else:
            pairs.update({n.name: e for n, e in zip(ns, es)})
            continue
        why.update({n.name: reason for n in ns})
    if not _respects_dependencies(nodes, pairs):
        why.update({name: "ambiguous: the matched events would run a node before one it depends on"
                    for name in pairs})
        pairs = {}
    return pairs, why


def match_delegate_ops(profile: P.Profile, ops: list[OpRow], graph,
                       steady: np.ndarray | None = None) -> dict[int, PartitionOps]:
    """Per delegate instruction with per-op time events (not QNN): its events matched to its graph
    nodes. Empty without a graph. ``steady``: the runs the op table is over (default
    ``stats.steady_runs``)."""
    if graph is None:
        return {}
    n_runs = runs_counted(profile, steady)
    inside = inner_rows_by_call(ops)
    pos = {n.name: i for i, n in enumerate(graph.nodes)}
    nodes_of: dict[int, list] = {}
    out: dict[int, PartitionOps] = {}
    for r in ops:
        if r.level != 0 or r.role != "delegate_call" or r.unit != "ns":
            continue
        iid = r.instruction_id
        ins = profile.instructions.get(iid)
        if ins is None or events_name_nodes(ins.backend):     # joined by node name (analysis.qnn)
            continue
        part = out.setdefault(iid, PartitionOps(iid, ins.backend, 0.0))
        part.call_us += (r.total or 0.0) / 1e3 / n_runs
        rows = [(k, x) for k, x in enumerate(inside.get((iid, r.occurrence), []))
                if x.unit == "ns" and x.role == "delegate_internal"]
        events = [(x.name, (x.total or 0.0) / 1e3 / n_runs) for _, x in rows]
        if not events:
            continue
        part.events_us += sum(us for _, us in events)
        nodes = nodes_of.get(iid)
        if nodes is None:
            nodes = nodes_of[iid] = partition_nodes(graph, ins, pos)
        pairs, why = match_call(nodes, events, ins.backend)
        for name, reason in why.items():
            part.untimed.setdefault(name, reason)
        used = set(pairs.values())
        for name, e in pairs.items():
            part.node_us[name] = part.node_us.get(name, 0.0) + events[e][1]
            part.node_events.setdefault(name, []).append(events[e][0])
            part.event_node[(r.occurrence, rows[e][0])] = name
        for i, (name, us) in enumerate(events):
            if i not in used:
                part.unmatched_events[name] = part.unmatched_events.get(name, 0.0) + us
    for part in out.values():      # a node matched in one call and not in another has no clear time
        for name in list(part.node_us):
            if name in part.untimed:
                del part.node_us[name]
                part.node_events.pop(name, None)
        part.event_node = {k: v for k, v in part.event_node.items() if v in part.node_us}
    return {i: p for i, p in out.items() if p.events_us or p.unmatched_events}
