"""A checker of the Trace Event Format as etscope writes it (Perfetto / chrome://tracing): the tests'
oracle for every trace, kept beside them (the package never calls it)."""
from __future__ import annotations


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
