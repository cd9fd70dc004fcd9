"""Chrome / Perfetto trace (Trace Event Format, JSON): the runs on a timeline.

Open the file in https://ui.perfetto.dev or chrome://tracing. Timestamps are µs from the first
timed event of the ETDump; runs follow each other at their real times.

Tracks (one process, several threads):
- ``ExecuTorch: Method::execute`` — load events, ``Method::execute``, ``OPERATOR_CALL`` + kernel
  events (CPU fallback) and each ``DELEGATE_CALL``, at their recorded times.
- one track per delegate instruction (partition): its ``DELEGATE_CALL`` again, with what the backend
  logged inside it. Timed backend events (XNNPACK) at their recorded times. QNN per-op rows carry
  cycles, not times: they are laid out one after the other from the start of the DELEGATE_CALL,
  each lasting cycles / the partition's derived clock (from ``analysis.qnn``), and marked
  ``estimated`` in ``args``; their position inside the call is not known. Without a clock estimate
  they are left out (a note says so). QNN's other values (µs, counts, bytes) are in the
  ``DELEGATE_CALL``'s args.
"""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.arrays import unique
from etscope.formats import etdump as etdump_format
from etscope.analysis.qnn_lookup import clock_mhz, qnn_op_lookup, qnn_partitions
from etscope.analysis.timeline import first_timed_ns, since_origin

MAIN_TID = 1
PID = 1
SCHEMA = "etscope.trace/1"


def _us(ns: int) -> float:
    return round(ns / 1e3, 3)


def build_trace(profile: P.Profile, qnn: dict | None = None, runs: list[int] | None = None) -> dict:
    """The trace as a dict ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``."""
    from etscope.analysis.ops import effective_names
    from etscope.formats.qnn_names import parse_qnn_event_name

    ev = profile.events
    strings = profile.strings
    n = len(ev["run"])
    # Times from the origin (the first timed event), exact also for raw timestamps past 2**63.
    start = since_origin(ev["start"], first_timed_ns(profile))
    end = since_origin(ev["end"], first_timed_ns(profile))
    t0 = 0
    names = effective_names(profile) if n else np.zeros(0, np.int32)
    role = ev["role"]
    execute = ev["execute"]
    instr = ev["instruction_id"].astype(np.int64)
    prof = ev["kind"] == etdump_format.PROFILE
    timed = prof & (ev["start"] > 0)
    keep_run = np.ones(n, dtype=bool)
    if runs is not None:
        wanted = np.zeros(max(profile.n_runs, 1), dtype=bool)
        for r in runs:
            if 0 <= r < profile.n_runs:
                wanted[r] = True
        keep_run = (execute < 0) | wanted[np.clip(execute, 0, len(wanted) - 1)]
    notes: list[str] = []
    out: list[dict] = []
    instructions = profile.instructions

    def name_of(i: int) -> str:
        c = int(names[i])
        return strings[c] if c >= 0 else ""

    # ---- main track ------------------------------------------------------------------------------
    main_roles = np.isin(role, [P.ROLE_METHOD, P.ROLE_OTHER, P.ROLE_OPERATOR_CALL, P.ROLE_KERNEL,
                                P.ROLE_DELEGATE_CALL])
    sel = np.nonzero(timed & main_roles & keep_run & (end >= start))[0]
    ts_l = np.round((start[sel] - t0) / 1e3, 3).tolist()
    dur_l = np.round((end[sel] - start[sel]) / 1e3, 3).tolist()
    role_l = role[sel].tolist()
    instr_l = instr[sel].tolist()
    attached_l = (ev["chain"][sel] >= 0).tolist()
    ex_l = execute[sel].tolist()
    name_l = names[sel].tolist()
    run_names = [r.name for r in profile.etdump.runs]
    run_l = ev["run"][sel].tolist()
    label: dict[tuple[int, int, int], tuple[str, dict]] = {}   # (role, instruction, name) -> (name, args)
    for k in range(len(sel)):
        r, iid, ex = role_l[k], instr_l[k], ex_l[k]
        key = (r, iid if attached_l[k] else -1, name_l[k])
        got = label.get(key)
        if got is None:
            ins = instructions.get(iid) if attached_l[k] else None
            nm = strings[name_l[k]] if name_l[k] >= 0 else ""
            base: dict = {}
            if ins is not None:
                base["instruction_id"] = iid
                if r != P.ROLE_KERNEL:   # the kernel's OPERATOR_CALL around it carries these
                    base["placement"] = ins.backend
                    if ins.op_type:
                        base["op_type"] = ins.op_type
                    if ins.source:
                        base["source"] = ins.source
                if r == P.ROLE_DELEGATE_CALL:
                    nm = f"DELEGATE_CALL #{iid} ({ins.backend})"
                elif r == P.ROLE_OPERATOR_CALL and ins.op_type:
                    nm = f"OPERATOR_CALL {ins.op_type} (CPU)"
            got = label[key] = (nm, base)
        nm, base = got
        args = {"run": ex if ex >= 0 else None}
        if ex < 0:
            args["run_data"] = run_names[run_l[k]]
        args.update(base)
        out.append({"name": nm, "cat": P.ROLE_NAMES[r], "ph": "X", "pid": PID, "tid": MAIN_TID,
                    "ts": ts_l[k], "dur": dur_l[k], "args": args})

    # ---- one track per delegate instruction --------------------------------------------------------
    lookup = qnn_op_lookup(qnn)
    parts = qnn_partitions(qnn)
    dcall = np.nonzero(timed & (role == P.ROLE_DELEGATE_CALL) & (execute >= 0) & keep_run)[0]
    inner = np.nonzero(prof & (role == P.ROLE_DELEGATE_INTERNAL) & (execute >= 0) & keep_run)[0]
    parent = _parents(dcall, inner, execute, instr)
    tracks: dict[int, int] = {}
    for iid in unique(instr[dcall]).tolist():
        tracks[iid] = 100 + iid
    # Timed backend events (ns): vectorised, clamped into their DELEGATE_CALL.
    timed_inner = (parent >= 0) & timed[inner] & (ev["unit"][inner] == units.NS)
    ti, tp = inner[timed_inner], dcall[parent[timed_inner]]
    cs = np.minimum(np.maximum(start[ti], start[tp]), end[tp])
    ce = np.maximum(np.minimum(end[ti], end[tp]), cs)
    clamped = int(((cs != start[ti]) | (ce != end[ti])).sum())
    children_by_parent: dict[int, list[dict]] = {}
    pl = {iid: (ins.backend if ins else "delegate") for iid, ins in
          ((i, instructions.get(i)) for i in tracks)}
    for j, p_, a, d, ex, iid, nmc in zip(ti.tolist(), tp.tolist(), np.round((cs - t0) / 1e3, 3).tolist(),
                                         np.round((ce - cs) / 1e3, 3).tolist(), execute[ti].tolist(),
                                         instr[ti].tolist(), names[ti].tolist()):
        children_by_parent.setdefault(p_, []).append(
            {"name": strings[nmc] if nmc >= 0 else "", "cat": "delegate_internal", "ph": "X", "pid": PID,
             "tid": tracks[iid], "ts": a, "dur": d, "args": {"run": ex}})
    # Value events (QNN): per-op cycles laid out with the clock estimate, the rest into args.
    values_by_parent: dict[int, list[int]] = {}
    for j, k in zip(inner[~timed_inner & (parent >= 0)].tolist(), parent[~timed_inner & (parent >= 0)].tolist()):
        values_by_parent.setdefault(int(dcall[k]), []).append(j)
    skipped_qnn = compressed = 0
    for i in dcall.tolist():
        iid, ex = int(instr[i]), int(execute[i])
        backend = pl[iid]
        tid = tracks[iid]
        s, e = int(start[i]), int(end[i])
        args: dict = {"run": ex, "instruction_id": iid, "placement": backend}
        values: dict[str, str] = {}
        qnn_ops: list[tuple[str, float]] = []
        for j in values_by_parent.get(i, []):
            nm = name_of(j)
            u = int(ev["unit"][j])
            value = float(ev["value"][j])
            if u == units.CYCLES and parse_qnn_event_name(nm).op_id is not None:
                qnn_ops.append((nm, value))
            else:
                values[nm] = units.fmt_value(value, u) if u != units.UNKNOWN else f"{value:g} (unit unknown)"
        if values:
            args["backend_values"] = values
        children = children_by_parent.get(i, [])
        if qnn_ops:
            part = parts.get(iid)
            clock = clock_mhz(part, ex) if part else None
            if clock is None:
                skipped_qnn += len(qnn_ops)
            else:
                args["clock_mhz_est"] = round(clock, 1)
                measured = part.get("clock_source") == "runtrace"
                if measured:            # the runtrace's measured clock, not this run's estimate
                    args["clock_source"] = "runtrace"
                est = [v / clock for _, v in qnn_ops]        # cycles / MHz = µs
                span_us = (e - s) / 1e3
                scale = 1.0
                if sum(est) > span_us > 0:
                    scale = span_us / sum(est)
                    compressed += 1
                t = (s - t0) / 1e3
                for (nm, v), d in zip(qnn_ops, est):
                    op = lookup.get((iid, nm)) or {}
                    a = {"run": ex, "instruction_id": iid, "placement": backend, "estimated": True,
                         "cycles": v, "clock_mhz_est": round(clock, 1), "est_us": round(d, 3),
                         "note": "duration = cycles / " + ("measured clock (runtrace)" if measured else "derived clock")
                                 + "; position inside DELEGATE_CALL unknown"}
                    if measured:
                        a["clock_source"] = "runtrace"
                    if scale != 1.0:
                        a["compressed_to_fit"] = round(scale, 4)
                    for k in ("node", "op_type", "hmx", "hvx"):
                        if op.get(k) is not None:
                            a[k] = op[k]
                    children.append({"name": nm + " (est.)", "cat": "qnn_op_estimated", "ph": "X", "pid": PID,
                                     "tid": tid, "ts": round(t, 3), "dur": round(d * scale, 3), "args": a})
                    t += d * scale
        out.append({"name": f"DELEGATE_CALL #{iid} ({backend})", "cat": "delegate_call", "ph": "X", "pid": PID,
                    "tid": tid, "ts": _us(s - t0), "dur": _us(e - s), "args": args})
        # Keep children inside the parent after rounding.
        pstart, pend = _us(s - t0), _us(e - t0)
        for c in children:
            if c["ts"] < pstart:
                c["ts"] = pstart
            if c["ts"] + c["dur"] > pend:
                c["dur"] = max(round(pend - c["ts"], 3), 0.0)
        out.extend(children)
    if skipped_qnn:
        notes.append(f"{skipped_qnn} QNN per-op rows were left out: no clock estimate for their partition "
                     "(QNN rows are cycles, not times; pass the QNN analysis to lay them out)")
    if compressed:
        notes.append(f"{compressed} DELEGATE_CALL(s): the estimated QNN op times added up to more than the call "
                     "and were scaled down to fit (args.compressed_to_fit)")
    if clamped:
        notes.append(f"{clamped} backend event(s) reached outside their DELEGATE_CALL and were clamped to it")
    meta = [
        {"name": "process_name", "ph": "M", "pid": PID, "tid": MAIN_TID,
         "args": {"name": "ExecuTorch " + (profile.method or "program")}},
        {"name": "thread_name", "ph": "M", "pid": PID, "tid": MAIN_TID, "args": {"name": "Method::execute (CPU thread)"}},
        {"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": MAIN_TID, "args": {"sort_index": 0}},
    ]
    for iid, tid in sorted(tracks.items()):
        ins = instructions.get(iid)
        meta.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                     "args": {"name": f"partition: DELEGATE_CALL #{iid} ({ins.backend if ins else 'delegate'})"}})
        meta.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid, "args": {"sort_index": tid}})
    out.sort(key=lambda x: (x["tid"], x["ts"], -x["dur"]))
    return {"traceEvents": meta + out, "displayTimeUnit": "ms",
            "otherData": {"schema": SCHEMA, "generator": "etscope", "inputs": dict(profile.sources),
                          "time_unit": "us", "time_origin": "first timed event of the ETDump",
                          "runs": profile.n_runs if runs is None else len([r for r in runs if 0 <= r < profile.n_runs]),
                          "notes": notes}}


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


def write_trace(path: str, trace: dict) -> None:
    import json

    from etscope.render.files import write_text
    from etscope.render.json import to_jsonable as _clean

    try:   # build_trace writes plain Python numbers; clean (slow on big traces) only if needed
        text = json.dumps(trace, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = json.dumps(_clean(trace), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    write_text(path, text)


def validate(trace: dict, tolerance_us: float = 0.002) -> list[str]:
    """Problems with a trace against the Trace Event Format as this module writes it (empty: valid).

    Checks required keys and types, µs timestamps (finite, non-negative), non-negative durations and
    that complete events on one thread nest (each is inside or after the ones open before it).
    """
    problems: list[str] = []
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return ["no traceEvents list"]
    if trace.get("displayTimeUnit") not in (None, "ms", "ns"):
        problems.append("displayTimeUnit must be 'ms' or 'ns'")
    by_thread: dict[tuple, list[tuple[float, float, str]]] = {}
    for k, e in enumerate(events):
        if not isinstance(e, dict):
            problems.append(f"event {k} is not an object")
            continue
        ph = e.get("ph")
        for key in ("name", "ph", "pid", "tid"):
            if key not in e:
                problems.append(f"event {k} lacks {key!r}")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            problems.append(f"event {k}: pid/tid must be integers")
            continue
        if ph == "M":
            continue
        if ph != "X":
            problems.append(f"event {k}: unexpected phase {ph!r}")
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)):
            problems.append(f"event {k}: ts/dur must be numbers")
            continue
        if not (ts == ts and dur == dur) or ts < 0 or dur < 0 or ts == float("inf") or dur == float("inf"):
            problems.append(f"event {k} ({e.get('name')!r}): negative or non-finite ts/dur")
            continue
        if "args" in e and not isinstance(e["args"], dict):
            problems.append(f"event {k}: args must be an object")
        by_thread.setdefault((e["pid"], e["tid"]), []).append((float(ts), float(dur), str(e.get("name"))))
    for key, evs in by_thread.items():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack: list[float] = []
        for ts, dur, name in evs:
            while stack and ts >= stack[-1] - tolerance_us:
                stack.pop()
            if stack and ts + dur > stack[-1] + tolerance_us:
                problems.append(f"thread {key}: {name!r} at {ts} µs overlaps its enclosing event without nesting")
                if len(problems) > 50:
                    return problems
            stack.append(ts + dur)
    return problems
