"""The runs laid out on a timeline: what ``etscope trace`` shows (``render.trace`` writes it as a
Chrome / Perfetto trace).

Times are µs from the first timed event of the ETDump; runs follow each other at their real times.

Tracks:
- the main track (``MAIN_TID``) — load events, ``Method::execute``, ``OPERATOR_CALL`` + kernel
  events (CPU fallback) and each ``DELEGATE_CALL``, at their recorded times. Each run's
  ``Method::execute`` slice carries its phase and that phase's method in ``args``
  (``analysis.llm.run_phases``); when the runs are an LLM's phases (or one phase chosen by
  ``--phase``) its name says which: ``Execute 3 · decode`` (3: the run's index among the file's
  Execute runs, as ``etscope llm`` counts them).
- one track per delegate instruction (partition): its ``DELEGATE_CALL`` again, with what the backend
  logged inside it. Timed backend events (XNNPACK) at their recorded times. QNN per-op rows carry
  cycles, not times: they are laid out one after the other from the start of the DELEGATE_CALL,
  each lasting cycles / the partition's clock (from ``analysis.qnn``), and marked ``estimated`` in
  ``args``; their position inside the call is not known. Without a clock they are left out (a note
  says so). QNN's other values (µs, counts, bytes) are in the ``DELEGATE_CALL``'s args.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis import glossary
from etscope.analysis.qnn.htp_units import CLOCK_RULE, HtpUnits, Slices, htp_units
from etscope.analysis.qnn.lookup import clock_mhz, qnn_op_lookup, qnn_partitions
from etscope.analysis.llm.run_phases import ALL, RunPhases, one_phase
from etscope.analysis.views.timeline import first_timed_ns, since_origin
from etscope.analysis.qnn.result import QnnReport
from etscope.arrays import unique
from etscope.formats import etdump as etdump_format

MAIN_TID = 1
PARTITION_TID_BASE = 100


@dataclass(frozen=True)
class Track:
    tid: int
    name: str
    sort_index: int


@dataclass(frozen=True)
class TraceView:
    """Slices on tracks (``Slices``: columns; a slice's ``track`` is its Track's ``tid``; µs from
    ``time_origin``); every slice of a track nests inside the ones enclosing it. While the view is
    built a slice is a row ``(name, cat, tid, ts, dur, args)``: a tuple, the cheapest object."""
    process: str
    tracks: tuple[Track, ...]
    slices: Slices
    notes: tuple[str, ...]
    runs: int
    sources: dict[str, str]        # input kind -> the file (as given)
    time_origin: str
    time_unit: str                 # "cycles" when nothing could turn cycles into time (QNN files alone)
    clock_rule: str                # how the HTP unit tracks and QNN per-op slices turn cycles into time
    time_unit_of_htp_ops: str | None   # "cycles": the HTP ops are cycles beside µs spans (no clock)
    units: HtpUnits | None         # the optrace's HMX/HVX/DMA tracks (analysis.qnn.htp_units), own time axis


ETDUMP_ORIGIN = "first timed event of the ETDump"


def _us(ns: int) -> float:
    return round(ns / 1e3, 3)


class _Events:
    """The event columns the layout reads, with times from the origin (the first timed event),
    exact also for raw timestamps past 2**63."""

    def __init__(self, profile: P.Profile, runs: list[int] | None):
        from etscope.analysis.ops.per_op import effective_names

        ev = profile.events
        n = profile.n_events
        t0 = first_timed_ns(profile)
        self.ev, self.strings = ev, profile.strings
        self.start, self.end = since_origin(ev["start"], t0), since_origin(P.end_times(profile), t0)
        self.names = effective_names(profile) if n else np.zeros(0, np.int32)
        self.role, self.execute = ev["role"], ev["execute"]
        self.instr = ev["instruction_id"].astype(np.int64)
        self.prof = ev["kind"] == etdump_format.PROFILE
        self.timed = self.prof & (ev["start"] > 0)
        self.keep_run = np.ones(n, dtype=bool)
        if runs is not None:
            wanted = np.zeros(max(profile.n_runs, 1), dtype=bool)
            for r in runs:
                if 0 <= r < profile.n_runs:
                    wanted[r] = True
            self.keep_run = (self.execute < 0) | wanted[np.clip(self.execute, 0, len(wanted) - 1)]

    def name_of(self, i: int) -> str:
        c = int(self.names[i])
        return self.strings[c] if c >= 0 else ""


def trace_view(profile: P.Profile, qnn: QnnReport | None = None, runs: list[int] | None = None,
               phases: RunPhases | None = None) -> TraceView:
    """The timeline of ``profile`` (only the Execute runs ``runs`` when given); QNN per-op rows are
    laid out with the clocks of ``qnn`` (``analysis.qnn.qnn_report``); ``phases``: the phase of each
    run (``Results.phases``; default: one phase)."""
    e = _Events(profile, runs)
    notes: list[str] = []
    slices = _main_track(profile, e, phases or one_phase(profile))
    part_slices, tracks = _partition_tracks(profile, e, qnn, notes)
    slices += part_slices
    all_tracks = [Track(MAIN_TID, "Method::execute (CPU thread)", 0)]
    for iid, tid in sorted(tracks.items()):
        ins = profile.instructions.get(iid)
        all_tracks.append(Track(tid, f"partition: DELEGATE_CALL #{iid} ({ins.backend if ins else 'delegate'})", tid))
    n_runs = profile.n_runs if runs is None else len([r for r in runs if 0 <= r < profile.n_runs])
    units = htp_units(qnn.htp_timeline if qnn is not None else None, notes)     # its notes after the tracks'
    return TraceView("ExecuTorch " + (profile.method or "program"), tuple(all_tracks), Slices.of(slices), tuple(notes),
                     n_runs, dict(profile.sources), ETDUMP_ORIGIN, "us", CLOCK_RULE, None, units)


def _run_labels(profile: P.Profile, phases: RunPhases) -> list[tuple[str | None, dict]]:
    """Per Execute run, the name of its ``Method::execute`` slice (None: keep the event's name, the
    runs being one phase) and its phase args."""
    chosen = profile.phase.runs if profile.phase is not None else None   # a phase's runs: the file's indices
    out = []
    for ex in range(profile.n_runs):
        k = int(phases.of_run[ex]) if ex < len(phases.of_run) else -1
        name = phases.names[k] if k >= 0 else None
        args = {"phase": name, "method": phases.methods[k] if k >= 0 else None}
        in_file = chosen[ex] if chosen is not None and ex < len(chosen) else ex
        if chosen is not None:
            args["run_in_file"] = in_file
        out.append((f"Execute {in_file} · {name}" if name not in (None, ALL) else None, args))
    return out


def _main_track(profile: P.Profile, e: _Events, phases: RunPhases) -> list[tuple]:
    """Framework events, operator calls, kernels and delegate calls at their recorded times."""
    role, instr, strings, instructions = e.role, e.instr, e.strings, profile.instructions
    main_roles = np.isin(role, [P.ROLE_METHOD, P.ROLE_OTHER, P.ROLE_OPERATOR_CALL, P.ROLE_KERNEL,
                                P.ROLE_DELEGATE_CALL])
    sel = np.nonzero(e.timed & main_roles & e.keep_run & (e.end >= e.start))[0]
    ts_l = np.round(e.start[sel] / 1e3, 3).tolist()
    dur_l = np.round((e.end[sel] - e.start[sel]) / 1e3, 3).tolist()
    role_l, instr_l = role[sel].tolist(), instr[sel].tolist()
    attached_l = (e.ev["chain"][sel] >= 0).tolist()
    ex_l, name_l = e.execute[sel].tolist(), e.names[sel].tolist()
    run_names = [r.name for r in profile.etdump.runs]
    run_l = P.event_runs(profile, sel).tolist()
    label: dict[tuple[int, int, int], tuple[str, dict]] = {}   # (role, instruction, name) -> (name, args)
    run_labels = _run_labels(profile, phases)
    out: list[tuple] = []
    for k in range(len(sel)):
        r, iid, ex = role_l[k], instr_l[k], ex_l[k]
        key = (r, iid if attached_l[k] else -1, name_l[k])
        got = label.get(key)
        if got is None:
            ins = instructions.get(iid) if attached_l[k] else None
            nm = strings[name_l[k]] if name_l[k] >= 0 else ""
            got = label[key] = _main_label(r, iid, ins, nm)
        nm, base = got
        args = {"run": ex if ex >= 0 else None}
        if ex < 0:
            args["run_data"] = run_names[run_l[k]]
        args.update(base)
        if r == P.ROLE_METHOD and 0 <= ex < len(run_labels):      # the run's slice: its phase
            renamed, phase_args = run_labels[ex]
            args.update(phase_args)
            if renamed is not None:
                args["event"] = nm
                nm = renamed
        out.append((nm, P.ROLE_NAMES[r], MAIN_TID, ts_l[k], dur_l[k], args))
    return out


def _main_label(role: int, iid: int, ins, name: str) -> tuple[str, dict]:
    base: dict = {}
    if ins is not None:
        base["instruction_id"] = iid
        if role != P.ROLE_KERNEL:   # the kernel's OPERATOR_CALL around it carries these
            base["placement"] = ins.backend
            if ins.op_type:
                base["op_type"] = ins.op_type
            if ins.source:
                base["source"] = ins.source
        if role == P.ROLE_DELEGATE_CALL:
            name = f"DELEGATE_CALL #{iid} ({ins.backend})"
        elif role == P.ROLE_OPERATOR_CALL and ins.op_type:
            name = f"OPERATOR_CALL {ins.op_type} (CPU)"
    return name, base


def _partition_tracks(profile: P.Profile, e: _Events, qnn: QnnReport | None, notes: list[str]):
    """One track per delegate instruction: each DELEGATE_CALL with the backend's events inside it."""
    role, execute, instr = e.role, e.execute, e.instr
    dcall = np.nonzero(e.timed & (role == P.ROLE_DELEGATE_CALL) & (execute >= 0) & e.keep_run)[0]
    inner = np.nonzero(e.prof & (role == P.ROLE_DELEGATE_INTERNAL) & (execute >= 0) & e.keep_run)[0]
    parent = _parents(dcall, inner, execute, instr)
    tracks = {iid: PARTITION_TID_BASE + iid for iid in unique(instr[dcall]).tolist()}
    timed_inner = (parent >= 0) & e.timed[inner] & (e.ev["unit"][inner] == units.NS)
    children_by_parent, clamped = _timed_children(e, inner[timed_inner], dcall[parent[timed_inner]], tracks)
    # Value events (QNN): per-op cycles laid out with the clock estimate, the rest into args.
    values_by_parent: dict[int, list[int]] = {}
    rest = ~timed_inner & (parent >= 0)
    for j, k in zip(inner[rest].tolist(), parent[rest].tolist()):
        values_by_parent.setdefault(int(dcall[k]), []).append(j)
    lookup, parts = qnn_op_lookup(qnn), qnn_partitions(qnn)
    backend_of = {iid: (ins.backend if ins else "delegate") for iid, ins in
                  ((i, profile.instructions.get(i)) for i in tracks)}
    out: list[tuple] = []
    counts = {"skipped": 0, "compressed": 0}
    for i in dcall.tolist():
        iid, ex = int(instr[i]), int(execute[i])
        s, t_end = int(e.start[i]), int(e.end[i])
        args: dict = {"run": ex, "instruction_id": iid, "placement": backend_of[iid]}
        children = children_by_parent.get(i, [])
        levels: dict[str, float] = {}
        qnn_ops = _backend_values(e, values_by_parent.get(i, []), args, levels)
        level_slices, c_start, c_end = _level_slices(levels, ex, tracks[iid], s, t_end)
        children += level_slices
        if qnn_ops:     # inside the innermost measured level (the ops' container), else the call
            children += _qnn_op_slices(qnn_ops, parts.get(iid), lookup, iid, ex, backend_of[iid], tracks[iid],
                                       c_start, c_end, args, counts)
        out.append((f"DELEGATE_CALL #{iid} ({backend_of[iid]})", "delegate_call", tracks[iid], _us(s),
                    _us(t_end - s), args))
        # Keep children inside the parent after rounding.
        pstart, pend = _us(s), _us(t_end)
        for name, cat, tid, ts, dur, a in children:
            if ts < pstart:
                ts = pstart
            if ts + dur > pend:
                dur = max(round(pend - ts, 3), 0.0)
            out.append((name, cat, tid, ts, dur, a))
    if counts["skipped"]:
        notes.append(f"{counts['skipped']} QNN per-op rows were left out: no clock estimate for their partition "
                     "(QNN rows are cycles, not times; pass the QNN analysis to lay them out)")
    if counts["compressed"]:
        notes.append(f"{counts['compressed']} DELEGATE_CALL(s): the QNN op times (cycles ÷ clock) added up to more "
                     "than the innermost measured QNN level holding them (QNN's µs are whole: a few % of rounding) "
                     "and were scaled into it, as every view shares them out (args.compressed_to_fit)")
    if clamped:
        notes.append(f"{clamped} backend event(s) reached outside their DELEGATE_CALL and were clamped to it")
    return out, tracks


def _timed_children(e: _Events, ti: np.ndarray, tp: np.ndarray, tracks: dict[int, int]):
    """Timed backend events (ns), vectorised, clamped into their DELEGATE_CALL (``tp``)."""
    cs = np.minimum(np.maximum(e.start[ti], e.start[tp]), e.end[tp])
    ce = np.maximum(np.minimum(e.end[ti], e.end[tp]), cs)
    clamped = int(((cs != e.start[ti]) | (ce != e.end[ti])).sum())
    children_by_parent: dict[int, list[tuple]] = {}
    for p_, a, d, ex, iid, nmc in zip(tp.tolist(), np.round(cs / 1e3, 3).tolist(),
                                      np.round((ce - cs) / 1e3, 3).tolist(), e.execute[ti].tolist(),
                                      e.instr[ti].tolist(), e.names[ti].tolist()):
        children_by_parent.setdefault(p_, []).append(
            (e.strings[nmc] if nmc >= 0 else "", "delegate_internal", tracks[iid], a, d, {"run": ex}))
    return children_by_parent, clamped


def _backend_values(e: _Events, idx: list[int], args: dict, levels: dict[str, float]) -> list[tuple[str, float]]:
    """QNN per-op cycles rows of one call (returned), its QNN levels in µs into ``levels`` (drawn as
    nested slices) and its other values into ``args`` with their unit."""
    from etscope.formats.qnn_names import parse_qnn_event_name

    values: dict[str, str] = {}
    qnn_ops: list[tuple[str, float]] = []
    for j in idx:
        nm = e.name_of(j)
        u = int(e.ev["unit"][j])
        value = float(e.ev["value"][j])
        if u == units.CYCLES and parse_qnn_event_name(nm).op_id is not None:
            qnn_ops.append((nm, value))
        else:
            level = nm[:-5] if nm.endswith(" (us)") else nm      # ETDump names carry QNN's unit
            if u == units.US and level in QNN_LEVELS and level not in levels and value == value and value >= 0:
                levels[level] = value    # also a nested slice of its own
            values[nm] = units.fmt_value(value, u) if u != units.UNKNOWN else f"{value:g} (unit unknown)"
    if values:
        args["backend_values"] = values
    return qnn_ops


# QNN's nested levels inside a DELEGATE_CALL, outside in (the glossary's).
QNN_LEVELS = tuple(lv.event for lv in glossary.QNN_TIME_LEVELS)


def _level_slices(levels: dict[str, float], ex: int, tid: int, s: int, t_end: int) -> tuple[list[tuple], int, int]:
    """QNN's levels of one call as nested slices (each inside the one around it, start-aligned: QNN
    records durations, not start times), in whole ns so that nothing overlaps after rounding; and
    the innermost level's [start, end) ns, the container the per-op rows are laid into."""
    out = []
    end = t_end
    for name in QNN_LEVELS:
        us = levels.get(name)
        if us is None:
            continue
        d = min(int(round(us * 1000)), end - s)
        out.append((name, "qnn_level", tid, s / 1000, d / 1000,
                    {"run": ex, "measured_us": us,
                     "position": "start-aligned with the level around it (QNN records durations, not starts)"}))
        end = s + d
    return out, s, end


def _qnn_op_slices(qnn_ops, part, lookup, iid, ex, backend, tid, s, t_end, args, counts) -> list[tuple]:
    """QNN per-op rows one after the other from the container's start (``s``..``t_end`` ns: the
    innermost measured QNN level, else the DELEGATE_CALL), each cycles / the run's clock, scaled
    into the container when they exceed it; boundaries in whole ns (touching, never overlapping)."""
    clock = clock_mhz(part, ex) if part else None
    if clock is None:
        counts["skipped"] += len(qnn_ops)
        return []
    args["clock_mhz_est"] = round(clock, 1)
    measured = part.clock_source == "runtrace"
    if measured:            # the runtrace's measured clock, not this run's estimate
        args["clock_source"] = "runtrace"
    est = [v / clock for _, v in qnn_ops]        # cycles / MHz = µs
    span_us = (t_end - s) / 1e3
    scale = 1.0
    if sum(est) > span_us > 0:
        scale = span_us / sum(est)
        counts["compressed"] += 1
    bounds = [s + int(round(x)) for x in np.cumsum([0.0] + [d * scale * 1000 for d in est])]
    bounds = [min(b, t_end) for b in bounds]
    out = []
    note = ("duration = cycles / " + ("measured clock (runtrace)" if measured else "derived clock")
            + "; laid one after the other from the start of the innermost measured QNN level "
              "(their position inside it is not recorded)")
    for j, ((nm, v), d) in enumerate(zip(qnn_ops, est)):
        op = lookup.get((iid, nm))
        a = {"run": ex, "instruction_id": iid, "placement": backend, "estimated": True,
             "cycles": v, "clock_mhz_est": round(clock, 1), "est_us": round(d, 3), "note": note}
        if measured:
            a["clock_source"] = "runtrace"
        if scale != 1.0:
            a["compressed_to_fit"] = round(scale, 4)
        if op is not None:
            for k, x in (("node", op.node), ("op_type", op.op_type), ("hmx", op.hmx), ("hvx", op.hvx)):
                if x is not None:
                    a[k] = x
        out.append((nm + " (est.)", "qnn_op_estimated", tid, bounds[j] / 1000, (bounds[j + 1] - bounds[j]) / 1000, a))
    return out


def _parents(dcall: np.ndarray, inner: np.ndarray, execute: np.ndarray, instr: np.ndarray) -> np.ndarray:
    """For each inner (backend) event, the index into ``dcall`` of its DELEGATE_CALL (-1: none).

    Backends log their events before the DELEGATE_CALL event is written (its scope ends last), so an
    inner event belongs to the next DELEGATE_CALL of the same run and instruction in file order;
    failing that, to the previous one.
    """
    if inner.size == 0 or dcall.size == 0:
        return np.full(inner.size, -1, dtype=np.int64)
    n = int(max(dcall.max(), inner.max())) + 1
    # (execute, instruction) as one dense code: ids from the file go up to 2**31, and packing
    # them raw with the event index overflowed int64 on large files.
    both = np.concatenate([dcall, inner])
    _, pair = np.unique(np.stack([execute[both].astype(np.int64), instr[both].astype(np.int64)]), axis=1,
                        return_inverse=True)
    pair = pair.reshape(-1).astype(np.int64)
    dkey, qkey = pair[:dcall.size], pair[dcall.size:]
    dcomp = dkey * n + dcall
    order = np.argsort(dcomp, kind="stable")
    dsorted, ksorted = dcomp[order], dkey[order]
    pos = np.searchsorted(dsorted, qkey * n + inner)
    out = np.full(inner.size, -1, dtype=np.int64)
    after = pos < len(dsorted)
    ok = after.copy()
    ok[after] = ksorted[pos[after]] == qkey[after]
    out[ok] = order[pos[ok]]
    before = ~ok & (pos > 0)
    ok2 = before.copy()
    ok2[before] = ksorted[pos[before] - 1] == qkey[before]
    out[ok2] = order[pos[ok2] - 1]
    return out
