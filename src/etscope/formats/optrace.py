"""QNN HTP optrace: a Chrome trace whose ``ts``/``dur`` are **HTP cycles**, not microseconds.

Written by ``qnn-profile-viewer --reader libQnnHtpOptraceProfilingReader.so`` (``chrometrace.json``).
Real layout (``chain8_sm8650.optrace.json``, OP_TRACE 1.1.0)::

    {"header": {"header_version": {...}, "version": {"major": 1, "minor": 1, "patch": 0},
                "artifact_type": "OP_TRACE"},
     "traceEvents": [
       {"name": "q::*InputSlice", "ph": "X", "pid": 0, "tid": 256, "ts": 22, "dur": 3267,
        "args": {"ID": "0x0000111100000002", "HTP Op Type": "q::*InputSlice", "QNN Op Name": "Input",
                 "Flags": ["dma"], "Start Cycle": 7997466066676, "Duration (cycles)": 3267, ...}},
       {"cat": "__metadata", "ph": "M", "pid": 0, "tid": 256, "name": "thread_name",
        "args": {"name": "Type: HMX"}},
       {"ph": "C", "name": "VTCM alloc", "pid": 0, "tid": 0, "ts": 22, "args": {"": 65536}},
       {"ph": "s"/"f", "cat": "input_output", "name": "InputOutputFlowEvents", "id": 0, ...}]}

Processes: ``Core 0 Overview`` (pid 0) holds every executed HTP op once, on per-unit threads
(``Type: HMX`` tid 256, ``Type: HVX`` tids 512/514) plus ``Non Executed Tensors`` (tid 1,
placeholder ``$Const`` events of dur 5); then one process per QNN op (``QNN::MatMul_0``, with
``args.opid``) repeating that op's HTP ops (``Core:0 Type: HMX Tid: 256``). So every executed op
appears twice: :meth:`OpTrace.op_event_indices` picks the overview copies.
``ts`` = ``args["Start Cycle"]`` minus a per-file base.

Returned as columns (:class:`OpTraceEvents`: every event that is neither metadata ``M`` nor
counter ``C``), counters separately (:class:`OpTraceCounters`), metadata as dicts. ``args`` are
kept as parsed dicts (JSON only, never evaluated). A bare list of events (no header) is accepted
with a warning; a header naming another artifact type is an error.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from etscope.errors import FormatError
from etscope.formats.qnn_names import head_text, load_json, read_input_bytes

__all__ = ["OpTrace", "OpTraceCounters", "OpTraceEvents", "parse_optrace", "read_optrace", "sniff"]

ARTIFACT_TYPE = "OP_TRACE"
_MAX_EVENTS = 50_000_000
_CORE_OVERVIEW = re.compile(r"^Core\s*(\d+)\s+Overview$", re.I)
_TRACK_KIND = (("non executed", "non_executed"), ("hmx", "HMX"), ("hvx", "HVX"), ("dma", "DMA"),
               ("hexagon", "scalar"))


@dataclass
class OpTraceEvents:
    """Trace events (all phases but ``M`` and ``C``) as columns, in file order.

    ``ts_cycles``/``dur_cycles``: HTP cycles (float64, exact below 2**53; NaN if absent).
    ``pid``/``tid``: -1 if absent. ``cat``: "" if absent. ``flow_id``: the ``id`` of flow
    events (``s``/``f``), None otherwise. ``args``: the event's ``args`` dict ({} if absent).
    """

    name: np.ndarray        # object (str)
    ph: np.ndarray          # object (str): "X", "B", "E", "i", "s", "f", ...
    cat: np.ndarray         # object (str)
    pid: np.ndarray         # int64
    tid: np.ndarray         # int64
    ts_cycles: np.ndarray   # float64, cycles
    dur_cycles: np.ndarray  # float64, cycles
    flow_id: np.ndarray     # object
    args: list[dict[str, Any]]

    def __len__(self) -> int:
        return int(self.name.shape[0])


@dataclass
class OpTraceCounters:
    """Counter samples (``ph: "C"``), one row per (event, series) pair.

    ``series`` is the key inside ``args`` ("" in the real file). ``value`` unit: ``unit`` column;
    ``VTCM alloc`` / ``VTCM read|write`` / ``DRAM read|write`` are bytes (their maxima/sums match
    QHAS ``peak_vtcm_alloc`` / ``total_*`` bytes), other counters ``"unknown"``.
    """

    name: np.ndarray        # object
    series: np.ndarray      # object
    pid: np.ndarray         # int64
    tid: np.ndarray         # int64
    ts_cycles: np.ndarray   # float64, cycles
    value: np.ndarray       # float64
    unit: np.ndarray        # object

    def __len__(self) -> int:
        return int(self.name.shape[0])


@dataclass
class OpTrace:
    """An optrace file: header, event columns, counters, process/thread metadata."""

    path: str
    header: dict[str, Any] | None
    version: tuple[int, int, int] | None
    events: OpTraceEvents
    counters: OpTraceCounters
    process_names: dict[int, str]
    process_args: dict[int, dict[str, Any]]           # e.g. {"opid": "0x...12"} for QNN::<op>
    process_sort_index: dict[int, int]
    thread_names: dict[tuple[int, int], str]          # (pid, tid) -> name
    tracks: dict[tuple[int, int], str]                # (pid, tid) -> HMX | HVX | DMA | non_executed | other
    overview_pids: list[int]                          # processes named "Core N Overview"
    qnn_op_pids: dict[int, str]                       # pid -> QNN op name, from "QNN::<op>"
    other: dict[str, Any] = field(default_factory=dict)   # other top-level keys (displayTimeUnit, ...)
    warnings: list[str] = field(default_factory=list)

    def op_event_indices(self) -> np.ndarray:
        """Rows of ``events`` that are executed HTP ops, each once.

        Complete (``X``) events on a ``Core N Overview`` process, excluding ``non_executed``
        tracks. Without an overview process: all ``X`` events not on ``non_executed`` tracks and
        not on a per-QNN-op process.
        """
        ev = self.events
        is_x = ev.ph == "X"
        if self.overview_pids:
            keep = is_x & np.isin(ev.pid, np.array(self.overview_pids, dtype=np.int64))
        else:
            keep = is_x & ~np.isin(ev.pid, np.array(list(self.qnn_op_pids), dtype=np.int64))
        bad = [t for t, k in self.tracks.items() if k == "non_executed"]
        if bad:
            pairs = set(bad)
            keep &= np.array([(int(p), int(t)) not in pairs for p, t in zip(ev.pid, ev.tid)], dtype=bool)
        return np.nonzero(keep)[0]

    def track_kind(self, pid: int, tid: int) -> str:
        return self.tracks.get((pid, tid), "other")


# ---- parsing ------------------------------------------------------------------------------------

def _int(v, where: str, default: int = -1) -> int:
    if v is None:
        return default
    if isinstance(v, bool):
        raise FormatError(f"{where}: expected an integer, got a boolean")
    out = None
    if isinstance(v, int):
        out = v
    elif isinstance(v, float) and v.is_integer():
        out = int(v)
    elif isinstance(v, str):
        try:
            out = int(v.strip(), 0)
        except ValueError:
            pass
    if out is None or not -(2 ** 63) <= out < 2 ** 63:
        raise FormatError(f"{where}: expected a 64-bit integer, got {str(v)[:40]!r}")
    return out


def _num(v, where: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool):
        raise FormatError(f"{where}: expected a number, got a boolean")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise FormatError(f"{where}: expected a number, got {str(v)[:40]!r}")


def _str(v, where: str, default: str = "") -> str:
    if v is None:
        return default
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    raise FormatError(f"{where}: expected a string, got {type(v).__name__}")


def _version(v: Any) -> tuple[int, int, int] | None:
    if not isinstance(v, dict):
        return None
    out = []
    for k in ("major", "minor", "patch"):
        x = v.get(k, 0)
        if isinstance(x, bool) or not isinstance(x, int):
            raise FormatError(f"header.version.{k}: expected an integer, got {str(x)[:40]!r}")
        out.append(x)
    return tuple(out)  # type: ignore[return-value]


def _track_kind(thread_name: str) -> str:
    low = thread_name.lower()
    for key, kind in _TRACK_KIND:
        if key in low:
            return kind
    return "other"


def _counter_unit(name: str) -> str:
    low = name.lower()
    if low.startswith(("vtcm", "dram")) or "bytes" in low:
        return "bytes"
    return "unknown"


def parse_optrace(data: bytes | str | dict | list, name: str = "<input>", *,
                  max_bytes: int | None = None) -> OpTrace:
    """Parse optrace JSON text, bytes or an already-loaded dict/list."""
    try:
        doc = data if isinstance(data, (dict, list)) else load_json(data, name, "optrace JSON", max_bytes)
        return _parse(doc, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"optrace JSON is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _parse(doc: Any, path: str) -> OpTrace:
    warnings: list[str] = []
    other: dict[str, Any] = {}
    header = None
    header_elem = None
    if isinstance(doc, list):
        events = doc
        # a bare list may carry the header as an element
        for e in events[:4]:
            if isinstance(e, dict) and "artifact_type" in e and "ph" not in e:
                header = header_elem = e
                break
            if isinstance(e, dict) and isinstance(e.get("header"), dict) and "ph" not in e:
                header, header_elem = e["header"], e
                break
    elif isinstance(doc, dict):
        if "traceEvents" not in doc:
            raise FormatError("not an optrace file: no 'traceEvents' list")
        events = doc["traceEvents"]
        if not isinstance(events, list):
            raise FormatError(f"traceEvents is a {type(events).__name__}, expected a list")
        header = doc.get("header")
        other = {k: v for k, v in doc.items() if k not in ("traceEvents", "header")}
    else:
        raise FormatError(f"optrace: top level is a {type(doc).__name__}, expected an object or list")
    if header is not None and not isinstance(header, dict):
        raise FormatError(f"optrace: header is a {type(header).__name__}, expected an object")
    if header is None:
        warnings.append("no OP_TRACE header: read as a Chrome trace with ts/dur in cycles")
        version = None
    else:
        kind = header.get("artifact_type")
        if kind != ARTIFACT_TYPE:
            raise FormatError(f"not an optrace file: header.artifact_type is {str(kind)[:40]!r}, "
                              f"expected {ARTIFACT_TYPE!r}")
        version = _version(header.get("version"))
    if len(events) > _MAX_EVENTS:
        raise FormatError(f"more than {_MAX_EVENTS} trace events")

    name, ph, cat, pid, tid, ts, dur, fid, args = [], [], [], [], [], [], [], [], []
    c_name, c_series, c_pid, c_tid, c_ts, c_val = [], [], [], [], [], []
    pnames: dict[int, str] = {}
    pargs: dict[int, dict] = {}
    psort: dict[int, int] = {}
    tnames: dict[tuple[int, int], str] = {}
    for i, e in enumerate(events):
        w = f"traceEvents[{i}]"
        if not isinstance(e, dict):
            raise FormatError(f"{w}: expected an object, got {type(e).__name__}")
        if e is header_elem:
            continue
        p = e.get("ph")
        if not isinstance(p, str):
            raise FormatError(f"{w}.ph: expected a string, got {type(p).__name__}")
        a = e.get("args")
        if a is None:
            a = {}
        if not isinstance(a, dict):
            raise FormatError(f"{w}.args: expected an object, got {type(a).__name__}")
        if p == "M":
            ev_pid = _int(e.get("pid"), f"{w}.pid")
            kind = _str(e.get("name"), f"{w}.name")
            if kind == "process_name":
                pnames[ev_pid] = _str(a.get("name"), f"{w}.args.name")
                pargs[ev_pid] = {k: v for k, v in a.items() if k != "name"}
            elif kind == "thread_name":
                tnames[(ev_pid, _int(e.get("tid"), f"{w}.tid"))] = _str(a.get("name"), f"{w}.args.name")
            elif kind == "process_sort_index":
                psort[ev_pid] = _int(a.get("sort_index"), f"{w}.args.sort_index", 0)
            continue
        if p == "C":
            ev_name = _str(e.get("name"), f"{w}.name")
            ev_pid, ev_tid = _int(e.get("pid"), f"{w}.pid"), _int(e.get("tid"), f"{w}.tid")
            ev_ts = _num(e.get("ts"), f"{w}.ts")
            for k, v in a.items():
                c_name.append(ev_name)
                c_series.append(str(k))
                c_pid.append(ev_pid)
                c_tid.append(ev_tid)
                c_ts.append(ev_ts)
                c_val.append(_num(v, f"{w}.args[{k!r}]"))
            continue
        name.append(_str(e.get("name"), f"{w}.name"))
        ph.append(p)
        cat.append(_str(e.get("cat"), f"{w}.cat"))
        pid.append(_int(e.get("pid"), f"{w}.pid"))
        tid.append(_int(e.get("tid"), f"{w}.tid"))
        ts.append(_num(e.get("ts"), f"{w}.ts"))
        dur.append(_num(e.get("dur"), f"{w}.dur"))
        fid.append(e.get("id") if isinstance(e.get("id"), (int, str)) else None)
        args.append(a)

    evs = OpTraceEvents(
        name=np.array(name, dtype=object), ph=np.array(ph, dtype=object),
        cat=np.array(cat, dtype=object), pid=np.array(pid, dtype=np.int64),
        tid=np.array(tid, dtype=np.int64), ts_cycles=np.array(ts, dtype=np.float64),
        dur_cycles=np.array(dur, dtype=np.float64), flow_id=_obj_array(fid), args=args)
    counters = OpTraceCounters(
        name=np.array(c_name, dtype=object), series=np.array(c_series, dtype=object),
        pid=np.array(c_pid, dtype=np.int64), tid=np.array(c_tid, dtype=np.int64),
        ts_cycles=np.array(c_ts, dtype=np.float64), value=np.array(c_val, dtype=np.float64),
        unit=np.array([_counter_unit(n) for n in c_name], dtype=object))
    tracks = {k: _track_kind(v) for k, v in tnames.items()}
    overview = sorted(p for p, n in pnames.items() if _CORE_OVERVIEW.match(n.strip()))
    qnn_ops = {p: n[len("QNN::"):] for p, n in pnames.items() if n.startswith("QNN::")}
    return OpTrace(path=path, header=header, version=version, events=evs, counters=counters,
                   process_names=pnames, process_args=pargs, process_sort_index=psort,
                   thread_names=tnames, tracks=tracks, overview_pids=overview, qnn_op_pids=qnn_ops,
                   other=other, warnings=warnings)


def _obj_array(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def read_optrace(path, *, max_bytes: int | None = None) -> OpTrace:
    """Read an optrace JSON file (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "optrace JSON")
    return parse_optrace(data, str(path), max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` looks like an optrace (``OP_TRACE``) JSON document."""
    t = head_text(head, 65536)
    s = t.lstrip()
    if not s.startswith(("{", "[")):
        return False
    return (re.search(r'"artifact_type"\s*:\s*"OP_TRACE"', t) is not None
            or ('"traceEvents"' in t and '"HTP Op Type"' in t))
