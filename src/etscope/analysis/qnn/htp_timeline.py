"""The HTP units over time, from an optrace: one track per HMX / HVX / DMA thread, its executed
HTP ops as slices, in cycles from the first op, and in µs through one clock that says where it
comes from.

The optrace records one inference of a separate optrace-level run (like QHAS), so the clock that
converts its cycles is, in order of preference:
1. ``runtrace``: the runtrace's first 'Graph Execute' (measured; the runtrace of that run, whose
   first execute is the inference the optrace records);
2. ``qhas``: QHAS ``timeline_cycles`` ÷ ``graph_execute_us`` (an estimate from the same inference,
   ±0.5 µs rounding of a whole-µs value);
3. ``etdump``: the QNN partition's clock from the ETDump (another run: an estimate);
otherwise the timeline stays in cycles. Tracks with no executed op are not listed (``hidden``
counts them). Slices that overlap on one thread without nesting are put on extra lanes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Slices kept per track (a long model has tens of thousands): the longest ones, then in time order.
MAX_SLICES_PER_TRACK = 4000
UNIT_ORDER = {"HMX": 0, "HVX": 1, "DMA": 2}


@dataclass(frozen=True)
class UnitTrack:
    """One HTP thread (an HMX unit, an HVX thread, a DMA queue) and its ops, columns in cycles."""
    kind: str                   # HMX | HVX | DMA | scalar | other (from the optrace thread name)
    tid: int
    name: str                   # the optrace's thread name, e.g. "Type: HMX"
    start_cycles: np.ndarray    # from the first op of the whole trace
    dur_cycles: np.ndarray
    lane: np.ndarray            # 0 unless slices overlap without nesting
    op: list[str]               # HTP op (e.g. q::ConvLayer_s1.opt)
    qnn_op: list[str]           # the QNN op it belongs to (e.g. MatMul_0)
    category: list[str]         # what the op used: hmx | hvx | dma | sync | other (optrace Flags)
    busy_cycles: float
    slices_total: int           # before the MAX_SLICES_PER_TRACK cut


@dataclass(frozen=True)
class TimelineSlices:
    """A track's ops as columns (cycles from the first op of the trace)."""
    start_cycles: list
    dur_cycles: list
    lane: list
    op: list
    qnn_op: list
    category: list


@dataclass(frozen=True)
class TimelineTrack:
    """One HTP thread as the views show it: busy cycles, their share of the span, its ops."""
    kind: str
    tid: int
    name: str
    busy_cycles: float
    busy_share: float | None        # of the span
    slices_total: int               # before the MAX_SLICES_PER_TRACK cut
    lanes: int
    slices: TimelineSlices


@dataclass(frozen=True)
class TimelineView:
    """The optrace's HMX/HVX/DMA threads of its one inference (the QNN result's ``htp_timeline``)."""
    tracks: tuple[TimelineTrack, ...]
    span_cycles: float
    span_us: float | None
    clock_mhz: float | None
    clock_source: str | None
    clock_is_estimate: bool
    clock_note: str
    hidden_tracks: int              # tracks without an executed op, not listed
    unit: str = "cycles"


@dataclass(frozen=True)
class HtpTimeline:
    tracks: tuple[UnitTrack, ...]
    span_cycles: float
    clock_mhz: float | None
    clock_source: str | None    # runtrace | qhas | etdump | None
    clock_is_estimate: bool
    clock_note: str
    hidden: int                 # tracks without an executed op, not listed

    def view(self) -> TimelineView:
        """As the views show it (and ``--json`` writes it): per track its share of the span, its lanes."""
        mhz = self.clock_mhz
        return TimelineView(
            tracks=tuple(TimelineTrack(
                kind=t.kind, tid=t.tid, name=t.name, busy_cycles=t.busy_cycles,
                busy_share=t.busy_cycles / self.span_cycles if self.span_cycles else None,
                slices_total=t.slices_total, lanes=int(t.lane.max()) + 1 if t.lane.size else 0,
                slices=TimelineSlices(start_cycles=t.start_cycles.tolist(), dur_cycles=t.dur_cycles.tolist(),
                                      lane=t.lane.tolist(), op=t.op, qnn_op=t.qnn_op, category=t.category))
                for t in self.tracks),
            span_cycles=self.span_cycles, span_us=self.span_cycles / mhz if mhz else None, clock_mhz=mhz,
            clock_source=self.clock_source, clock_is_estimate=self.clock_is_estimate, clock_note=self.clock_note,
            hidden_tracks=self.hidden)


def _category(flags) -> str:
    fl = [f for f in flags or [] if isinstance(f, str)]
    if any("hmx" in f for f in fl):
        return "hmx"
    if any("hvx" in f for f in fl):
        return "hvx"
    if any(f.startswith("dma") for f in fl):
        return "dma"
    if "sync" in fl:
        return "sync"
    return "other"


def lanes(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lane per slice (slices sorted by start): a slice goes on the first lane whose open slices it
    nests in or follows; one that overlaps without nesting opens the next lane."""
    stacks: list[list[float]] = []
    out = np.zeros(start.size, dtype=np.int64)
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        for k, st in enumerate(stacks):
            while st and s >= st[-1]:
                st.pop()
            if not st or e <= st[-1]:
                st.append(e)
                out[i] = k
                break
        else:
            stacks.append([e])
            out[i] = len(stacks) - 1
    return out


def timeline_clock(qhas=None, runtrace=None, etdump_mhz: float | None = None) -> tuple:
    """(MHz, source, is_estimate, note) for the optrace's inference; see the module docstring."""
    if runtrace is not None:
        per = runtrace.graph_execute_mhz()
        if per.size and per[0] == per[0] and per[0] > 0:
            return (float(per[0]), "runtrace", False,
                    f"measured: the runtrace's first Graph Execute ({per[0]:,.0f} MHz), the inference the "
                    "optrace records")
    o = (qhas.overall or {}) if qhas is not None else {}
    cyc, us = o.get("timeline_cycles"), o.get("graph_execute_us")
    if isinstance(cyc, (int, float)) and isinstance(us, (int, float)) and us > 0.5:
        mhz = cyc / us
        return (float(mhz), "qhas", True,
                f"estimated: QHAS timeline cycles ÷ graph execute µs ({cyc:,.0f} ÷ {us:g} µs; "
                f"{cyc / (us + 0.5):,.0f}–{cyc / (us - 0.5):,.0f} MHz with the µs rounding)")
    if etdump_mhz:
        return (float(etdump_mhz), "etdump", True,
                f"estimated: the ETDump partition's clock ({etdump_mhz:,.0f} MHz), from another run")
    return None, None, True, "no clock: QHAS, runtrace or a QNN ETDump would convert cycles to time"


def _timed_ops(optrace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The optrace's op events that have a timestamp: (event index, start, duration) in cycles."""
    ev = optrace.events
    idx = np.asarray(optrace.op_event_indices(), dtype=np.int64)
    ts = np.asarray(ev.ts_cycles, dtype=np.float64)[idx]
    dur = np.nan_to_num(np.asarray(ev.dur_cycles, dtype=np.float64)[idx], nan=0.0)
    ok = ~np.isnan(ts)
    return idx[ok], ts[ok], dur[ok]


def unit_totals(optrace) -> dict[tuple[int, int], tuple[int, float]]:
    """Per HTP thread (pid, tid): (ops, busy cycles) of its timed op events, in one pass. The one
    definition of a unit's busy cycles: the units table (htp_timeline) and the optrace summary
    (analysis.qnn.op_tables) both use it."""
    idx, _, dur = _timed_ops(optrace)
    return _totals(*_threads(optrace, idx), dur)


def _threads(optrace, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ev = optrace.events
    return np.asarray(ev.pid, dtype=np.int64)[idx], np.asarray(ev.tid, dtype=np.int64)[idx]


def _totals(pid: np.ndarray, tid: np.ndarray, dur: np.ndarray) -> dict[tuple[int, int], tuple[int, float]]:
    if not pid.size:
        return {}
    keys, inv = np.unique(np.stack([pid, tid]), axis=1, return_inverse=True)
    inv = inv.reshape(-1)
    ops = np.bincount(inv, minlength=keys.shape[1])
    busy = np.bincount(inv, weights=dur, minlength=keys.shape[1])
    return {(int(p), int(t)): (int(ops[j]), float(busy[j])) for j, (p, t) in enumerate(keys.T.tolist())}


def htp_timeline(optrace, qhas=None, runtrace=None, etdump_mhz: float | None = None) -> HtpTimeline:
    """The optrace's executed ops per HTP thread (see the module docstring)."""
    ev = optrace.events
    idx, ts, dur = _timed_ops(optrace)
    pid, tid = _threads(optrace, idx)
    totals = _totals(pid, tid, dur)
    t0 = float(ts.min()) if ts.size else 0.0
    span = float((ts + dur).max() - t0) if ts.size else 0.0
    tracks = []
    listed = set()
    for key in sorted(totals):           # the threads with timed ops
        sel = np.flatnonzero((pid == key[0]) & (tid == key[1]))
        kind = optrace.track_kind(*key)
        if kind == "non_executed":
            continue
        total = sel.size
        if total > MAX_SLICES_PER_TRACK:
            sel = np.sort(sel[np.argsort(-dur[sel], kind="stable")[:MAX_SLICES_PER_TRACK]])
        order = sel[np.argsort(ts[sel], kind="stable")]
        s, d = ts[order] - t0, dur[order]
        args = [ev.args[i] if isinstance(ev.args[i], dict) else {} for i in idx[order]]
        name = optrace.thread_names.get(key) if isinstance(optrace.thread_names, dict) else None
        tracks.append(UnitTrack(
            kind=kind, tid=key[1], name=str(name or f"{kind} {key[1]}"), start_cycles=s, dur_cycles=d,
            lane=lanes(s, s + d), op=[str(a.get("HTP Op Type") or ev.name[i]) for a, i in zip(args, idx[order])],
            qnn_op=[str(a.get("QNN Op Name") or "") for a in args],
            category=[_category(a.get("Flags")) for a in args],
            busy_cycles=totals[key][1], slices_total=int(total)))
        listed.add(key)
    tracks.sort(key=lambda t: (UNIT_ORDER.get(t.kind, 9), t.tid))
    executed = {k for k, kind in optrace.tracks.items() if kind != "non_executed"}
    overview = set(optrace.overview_pids)
    hidden = len({k for k in executed if (not overview or k[0] in overview)} - listed)
    mhz, source, est, note = timeline_clock(qhas, runtrace, etdump_mhz)
    return HtpTimeline(tracks=tuple(tracks), span_cycles=span, clock_mhz=mhz, clock_source=source,
                       clock_is_estimate=est, clock_note=note, hidden=hidden)
