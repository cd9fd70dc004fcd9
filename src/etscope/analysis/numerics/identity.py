"""Which logged tensor is what: each debug tensor's identity.

Each debug tensor gets an identity: its execute run, instruction, role and (with an ETRecord) the
graph node it stands for. Roles, from what the runtime logs (``runtime/executor/method.cpp``):

* ``kernel_output``: a CPU kernel call's output (the codegen'd kernel logs its out arguments);
* ``delegate_input`` / ``delegate_output``: a delegate call logs *all* its arguments after it ran,
  inputs first; the last ``instruction_id_to_num_outs_map[instruction]`` (ETRecord, else 1) are
  its outputs;
* ``delegate_intermediate``: a tensor a backend logged itself (``event_tracer_log_output_delegate``,
  named by its delegate debug id, e.g. a QNN tensor name);
* ``program_output``: the method's outputs (``Value.output`` set); ``tap``: a program output that
  is an intermediate-output tap (``formats.taps``), named after the tapped node.

Graph nodes (ETRecord): a kernel call's ``debug_handle_map`` handles name its nodes; when several
instructions share one handle (a decomposed op: ``permute_copy`` + ``addmm`` of one ``linear``),
the k-th such instruction is the k-th node in graph order. A delegate output stands for the
partition node whose value leaves the partition (used by a node outside it or by the graph output);
with several, the j-th output is the j-th such node in graph order.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from etscope.formats.debug_buffer import DebugBuffer, dtype_name
from etscope.profile import Profile, event_runs

ROLES = ("kernel_output", "delegate_output", "delegate_input", "delegate_intermediate", "program_output", "tap")


@dataclass(frozen=True)
class TensorTap:
    """The intermediate-output tap a program output is (``formats.taps.Tap``, as the JSON names it)."""

    node_name: str
    op_target: str
    reducer: str                # the reducer's name (FULL_TENSOR, STATS...)
    fields: tuple[str, ...]     # what the reducer's values are, in order
    module_path: str | None
    output_index: int = field(metadata={"json": False})           # the program output it is
    full_tensor: bool = field(metadata={"json": False})           # the tensor itself, not reduced

    @classmethod
    def of(cls, tap) -> "TensorTap":
        return cls(tap.node_name, tap.op_target, tap.reducer_name, tuple(tap.fields), tap.module_path,
                   tap.output_index, tap.full_tensor)


@dataclass(frozen=True)
class TensorId:
    """What a logged tensor is: where it was logged and what it stands for."""

    index: int = field(metadata={"json": False})   # row in the ETDump's tensor table
    run: int                    # execute run (0-based, as in every etscope output)
    instruction: int            # instruction id (-1: none)
    role: str
    item: int                   # position among the instruction's logged tensors of this role
    name: str                   # node name, delegate debug id, or "instruction N"
    node: str | None            # graph node (ETRecord)
    graph_pos: int | None       # the node's position in the graph (ETRecord), for graph order
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    tap: TensorTap | None = field(default=None, metadata={"omit_empty": True})   # a program output that is a tap

    @property
    def order(self) -> tuple:
        """Graph order (nodes first, by position), then instruction order."""
        return (self.graph_pos if self.graph_pos is not None else 1 << 40, self.instruction, self.item)


def tensor_ids(p: Profile, buf: DebugBuffer | None = None, taps: dict | None = None) -> tuple[list[TensorId], list[str]]:
    """Identity of every debug tensor of the profile's execute runs, in file order, and notes;
    ``taps`` (``formats.taps``: output index -> Tap): program outputs that are intermediate-output
    taps get the role ``tap``, named after the tapped node."""
    data = p.etdump
    t = data.tensors
    notes: list[str] = []
    if t is None or len(t) == 0:
        return [], ["the ETDump holds no debug event with a tensor (intermediate outputs were not logged)"]
    ev = data.events
    cols = t.columns
    run_of = np.full(len(data.runs), -1, dtype=np.int64)
    run_of[p.runs["etdump_run"]] = np.arange(p.n_runs)
    ev_idx = cols["event"]
    runs = run_of[event_runs(p, ev_idx)]
    instr = ev["instruction_id"][ev_idx].astype(np.int64)
    did_str = ev["delegate_id_str"][ev_idx]
    did_int = ev["delegate_id_int"][ev_idx]
    delegate_of = {i for i, ins in p.instructions.items() if ins.kind == "delegate"}
    er = p.etrecord
    method = p.method or "forward"
    num_outs = er.num_outs_map.get(method, {}) if er is not None else {}
    nodes = _NodeMap(p, method)
    if er is not None and nodes.graph is None:
        notes.append(f"the ETRecord has no readable edge graph for {method!r}: tensors named by instruction")
    if nodes.unsure:
        notes.append(f"{nodes.unsure} delegate call(s) share debug handles with other instructions (or leave "
                     "their partition through more or fewer nodes than they have outputs): their outputs cannot be "
                     "told apart by node and are left unnamed")
    if nodes.ambiguous:
        notes.append(f"{nodes.ambiguous} kernel instruction(s) share debug handles with more graph nodes than "
                     "instructions (ops the .pte or kernel names do not tell apart): named by instruction")

    # position of each tensor within its (run, instruction) group of non-output arguments
    out: list[TensorId] = []
    group: dict[tuple[int, int], list[int]] = {}
    for i in range(len(t)):
        if runs[i] < 0 or cols["program_output"][i] or did_str[i] >= 0 or did_int[i] >= 0:
            continue
        group.setdefault((int(runs[i]), int(instr[i])), []).append(i)
    role = {}
    item = {}
    for (r, ins), rows in group.items():
        if ins in delegate_of:
            n_out = max(1, min(len(rows), int(num_outs.get(ins, 1))))
            for k, i in enumerate(rows):
                is_out = k >= len(rows) - n_out
                role[i] = "delegate_output" if is_out else "delegate_input"
                item[i] = k - (len(rows) - n_out) if is_out else k
        else:
            for k, i in enumerate(rows):
                role[i], item[i] = "kernel_output", k
    n_prog = {}
    contradicted = 0
    for i in range(len(t)):
        if runs[i] < 0:
            continue
        ins = int(instr[i])
        tap = None
        if cols["program_output"][i]:
            r_ = "program_output"
            k = n_prog.get(int(runs[i]), 0)
            n_prog[int(runs[i])] = k + 1
            name, node, pos = f"output[{k}]", None, None
            tap = taps.get(k) if taps else None
            if tap is not None:
                r_, name = "tap", tap.node_name
        elif did_str[i] >= 0 or did_int[i] >= 0:
            r_, k = "delegate_intermediate", int(cols["item"][i])
            name = data.strings[did_str[i]] if did_str[i] >= 0 else f"delegate id {int(did_int[i])}"
            node, pos = nodes.by_name(name)
        else:
            r_, k = role[i], item[i]
            node, pos = nodes.of(ins, r_, k)
            if node is not None and not nodes.shape_agrees(node, k if r_ == "kernel_output" else 0, t.sizes(i)):
                node, pos = None, None      # the graph records another shape for that node: not it
                contradicted += 1
            known = p.instructions.get(ins)
            op = known.op_type if known is not None and known.kind == "cpu" else None
            name = node or (f"instruction {ins}" + (f" ({op})" if op else "")
                            + (f" output {k}" if r_ == "delegate_output" and k else ""))
        out.append(TensorId(index=i, run=int(runs[i]), instruction=ins, item=k, role=r_, name=name,
                            node=node, graph_pos=pos, dtype=dtype_name(int(cols["scalar_type"][i])),
                            shape=t.sizes(i), strides=t.strides(i),
                            tap=TensorTap.of(tap) if tap is not None else None))
    if taps and not any(x.tap is not None for x in out):
        notes.append(f"none of the {len(taps)} tap(s) of the sidecar is among the logged program outputs")
    if contradicted:
        notes.append(f"{contradicted} tensor(s) whose shape differs from the one the edge graph records for the node "
                     "their instruction was taken for (instructions emitted in another order than the graph's): "
                     "left unnamed")
    return out, notes


class _NodeMap:
    """Instruction (+ role, output index) -> graph node, from the ETRecord (see the module doc)."""

    def __init__(self, p: Profile, method: str):
        er = p.etrecord
        self.graph = None
        self.pos: dict[str, int] = {}
        self.kernel: dict[int, str] = {}
        self.delegate: dict[int, list[str]] = {}
        self.ambiguous = 0      # kernel instructions whose node cannot be told (left unnamed)
        self.unsure = 0
        if er is None:
            return
        g = er.graphs.get(method)
        if g is None:
            return
        self.graph = g
        self.pos = {n.name: k for k, n in enumerate(g.nodes)}
        hmap = er.debug_handle_map.get(method, {})
        delegates = set(er.delegate_map.get(method, {})) | {i for i, ins in p.instructions.items()
                                                            if ins.kind == "delegate"}
        users: dict[str, set[str]] = {}
        for n in g.nodes:
            for src in n.inputs:
                users.setdefault(src, set()).add(n.name)
        # A kernel call's candidates: the nodes of its handles whose op is its kernel's (the profile's
        # join, from the .pte operator or kernel event name), else all its handles' call nodes.
        # Instructions with the same candidates take them in graph order (a decomposed op's
        # permute_copy + addmm without op names); a count mismatch leaves them unnamed, never guessed.
        # Grouped by what decides the candidates (the profile's node list, else the handles), so
        # each distinct candidate list is built and sorted once: 16,000 instructions naming one
        # handle shared by 16,000 nodes cost one pass, not 16,000 (work linear in the file).
        shared: dict[tuple, list[int]] = {}
        for ins in sorted(hmap):
            if ins in delegates:
                continue
            known = p.instructions.get(ins)
            listed = tuple(n for n in (known.nodes if known is not None else []) if n in self.pos)
            key = ("nodes", listed) if listed else ("handles", tuple(dict.fromkeys(hmap[ins])))
            shared.setdefault(key, []).append(ins)
        # Distinct handle lists may still name one big group of nodes each: node references are
        # charged to a budget as in ``Etrecord.nodes_by_instruction``; past it, left unnamed.
        budget = max(100_000, 64 * (len(g.nodes) + sum(len(v) for v in hmap.values())))
        by_cand: dict[tuple[str, ...], list[int]] = {}
        for (how, what), instrs in shared.items():
            if budget <= 0:
                self.ambiguous += len(instrs)
                continue
            cand = what if how == "nodes" else [n.name for n in g.nodes_of_handles(what) if n.op == "call_function"]
            budget -= len(cand) + len(what)
            cand = tuple(sorted(dict.fromkeys(cand), key=self.pos.__getitem__))
            by_cand.setdefault(cand, []).extend(instrs)
        for cand, instrs in by_cand.items():
            instrs.sort()
            if len(cand) == len(instrs):
                self.kernel.update(zip(instrs, cand))
            elif len(cand) == 1:
                self.kernel.update((ins, cand[0]) for ins in instrs)
            elif cand:
                self.ambiguous += len(instrs)
        # A partition is known by its handles only when no other instruction carries one of them:
        # a decomposed op (SDPA) shares one handle across partitions and CPU kernels, and the
        # nodes "of" that handle are then not this partition's. Its outputs stay unnamed (never
        # guessed), as do outputs whose count differs from the nodes leaving the partition.
        owners: dict[int, int] = {}
        for ins, hs in hmap.items():
            for h in dict.fromkeys(hs):
                owners[h] = owners.get(h, 0) + 1
        n_outs = er.num_outs_map.get(method, {})
        self.unsure = 0         # delegate calls whose outputs cannot be told apart
        leaving_of: dict[tuple[int, ...], list[str]] = {}
        for ins in delegates:
            if ins not in hmap:
                continue
            key = tuple(dict.fromkeys(hmap[ins]))
            if any(owners.get(h, 0) > 1 for h in key):
                self.unsure += 1
                continue
            if key not in leaving_of:
                if budget <= 0:
                    continue
                inside = {n.name for n in g.nodes_of_handles(key) if n.op == "call_function"}
                budget -= len(inside) + len(key)
                leaving = [nm for nm in inside if (users.get(nm, set()) - inside)]
                leaving_of[key] = sorted(leaving, key=self.pos.__getitem__)
            if len(leaving_of[key]) != int(n_outs.get(ins, 1)):
                self.unsure += 1
                continue
            self.delegate[ins] = leaving_of[key]

    def of(self, instruction: int, role: str, k: int) -> tuple[str | None, int | None]:
        if role == "kernel_output":
            name = self.kernel.get(instruction)
        elif role == "delegate_output":
            outs = self.delegate.get(instruction, [])
            name = outs[k] if k < len(outs) else None
        else:
            name = None
        return name, (self.pos.get(name) if name else None)

    def shape_agrees(self, node: str, k: int, sizes: tuple[int, ...]) -> bool:
        """``sizes`` fits the shape the graph records for ``node``'s k-th output (symbolic
        dimensions fit anything; no record: agrees)."""
        n = self.graph.by_name.get(node) if self.graph is not None else None
        if n is None:
            return True
        value = n.outputs[k] if k < len(n.outputs) else (node if k == 0 else None)
        rec = self.graph.value_shapes.get(value) if value is not None else None
        if rec is None:
            return True
        return len(rec) == len(sizes) and all(r is None or r == s for r, s in zip(rec, sizes))

    def by_name(self, name: str) -> tuple[str | None, int | None]:
        """A backend's tensor name -> graph node: the name itself, else QNN's tensor naming
        (``backends/qualcomm/builders/node_visitor.py``: ``<node>@<k>``, graph inputs prefixed
        ``input_<id>_`` (``mutbuf_<n>_``), graph outputs ``output_`` (``mutbuf_<n>_``)) stripped."""
        for cand in (name, qnn_tensor_node(name)):
            if cand in self.pos:
                return cand, self.pos[cand]
        return None, None


_QNN_TENSOR = re.compile(r"^(?:input_\d+_(?:mutbuf_\d+_)?|output_(?:mutbuf_\d+_)?)?(?P<node>.+?)(?:@\d+)?$")


def qnn_tensor_node(name: str) -> str:
    """The FX node name inside a QNN tensor name (``output_aten_add_tensor@0`` -> ``aten_add_tensor``)."""
    m = _QNN_TENSOR.match(name)
    return m.group("node") if m else name

