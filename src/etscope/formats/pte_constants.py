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

from etscope.errors import FormatError
from etscope.formats.flatbuf import Buffer, root_table
from etscope.formats.pte import FILE_IDENTIFIER, extended_header, mapped_pte

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
    out: dict[str, list] = {}
    for plan in buf.tables(root, _PROGRAM_PLANS).tolist():
        chains = buf.tables(plan, _PLAN_INSTRS_CHAINS)
        if any(buf.vector(int(c), 2, 4)[1] for c in chains.tolist()):
            continue                      # has instructions: not a constant method
        method = (buf.string(plan, _PLAN_NAME) or "")[:MAX_STRING]
        values = buf.tables(plan, _PLAN_VALUES)
        outputs = buf.scalars(plan, _PLAN_OUTPUTS, "i32")[:MAX_OUTPUTS]
        got = []
        for idx in outputs.tolist():
            if not 0 <= idx < values.size:
                raise FormatError(f"method {method!r} returns value {idx} but has {values.size} values")
            got.append(_evalue(buf, int(values[idx])))
        out[method] = got
    return out


def _evalue(buf: Buffer, ev: int):
    kind = buf.scalar(ev, _EVALUE_TYPE, "u8")
    val = buf.table(ev, _EVALUE_VAL)
    if kind == 2:
        return buf.scalar(val, 0, "i64") if val else 0
    if kind == 3:
        return bool(buf.scalar(val, 0, "u8")) if val else False
    if kind == 4:
        return buf.scalar(val, 0, "f64") if val else 0.0
    if kind == 6:
        return (buf.string(val, 0) or "")[:MAX_STRING] if val else ""
    return f"<{KERNEL_TYPES.get(kind, f'type {kind}')}>"
