"""The HTP units of an optrace (``analysis.htp_timeline``, as the ``htp_timeline`` dict of the QNN
report) as Perfetto tracks: one process, one thread per HMX / HVX / DMA unit (and per extra lane
where ops overlap without nesting), each executed op a slice. Cycles become µs through the
timeline's clock, named in the process name and every slice's args (``estimated`` when it is not
the runtrace's measured clock). The optrace records one inference of a separate run: its time axis
starts at 0 and is not the ETDump's."""
from __future__ import annotations

UNITS_PID = 2


def htp_unit_events(tl: dict | None, notes: list[str]) -> list[dict]:
    """Metadata and slice events for the trace of ``tl`` (the QNN report's ``htp_timeline``); a line
    in ``notes`` when tracks are left out."""
    if not tl or not tl.get("tracks"):
        return []
    mhz = tl.get("clock_mhz")
    if not mhz:
        notes.append("optrace HTP unit tracks left out: no clock to turn their cycles into time "
                     "(give QHAS or the runtrace of the optrace run)")
        return []
    how = "estimated" if tl.get("clock_is_estimate") else "measured"
    out = [{"name": "process_name", "ph": "M", "pid": UNITS_PID, "tid": 0,
            "args": {"name": f"HTP units (optrace: one inference of its own run, from 0; "
                             f"cycles ÷ {mhz:,.0f} MHz {how})"}},
           {"name": "process_sort_index", "ph": "M", "pid": UNITS_PID, "tid": 0, "args": {"sort_index": 2}}]
    tid = 0
    for t in tl["tracks"]:
        sl = t["slices"]
        base = tid
        for lane in range(max(t["lanes"], 1)):
            tid += 1
            label = f"{t['kind']} (tid {t['tid']})" + (f" lane {lane + 1}" if lane else "")
            out.append({"name": "thread_name", "ph": "M", "pid": UNITS_PID, "tid": tid, "args": {"name": label}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": UNITS_PID, "tid": tid,
                        "args": {"sort_index": tid}})
        for s, d, ln, op, qop, cat in zip(sl["start_cycles"], sl["dur_cycles"], sl["lane"], sl["op"],
                                          sl["qnn_op"], sl["category"]):
            out.append({"name": op, "cat": f"htp_{cat}", "ph": "X", "pid": UNITS_PID, "tid": base + 1 + ln,
                        "ts": round(s / mhz, 3), "dur": round(d / mhz, 3),
                        "args": {"qnn_op": qop, "uses": cat, "cycles": d, "start_cycle": s,
                                 "clock_mhz": round(mhz, 1), "clock": tl.get("clock_source"),
                                 "estimated": bool(tl.get("clock_is_estimate"))}})
        if t["slices_total"] > len(sl["start_cycles"]):
            notes.append(f"optrace {t['kind']} tid {t['tid']}: the {len(sl['start_cycles'])} longest of "
                         f"{t['slices_total']} ops are drawn")
    return out
