"""The timeline of QNN files without an ETDump (``etscope trace --qnn-csv/--optrace/--runtrace``).

What each file can place, and how (every placed-but-not-recorded position is said in ``args``/notes):
- QNN profile: per partition and execute, ``QNN (execute) time`` ⊇ ``Accelerator (execute) time`` ⊇
  its excluding-wait time, in their µs; the files hold no start times, so executes are laid back to
  back and the nested spans start with their parent. Per-op cycles (p50 over the executes) on a
  track of their own, each cycles ÷ the partition's clock.
- runtrace: per execute, ``QNN DSP Execute`` with its spans (VTCM acquire, power-on, graph execute)
  in measured µs, laid one after the other inside it.
- QHAS (without an optrace): its HTP op instances on their unit threads, likewise.
- optrace: one track per HTP unit (HMX, HVX thread, DMA) with its ops at their recorded cycles,
  converted with the clock the other files give (runtrace first); without one, the time axis is
  cycles (``time_unit`` says so).
"""
from __future__ import annotations

import numpy as np

from etscope.analysis.qnn.htp_timeline import timeline_clock
from etscope.analysis.qnn.htp_units import CLOCK_RULE, Slices, htp_units
from etscope.analysis.qnn.partition_result import Partition
from etscope.analysis.qnn.result import QnnReport
from etscope.analysis.views.trace import MAIN_TID, Track, TraceView

GAP_US = 10.0          # between executes laid back to back (their real gap is not in the files)


def _r(x: float) -> float:
    return round(float(x), 3)


def qnn_trace_view(qnn: QnnReport | None, optrace, runtrace, inputs: dict, runs: list[int] | None = None,
                   qhas=None) -> TraceView:
    parts = qnn.partitions if qnn is not None else ()
    tracks = [Track(MAIN_TID, "QNN files (no ETDump: no Method::execute / DELEGATE_CALL)", 0)]
    slices: list[tuple] = []     # (name, cat, tid, ts, dur, args) rows (see TraceView)
    notes: list[str] = []
    for k, p in enumerate(parts):
        tid = 100 + 2 * k
        tracks += [Track(tid, f"QNN {p.key}: executes (µs)", tid),
                   Track(tid + 1, f"QNN {p.key}: per-op cycles p50 (est. µs)", tid + 1)]
        slices += _partition_runs(p, tid, runs, notes)
        slices += _partition_ops(p, tid + 1, notes)
    if runtrace is not None:
        tracks.append(Track(300, "runtrace: QNN DSP Execute (measured µs)", 300))
        slices += _runtrace_spans(runtrace, 300, runs, notes)
    # One clock rule in every trace (analysis.qnn.htp_units): the inference the optrace/QHAS records.
    clock, clock_from, _, _ = timeline_clock(qhas, runtrace, _etdump_clock(parts))
    unit = "us"
    units = htp_units(qnn.htp_timeline, notes) if optrace is not None and qnn is not None else None
    if optrace is not None and units is None and clock is None:
        unit_tracks, unit_slices, unit = _optrace_units(optrace, None, "", notes)   # no clock: cycles
        tracks += unit_tracks
        slices += unit_slices
    if qhas is not None and optrace is None:      # the same inference as an optrace: one of them suffices
        unit_tracks, unit_slices, unit = _qhas_units(qhas, clock, clock_from or "", notes)
        tracks += unit_tracks
        slices += unit_slices
    only_ops = all(cat == "htp_op" for _, cat, *_ in slices)
    if unit == "cycles" and not only_ops:
        notes.append("the HTP ops are in cycles and the other spans in µs on one axis (no clock to convert)")
    n_runs = max([p.runs or 0 for p in parts] + [0])
    return TraceView(process="QNN files: " + ", ".join(sorted(inputs)), tracks=tuple(tracks), slices=Slices.of(slices),
                     notes=tuple(notes), runs=n_runs if runs is None else len(runs), sources=dict(inputs),
                     time_origin="the first span laid out (the QNN files hold no common clock origin)",
                     time_unit="cycles" if unit == "cycles" and only_ops else "us", clock_rule=CLOCK_RULE,
                     time_unit_of_htp_ops=None if unit == "us" or only_ops else "cycles", units=units)


def _etdump_clock(parts) -> float | None:
    """A partition's clock, the last resort of ``timeline_clock`` (another run's)."""
    return next((float(p.clock_mhz_used) for p in parts if p.clock_mhz_used), None)


def _partition_runs(p: Partition, tid: int, runs, notes: list[str]) -> list[tuple]:
    """Executes back to back; inside each, the QNN levels it has, start-aligned with their parent."""
    pr = p.per_run
    levels = [("QNN (execute) time", pr.qnn_execute_us or []), ("Accelerator (execute) time", pr.accel_us or []),
              ("Accelerator (execute excluding wait) time", pr.accel_excl_wait_us or [])]
    cycles, clock = pr.accel_cycles or [], pr.clock_mhz_used or []
    n = max((len(v) for _, v in levels), default=0)
    out, t = [], 0.0
    for r in range(n):
        if runs is not None and r not in runs:
            continue
        parent_end, width = None, 0.0
        for name, vals in levels:
            v = vals[r] if r < len(vals) else None
            if v is None:
                continue
            dur = v if parent_end is None else min(v, parent_end - t)
            args = {"run": r, "partition": p.key, "value_us": v, "position": "start-aligned with its parent "
                    "(not recorded)" if parent_end is not None else "executes laid back to back (not recorded)"}
            if name.startswith("Accelerator (execute) time") and r < len(cycles) and cycles[r] is not None:
                args["cycles"] = cycles[r]
                if r < len(clock) and clock[r]:
                    args["clock_mhz"] = _r(clock[r])
            out.append((name, "qnn_level", tid, _r(t), _r(dur), args))
            parent_end = t + dur if parent_end is None else min(parent_end, t + dur)
            width = max(width, dur)
        t += width + GAP_US
    if n:
        notes.append(f"{p.key}: the QNN profile has no start times: executes are laid back to back "
                     f"{GAP_US:g} µs apart and nested spans start with their parent")
    return out


def _partition_ops(p: Partition, tid: int, notes: list[str]) -> list[tuple]:
    clock = p.clock_mhz_used
    ops = [o for o in p.ops if o.unit == "cycles" and o.cycles_p50]
    if not ops:
        return []
    if not clock:
        notes.append(f"{p.key}: no clock, so its per-op cycles are not laid out")
        return []
    out = []
    # Boundaries in whole ns: touching ops touch exactly after rounding (no 1 ns overlaps).
    bounds = [int(round(x)) for x in np.cumsum([0.0] + [o.cycles_p50 / clock * 1000 for o in ops])]
    for k, o in enumerate(ops):
        args = {"partition": p.key, "cycles_p50": o.cycles_p50, "clock_mhz": _r(clock), "estimated": True,
                "note": "duration = cycles p50 ÷ clock; ops one after the other (order of the profile)"}
        for key, x in (("node", o.node), ("op_type", o.op_type), ("hmx", o.hmx), ("hvx", o.hvx)):
            if x is not None:
                args[key] = x
        out.append((str(o.qnn_name) + " (est.)", "qnn_op_estimated", tid, bounds[k] / 1000,
                    (bounds[k + 1] - bounds[k]) / 1000, args))
    return out


def _runtrace_spans(rt, tid: int, runs, notes: list[str]) -> list[tuple]:
    """Each ``QNN DSP Execute`` with the spans of its execute one after the other inside it.
    Linear in the spans: they are grouped by execute once (400,000 spans took 56 s when each
    execute searched all of them)."""
    out, t = [], 0.0
    wanted = None if runs is None else set(runs)
    execute = rt.execute
    order = np.argsort(execute, kind="stable")          # file order kept inside an execute
    n_exec = int(execute.max()) + 1 if len(rt) else 0
    bounds = np.searchsorted(execute[order], np.arange(n_exec + 1)).tolist()
    order_l = order.tolist()
    names, graphs = rt.name.tolist(), rt.graph.tolist()
    time_us, cycles, mhz = rt.time_us.tolist(), rt.cycles.tolist(), rt.mhz.tolist()
    for ex in range(n_exec):
        if wanted is not None and ex not in wanted:
            continue
        idx = order_l[bounds[ex]:bounds[ex + 1]]
        head = next((i for i in idx if names[i] == "QNN DSP Execute"), None)
        total = float(time_us[head]) if head is not None and time_us[head] == time_us[head] else None
        start, inner_t = t, t
        for i in idx:
            d = float(time_us[i])
            if d != d:
                continue
            args = {"execute": ex, "graph": graphs[i] or None, "cycles": float(cycles[i]),
                    "clock_mhz": _r(mhz[i]) if mhz[i] == mhz[i] else None}
            if i == head:
                out.append((str(names[i]), "runtrace", tid, _r(start), _r(d), args))
                continue
            if total is not None:
                d = min(d, max(start + total - inner_t, 0.0))
            args["position"] = "laid one after the other inside the execute (start not kept)"
            out.append((str(names[i]), "runtrace", tid, _r(inner_t), _r(d), args))
            inner_t += d
        t = start + max(total or 0.0, inner_t - start) + GAP_US
    if len(rt):
        notes.append(f"runtrace: executes laid back to back {GAP_US:g} µs apart; spans inside one in file order")
    return out


def _optrace_units(ot, clock: float | None, clock_from: str, notes: list[str]):
    """One track per HTP unit with ops, at their recorded cycles (÷ clock when there is one)."""
    ev = ot.events
    idx = np.asarray(ot.op_event_indices(), dtype=np.int64)
    if idx.size == 0:
        return [], [], "us"
    ts, dur = ev.ts_cycles[idx], np.nan_to_num(ev.dur_cycles[idx], nan=0.0)
    t0 = float(np.nanmin(ts))
    scale = 1.0 / clock if clock else 1.0
    unit = "us" if clock else "cycles"
    keys = sorted({(int(ev.pid[i]), int(ev.tid[i])) for i in idx.tolist()})
    tid_of = {k: 400 + j for j, k in enumerate(keys)}
    tracks = [Track(tid_of[k], f"optrace {ot.tracks.get(k, 'unit')} (pid {k[0]}, tid {k[1]})"
                    + ("" if clock else ": time axis = cycles"), tid_of[k]) for k in keys]
    out = []
    for i, s, d in zip(idx.tolist(), ts.tolist(), dur.tolist()):
        args = ev.args[i] if isinstance(ev.args[i], dict) else {}
        a = {"cycles": d, "start_cycle": s, "unit": ot.tracks.get((int(ev.pid[i]), int(ev.tid[i]))),
             "qnn_op": args.get("QNN Op Name")}
        if clock:
            a["clock_mhz"], a["clock_from"] = _r(clock), clock_from
        out.append((str(ev.name[i]), "htp_op", tid_of[(int(ev.pid[i]), int(ev.tid[i]))], _r((s - t0) * scale),
                    _r(d * scale), a))
    notes.append("optrace: " + (f"cycles ÷ {clock:,.0f} MHz ({clock_from})" if clock else
                                "no clock (give --runtrace or a QNN profile): ts/dur are cycles, not µs"))
    return tracks, out, unit


def _qhas_units(qhas, clock: float | None, clock_from: str, notes: list[str]):
    """QHAS ``htp_op_instances`` on one track per unit thread (tid), at their start cycle."""
    rows = [r for r in qhas.htp_op_instances if isinstance(r.get("start_cycle"), (int, float))
            and isinstance(r.get("cycles"), (int, float)) and isinstance(r.get("tid"), int)]
    if not rows:          # a trimmed QHAS: each unit's window (start to end cycle) with its busy cycles
        rows = [{"tid": r.get("tid"), "start_cycle": r.get("start_cycle"), "htp_op": f"{r.get('type')} window",
                 "cycles": float(r["end_cycle"]) - float(r["start_cycle"]), "cycles_used": r.get("cycles_used"),
                 "utilization_pct": r.get("utilization")}
                for r in (qhas.overall or {}).get("htp_resources") or []
                if isinstance(r, dict) and isinstance(r.get("tid"), int)
                and all(isinstance(r.get(k), (int, float)) for k in ("start_cycle", "end_cycle"))
                and r["end_cycle"] >= r["start_cycle"]]
    if not rows:
        return [], [], "us"
    t0 = min(float(r["start_cycle"]) for r in rows)
    scale = 1.0 / clock if clock else 1.0
    tids = sorted({r["tid"] for r in rows})
    tid_of = {t: 500 + j for j, t in enumerate(tids)}
    tracks = [Track(tid_of[t], f"QHAS unit thread {t}" + ("" if clock else ": time axis = cycles"), tid_of[t])
              for t in tids]
    out = []
    for r in rows:
        a = {"cycles": r["cycles"], "start_cycle": r["start_cycle"], "qnn_op": r.get("qnn_op"),
             **{k: r.get(k) for k in ("hmx", "hvx", "dma") if isinstance(r.get(k), bool)},
             **{k: r[k] for k in ("cycles_used", "utilization_pct") if r.get(k) is not None}}
        if clock:
            a["clock_mhz"], a["clock_from"] = _r(clock), clock_from
        out.append((str(r.get("htp_op") or r.get("qnn_op") or "op"), "htp_op", tid_of[r["tid"]],
                    _r((float(r["start_cycle"]) - t0) * scale), _r(float(r["cycles"]) * scale), a))
    notes.append("QHAS: " + (f"cycles ÷ {clock:,.0f} MHz ({clock_from})" if clock else
                             "no clock (give --runtrace or a QNN profile): ts/dur are cycles, not µs"))
    return tracks, out, "us" if clock else "cycles"
