"""What the program (.pte, else ETRecord) says its methods are: their names, and per method the
ids of its delegate calls and of all its instructions, against which a run's instructions fit."""
from __future__ import annotations

import numpy as np

from etscope.errors import MismatchError
from etscope.profile.model import Profile

def method_names(obj) -> list[str]:
    if obj is None:
        return []
    methods = getattr(obj, "methods", None) or []
    return [m if isinstance(m, str) else m.name for m in methods]


def require_method(profile: Profile, names: list[str], hint: str):
    if names and hint not in names:
        raise MismatchError(f"method {hint!r} not found (available: {', '.join(names)})",
                            profile.sources.get("pte") or profile.sources.get("etrecord"))


def pte_method(pte, name):
    for m in pte.methods:
        if m.name == name:
            return m
    return None


def method_plans(etrecord, pte) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Per method: the ids of its delegate calls and of all its instructions (sorted). From the
    .pte, else from the ETRecord's delegate map, which lists only the delegate calls (all
    instruction ids are then unknown: None)."""
    if pte is not None:
        return {m.name: (np.array(sorted(i.index for i in m.instructions if i.kind == "delegate"), dtype=np.int64),
                         np.array(sorted(i.index for i in m.instructions), dtype=np.int64))
                for m in pte.methods}
    dmaps = getattr(etrecord, "delegate_map", None) or {}
    return {name: (np.array(sorted(int(i) for i in dmaps.get(name, {})), dtype=np.int64), None)
            for name in method_names(etrecord)}


def fits_plan(codes: np.ndarray, plan: tuple[np.ndarray, np.ndarray | None]) -> bool:
    """Whether instructions (codes ``id * 2 + (1 if a DELEGATE_CALL)``, as in methods._instruction_sets)
    exist in a method as such: the id is one of the method's, and a delegate call there exactly
    when it is one in the ETDump."""
    delegate_ids, all_ids = plan
    ids, delegate = codes >> 1, (codes & 1).astype(bool)
    if all_ids is not None and not np.isin(ids, all_ids).all():
        return False
    return bool((np.isin(ids, delegate_ids) == delegate).all())
