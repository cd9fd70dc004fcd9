"""JSON output: one object on stdout, NaN written as null."""
from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np

from etscope.render import json_indent


def to_jsonable(x):
    """A copy JSON can write: dict keys as str, tuples as lists, numpy scalars and arrays as Python
    values, NaN and infinities as None, and a typed result (a dataclass instance) as an object of
    its fields in declared order (see :func:`json_fields`)."""
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {k: to_jsonable(v) for k, v in as_fields(x).items()}
    if isinstance(x, (list, tuple)):
        if _plain_scalars(x):       # per-run series (100k values): no call per value
            return non_finite_as_null(x)
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    return x


_FIELDS: dict[type, tuple[tuple[str, str, str | None], ...]] = {}
_INLINE: dict[type, dict[str, type]] = {}          # attribute -> the result class written at its level
# A typed result's field metadata (``dataclasses.field(metadata=...)``), see ``json_fields``.
JSON, OMIT_EMPTY, OMIT_NONE, INLINE, SPREAD = "json", "omit_empty", "omit_none", "inline", "spread"


def as_fields(result) -> dict:
    """A typed result's JSON fields, one level deep (values as they are): ``{**as_fields(r)}``
    puts them after a command's own keys (schema, inputs). An inline field's result contributes
    its own fields here (each None when the field is None)."""
    cls = type(result)
    fields = json_fields(cls)           # first: it fills _INLINE for the class
    inline = _INLINE[cls] if cls in _INLINE else {}
    out = {}
    for name, key, omit in fields:
        v = getattr(result, name)
        if omit == "spread":
            out.update(v or {})
        elif name in inline:
            out.update(as_fields(v) if v is not None else dict.fromkeys(k for _, k, _ in json_fields(inline[name])))
        elif not (omit and (v is None or omit == "empty" and _empty(v))):
            out[key] = v
    return out


def _empty(v) -> bool:
    return v is None or (isinstance(v, (tuple, list, dict, str)) and len(v) == 0)


def json_fields(cls: type) -> tuple[tuple[str, str, str | None], ...]:
    """``(attribute, JSON key, when to omit it)`` of a typed result's fields, in declared order: the
    schema is the class. A field declared with ``metadata={"json": False}`` stays out of the JSON (a
    handle the views need, such as a table, not a value); ``metadata={"json": "key"}`` writes it
    under another key (a JSON key that is not an identifier, or a renamed attribute whose schema
    stays); ``metadata={"omit_empty": True}``: a key the schema has only when there is something
    (None or empty leaves it out: "empty"); ``metadata={"omit_none": True}``: only None leaves it out
    ("none"; an empty list is a value, e.g. a per-run series of no runs); ``metadata={"inline": Cls}``:
    the field's ``Cls`` result writes its keys at this level (a flat row made of parts; each null when
    the field is None); ``metadata={"spread": True}``: a mapping whose items are written as keys at
    this level (keys named by the data, such as the views of the input kinds given: "spread")."""
    got = _FIELDS.get(cls)
    if got is None:
        kept = [f for f in dataclasses.fields(cls) if f.metadata.get(JSON, True) is not False]
        got = tuple((f.name, f.metadata.get(JSON) if isinstance(f.metadata.get(JSON), str) else f.name,
                     "empty" if f.metadata.get(OMIT_EMPTY) else "none" if OMIT_NONE in f.metadata
                     else "spread" if f.metadata.get(SPREAD) else None)
                    for f in kept)
        inline = {f.name: f.metadata[INLINE] for f in kept if INLINE in f.metadata}
        if inline:
            _INLINE[cls] = inline
        _FIELDS[cls] = got
    return got


_INFINITIES = (math.inf, -math.inf)
# Exact types (not numpy scalars, not subclasses) written as they are, but NaN and the infinities.
PLAIN_NUMBERS = frozenset((float, int, bool, type(None)))
_PLAIN = PLAIN_NUMBERS | {str}


def _plain_scalars(x) -> bool:
    """Every item a Python float, int, str, bool or None: JSON-able as it is, but for NaN and the
    infinities."""
    return set(map(type, x)) <= _PLAIN


def non_finite_as_null(items) -> list:
    """``items`` (plain values, see ``_PLAIN``) with NaN and the infinities as None, without a call
    per item (``v == v`` and ``v in _INFINITIES`` compare by value, so a str, bool or None passes
    through unchanged)."""
    return [v if v == v and v not in _INFINITIES else None for v in items]


# json escapes C0 controls only; DEL and C1 (U+009B is CSI on some terminals) are escaped too, and
# the invisible direction marks and line/paragraph separators (same string, written as escapes).
_C1 = {c: f"\\u{c:04x}" for c in [*range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, 0x2028, 0x2029]}
# Lone surrogates (undecodable bytes of a file name) cannot be UTF-8: written as the text \xNN.
_SURROGATE = "[\ud800-\udfff]"         # compiled on first non-ASCII output (re caches it)
# Either: found by one scan (translating a text with neither, µ and → only, copies all of it).
_TO_ESCAPE = "[" + "".join(map(chr, _C1)) + "\ud800-\udfff]"


def dumps(obj, indent: int | None = 2) -> str:
    return _safe("".join(_pieces(to_jsonable(obj), indent)))


def _pieces(obj, indent: int | None):
    """json's text for ``obj`` (``to_jsonable``'s result) in pieces: its C encoder without
    indentation, ``json_indent`` (the same bytes, fewer pieces) with it."""
    if indent is None:
        return (json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode(obj),)
    return json_indent.chunks(obj, indent)


def _safe(text: str) -> str:
    """C1 controls escaped; lone surrogates (undecodable file-name bytes) shown escaped, so the
    output is valid UTF-8."""
    if text.isascii() and "\x7f" not in text:
        return text                       # nothing to escape (the common case: no pattern needed)
    if not re.search(_TO_ESCAPE, text):
        return text
    text = text.translate(_C1)
    if re.search(_SURROGATE, text):
        from etscope.paths import display

        text = re.sub(_SURROGATE, lambda m: display(m.group()).replace("\\", "\\\\"), text)
    return text


def write(obj, file, indent: int | None = 2) -> None:
    """``dumps(obj)`` written to ``file`` piece by piece, then a newline: the output is never one
    string in memory (``ops --json`` of a large model is tens of MB, and the string, its escaped
    copy and its encoding were three copies). Each piece ends between JSON tokens, so escaping
    per piece is escaping the whole."""
    buf: list[str] = []
    size = 0
    for chunk in _pieces(to_jsonable(obj), indent):
        buf.append(chunk)
        size += len(chunk)
        if size > 1 << 20:
            file.write(_safe("".join(buf)))
            buf, size = [], 0
    file.write(_safe("".join(buf)) + "\n")
