"""QNN event and op names, plus the small input helpers shared by the QNN readers.

Names
-----
QNN names its profile events ``<identifier>`` and ExecuTorch's QNN backend appends a unit suffix
(`` (us)``, `` (bytes)``, `` (count)``; nothing for cycles). Per-op NODE events are named by the op:

=========================================  ===========================================
``aten_relu_default_3:OpId_60 (cycles)``   ``("aten_relu_default_3", 60, "cycles", None)``
``Transpose_token_8:OpId_17 (cycles)``     ``("Transpose", 17, "cycles", 8)``
``Conv_token_13_2:OpId_37 (cycles)``       ``("Conv", 37, "cycles", 13)`` (device data)
``Input OpId_2 (cycles)``                  ``("Input", 2, "cycles", None)`` (graph I/O op)
``OpId_17 (cycles)``                       ``("", 17, "cycles", None)`` (custom-op package)
``QNN (execute) time (us)``                ``("QNN (execute) time", None, "us", None)``
``Accelerator (execute) time (cycles)``    ``("Accelerator (execute) time", None, "cycles", None)``
=========================================  ===========================================

For ``Accelerator (execute) time (cycles)`` the `` (cycles)`` is QNN's own text (the accelerator
total in cycles, whose NODE sub-events are the per-op rows); its ``(base, unit)`` pair differs from
``Accelerator (execute) time`` in us, which is a different event (wall time including waits).

Input helpers
-------------
:func:`read_input_bytes`, :func:`decode_text` and :func:`load_json` turn a path or bytes into text
or JSON without letting anything but :class:`~etscope.errors.FormatError` escape. They live here
because every QNN reader needs them; they are not QNN-specific.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple

from etscope.errors import FormatError
from etscope.paths import open_input

__all__ = ["MAX_INPUT_BYTES", "QnnEventName", "decode_text", "fx_node_candidates", "head_text",
           "load_json", "normalise_unit", "parse_qnn_event_name", "read_input_bytes", "split_token"]

# Largest input any QNN reader accepts, in bytes. Readers look it up at call time, so tests and
# the CLI may change it (``qnn_names.MAX_INPUT_BYTES = ...``) or pass ``max_bytes=``.
MAX_INPUT_BYTES = 1 << 30


# ---- names ----------------------------------------------------------------------------------------

class QnnEventName(NamedTuple):
    """A parsed QNN profile event name. ``base`` is ``""`` for nameless per-op rows (``OpId_17``)."""

    base: str
    op_id: int | None
    unit: str | None      # normalised unit suffix ("us", "cycles", "count", "bytes", ...) or None
    token: int | None     # N of a trailing ``_token_N`` (QNN split/inserted op), stripped from base


# Unit suffixes ExecuTorch's QnnProfiler and QNN itself put at the end of a name.
_NAME_UNITS = {"us": "us", "cycles": "cycles", "count": "count", "bytes": "bytes", "ms": "ms",
               "ns": "ns", "object": "object", "backend": "backend"}
# Group 1 is the name without the suffix and the spaces before it. Written as "(?:.*\S)?" rather
# than a lazy "(.*?)\s*": that form backtracks quadratically on long runs of spaces (a 40 kB name
# took a minute).
UNIT_SUFFIX = re.compile(r"^((?:.*\S)?)\s*\((us|cycles|count|bytes|ms|ns|object|backend)\)$", re.S)
# "name:OpId_N", "Input OpId_N", "OpId_N"; the op id is always last (parsed by _op_id, no regex).
_OP_ID_MARK = "OpId_"
# "..._token_N" and, on device, "..._token_N_M".
_TOKEN = re.compile(r"^(.*?)_token_(\d+)(?:_(\d+))?$", re.S)
# Longest number taken as an op id or token (longer ones are not ids; int() refuses > 4300 digits).
_MAX_ID_DIGITS = 18

# Suffixes QNN or ExecuTorch's op builders add to the FX node name of an op they split or insert
# (seen in data: MatMul_0_pre_reshape / MatMul_7_post_reshape; in executorch/backends/qualcomm/
# builders: node.name + "_cast", "_unsqueeze", "_precompute"). Heuristic: tried after exact names.
_DERIVED_SUFFIXES = ("_pre_reshape", "_post_reshape", "_cast", "_unsqueeze", "_precompute")


def split_token(base: str) -> tuple[str, int | None, int | None]:
    """``"Conv_token_13_2"`` -> ``("Conv", 13, 2)``; ``"Relu"`` -> ``("Relu", None, None)``."""
    m = _TOKEN.match(base)
    if not m or not m.group(1) or len(m.group(2)) > _MAX_ID_DIGITS or len(m.group(3) or "") > _MAX_ID_DIGITS:
        return base, None, None
    return m.group(1), int(m.group(2)), (int(m.group(3)) if m.group(3) is not None else None)


def _split_event(s: str) -> tuple[str, str | None, int | None, str | None]:
    """``name`` -> ``(raw op name incl. token, separator ":"/" "/None, op_id, unit)``."""
    rest = s.strip()
    unit = None
    m = UNIT_SUFFIX.match(rest)
    if m:
        rest, unit = m.group(1), _NAME_UNITS[m.group(2)]
    found = _op_id(rest)
    if found is None:
        return rest, None, None, unit
    raw, sep, op_id = found
    return raw.strip(), sep, op_id, unit


def _op_id(rest: str) -> tuple[str, str | None, int] | None:
    r"""``"name:OpId_7"`` -> ``("name", ":", 7)``, ``"Input OpId_2"`` -> ``("Input", " ", 2)``,
    ``"OpId_17"`` -> ``("", None, 17)``; None when ``rest`` does not end in an op id.

    Same as the regex ``^(?:(.*?)(?::|\s+))?OpId_(\d+)$`` (re.S) without its quadratic backtracking.
    """
    i = rest.rfind(_OP_ID_MARK)
    if i < 0:
        return None
    digits = rest[i + len(_OP_ID_MARK):]
    if not digits.isdecimal() or len(digits) > _MAX_ID_DIGITS:
        if digits.endswith("\n") and digits[:-1].isdecimal() and len(digits) - 1 <= _MAX_ID_DIGITS:
            digits = digits[:-1]       # "$" also matches before a final newline
        else:
            return None
    prefix = rest[:i]
    if not prefix:
        return "", None, int(digits)
    if prefix[-1].isspace():
        return prefix.rstrip(), " ", int(digits)
    if prefix[-1] == ":":
        return prefix[:-1], ":", int(digits)
    return None


def parse_qnn_event_name(s: str) -> QnnEventName:
    """Split a QNN event name into ``(base, op_id, unit_suffix, token)``; never raises.

    ``_token_N`` is only recognised on op names (with an ``OpId_``) or at the very end of a name.
    """
    if not isinstance(s, str):
        s = "" if s is None else str(s)
    raw, _sep, op_id, unit = _split_event(s)
    base, token, _sub = split_token(raw)
    return QnnEventName(base, op_id, unit, token)


def fx_node_candidates(base: str) -> list[str]:
    """Names to try, in order, when looking for the FX node a QNN op name came from.

    Accepts a bare op name (``aten_mm_default_token_3``) or a full event name
    (``aten_mm_default_token_3:OpId_5 (cycles)``). Order: the name as given, without ``_token_N``,
    then without a known split/insert suffix (``_pre_reshape``, ``_cast``, ...). Empty for
    nameless ops (``OpId_17``) and QNN's graph I/O pseudo-ops (``Input OpId_2``).
    """
    if not isinstance(base, str):
        return []
    raw, sep, op_id, _unit = _split_event(base)
    if op_id is not None and sep != ":":
        return []          # "OpId_17" or "Input OpId_2": no FX node behind it
    out: list[str] = []

    def add(n: str) -> None:
        if n and n not in out:
            out.append(n)

    add(raw)
    stem, _tok, _sub = split_token(raw)
    add(stem)
    for n in list(out):
        for suffix in _DERIVED_SUFFIXES:
            if n.endswith(suffix) and len(n) > len(suffix):
                add(n[: -len(suffix)])
    return out


# ---- units ---------------------------------------------------------------------------------------

_UNIT_ALIASES = {
    "us": "us", "usec": "us", "microsec": "us", "microseconds": "us", "microsecond": "us",
    "ms": "ms", "millisec": "ms", "milliseconds": "ms",
    "ns": "ns", "nanosec": "ns", "nanoseconds": "ns",
    "cycles": "cycles", "cycle": "cycles",
    "count": "count", "bytes": "bytes", "byte": "bytes", "object": "object",
    "backend": "backend", "": "",
}


def normalise_unit(raw: Any) -> str:
    """QNN unit spellings (``US``, ``MICROSEC``, ``CYCLES``, ``OBJECT``, ...) to lowercase short units.

    Unknown spellings are returned lowercased and stripped, never dropped.
    """
    if raw is None:
        return ""
    s = str(raw).strip().lower()
    return _UNIT_ALIASES.get(s, s)


# ---- input helpers ---------------------------------------------------------------------------------

def _limit(max_bytes: int | None) -> int:
    return MAX_INPUT_BYTES if max_bytes is None else int(max_bytes)


def read_input_bytes(path, max_bytes: int | None = None, what: str = "file") -> bytes:
    """Read a whole file (read-only) refusing anything larger than ``max_bytes``."""
    limit = _limit(max_bytes)
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    try:
        with open_input(path, what, max_bytes=limit) as f:
            try:
                size = os.fstat(f.fileno()).st_size
            except OSError:
                size = 0
            if size > limit:
                raise FormatError(f"{what} is {size} bytes, more than the {limit}-byte limit", file=name)
            data = _read_capped(f, limit, size)
    except FormatError:
        raise
    except (OSError, ValueError, TypeError) as e:
        raise FormatError(f"cannot read {what}: {e.__class__.__name__}: {e}", file=name) from None
    if len(data) > limit:
        raise FormatError(f"{what} is more than the {limit}-byte limit", file=name)
    return data


def _read_capped(f, limit: int, size_hint: int) -> bytes:
    """At most ``limit + 1`` bytes of ``f``. ``f.read(limit + 1)`` would allocate the whole
    ``limit`` (1 GiB by default) up front, whatever the file's size."""
    chunks = []
    got = 0
    want = min(size_hint, limit) + 1 if size_hint > 0 else 1 << 20
    while got <= limit:
        chunk = f.read(min(want, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        want = 1 << 20
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_text(data, name: str = "<input>", what: str = "file", max_bytes: int | None = None) -> str:
    """bytes/str -> str. UTF-8 (BOM allowed) or UTF-16 with BOM; anything else is a FormatError."""
    if isinstance(data, str):
        if len(data) > _limit(max_bytes):
            raise FormatError(f"{what} is more than the {_limit(max_bytes)}-byte limit", file=name)
        return data[1:] if data.startswith("\ufeff") else data
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise FormatError(f"{what}: expected bytes or str, got {type(data).__name__}", file=name)
    if len(data) > _limit(max_bytes):
        raise FormatError(f"{what} is more than the {_limit(max_bytes)}-byte limit", file=name)
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FormatError(f"{what} is not UTF-8 text ({e.reason})", file=name, offset=e.start) from None


def load_json(data, name: str = "<input>", what: str = "JSON file", max_bytes: int | None = None) -> Any:
    """Parse JSON text/bytes; syntax errors, absurd nesting and huge integers become FormatError."""
    text = decode_text(data, name, what, max_bytes)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{what} is not valid JSON: {e.msg} (line {e.lineno} column {e.colno})",
                          file=name) from None
    except RecursionError:
        raise FormatError(f"{what} is nested too deeply", file=name) from None
    except (ValueError, TypeError) as e:
        raise FormatError(f"{what} is not valid JSON: {e}", file=name) from None


def head_text(head: bytes | str, n: int = 65536) -> str:
    """The first ``n`` bytes of a file as text for ``sniff`` functions (lossy, never raises)."""
    if isinstance(head, str):
        return head[:n]
    try:
        b = bytes(head[:n])
    except Exception:  # noqa: BLE001 - sniffing must never fail
        return ""
    if b.startswith((b"\xff\xfe", b"\xfe\xff")):
        return b.decode("utf-16", errors="ignore")
    return b.decode("utf-8", errors="ignore").lstrip("\ufeff")
