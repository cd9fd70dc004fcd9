"""Values returned by a ``.pte``'s constant methods (no instructions), e.g. an LLM export's
``get_max_seq_len`` or a QNN hybrid program's ``get_ar_len``.

Such a method's outputs are value indices into ``ExecutionPlan.values``, each an ``EValue`` whose
``val`` union (``KernelTypes`` in ``schema/program.fbs``; as a flatbuffers union type 0 is NONE,
then 1 Null, 2 Int, 3 Bool, 4 Double, 5 Tensor, 6 String, 7 IntList, ...) holds the constant. Scalars and strings are
decoded; anything else is described by its type only. Never imports torch; the file is mapped
read-only.
"""
from __future__ import annotations

import os

import numpy as np

from etscope.errors import FormatError
from etscope.formats.flatbuf import Buffer, root_table
from etscope.formats.pte import FILE_IDENTIFIER, _Budget, extended_header, mapped_pte

# A flatbuffers union's type 0 is NONE, so the members count from 1 (as INSTRUCTION_KINDS in pte.py).
KERNEL_TYPES = {0: "none", 1: "null", 2: "int", 3: "bool", 4: "double", 5: "tensor", 6: "string",
                7: "int list", 8: "double list", 9: "bool list", 10: "tensor list", 11: "optional tensor list"}
_PROGRAM_PLANS = 1
_PLAN_NAME, _PLAN_VALUES, _PLAN_INSTRS_CHAINS, _PLAN_OUTPUTS = 0, 2, 5, 4
_EVALUE_TYPE, _EVALUE_VAL = 0, 1
MAX_OUTPUTS = 64          # outputs decoded per method (real ones have 1-5)
MAX_STRING = 256


def constant_method_values(path: str | os.PathLike) -> dict[str, list]:
    """``{method: [value, ...]}`` for every method without instructions: ints, floats, bools and
    strings as such, other values as ``"<tensor>"``-style type names."""
    with mapped_pte(path) as (mm, name):
        try:
            return _values(Buffer(mm, "flatbuffer"), name)
        except FormatError as e:
            raise e.with_file(name) from None
        except (IndexError, ValueError, TypeError, OverflowError, UnicodeError) as e:
            raise FormatError(f"malformed .pte program ({type(e).__name__}: {e})", file=name) from None


def _values(whole: Buffer, name: str) -> dict[str, list]:
    program_size, _, _, _ = extended_header(whole)
    buf, root = root_table(Buffer(whole.u8[:program_size], "flatbuffer"), FILE_IDENTIFIER)
    # Work proportional to the file: only the returned values are read (never a whole values
    # vector: thousands of methods may share one of 200,000 values), each distinct plan, chain
    # list and EValue table is decoded once, and the items looked at are charged to a budget an
    # honest file cannot exceed (each item takes at least a 4-byte offset).
    budget = _Budget(buf)
    plans = buf.tables(root, _PROGRAM_PLANS)
    budget.take(plans.size, "methods", root)
    seen_plans: set[int] = set()
    has_instructions: dict[int, bool] = {}        # chains vector position -> any instruction
    decoded: dict[int, object] = {}               # EValue table position -> value
    out: dict[str, list] = {}
    for plan in plans.tolist():
        if plan in seen_plans:
            continue
        seen_plans.add(plan)
        chains_at, n_chains = buf.vector(plan, _PLAN_INSTRS_CHAINS, 4)
        if chains_at not in has_instructions:
            budget.take(n_chains, "chains", plan)
            has_instructions[chains_at] = any(
                buf.vector(buf.indirect(chains_at + 4 * i), 2, 4)[1] for i in range(n_chains))
        if has_instructions[chains_at]:
            continue                      # has instructions: not a constant method
        method = _string(buf, budget, plan, _PLAN_NAME)
        values_at, n_values = buf.vector(plan, _PLAN_VALUES, 4)
        outputs_at, n_outputs = buf.vector(plan, _PLAN_OUTPUTS, 4)
        n_outputs = min(n_outputs, MAX_OUTPUTS)
        budget.take(n_outputs, "constant method outputs", plan)
        idx = buf.u8[outputs_at:outputs_at + 4 * n_outputs].copy().view("<i4").astype(np.int64)
        bad = (idx < 0) | (idx >= n_values)
        if bad.any():
            raise FormatError(f"method {method!r} returns value {int(idx[bad][0])} but has {n_values} values")
        got = []
        for ev in buf.v_indirect(values_at + 4 * idx).tolist() if n_outputs else ():
            if ev not in decoded:
                decoded[ev] = _evalue(buf, budget, ev)
            got.append(decoded[ev])
        out[method] = got
    return out


def _string(buf: Buffer, budget: _Budget, table: int, slot: int) -> str:
    """At most MAX_STRING characters of a string field (never decoding more than it shows)."""
    start, count = buf.vector(table, slot, 1)
    if not start:
        return ""
    count = min(count, 4 * MAX_STRING)
    budget.take(1, "strings", table)
    return bytes(buf.u8[start:start + count]).decode("utf-8", "replace")[:MAX_STRING]


def _evalue(buf: Buffer, budget: _Budget, ev: int):
    kind = buf.scalar(ev, _EVALUE_TYPE, "u8")
    val = buf.table(ev, _EVALUE_VAL)
    if kind == 2:
        return buf.scalar(val, 0, "i64") if val else 0
    if kind == 3:
        return bool(buf.scalar(val, 0, "u8")) if val else False
    if kind == 4:
        return buf.scalar(val, 0, "f64") if val else 0.0
    if kind == 6:
        return _string(buf, budget, val, 0) if val else ""
    return f"<{KERNEL_TYPES.get(kind, f'type {kind}')}>"
