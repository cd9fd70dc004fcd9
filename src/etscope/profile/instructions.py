"""The instructions a profile's runs executed (delegate calls and CPU operators, found in the
ETDump's events), a delegate's backend guessed from its event names, the method chosen, then the
join to the .pte and ETRecord."""
from __future__ import annotations

import numpy as np

from etscope.arrays import unique, unique_chunked
from etscope.formats.backends import backend_from_event_names
from etscope.profile.join import join_etrecord, join_pte
from etscope.profile.model import (CPU, ROLE_DELEGATE_CALL, ROLE_DELEGATE_INTERNAL, ROLE_KERNEL,
                                   ROLE_OPERATOR_CALL, UNKNOWN_DELEGATE, Instruction, Profile)
from etscope.profile.plans import fits_plan, method_names, method_plans, require_method
from etscope.profile.repeats import distinct_event_slices, identical_runs

def join_method(profile: Profile, etrecord, pte, method_hint):
    """Instructions of the profile's runs (all of one method), joined to .pte and ETRecord."""
    ev = profile.events
    scope = identical_runs(profile)
    if scope is not None:       # every run logged the same events: the first run tells them all
        role, instr, names = ev["role"][scope], ev["instruction_id"][scope], ev["name"][scope]
        in_exec = np.ones(len(role), dtype=bool)
    else:
        role, instr, names = ev["role"], ev["instruction_id"], ev["name"]
        in_exec = ev["execute"] >= 0
    found: dict[int, Instruction] = {}

    def ids(mask):
        return unique_chunked(lambda sl: instr[sl][mask[sl] & in_exec[sl] & (instr[sl] >= 0)], len(instr))

    delegate_ids = ids(role == ROLE_DELEGATE_CALL)
    cpu_ids = ids((role == ROLE_OPERATOR_CALL) | (role == ROLE_KERNEL))
    inner = delegate_internal_names(profile) if len(delegate_ids) else {}
    for i in delegate_ids:
        found[int(i)] = Instruction(int(i), "delegate", _guess_backend(profile, int(i), inner.get(int(i), [])))
    for i in cpu_ids:
        if int(i) in found:
            profile.warnings.append(f"instruction {int(i)} has both DELEGATE_CALL and operator events")
            continue
        found[int(i)] = Instruction(int(i), "cpu", CPU)
    # Kernel names (the kernel event nested in OPERATOR_CALL).
    kmask = (role == ROLE_KERNEL) & in_exec
    if kmask.any():
        # (instruction, name) pairs in sorted order; kernel events have both >= 0, so one packed key.
        packed = unique_chunked(lambda sl: (instr[sl][kmask[sl]].astype(np.int64) << 32)
                                 | names[sl][kmask[sl]].astype(np.int64), len(instr))
        for i, code in zip((packed >> 32).tolist(), (packed & 0xFFFFFFFF).tolist()):
            ins = found.get(int(i))
            if ins is not None and ins.kind == "cpu" and ins.kernel is None:
                ins.kernel = profile.strings[int(code)]

    profile.instructions = found
    profile.method = choose_method(profile, etrecord, pte, method_hint)
    if pte is not None:
        join_pte(profile, pte)
    if etrecord is not None:
        join_etrecord(profile, etrecord)


def delegate_internal_names(profile: Profile) -> dict[int, list[int]]:
    """Per instruction id, the distinct delegate_debug_id_str codes of its delegate-internal events
    (sorted, -1 = none), computed for all instructions in one pass."""
    ev = profile.events
    role = ev["role"]
    parts = []
    # In chunks: QNN files are mostly delegate-internal events (10M events: 400 MB of temporaries
    # in one go); the distinct pairs are few. Identical runs: their first one tells.
    chunks = [slice(a, min(a + (1 << 20), s.stop)) for s in distinct_event_slices(profile)
              for a in range(s.start, s.stop, 1 << 20)]
    for c in chunks:
        sel = role[c] == ROLE_DELEGATE_INTERNAL
        if not sel.any():
            continue
        instr = (ev["instruction_id"][c][sel].astype(np.int64) + (1 << 31)).astype(np.uint64)
        code = (ev["delegate_id_str"][c][sel].astype(np.int64) + 1).astype(np.uint64)  # -1 -> 0
        parts.append(unique((instr << np.uint64(32)) | code))
    if not parts:
        return {}
    packed = unique(np.concatenate(parts))
    ids = (packed >> np.uint64(32)).astype(np.int64) - (1 << 31)
    codes = (packed & np.uint64(0xFFFFFFFF)).astype(np.int64) - 1
    out: dict[int, list[int]] = {}
    for i, c in zip(ids.tolist(), codes.tolist()):
        out.setdefault(i, []).append(c)
    return out


def _guess_backend(profile: Profile, instruction_id: int, codes: list[int] | None = None) -> str:
    """Without ETRecord or .pte, tell the backend from the names of its internal events."""
    if codes is None:
        codes = delegate_internal_names(profile).get(instruction_id, [])
    names = [profile.strings[c] for c in codes[:50] if c >= 0]
    return backend_from_event_names(names) or UNKNOWN_DELEGATE


def choose_method(profile: Profile, etrecord, pte, hint) -> str | None:
    names = method_names(pte) or method_names(etrecord)
    if hint:
        require_method(profile, names, hint)
        return hint
    if not names:
        return None
    if pte is not None and len(names) > 1:
        codes = np.array(sorted(i.id * 2 + (i.kind == "delegate") for i in profile.instructions.values()),
                         dtype=np.int64)
        plans = method_plans(None, pte)
        fitting = [name for name, plan in plans.items() if fits_plan(codes, plan)]
        if len(fitting) >= 1:
            if len(fitting) > 1:
                profile.warnings.append(
                    f"several methods fit the ETDump ({', '.join(fitting)}); using {fitting[0]} (pass --method)")
            return fitting[0]
    if "forward" in names:
        return "forward"
    return names[0]
