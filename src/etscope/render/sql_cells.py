"""A query result's values as text and JSON: every type DuckDB returns gets one written form.

``etscope sql`` may return any DuckDB type; the CSV writer knows only flat columns, JSON has no
decimals, bytes or times, and Python's datetime cannot hold DuckDB's ``infinity`` or years past
9999. The forms chosen (the same in the table, CSV and JSON):

- DECIMAL / HUGEINT: integers (scale 0) as JSON integers, exact; fractions as JSON numbers when a
  double reads back as the same decimal, else every column value as a string with every digit;
  in CSV the exact decimal.
- BLOB (and other bytes): lowercase hex. UUID: its canonical text.
- DATE / TIMESTAMP: ISO 8601 (``2024-05-01``, ``2024-05-01T12:00:00.000000``; with a time zone in
  UTC, ``...Z``), ``infinity`` / ``-infinity`` for DuckDB's infinite values; TIME: ``HH:MM:SS.ffffff``.
- INTERVAL: ISO 8601 duration, a sign per field as PostgreSQL writes it (``P1Y2M3DT4H5M6.5S``,
  ``P-1D``, ``PT0S``).
- LIST / ARRAY / STRUCT / MAP / UNION: nested JSON (a MAP as an object, keys as text); in CSV and
  the table the same JSON as the cell's text.
"""
from __future__ import annotations

import json
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_INT64_MAX = (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1


class UnwritableError(Exception):
    """A result column of a type with no written form here (one line)."""


def json_rows(table: pa.Table) -> list[dict]:
    """The rows as JSON-ready dicts (NaN and infinities are written as null by render.json). A
    result with two columns of one name cannot be JSON objects (one value would be lost)."""
    names = table.column_names
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UnwritableError(f"the result has several columns named {', '.join(map(repr, twice))[:200]}: "
                              "name them apart (... AS other_name) for JSON")
    cols = [column_values(table.column(i)) for i in range(table.num_columns)]
    return [dict(zip(names, row)) for row in zip(*cols)]


def text_table(table: pa.Table) -> pa.Table:
    """The table with every column the CSV writer cannot write as it is (or would write in a form
    JSON and the table do not use) replaced by its text: flat columns of numbers, booleans and
    strings are kept."""
    cols = []
    for i, col in enumerate(table.columns):
        if _kept_in_text(col.type):
            cols.append(col)
        else:
            cols.append(pa.array([cell_text(v) for v in column_values(col)], type=pa.string()))
    return pa.table(cols, names=table.column_names)


def cell_text(v) -> str | None:
    """One value of ``column_values`` as the text of a CSV or table cell."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (list, dict)):
        from etscope.render.json import dumps

        return dumps(v, indent=None)
    return str(v)


def _kept_in_text(t: pa.DataType) -> bool:
    return (pa.types.is_null(t) or pa.types.is_boolean(t) or pa.types.is_integer(t)
            or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_decimal(t) or pa.types.is_dictionary(t) and _kept_in_text(t.value_type))


def column_values(col) -> list:
    """A column (Arrow Array or ChunkedArray) as Python values in the forms of the module's doc."""
    if isinstance(col, pa.ChunkedArray) and pa.types.is_decimal(col.type):
        col = col.combine_chunks()         # one form (numbers or strings) for the whole column
    if isinstance(col, pa.ChunkedArray):
        out = []
        for chunk in col.chunks:
            out.extend(_values(chunk))
        return out
    return _values(col)


def _values(a: pa.Array) -> list:
    t = a.type
    if isinstance(t, pa.ExtensionType) or isinstance(a, pa.ExtensionArray):
        if getattr(t, "extension_name", "") == "arrow.uuid":
            return _nulls(a, [_uuid(b) for b in a.storage.to_pylist()])
        return _values(a.storage)
    if pa.types.is_dictionary(t):
        return _values(a.dictionary_decode())
    if (pa.types.is_null(t) or pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
            or pa.types.is_string(t) or pa.types.is_large_string(t) or _is(t, "is_string_view")):
        return a.to_pylist()
    if pa.types.is_decimal(t):
        return _decimals(a)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) \
            or _is(t, "is_binary_view"):
        return [None if b is None else b.hex() for b in a.to_pylist()]
    if pa.types.is_timestamp(t):
        return _timestamps(a)
    if pa.types.is_date(t):
        return _dates(a)
    if pa.types.is_time(t):
        return _times(a)
    if pa.types.is_duration(t):
        ns = _ints(a) * _NS_PER[t.unit]
        return _nulls(a, [_iso_duration(0, 0, int(v)) for v in ns])
    if t == pa.month_day_nano_interval():
        return [None if v is None else _iso_duration(v.months, v.days, v.nanoseconds) for v in a.to_pylist()]
    if pa.types.is_map(t):
        keys, items = _values(a.keys), _values(a.items)
        offs = a.offsets.to_pylist()
        return _nulls(a, [{_key_text(keys[j]): items[j] for j in range(offs[i], offs[i + 1])}
                          for i in range(len(a))])
    if pa.types.is_fixed_size_list(t):
        return _values(a.cast(pa.list_(t.value_field)))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        vals = _values(a.values)
        offs = a.offsets.to_pylist()
        return _nulls(a, [vals[offs[i]:offs[i + 1]] for i in range(len(a))])
    if pa.types.is_struct(t):
        fields = [(t.field(k).name, _values(a.field(k))) for k in range(t.num_fields)]
        return _nulls(a, [{name: vals[i] for name, vals in fields} for i in range(len(a))])
    if pa.types.is_union(t):
        return _unions(a)
    raise UnwritableError(f"a result column of type {t} cannot be written; cast it in the query, "
                          "e.g. CAST(x AS VARCHAR)")


def _is(t, name: str) -> bool:
    test = getattr(pa.types, name, None)     # string_view / binary_view: newer pyarrow only
    return bool(test and test(t))


def _nulls(a: pa.Array, vals: list) -> list:
    """``vals`` with None where ``a`` is null."""
    if a.null_count == 0:
        return vals
    return [None if null else v for v, null in zip(vals, a.is_null().to_pylist())]


def _ints(a: pa.Array) -> np.ndarray:
    """The stored integers of a temporal array (nulls as 0; ``_nulls`` puts them back)."""
    width = pa.int32() if pa.types.is_date32(t := a.type) or pa.types.is_time32(t) else pa.int64()
    return a.view(width).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _decimals(a: pa.Array) -> list:
    vals = a.to_pylist()
    if a.type.scale <= 0:
        return [None if d is None else int(d) for d in vals]
    floats = [None if d is None else float(d) for d in vals]
    if all(d is None or (math.isfinite(f) and Decimal(repr(f)) == d) for d, f in zip(vals, floats)):
        return floats
    return [None if d is None else str(d) for d in vals]


_NS_PER_S = 1_000_000_000
_NS_PER = {"s": _NS_PER_S, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _timestamps(a: pa.Array) -> list:
    ints = _ints(a)
    unit = a.type.unit
    tz = {"timezone": "UTC"} if a.type.tz else {}
    text = np.datetime_as_string(ints.astype(f"datetime64[{unit}]"), unit=unit, **tz).tolist()
    return _nulls(a, _infinities(ints, text, _INT64_MAX))


def _dates(a: pa.Array) -> list:
    ints = _ints(a)
    if pa.types.is_date64(a.type):       # milliseconds; DuckDB writes date32 (days)
        ints = ints // 86_400_000
        return _nulls(a, np.datetime_as_string(ints.astype("datetime64[D]")).tolist())
    text = np.datetime_as_string(ints.astype("datetime64[D]")).tolist()
    return _nulls(a, _infinities(ints, text, _INT32_MAX))


def _infinities(ints: np.ndarray, text: list, largest: int) -> list:
    """DuckDB's infinity and -infinity are the largest stored value and its negation."""
    for i in np.flatnonzero(np.abs(ints) >= largest).tolist():
        text[i] = "infinity" if ints[i] > 0 else "-infinity"
    return text


def _times(a: pa.Array) -> list:
    unit = a.type.unit
    digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[unit]
    per_s = _NS_PER_S // _NS_PER[unit]
    out = []
    for v in _ints(a).tolist():
        s, frac = divmod(v, per_s)
        h, rest = divmod(s, 3600)
        text = f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}"
        out.append(f"{text}.{frac:0{digits}d}" if digits else text)
    return _nulls(a, out)


def _iso_duration(months: int, days: int, ns: int) -> str:
    """ISO 8601 duration with a sign per field (PostgreSQL's iso_8601 interval style)."""
    years, mons = int(months / 12), months - 12 * int(months / 12)     # both toward zero
    sign = "-" if ns < 0 else ""
    secs_total, frac = divmod(abs(ns), 1_000_000_000)
    h, rest = divmod(secs_total, 3600)
    m, s = divmod(rest, 60)
    date = "".join(f"{v}{u}" for v, u in ((years, "Y"), (mons, "M"), (days, "D")) if v)
    sec = f"{s}.{frac:09d}".rstrip("0").rstrip(".") if frac else (f"{s}" if s else "")
    time = "".join(f"{sign}{v}{u}" for v, u in ((h, "H"), (m, "M"), (sec, "S")) if v)
    if not date and not time:
        return "PT0S"
    return "P" + date + ("T" + time if time else "")


def _uuid(b: bytes | None) -> str | None:
    if b is None:
        return None
    import uuid

    return str(uuid.UUID(bytes=bytes(b)))


def _key_text(k) -> str:
    return k if isinstance(k, str) else json.dumps(k, allow_nan=True, default=str)


def _unions(a: pa.Array) -> list:
    """Each value from its child. The type ids and offsets are read from the buffers at the
    array's offset (pyarrow's ``type_codes`` / ``offsets`` ignore a slice's offset)."""
    bufs = a.buffers()
    window = slice(a.offset, a.offset + len(a))
    codes = np.frombuffer(bufs[1], dtype=np.int8)[window].tolist()
    child_of = {code: i for i, code in enumerate(a.type.type_codes)}
    children = [_values(a.field(i)) for i in range(a.type.num_fields)]
    if a.type.mode == "dense":           # children not sliced; offsets point into them
        offs = np.frombuffer(bufs[2], dtype=np.int32)[window].tolist()
        return [children[child_of[c]][o] for c, o in zip(codes, offs)]
    return [children[child_of[c]][i] for i, c in enumerate(codes)]   # sparse: children sliced
