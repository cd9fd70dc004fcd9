"""QNN profile CSV (qnn-profile-viewer, ONNX Runtime QNN EP ``profiling_file_path``).

The profile it gives is the one model of :mod:`qnn_profile`, shared with the viewer's text output
(:mod:`qnn_text`) and its ``QNN_PROFILE`` JSON (:mod:`qnn_json`).

The file::

    Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier
    0,FINALIZE,60432,US,BACKEND,ROOT,QNN (finalize) time
    0,UNKNOWN,550,US,BACKEND,SUB-EVENT,Graph Preparation Initializing
    0,BACKEND,13554100,CYCLES,BACKEND,ROOT,Accelerator (execute) time (cycles)
    0,NODE,13500,CYCLES,BACKEND,SUB-EVENT,Input OpId_2 (cycles)
    0,UNKNOWN,UNKNOWN,OBJECT,BACKEND,ROOT,Unknown event type
    0,EXECUTE,19363,US,BACKEND,ROOT,QNN (execute) time

Line endings CRLF (emulator files) or LF (the device file); ``Msg Timestamp`` is always 0 in
the real files; a SUB-EVENT belongs to the ROOT before it; ``Time`` is ``UNKNOWN`` for
``Unknown event type`` rows (kept, value NaN, unit ``object``). The identifier is the last
column and is taken whole, so op names containing commas survive; quoted fields are unquoted.
"""
from __future__ import annotations

import math

import numpy as np

from etscope.errors import FormatError
from etscope.formats.qnn_names import decode_text, head_text, normalise_unit, read_input_bytes
from etscope.formats.qnn_profile import (
    ACCEL_CYCLES, CSV_COLUMNS, ProfileBuilder, QnnBlock, QnnEventTable, QnnProfile, parse_number,
)

__all__ = [
    "ACCEL_CYCLES", "CSV_COLUMNS", "QnnBlock", "QnnEventTable", "QnnProfile",
    "parse_qnn_csv", "read_qnn_csv", "sniff",
]


# ---- CSV ---------------------------------------------------------------------------------------

def _header_index(fields: list[str]) -> dict[str, int] | None:
    norm = [f.strip().strip('"').strip().lower() for f in fields]
    if "event identifier" not in norm or "time" not in norm:
        return None
    return {name: i for i, name in enumerate(norm)}


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        return s[1:-1].replace('""', '"')
    return s


def _norm_level(raw: str, where: str, path: str) -> str:
    s = raw.strip().upper().replace("_", "-").replace(" ", "-")
    if s == "ROOT":
        return "ROOT"
    if s in ("SUB-EVENT", "SUBEVENT"):
        return "SUB-EVENT"
    raise FormatError(f"{where}: event level {raw.strip()[:40]!r} is neither ROOT nor SUB-EVENT", file=path)


def parse_qnn_csv(data: bytes | str, name: str = "<input>", *, max_bytes: int | None = None) -> QnnProfile:
    """Parse QNN profile CSV text or bytes (see the module docstring)."""
    try:
        return _parse_csv(data, name, max_bytes)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"QNN profile CSV is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _parse_csv(data, path: str, max_bytes) -> QnnProfile:
    text = decode_text(data, path, "QNN profile CSV", max_bytes)
    b = ProfileBuilder("qnn_csv", path)
    header: dict[str, int] | None = None
    n_cols = 0
    ts: list[float] = []
    src: list[str] = []
    # few distinct spellings: normalise each once
    units: dict[str, str] = {}
    levels: dict[str, str] = {}
    types: dict[str, str] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line or line.isspace():
            continue
        if header is None:
            header = _header_index(line.split(","))
            if header is None:
                raise FormatError("not a QNN profile CSV: first line is not the header "
                                  f"({','.join(CSV_COLUMNS)})", file=path)
            n_cols = len(line.split(","))
            ident_last = header["event identifier"] == n_cols - 1
            i_ident, i_time = header["event identifier"], header["time"]
            i_unit, i_level = header.get("unit of measurement"), header.get("event level")
            i_msg, i_ts, i_src = header.get("message"), header.get("msg timestamp"), header.get("timing source")
            continue
        parts = line.split(",", n_cols - 1) if ident_last else line.split(",")
        if len(parts) != n_cols:
            raise FormatError(f"line {lineno}: {len(parts)} fields, expected {n_cols}", file=path)
        if '"' in line:
            parts = [_unquote(x) for x in parts]
        t = parts[i_time]
        try:
            value = float(t)
        except ValueError:
            if t.strip().lower() == "time":
                continue                                   # a repeated header line
            value = parse_number(t, f"line {lineno}", path)
        u = parts[i_unit] if i_unit is not None else ""
        unit = units.get(u)
        if unit is None:
            unit = units[u] = normalise_unit(u)
        lv = parts[i_level] if i_level is not None else "ROOT"
        level = levels.get(lv)
        if level is None:
            level = levels[lv] = _norm_level(lv, f"line {lineno}", path)
        m = parts[i_msg] if i_msg is not None else ""
        type_ = types.get(m)
        if type_ is None:
            type_ = types[m] = m.strip().upper()
        b.add(parts[i_ident].strip(), value, unit, level, type_, line=lineno)
        if i_ts is not None:
            x = parts[i_ts]
            try:
                ts.append(float(x))
            except ValueError:
                ts.append(parse_number(x, f"line {lineno}", path))
        else:
            ts.append(math.nan)
        src.append(parts[i_src].strip() if i_src is not None else "")
    if header is None:
        raise FormatError("not a QNN profile CSV: empty file", file=path)
    extra = {"msg_timestamp": np.array(ts, dtype=np.float64), "timing_source": np.array(src, dtype=object)}
    return b.build(extra=extra)


def read_qnn_csv(path, *, max_bytes: int | None = None) -> QnnProfile:
    """Read a QNN profile CSV file (read-only, at most ``qnn_names.MAX_INPUT_BYTES``)."""
    name = str(path)
    data = read_input_bytes(path, max_bytes, "QNN profile CSV")
    return parse_qnn_csv(data, name, max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` (the first bytes of a file) looks like a QNN profile CSV."""
    first = head_text(head, 4096).lstrip().split("\n", 1)[0].rstrip("\r").lower()
    return "event identifier" in first and "unit of measurement" in first and "," in first

