"""QNN HTP runtrace (``*_runtrace.json``, ``header.artifact_type == "RUN_TRACE"``): the HTP clock
**measured** per execute.

Written next to the optrace by ``qnn-profile-viewer --reader libQnnHtpOptraceProfilingReader.so``.
Real layout (``chain8_sm8650.runtrace.json``, RUN_TRACE 1.1.0, QNN 2.45, SM8650)::

    {"header": {"header_version": {...}, "version": {"major": 1, "minor": 1, "patch": 0},
                "artifact_type": "RUN_TRACE"},
     "traceEvents": [
       {"name": "QNN DSP Execute", "ph": "X", "tid": 0, "pid": 0, "ts": 0, "dur": 15306,
        "args": {"graph_name": "model_encoded", "stat_start_ticks": 31091395371990,
                 "stat_end_ticks": 31091395387296, "stat_start_cycles": 7997465468216,
                 "stat_end_cycles": 7997466142406, "summary_htp_frequency_ghz": 0.845711,
                 "summary_inf/s": 1254.41, "summary_time_us": 797.188}},
       {"name": "VTCM Acquire", ...}, {"name": "Resource Power On", ...}, {"name": "Graph Execute", ...},
       {"cat": "__metadata", "ph": "M", ...}, ...]}

Per execute: a ``QNN DSP Execute`` span holding ``VTCM Acquire``, ``Resource Power On`` and
``Graph Execute``. ``ts``/``dur`` and ``stat_*_ticks`` are ticks of a 19.2 MHz timer
(``summary_time_us`` = ticks ÷ 19.2); ``summary_htp_frequency_ghz`` = cycles ÷ that time, which
the reader re-derives from ``stat_*_cycles`` and ``summary_time_us`` and checks (1 % tolerance).
The clock of the graph itself is that of its ``Graph Execute`` spans (:meth:`RunTrace.graph_execute_mhz`):
0.81 GHz for the cold first execute, 1.87 and 1.89 GHz warm in the real file. Events after the
k-th ``QNN DSP Execute`` belong to execute k (``execute`` column). In the real files the tick
durations of ``VTCM Acquire`` and ``Resource Power On`` equal, execute by execute, the values QNN's
profile of the same run reports as ``Time for initial VTCM acquire`` and ``Time for HVX + HMX power
on and acquire`` (964/194/76 and 11947/33/9 in chain8): that ties a runtrace's executes to a
profile's runs.

Every number is checked (finite, non-negative, end ≥ start, frequency in (0, 10) GHz); bad input
raises :class:`FormatError`. Torch-free, JSON only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from etscope import units
from etscope.errors import FormatError
from etscope.formats.qnn_names import head_text, load_json, read_input_bytes

__all__ = ["DSP_EXECUTE", "GRAPH_EXECUTE", "RunTrace", "parse_runtrace", "read_runtrace", "sniff"]

ARTIFACT_TYPE = "RUN_TRACE"
GRAPH_EXECUTE = "Graph Execute"
DSP_EXECUTE = "QNN DSP Execute"
_MAX_EVENTS = 10_000_000
_MAX_GHZ = 10.0
_TOLERANCE = 0.01


@dataclass
class RunTrace:
    """The runtrace's spans as columns, in file order (metadata events left out).

    ``cycles`` = stat_end_cycles - stat_start_cycles, ``ticks`` likewise, ``time_us`` the file's
    ``summary_time_us``; ``mhz`` the clock over the span (file's ``summary_htp_frequency_ghz`` × 1000,
    else cycles ÷ time_us); NaN where the file has no such value.
    """

    path: str
    version: tuple[int, int, int] | None
    name: np.ndarray       # object (str)
    graph: np.ndarray      # object (str), "" if absent
    cycles: np.ndarray     # float64
    ticks: np.ndarray      # float64
    time_us: np.ndarray    # float64
    mhz: np.ndarray        # float64
    execute: np.ndarray    # int64: index of the 'QNN DSP Execute' span at or before the event, -1 before any
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.name.shape[0])

    def graph_execute_mhz(self, graph: str | None = None) -> np.ndarray:
        """Measured clock (MHz) of each ``Graph Execute`` span in order (of ``graph`` if given)."""
        m = self.name == GRAPH_EXECUTE
        if graph is not None:
            m &= self.graph == graph
        v = self.mhz[m]
        return v[~np.isnan(v)]

    def per_execute(self, name: str) -> np.ndarray:
        """Per execute (0..executes-1): the first span called ``name`` as (ticks, mhz) rows, NaN where
        an execute has none."""
        n = int(self.execute.max()) + 1 if len(self) else 0
        out = np.full((n, 2), np.nan)
        for i in np.flatnonzero((self.name == name) & (self.execute >= 0))[::-1]:   # first one wins
            out[self.execute[i]] = (self.ticks[i], self.mhz[i])
        return out

    @property
    def graphs(self) -> list[str]:
        return list(dict.fromkeys(self.graph[self.name == GRAPH_EXECUTE].tolist()))


def _num(v, where: str, path: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FormatError(f"{where}: expected a number, got {type(v).__name__}", file=path)
    f = float(v)
    if not math.isfinite(f) or f < 0:
        raise FormatError(f"{where}: {v!r} is not a finite non-negative number", file=path)
    return f


def _span(args: dict, key: str, where: str, path: str) -> float:
    a, b = args.get(f"stat_start_{key}"), args.get(f"stat_end_{key}")
    if a is None or b is None:
        return math.nan
    _num(a, f"{where}.stat_start_{key}", path)
    _num(b, f"{where}.stat_end_{key}", path)
    if b < a:
        raise FormatError(f"{where}: stat_end_{key} {b} is before stat_start_{key} {a}", file=path)
    return float(b - a)          # exact integer difference first (values near 2**43)


def parse_runtrace(data: bytes | str | dict, name: str = "<input>", *, max_bytes: int | None = None) -> RunTrace:
    """Parse a RUN_TRACE JSON document (text, bytes or an already-loaded dict)."""
    try:
        doc = data if isinstance(data, dict) else load_json(data, name, "QNN runtrace JSON", max_bytes)
        return _parse(doc, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"QNN runtrace JSON is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _parse(doc, path: str) -> RunTrace:
    if not isinstance(doc, dict):
        raise FormatError(f"QNN runtrace: top level is a {type(doc).__name__}, expected an object", file=path)
    warnings: list[str] = []
    header = doc.get("header")
    kind = header.get("artifact_type") if isinstance(header, dict) else None
    if kind is None:
        warnings.append("no header.artifact_type; read as RUN_TRACE")
    elif kind != ARTIFACT_TYPE:
        raise FormatError(f"not a QNN runtrace: artifact_type is {str(kind)[:40]!r}, expected {ARTIFACT_TYPE!r}",
                          file=path)
    version = None
    ver = header.get("version") if isinstance(header, dict) else None
    if isinstance(ver, dict) and all(isinstance(ver.get(k), int) and not isinstance(ver.get(k), bool)
                                     for k in ("major", "minor", "patch")):
        version = (ver["major"], ver["minor"], ver["patch"])
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise FormatError("not a QNN runtrace: no 'traceEvents' list", file=path)
    if len(events) > _MAX_EVENTS:
        raise FormatError(f"more than {_MAX_EVENTS} trace events", file=path)
    names, graphs, cycles, ticks, time_us, mhz, execute = [], [], [], [], [], [], []
    n_exec = 0
    for i, ev in enumerate(events):
        where = f"traceEvents[{i}]"
        if not isinstance(ev, dict):
            raise FormatError(f"{where}: expected an object, got {type(ev).__name__}", file=path)
        if ev.get("ph") != "X":
            continue                                   # metadata and anything else: no clock
        nm = ev.get("name")
        if not isinstance(nm, str):
            raise FormatError(f"{where}.name: expected a string", file=path)
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        g = args.get("graph_name", "")
        if not isinstance(g, str):
            raise FormatError(f"{where}.args.graph_name: expected a string", file=path)
        cyc = _span(args, "cycles", f"{where}.args", path)
        tk = _span(args, "ticks", f"{where}.args", path)
        t_us = _num(args.get("summary_time_us"), f"{where}.args.summary_time_us", path)
        ghz = _num(args.get("summary_htp_frequency_ghz"), f"{where}.args.summary_htp_frequency_ghz", path)
        if ghz is not None and not 0 < ghz < _MAX_GHZ:
            raise FormatError(f"{where}.args.summary_htp_frequency_ghz {ghz!r} is not an HTP clock "
                              f"(0-{_MAX_GHZ:g} GHz)", file=path)
        derived = units.mhz_to_ghz(units.clock_mhz(cyc, t_us)) if t_us and cyc == cyc else None
        if ghz is not None and derived is not None and abs(derived - ghz) > _TOLERANCE * ghz:
            warnings.append(f"{where} ({nm}): summary_htp_frequency_ghz {ghz:g} differs from "
                            f"cycles ÷ summary_time_us = {derived:.6g} GHz; the file's value is used")
        f = ghz if ghz is not None else derived
        if nm == DSP_EXECUTE:
            n_exec += 1
        execute.append(n_exec - 1)
        names.append(nm)
        graphs.append(g)
        cycles.append(cyc)
        ticks.append(tk)
        time_us.append(math.nan if t_us is None else t_us)
        mhz.append(math.nan if f is None else units.ghz_to_mhz(f))
    if GRAPH_EXECUTE not in names:
        warnings.append(f"no '{GRAPH_EXECUTE}' span: no measured graph clock")
    return RunTrace(path=path, version=version, name=np.array(names, dtype=object),
                    graph=np.array(graphs, dtype=object), cycles=np.array(cycles, dtype=np.float64),
                    ticks=np.array(ticks, dtype=np.float64), time_us=np.array(time_us, dtype=np.float64),
                    mhz=np.array(mhz, dtype=np.float64), execute=np.array(execute, dtype=np.int64),
                    warnings=warnings[:50])


def read_runtrace(path, *, max_bytes: int | None = None) -> RunTrace:
    """Read a runtrace JSON file (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "QNN runtrace JSON")
    return parse_runtrace(data, str(path), max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` looks like a RUN_TRACE document."""
    t = head_text(head, 65536)
    return t.lstrip().startswith("{") and '"RUN_TRACE"' in t
