"""Chrome / Perfetto trace (Trace Event Format, JSON) of a timeline (``analysis.views.trace``).

Open the file in https://ui.perfetto.dev or chrome://tracing. Timestamps are µs; what the tracks
hold is described in ``analysis.views.trace``. Only formatting happens here.
"""
from __future__ import annotations

from etscope.analysis.views.trace import MAIN_TID, TraceView

PID = 1
UNITS_PID = 2         # the optrace's HTP units: a process of their own (their own time axis)
SCHEMA = "etscope.trace/1"


def build_trace(view: TraceView, notes_before=()) -> dict:
    """The trace as a dict ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``;
    ``notes_before``: notes of the whole analysis, listed before the view's own.
    One event dict per slice, made here from the view's columns (the output itself; nothing else
    is made per slice), ordered by track, start, then longest first."""
    sl = view.slices
    track, ts, dur = sl.track, sl.ts, sl.dur
    order = sorted(range(len(sl)), key=lambda k: (track[k], ts[k], -dur[k]))     # stable: ties keep the view's order
    name, cat, args = sl.name, sl.cat, sl.args
    out = [{"name": name[k], "cat": cat[k], "ph": "X", "pid": PID, "tid": track[k], "ts": ts[k], "dur": dur[k],
            "args": args[k]} for k in order]
    meta = [{"name": "process_name", "ph": "M", "pid": PID, "tid": MAIN_TID, "args": {"name": view.process}}]
    for t in view.tracks:
        meta.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": t.tid, "args": {"name": t.name}})
        meta.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": t.tid,
                     "args": {"sort_index": t.sort_index}})
    out += _unit_events(view.units)      # optrace HMX/HVX/DMA tracks
    other = {"schema": SCHEMA, "generator": "etscope", "inputs": dict(view.sources), "time_unit": view.time_unit,
             "time_origin": view.time_origin, "runs": view.runs, "notes": [*notes_before, *view.notes],
             "clock_rule": view.clock_rule}
    if view.time_unit_of_htp_ops is not None:
        other.update(time_unit_of_htp_ops=view.time_unit_of_htp_ops)
    return {"traceEvents": meta + out, "displayTimeUnit": "ms", "otherData": other}


def _unit_events(units) -> list[dict]:
    """The HTP unit tracks (``analysis.qnn.htp_units``) as a process of their own."""
    if units is None:
        return []
    out = [{"name": "process_name", "ph": "M", "pid": UNITS_PID, "tid": 0, "args": {"name": units.process}},
           {"name": "process_sort_index", "ph": "M", "pid": UNITS_PID, "tid": 0, "args": {"sort_index": 2}}]
    for t in units.tracks:
        out.append({"name": "thread_name", "ph": "M", "pid": UNITS_PID, "tid": t.key, "args": {"name": t.name}})
        out.append({"name": "thread_sort_index", "ph": "M", "pid": UNITS_PID, "tid": t.key,
                    "args": {"sort_index": t.key}})
    sl = units.slices
    out += [{"name": n, "cat": c, "ph": "X", "pid": UNITS_PID, "tid": k, "ts": t, "dur": d, "args": a}
            for n, c, k, t, d, a in zip(sl.name, sl.cat, sl.track, sl.ts, sl.dur, sl.args)]
    return out


def write_trace(path: str, trace: dict) -> None:
    import json

    from etscope.render.files import write_text
    from etscope.render.json import to_jsonable

    try:   # build_trace writes plain Python numbers; clean (slow on big traces) only if needed
        text = json.dumps(trace, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = json.dumps(to_jsonable(trace), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    write_text(path, text)

