"""qnn-profile-viewer JSON output (``header.artifact_type == "QNN_PROFILE"``) -> ``QnnProfile``.

Real sample (QAIRT 2.49, SM8750; ``tiny_sm8750.qnn_profile.json``)::

    {"header": {"artifact_type": "QNN_PROFILE"},
     "metadata": {"appName": "qnn-net-run", "backendVersion": "v2.49...", ...},
     "messages": [
       {"method": "BACKEND_CREATE_FROM_BINARY", "profilingEvents": [
          {"identifier": "QNN (load binary) time", "unit": "MICROSEC", "type": "INIT", "value": 9009}]},
       {"method": "BACKEND_EXECUTE", "profilingEvents": [
          {"identifier": "Accelerator (execute) time (cycles)", "unit": "CYCLES", "type": "", "value": 29239,
           "sub-events": [{"identifier": "fc:OpId_17 (cycles)", "unit": "CYCLES", "type": "NODE", "value": 6137}]},
          {"identifier": "QNN (execute) time", "unit": "MICROSEC", "type": "EXECUTE", "value": 3001}]},
       {"method": "APP_EXECUTE_IPS", "profilingEvents": [{"identifier": "numInferences", ...}]},
       {"method": "BACKEND_DEINIT", ...}]}

``BACKEND_*`` messages become blocks (one per message, split after each closing
``QNN (<phase>) time`` ROOT as in the CSV); other messages (``APP_*``: application-side numbers)
go to ``QnnProfile.app_stats`` as ``(method, identifier, value, unit)``. Nested sub-events are
kept with their direct parent. Unknown keys are ignored.
"""
from __future__ import annotations

import math

from etscope.errors import FormatError
from etscope.formats.qnn_profile import ProfileBuilder, QnnProfile
from etscope.formats.qnn_names import head_text, load_json, normalise_unit, read_input_bytes

__all__ = ["parse_qnn_json", "read_qnn_json", "sniff"]

ARTIFACT_TYPE = "QNN_PROFILE"
_METHOD_KIND = (("CREATE_FROM_BINARY", "init"), ("FINALIZE", "finalize"), ("DEINIT", "deinit"),
                ("EXECUTE", "execute"), ("INIT", "init"))
_MAX_EVENTS = 50_000_000


def _method_kind(method: str) -> str | None:
    m = method.upper()
    for key, kind in _METHOD_KIND:
        if key in m:
            return kind
    return None


def _value(v, where: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool):
        raise FormatError(f"{where}: value is a boolean, expected a number")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if s.lower() in ("", "unknown", "n/a", "nan", "null"):
            return math.nan
        try:
            return float(s)
        except ValueError:
            pass
    raise FormatError(f"{where}: value {str(v)[:40]!r} is not a number")


def _str(v, where: str, default: str = "") -> str:
    if v is None:
        return default
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    raise FormatError(f"{where}: expected a string, got {type(v).__name__}")


def _events_list(obj, where: str) -> list:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise FormatError(f"{where}: expected a list, got {type(obj).__name__}")
    return obj


def parse_qnn_json(data: bytes | str | dict, name: str = "<input>", *, max_bytes: int | None = None) -> QnnProfile:
    """Parse qnn-profile-viewer ``QNN_PROFILE`` JSON (text, bytes or an already-loaded dict)."""
    try:
        doc = data if isinstance(data, dict) else load_json(data, name, "QNN profile JSON", max_bytes)
        return _parse(doc, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"QNN profile JSON is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _parse(doc, path: str) -> QnnProfile:
    if not isinstance(doc, dict):
        raise FormatError(f"QNN profile JSON: top level is a {type(doc).__name__}, expected an object")
    header = doc.get("header")
    kind = header.get("artifact_type") if isinstance(header, dict) else None
    if kind is not None and kind != ARTIFACT_TYPE:
        raise FormatError(f"not a QNN profile JSON: artifact_type is {str(kind)[:40]!r}, expected {ARTIFACT_TYPE!r}")
    if "messages" not in doc:
        raise FormatError("not a QNN profile JSON: no 'messages' list")
    messages = _events_list(doc.get("messages"), "messages")
    b = ProfileBuilder("qnn_json", path)
    if kind is None:
        b.warnings.append("no header.artifact_type; read as QNN_PROFILE")
    metadata: dict[str, str] = {}
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        for k, v in meta.items():
            if isinstance(v, (str, int, float, bool)) or v is None:
                metadata[str(k)] = "" if v is None else str(v)
    app_stats: list[tuple[str, str, float, str]] = []
    n = 0
    for mi, msg in enumerate(messages):
        where = f"messages[{mi}]"
        if not isinstance(msg, dict):
            raise FormatError(f"{where}: expected an object, got {type(msg).__name__}")
        method = _str(msg.get("method"), f"{where}.method", "")
        events = _events_list(msg.get("profilingEvents"), f"{where}.profilingEvents")
        backend = method.upper().startswith("BACKEND") or not method
        if not backend:
            for ei, ev in enumerate(events):
                w = f"{where}.profilingEvents[{ei}]"
                if not isinstance(ev, dict):
                    raise FormatError(f"{w}: expected an object, got {type(ev).__name__}")
                app_stats.append((method, _str(ev.get("identifier"), f"{w}.identifier"),
                                  _value(ev.get("value"), w), normalise_unit(ev.get("unit"))))
            continue
        if events:
            b.section(_method_kind(method), method or f"message {mi}")
        # iterative depth-first walk keeping file order; stack of (event, where, parent row)
        stack = [(ev, f"{where}.profilingEvents[{ei}]", None) for ei, ev in enumerate(events)][::-1]
        while stack:
            ev, w, parent = stack.pop()
            if not isinstance(ev, dict):
                raise FormatError(f"{w}: expected an object, got {type(ev).__name__}")
            n += 1
            if n > _MAX_EVENTS:
                raise FormatError(f"more than {_MAX_EVENTS} events")
            ident = _str(ev.get("identifier"), f"{w}.identifier")
            level = "ROOT" if parent is None else "SUB-EVENT"
            row = b.add(ident, _value(ev.get("value"), w), normalise_unit(ev.get("unit")), level,
                        _str(ev.get("type"), f"{w}.type").upper(), parent=parent)
            subs = _events_list(ev.get("sub-events", ev.get("subEvents")), f"{w}.sub-events")
            stack.extend((s, f"{w}.sub-events[{si}]", row) for si, s in reversed(list(enumerate(subs))))
    return b.build(metadata=metadata, app_stats=app_stats)


def read_qnn_json(path, *, max_bytes: int | None = None) -> QnnProfile:
    """Read a qnn-profile-viewer ``QNN_PROFILE`` JSON file (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "QNN profile JSON")
    return parse_qnn_json(data, str(path), max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` looks like a ``QNN_PROFILE`` JSON document."""
    t = head_text(head, 65536)
    return t.lstrip().startswith("{") and (
        '"QNN_PROFILE"' in t or ('"profilingEvents"' in t and '"messages"' in t))
