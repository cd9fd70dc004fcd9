"""Indented JSON text, byte for byte what ``json.JSONEncoder(indent=n, ensure_ascii=False,
allow_nan=False)`` writes, in far fewer pieces.

Python's C encoder is used only without indentation; with it, the pure-Python encoder yields one
piece per value through a chain of generators (``llm --json`` of 29,000 runs: 235k pieces, 0.4 s).
Here a list or dict whose items are all plain values (a per-run series, a table row) is joined in
one step, with the same text per value (``float.__repr__``, ``int.__repr__``, json's own string
escaping) and the same separators. Input is what ``to_jsonable`` returns: keys are str, values are
dict, list, str, int, float, bool or None.
"""
from __future__ import annotations

import math
from json.encoder import encode_basestring

_NONE = type(None)


def _float(v: float) -> str:
    if not math.isfinite(v):            # json's message (allow_nan=False)
        raise ValueError("Out of range float values are not JSON compliant: " + repr(v))
    return float.__repr__(v)


def _bool(v: bool) -> str:
    return "true" if v else "false"


_SCALAR = {str: encode_basestring, int: int.__repr__, float: _float, bool: _bool, _NONE: lambda v: "null"}


def _scalars(items) -> list[str] | None:
    """Each item's text when every item is a plain value (exact type), else None."""
    types = set(map(type, items))
    if not types <= _SCALAR.keys():
        return None
    if types <= {int, float} and _all_finite(items):
        return list(map(repr, items))
    if types == {str}:
        return list(map(encode_basestring, items))
    if types == {_NONE}:                                    # a series with no value in any run
        return ["null"] * len(items)
    return [_SCALAR[type(v)](v) for v in items]


def _all_finite(numbers) -> bool:
    """True when the sum is finite: a NaN or an infinity makes the sum one (False may also mean an
    overflow; the caller then checks value by value)."""
    try:
        return math.isfinite(sum(numbers))
    except OverflowError:               # an int past float's range
        return False


def _key(k) -> str:
    if isinstance(k, str):
        return encode_basestring(k)
    if isinstance(k, float):
        return encode_basestring(_float(k))
    if k is True or k is False or k is None:
        return encode_basestring({True: "true", False: "false", None: "null"}[k])
    if isinstance(k, int):
        return encode_basestring(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def chunks(o, indent: int, level: int = 0):
    """The pieces of ``o``'s indented JSON text at nesting ``level``."""
    scalar = _SCALAR.get(type(o))
    if scalar is not None:
        yield scalar(o)
    elif isinstance(o, (list, tuple)):
        yield from _list(o, indent, level)
    elif isinstance(o, dict):
        yield from _dict(o, indent, level)
    elif isinstance(o, (str, int, float)):          # subclasses: as json writes them
        yield encode_basestring(o) if isinstance(o, str) else (
            _float(o) if isinstance(o, float) else int.__repr__(o))
    else:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _list(o, indent: int, level: int):
    if not o:
        yield "[]"
        return
    inner = "\n" + " " * (indent * (level + 1))
    texts = _scalars(o)
    if texts is not None:
        yield "[" + inner + ("," + inner).join(texts) + "\n" + " " * (indent * level) + "]"
        return
    yield "[" + inner
    for i, v in enumerate(o):
        if i:
            yield "," + inner
        yield from chunks(v, indent, level + 1)
    yield "\n" + " " * (indent * level) + "]"


def _dict(o: dict, indent: int, level: int):
    if not o:
        yield "{}"
        return
    inner = "\n" + " " * (indent * (level + 1))
    keys = [_key(k) for k in o]
    texts = _scalars(list(o.values()))
    if texts is not None:
        yield "{" + inner + ("," + inner).join(k + ": " + t for k, t in zip(keys, texts)) + \
            "\n" + " " * (indent * level) + "}"
        return
    yield "{" + inner
    for i, (k, v) in enumerate(zip(keys, o.values())):
        yield ("," + inner if i else "") + k + ": "
        yield from chunks(v, indent, level + 1)
    yield "\n" + " " * (indent * level) + "}"
