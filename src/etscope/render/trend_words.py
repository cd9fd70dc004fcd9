"""What a trend's change points mean, in words shared by the text and the page of ``etscope trend``:
the step the detector found with its interval, and the program facts stored in the dataset's
rows (ops per backend, ops that moved). Never a Python repr: ``{'XnnpackBackend': 4}`` reads as
"XnnpackBackend 4 ops"."""
from __future__ import annotations

import math

from etscope.analysis.diff.trend_result import Change, FactChange, OpChange, PlacementChange, Series

MAX_MOVED_SHOWN = 5       # ops named in one sentence about a placement change (the count is whole)


def _ops(n: int) -> str:
    return f"{n} op" if n == 1 else f"{n} ops"


def pct(v) -> str:
    return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:+.1f}%"


def p_words(p) -> str:
    if p is None or not math.isfinite(p):
        return "p n/a"
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.2g}"


def backend_counts(counts: dict) -> str:
    """``{'XnnpackBackend': 4, 'cpu': 3}`` as "XnnpackBackend 4 ops, cpu 3 ops" (by count, then name)."""
    if not counts:
        return "no ops"
    items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return ", ".join(f"{k} {_ops(int(v))}" for k, v in items)


def counts_change(before: dict, after: dict) -> str:
    """Ops per backend before → after, one backend at a time: "XnnpackBackend 4 → 2 ops, cpu 3 → 5 ops"."""
    names = sorted(set(before) | set(after), key=lambda k: (-max(before.get(k, 0), after.get(k, 0)), str(k)))
    parts = []
    for k in names:
        a, b = int(before.get(k, 0)), int(after.get(k, 0))
        parts.append(f"{k} {_ops(a)}" if a == b else f"{k} {a} → {_ops(b)}")
    return ", ".join(parts) if parts else "no ops"


def moved_words(pc: PlacementChange, limit: int = MAX_MOVED_SHOWN) -> str:
    """The ops that moved: "conv1 XnnpackBackend → cpu; conv2 (new) on cpu" and "… and N more"."""
    out = []
    for m in pc.moved[:limit]:
        if m.before is None:
            out.append(f"{m.op} (new) on {m.after or 'no backend'}")
        elif m.after is None:
            out.append(f"{m.op} (gone) was on {m.before}")
        else:
            out.append(f"{m.op} {m.before} → {m.after}")
    total = max(pc.moved_total, len(pc.moved))
    if total > len(out):
        out.append(f"… and {total - len(out)} more")
    return "; ".join(out)


def placement_sentence(pc: PlacementChange) -> str:
    total = max(pc.moved_total, len(pc.moved))
    return (f"placement: {_ops(total)} changed backend after {pc.previous_build} "
            f"({counts_change(pc.counts_before, pc.counts_after)}): {moved_words(pc)}")


def step_sentence(ch: Change) -> str:
    """The detector's finding: "regression: p50 +12.3% (95% interval +8.1% to +16.7%), p = 0.001"."""
    interval = ""
    if ch.lo_pct is not None and ch.hi_pct is not None and math.isfinite(ch.lo_pct) and math.isfinite(ch.hi_pct):
        interval = f" (95% interval {pct(ch.lo_pct)} to {pct(ch.hi_pct)})"
    late = "" if ch.significant_at in (None, ch.build) else \
        f"; significant once {ch.significant_at} was measured, placed at the best split"
    return (f"{ch.verdict}: p50 {pct(ch.change_pct)}{interval} vs the builds since the last change, "
            f"{p_words(ch.p_value)}{late}")


def op_sentence(o: OpChange) -> str:
    where = f" on {o.placement}" if o.placement else ""
    return f"op {o.op}{where}: {pct(o.change_pct)} ({o.verdict}, {p_words(o.p_value)})"


def facts_sentence(fc: FactChange) -> str:
    """ "recorded facts changed after b1: executorch 1.4 → 1.5, HTP clock 1000 MHz → (not recorded)"."""
    parts = [f"{c.name} {c.before if c.before is not None else '(not recorded)'} → "
             f"{c.after if c.after is not None else '(not recorded)'}" for c in fc.changed]
    return f"recorded facts changed after {fc.previous_build}: " + ", ".join(parts)


def explanations(s: Series, max_ops: int = 5) -> dict[str, list[str]]:
    """{build: sentences} for every build where the series changed: its latency step, the ops
    whose own time changed there, its placement change, and the stored facts (metadata, HTP
    clock) that differ from the build before (each a sentence, in that order)."""
    out: dict[str, list[str]] = {}
    for ch in s.changes:
        out.setdefault(ch.build, []).append(step_sentence(ch))
    by_build: dict[str, list[OpChange]] = {}
    for o in s.op_changes:
        by_build.setdefault(o.build, []).append(o)
    for b, ops in by_build.items():
        lines = [op_sentence(o) for o in ops[:max_ops]]
        if len(ops) > max_ops:
            lines.append(f"… and {len(ops) - max_ops} more op changes")
        out.setdefault(b, []).extend(lines)
    for pc in s.placement_changes:
        out.setdefault(pc.build, []).append(placement_sentence(pc))
    for fc in s.fact_changes:      # only where something else changed: facts alone are in the table
        if fc.build in out:
            out[fc.build].append(facts_sentence(fc))
    return out
