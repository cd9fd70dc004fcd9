"""Instructions joined to the .pte (backend id, operator) and to the ETRecord (backend, debug
handles, graph nodes, op types, source lines); a mismatch with the ETDump is an error."""
from __future__ import annotations

from etscope.errors import MismatchError
from etscope.profile.model import Instruction, Profile
from etscope.profile.plans import pte_method

# Events the runtime logs for its own instructions (method.cpp), by the .pte instruction kind.
_RUNTIME_CALL = {"JF_CALL": "jump", "MOVE_CALL": "move", "FREE_CALL": "free"}


def join_pte(profile: Profile, pte):
    method = pte_method(pte, profile.method) if profile.method else None
    if method is None:
        raise MismatchError(f"the .pte has no method {profile.method!r}", profile.sources.get("pte"))
    by_index = {ins.index: ins for ins in method.instructions}
    bad = []
    for ins in profile.instructions.values():
        p = by_index.get(ins.id)
        if p is None:
            bad.append(f"instruction {ins.id} not in method {method.name!r} "
                       f"({len(method.instructions)} instructions)")
            continue
        if ins.kind == "delegate":
            if p.kind != "delegate":
                bad.append(f"instruction {ins.id} is a DELEGATE_CALL in the ETDump but a {p.kind} in the .pte")
                continue
            if p.backend_id:
                ins.backend, ins.backend_from = p.backend_id, ".pte"
        else:
            if p.kind != "kernel" and _RUNTIME_CALL.get(ins.kernel) != p.kind:
                bad.append(f"instruction {ins.id} is a CPU operator in the ETDump but a {p.kind} in the .pte")
                continue
            ins.operator = p.operator
    if bad:
        raise MismatchError("the .pte does not match the ETDump: " + "; ".join(bad[:3])
                            + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""),
                            profile.sources.get("pte"))


def join_etrecord(profile: Profile, etrecord):
    method = profile.method or "forward"
    dmap = (getattr(etrecord, "delegate_map", None) or {}).get(method, {})
    hmap = (getattr(etrecord, "debug_handle_map", None) or {}).get(method, {})
    graph = (getattr(etrecord, "graphs", None) or {}).get(method)
    by_instruction, cut = (etrecord.nodes_by_instruction(method, profile.instructions) if graph is not None
                           else ({}, None))
    if hasattr(etrecord, "lowering_input"):
        etrecord.lowering_input(method)  # decoded now, so what it lacks is in the warnings below
    profile.warnings.extend([*getattr(etrecord, "warnings", ()), *([cut] if cut else [])])
    if not hmap and not dmap and profile.instructions:
        profile.warnings.append(f"the ETRecord has no debug handle or delegate map for method {method!r}")
        return
    bad = []
    no_handles = []
    for ins in profile.instructions.values():
        info = dmap.get(ins.id)
        if ins.kind == "delegate":
            if info is not None:
                name = info.name if hasattr(info, "name") else info.get("name")
                if name:
                    ins.backend, ins.backend_from = name, "ETRecord"
            elif dmap:
                bad.append(f"DELEGATE_CALL instruction {ins.id} is not a delegate in the ETRecord")
        elif info is not None:
            bad.append(f"instruction {ins.id} is a CPU operator in the ETDump but a delegate in the ETRecord")
        handles = hmap.get(ins.id)
        if handles is None:
            if hmap and ins.kind == "cpu":
                no_handles.append(ins.id)
            continue
        ins.debug_handles = [int(h) for h in handles]
        if graph is not None:
            nodes = by_instruction.get(ins.id, [])
            if ins.kind == "cpu":
                nodes = _nodes_for_kernel(nodes, ins)
            ins.nodes = [n.name for n in nodes]
            if ins.kind == "cpu":
                ins.op_types = list(dict.fromkeys(n.target for n in nodes if n.target))
            else:
                ins.op_types = list(dict.fromkeys(
                    n.target for n in nodes if n.target and "executorch_call_delegate" not in n.target))
            ins.sources = list(dict.fromkeys(n.source for n in nodes if n.source))
            ins.source = ins.sources[0] if ins.sources else None
    if no_handles:
        # Prim ops (sym_size, views) and the runtime's own moves have no graph node behind them.
        profile.warnings.append(_no_handles_warning([profile.instructions[i] for i in sorted(no_handles)]))
    if bad:
        raise MismatchError("the ETRecord does not match the ETDump: " + "; ".join(bad[:3])
                            + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""),
                            profile.sources.get("etrecord"))


def _no_handles_warning(instructions: list[Instruction]) -> str:
    """What CPU instructions without debug handles lack: always the source line (only the graph
    has it); the op type only when neither the .pte's operator nor a kernel name gives one."""
    def ids(group):
        return ", ".join(str(i.id) for i in group[:6]) + (" …" if len(group) > 6 else "")

    groups = [([i for i in instructions if i.operator], "op type from the .pte"),
              ([i for i in instructions if not i.operator and i.kernel], "op type guessed from the kernel name"),
              ([i for i in instructions if not i.operator and not i.kernel], "no op type")]
    groups = [(g, what) for g, what in groups if g]
    text = f"{len(instructions)} CPU instruction(s) have no debug handles in the ETRecord: no source line for them"
    if len(groups) == 1:
        return f"{text}, {groups[0][1]} ({ids(instructions)})"
    return text + "; " + ", ".join(f"{what} for {len(g)} ({ids(g)})" for g, what in groups)


def _op_base(name: str) -> str:
    """'aten.index_put.default' / 'aten::index_put.out' / 'native_call_index_put.out' -> 'index_put'."""
    name = name.replace("::", ".")
    if name.startswith("native_call_"):
        name = name[len("native_call_"):]
        return name.split(".")[0]
    parts = name.split(".")
    return parts[1] if len(parts) >= 2 else parts[0]


def _nodes_for_kernel(nodes: list, ins: Instruction) -> list:
    """Debug handles can be shared by several graph nodes; keep those whose op is this kernel's op."""
    want = {_op_base(x) for x in (ins.kernel, ins.operator) if x}
    if not want or len(nodes) <= 1:
        return nodes
    matching = [n for n in nodes if n.target and _op_base(n.target) in want]
    return matching or nodes
