"""Naming the phases of look-alike methods: a QNN hybrid LLM's ``prefill_forward`` and ``kv_forward``.

Both methods of such a program are one QnnBackend delegate call at instruction 0 (the real
``stories260k_hybrid_llama_qnn.pte``), so the ETDump cannot say which method a run executed and
the loader matches every run to the first fitting method. ``etscope llm`` still separates the runs
by what they logged (the set of QNN per-op events differs between the two graphs, and so does the
cost): two groups, prefill (the costlier, fewer runs) and decode. This module names them after the
program's methods when exactly one look-alike method reads as a prefill (``prefill``/``prompt`` in
its name) and one as a decode (``kv``/``decode``/``token``), and says so; otherwise it leaves the
names alone and warns that the runs cannot be named.

Only what the inputs say is used: the methods' instructions (kind and backend per instruction),
their names, and the phases ``llm`` already found; no event is read here.
"""
from __future__ import annotations

PREFILL_WORDS = ("prefill", "prompt")
DECODE_WORDS = ("kv", "decode", "token")


def lookalike_methods(pte, method: str | None, etrecord=None) -> list[str]:
    """Methods whose instructions equal those of ``method`` (itself included): from the ``.pte``
    (kind and backend of every instruction), else from the ETRecord (delegate instructions with
    their backend, CPU instructions from the debug-handle map); [] when ``method`` is unknown."""
    if method is None:
        return []
    if pte is not None:
        shape = {m.name: tuple((i.kind, i.backend_id) for i in m.instructions) for m in pte.methods}
    elif etrecord is not None:
        shape = {}
        for m in etrecord.methods:
            delegates = etrecord.delegate_map.get(m, {})
            cpu = sorted(int(i) for i in etrecord.debug_handle_map.get(m, {}) if i not in delegates)
            shape[m] = (tuple(sorted((int(i), d.name) for i, d in delegates.items())), tuple(cpu))
    else:
        return []
    if method not in shape or not any(shape[method]):
        return []
    return [name for name, s in shape.items() if s == shape[method]]


def name_phases(phase_names, pte, method: str | None, etrecord=None) -> dict | None:
    """The methods of a prefill and a decode phase (``phase_names``: the phases found) whose runs
    belong to two look-alike methods: {"methods", "assigned" (phase -> method), "how"}, or
    {"methods", "warning"} when they cannot be named, or None when there is nothing to name."""
    alike = lookalike_methods(pte, method, etrecord)
    if len(alike) < 2:
        return None
    if set(phase_names) != {"prefill", "decode"}:
        return {"methods": alike, "warning": f"methods {', '.join(alike)} execute the same instructions; "
                                             "the runs are not split into one prefill and one decode "
                                             "phase, so which ran which cannot be told"}
    pre = [m for m in alike if any(w in m.lower() for w in PREFILL_WORDS)]
    dec = [m for m in alike if m not in pre and any(w in m.lower() for w in DECODE_WORDS)]
    if len(pre) != 1 or len(dec) != 1:
        return {"methods": alike, "warning": f"methods {', '.join(alike)} execute the same instructions and "
                                             "their names do not say which is the prefill and which the "
                                             "decode: the phases keep their names"}
    how = (f"look-alike methods ({', '.join(alike)}: same instructions); the runs were split by the "
           f"events they logged, the prefill phase (costlier runs) named {pre[0]} and the decode "
           f"phase {dec[0]} after the method names")
    return {"methods": alike, "assigned": {"prefill": pre[0], "decode": dec[0]}, "how": how}
