"""Which candidate tensor stands for which reference tensor, across two differently lowered graphs.

Two exports of one model (fp32 on XNNPACK vs fp32 on the CPU, int8 vs fp32) name their edge nodes
differently: ``aten_permute_copy_default_1`` is one node in one graph and another node in the other
(issue 32: a false first divergence at -2.9 dB between a [1, 4, 6, 16] and a [1, 6, 4, 16] tensor).
So across programs a tensor is paired by the *source node* it stands for, never by edge-node name:

1. **source node** (``from_node`` provenance, ``GraphNode.source_node``): every edge node records
   the node of the first traced graph it comes from; two exports of one model trace the same
   graph, so the roots agree (``linear_1`` for an XNNPACK ``linear`` and for the CPU's
   ``permute_copy`` + ``addmm``). Nodes sharing a root form a group; the group's value is the
   output of its last node whose value leaves the group (keyed ``(source)``); the other nodes are
   keyed by their op and order within the group (``(source, op, k)``);
2. **module path and source line, op and order** (``nn_module_stack``, ``stack_trace``) for nodes
   without provenance; the source line alone without a module path;
3. **debug handle** (the last node of a handle's group) for nodes with neither, only when the two
   graphs number their handles alike (every node name both hold carries the same handles);
4. quantize / dequantize nodes are looked through: their value is the value of the node they
   (de)quantize (a graph input included); a tensor logged at the op itself is preferred.

A delegate's output stands for the node whose value leaves its partition (``numerics._NodeMap``),
so it pairs with that node's source. Within ONE program (both ETRecords hold the same graph:
``num_cpu`` run twice) the edge-node name is the identity. Without ETRecords: instruction and
output position (valid only for one program run twice; said in the notes).

Every pair says how it was matched (``PairingRule``). Coverage: the share of the reference's
logged nodes that found a partner, counted over the nodes the candidate could log (nodes inside a
candidate's delegate partition, other than the value leaving it, are never logged by the backend:
counted apart), so refusing doubtful pairs shows as low coverage, never as "no divergence".
"""
from __future__ import annotations

from dataclasses import dataclass

from etscope.analysis.numerics.identity import TensorId
from etscope.formats.export_graph import Graph
from etscope.profile import Profile

COVERAGE_FINDING = 0.9       # below this share of the reference's nodes paired: a finding

# how a pair was matched (per tensor in the output, ``matched_by``)
BY_NAME = "node name (same program)"
BY_SOURCE = "source node (from_node)"
BY_SOURCE_OP = "source node, op and order"
BY_MODULE = "module path and source line, op and order"
BY_LINE = "source line, op and order"
BY_HANDLE = "debug handle"
LOOKED_THROUGH = ", q/dq looked through"
BY_OUTPUT = "program output position"
BY_BACKEND = "backend tensor name"
BY_INSTRUCTION = "instruction and output position"
BY_TAP = "tap node name"
BY_TAP_PROVENANCE = "tap node name in from_node provenance"


_GROUPS = {"source": 2, "module": 3, "line": 2, "handle": 2}    # key length of a group's value


@dataclass(frozen=True)
class NodeKey:
    key: tuple            # comparable across the two graphs
    rule: str             # one of the BY_* rules
    looked_through: bool  # a q/dq node standing for the value it (de)quantizes


def is_qdq(target: str | None) -> bool:
    return bool(target) and target.startswith("quantized_decomposed.") and "quantize_per" in target


def same_program(gc: Graph, gr: Graph) -> bool:
    """Both ETRecords hold one graph (names, ops, inputs, handles and provenance node for node)."""
    if len(gc.nodes) != len(gr.nodes):
        return False
    return all(a.name == b.name and a.target == b.target and a.debug_handles == b.debug_handles
               and a.inputs == b.inputs and a.source_node == b.source_node for a, b in zip(gc.nodes, gr.nodes))


def handles_agree(gc: Graph, gr: Graph) -> bool:
    common = set(gc.by_name) & set(gr.by_name)
    return bool(common) and all(gc.by_name[n].debug_handles == gr.by_name[n].debug_handles for n in common)


def node_keys(g: Graph, use_handles: bool) -> tuple[dict[str, NodeKey], dict[tuple, tuple]]:
    """Graph node name -> what it stands for (see the module doc), for every call node and input;
    and each group's ops in order (a group's inner nodes pair by op and order only when both
    graphs decomposed it alike)."""
    out: dict[str, NodeKey] = {}
    groups: dict[tuple, list] = {}
    for n in g.nodes:
        if n.op == "placeholder":
            out[n.name] = NodeKey(("input", n.name), BY_SOURCE, False)
        elif n.op == "call_function" and not is_qdq(n.target) and not n.is_delegate_call:
            if n.source_node:
                gk = ("source", n.source_node)
            elif n.module_path:
                gk = ("module", n.module_path, n.source)
            elif n.source:
                gk = ("line", n.source)
            elif use_handles and n.debug_handles:
                gk = ("handle", n.debug_handles[0])
            else:
                continue
            groups.setdefault(gk, []).append(n)
    users: dict[str, set[str]] = {}
    for n in g.nodes:
        for src in n.inputs:
            users.setdefault(src, set()).add(n.name)
    rule_of = {"source": BY_SOURCE, "module": BY_MODULE, "line": BY_LINE, "handle": BY_HANDLE}
    for gk, nodes in groups.items():
        names = {n.name for n in nodes}
        leaving = [n for n in nodes if users.get(n.name, set()) - names or not users.get(n.name)]
        value = (leaving or nodes)[-1]
        seen: dict[str | None, int] = {}
        for n in nodes:
            k = seen.get(n.target, 0)
            seen[n.target] = k + 1
            if n is value:
                out[n.name] = NodeKey(gk, rule_of[gk[0]], False)
            else:
                rule = BY_SOURCE_OP if gk[0] == "source" else rule_of[gk[0]]
                out[n.name] = NodeKey((*gk, n.target, k), rule, False)
    for n in g.nodes:           # q/dq: the value they carry (graph order: producers come first)
        if n.op == "call_function" and is_qdq(n.target) and n.inputs:
            src = out.get(n.inputs[0])
            if src is not None:
                out[n.name] = NodeKey(src.key, src.rule, True)
    return out, {gk: tuple(n.target for n in nodes) for gk, nodes in groups.items()}


@dataclass(frozen=True)
class Keyed:
    tensor: TensorId
    rule: str
    looked_through: bool


class Identities:
    """Key per tensor of one side: by node name (same program), by node identity, else by
    instruction (no ETRecord)."""

    def __init__(self, g: Graph | None, mode: str, use_handles: bool = False):
        self.mode = mode
        self.keys, self.groups = node_keys(g, use_handles) if (g is not None and mode == "source") else ({}, {})
        self.unlike: set[tuple] = set()       # groups the other graph decomposed differently
        self.provenance = {n.name: n.provenance for n in g.nodes} if g is not None and self.keys else {}
        self._ep: dict[str, set] | None = None

    def compare_groups(self, other: "Identities") -> None:
        """Groups whose op sequences differ between the two graphs: their inner nodes are not
        paired by op and order (the group's value still is)."""
        self.unlike = other.unlike = {gk for gk, ops in self.groups.items()
                                      if gk in other.groups and other.groups[gk] != ops}

    def ep_key(self, name: str) -> tuple | None:
        """The key of the group whose nodes' provenance names ``name`` (an exported-program node,
        as a tap records it), when exactly one group does."""
        if self._ep is None:
            self._ep = {}
            for node, nk in self.keys.items():
                if nk.looked_through or nk.key[0] not in _GROUPS:
                    continue
                for nm in self.provenance.get(node, ()):
                    self._ep.setdefault(nm, set()).add(nk.key[:_GROUPS[nk.key[0]]])
        got = self._ep.get(name, set())
        return next(iter(got)) if len(got) == 1 else None

    def of(self, t: TensorId) -> tuple[tuple, str, bool] | None:
        if t.role == "tap":
            return ("tap", t.tap.node_name), BY_TAP, False
        if t.role == "program_output":
            return ("output", t.item), BY_OUTPUT, False
        if self.mode == "instruction":
            if t.role == "delegate_intermediate":
                return ("delegate", t.name), BY_BACKEND, False
            return ("instruction", t.instruction, t.item), BY_INSTRUCTION, False
        if t.node is None:
            if t.role == "delegate_intermediate":
                return ("delegate", t.name), BY_BACKEND, False
            return None
        if self.mode == "name":
            return ("node", t.node), BY_NAME, False
        nk = self.keys.get(t.node)
        if nk is None or (len(nk.key) > _GROUPS.get(nk.key[0], 2) and nk.key[:_GROUPS[nk.key[0]]] in self.unlike):
            return None
        return nk.key, nk.rule, nk.looked_through


def keyed(ids: list[TensorId], ident: Identities, run_of: dict[int, int] | None) -> dict[tuple, Keyed]:
    """(run, *key) -> the tensor standing for it; ``run_of``: which run number to key on (runs
    absent are not compared). A tensor logged at the op itself wins over a q/dq standing for it."""
    out: dict[tuple, Keyed] = {}
    for t in ids:
        run = t.run if run_of is None else run_of.get(t.run)
        if t.role == "delegate_input" or run is None:
            continue
        got = ident.of(t)
        if got is None:
            continue
        key, rule, through = got
        k = (run, *key)
        old = out.get(k)
        if old is None or (old.looked_through and not through):
            out[k] = Keyed(t, rule, through)
    return out


def hidden_keys(p: Profile, g: Graph | None, ident: Identities, logged_keys) -> set[tuple]:
    """Keys of the nodes inside the profile's delegate partitions whose value does not leave the
    partition and that the profile did not log otherwise: a backend never logs them (the
    reference's tensors of those nodes cannot pair). ``logged_keys``: the profile's (run, *key)."""
    er = p.etrecord
    if g is None or er is None or not ident.keys:
        return set()
    method = p.method or "forward"
    hmap = er.debug_handle_map.get(method, {})
    delegates = set(er.delegate_map.get(method, {})) | {i for i, ins in p.instructions.items()
                                                        if ins.kind == "delegate"}
    budget = max(100_000, 64 * (len(g.nodes) + sum(len(v) for v in hmap.values())))
    inside: set[str] = set()
    done: set[tuple] = set()
    for ins in delegates:
        key = tuple(dict.fromkeys(hmap.get(ins, ())))
        if key in done or budget <= 0:
            continue
        done.add(key)
        nodes = g.nodes_of_handles(key)
        budget -= len(nodes) + len(key)
        inside.update(n.name for n in nodes if n.op == "call_function")
    users: dict[str, set[str]] = {}
    for n in g.nodes:
        for src in n.inputs:
            users.setdefault(src, set()).add(n.name)
    logged = {k[1:] for k in logged_keys}
    out = set()
    for name in inside:
        nk = ident.keys.get(name)
        leaves = bool(users.get(name, set()) - inside)
        if nk is not None and not leaves and nk.key not in logged:
            out.add(nk.key)
    for name in inside:       # a value leaving some partition is logged: never hidden
        nk = ident.keys.get(name)
        if nk is not None and users.get(name, set()) - inside:
            out.discard(nk.key)
    return out
