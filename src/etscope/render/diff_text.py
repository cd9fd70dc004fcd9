"""Terminal view of `etscope diff`."""
from __future__ import annotations

import math

from rich.console import Console
from rich.text import Text

from etscope.analysis.diff.result import CpuOpChanged, Diff, LlmFigures, OpMovedByEvents, PartitionsChanged
from etscope.analysis.diff.view import figures
from etscope.render.text import Table, console_or_default, safe_text, shown
from etscope.units import fmt_ms, ns_to_ms


def _fmt(v, unit):
    if v is None:
        return "—"
    return fmt_ms(ns_to_ms(v)) if unit == "ns" else f"{v:,.0f} {unit}"


TOP = 20    # changed ops on a terminal; piped output lists all


STYLE = {"not_comparable": "bold magenta", "regression": "bold red", "improvement": "bold green", "no_change": "bold", "inconclusive": "bold yellow"}


def render_diff(d: Diff, console: Console | None = None, top: int | None = None) -> None:
    c = console_or_default(console)
    if top is None:
        top = 0 if c.complete else TOP
    c.print(Text(shown(f"Verdict: {d.headline or d.verdict.replace('_', ' ')}"), style=STYLE.get(d.verdict, "bold")))
    if d.phases:
        _render_phases(d, c, top)
    else:
        _render_comparison(d, c, top)
    if d.gate.why:
        c.print(Text(("GATE FAILED: " if d.gate.fail else "gate passed: ") + shown("; ".join(d.gate.why)),
                     style="red" if d.gate.fail else "green"))


def _llm_cell(e) -> str:
    """TTFT of a prefill, tokens/s (or runs/s) of a decode, base → new, as ``etscope llm`` gives them."""
    llm = e.llm or LlmFigures()

    def pair(v, fmt):
        shown_ = [fmt(x) if x is not None else "?" for x in (v.base, v.new)]
        return None if shown_ == ["?", "?"] else f"{shown_[0]} → {shown_[1]}"

    def rate(x):
        return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"

    if llm.ttft_ms is not None:
        return f"TTFT {pair(llm.ttft_ms, fmt_ms)}"
    if llm.tokens_per_s is not None and llm.tokens_per_s.base is not None and llm.tokens_per_s.new is not None:
        return f"{pair(llm.tokens_per_s, rate)} tok/s"
    if llm.runs_per_s is not None and e.name == "decode":     # tokens per run unknown on a side
        return f"{pair(llm.runs_per_s, rate)} runs/s"
    return ""


def _render_phases(d: Diff, c: Console, top: int) -> None:
    """Each phase compared with its namesake: a table side by side, then each phase's comparison."""
    phases = d.phases
    lead = d.verdict_phase
    if lead is None:
        c.print(safe_text(d.verdict_basis or ""))
    elif len(phases) == 1:
        c.print(safe_text(f"One phase compared: {lead} (--phase)."))
    else:
        c.print(safe_text(f"Each phase compared with the same phase of the other side, never pooled; the verdict is "
                          f"the {lead} phase's, the most significant (regression, improvement, inconclusive, no "
                          "change)."))
    if len(phases) > 1 and any(e.verdict != "not_compared" for e in phases):
        t = Table(title="Phases, each compared with the same phase of the other side (never pooled)")
        for col, just, detail in (("phase", "left", 0), ("method", "left", 3), ("runs", "right", 2),
                                  ("p50 base → new", "right", 0), ("change", "right", 0), ("95% CI", "right", 1),
                                  ("verdict", "left", 0), ("LLM (etscope llm)", "right", 1)):
            kind = "text" if col in ("verdict", "LLM (etscope llm)") else None
            t.add_column(col, justify=just, detail=detail, kind=kind)
        for e in phases:
            if e.verdict == "not_compared":
                t.add_row(safe_text(e.name), safe_text(e.method or "—"), "", f"only in {e.on}", "", "",
                          "not compared", "")
                continue
            lat = e.latency
            lo, hi = lat.ci_pct
            t.add_row(safe_text(e.name), safe_text(_methods(e)),
                      f"{lat.base_runs} → {lat.new_runs}",
                      f"{fmt_ms(lat.base_p50_ms)} → {fmt_ms(lat.new_p50_ms)}"
                      if lat.base_p50_ms is not None and lat.new_p50_ms is not None else "—",
                      f"{lat.change_pct:+.1f}%" if math.isfinite(lat.change_pct) else "—",
                      f"{lo:+.1f}% … {hi:+.1f}%" if math.isfinite(lo) and math.isfinite(hi) else "no interval",
                      e.verdict.replace("_", " "), safe_text(_llm_cell(e)))
        c.print(t)
    for e in phases:
        c.print()
        c.print(Text(shown(f"━━ {e.name}" + (f" ({_methods(e)})" if _methods(e) != "—" else "")
                           + f": {e.verdict.replace('_', ' ')}"), style=STYLE.get(e.verdict, "bold")))
        if e.verdict == "not_compared":
            for r in e.reasons:
                c.print(safe_text("• " + r))
            continue
        llm = _llm_cell(e)
        if llm:
            c.print(safe_text(f"{llm} (etscope llm of each side)"))
        _render_comparison(e, c, top)


def _ci(ci) -> str:
    lo, hi = ci
    return f"95% CI {lo:+.1f}% to {hi:+.1f}%" if math.isfinite(lo) and math.isfinite(hi) else "no interval: too few runs"


def _methods(e) -> str:
    b, n = e.methods.base, e.methods.new
    return (b or n or "—") if b == n or not (b and n) else f"{b} → {n}"


def _render_comparison(d, c: Console, top: int) -> None:
    """One comparison (the whole runs, or one phase's): latency, reasons, placement, breakdown, ops."""
    lat = d.latency
    dropped = lat.warmup_runs_dropped
    c.print(safe_text(f"Method::execute p50: {fmt_ms(lat.base_p50_ms)} ({lat.base_runs} runs) → "
               f"{fmt_ms(lat.new_p50_ms)} ({lat.new_runs} runs): {lat.change_pct:+.1f}% "
               f"({_ci(lat.ci_pct)}); warm-up runs left out: "
               f"base {sum(dropped.base)}, new {sum(dropped.new)}"))
    for r in d.reasons:
        c.print(safe_text("• " + r))
    _render_axes(d, c)
    _render_attribution(d, c)
    if d.placement_changes:
        t = Table(title="Placement changes")
        for col in ("change", "op / backend", "source", "detail"):
            t.add_column(col, kind="text" if col in ("change", "detail") else "name", detail=col == "source")
        for p in d.placement_changes:
            if isinstance(p, PartitionsChanged):
                t.add_row("partitions changed", safe_text(p.backend), "",
                          f"{p.base_partitions} → {p.new_partitions} ({p.detail})")
            else:
                detail = f"×{p.count} {p.from_ or '?'} → {p.to or '?'}"
                if isinstance(p, OpMovedByEvents) and p.evidence:
                    detail += f" ({p.matched_by}: {', '.join(p.evidence)})"
                elif isinstance(p, CpuOpChanged) and p.undecided:
                    detail += f" ({p.undecided})"
                t.add_row(p.kind.replace("_", " "), safe_text(p.op_type), safe_text(p.source or ""), safe_text(detail))
        c.print(t)
    t = Table(title="Where the time went (p50 per run, steady runs; parts need not add up)")
    for col in ("part", "base", "new", "change"):
        t.add_column(col, justify="left" if col == "part" else "right")
    for b in d.breakdown:
        label = f"delegate: {b.backend}" if b.kind == "delegate" else b.kind.replace("_", " ")
        t.add_row(safe_text(label), fmt_ms(b.base_p50_ms) if b.base_p50_ms is not None else "—",
                  fmt_ms(b.new_p50_ms) if b.new_p50_ms is not None else "—", signed_ms(b.change_ms))
    c.print(t)
    changed = [o for o in d.ops if o.status not in ("same", "uncertain", "not_compared")]
    uncertain = sum(1 for o in d.ops if o.status == "uncertain")
    if changed:
        t = Table(title=f"Ops that changed ({len(changed)}; p50 per run over steady runs; rank test p<0.01 and ≥ min "
                        "effect)")
        for col in ("status", "op", "op type", "placement", "base p50", "new p50", "change"):
            t.add_column(col, justify="right" if col in ("base p50", "new p50", "change") else "left",
                         detail={"op type": 2, "placement": 1}.get(col, 0))
        for o in changed[:top or None]:
            pl = o.placement_new or o.placement_base or ""
            if o.placement_base and o.placement_new and o.placement_base != o.placement_new:
                pl = f"{o.placement_base} → {o.placement_new}"
            t.add_row(o.status, safe_text(o.name), safe_text(o.op_type or ""), safe_text(pl), _fmt(o.base_p50, o.unit),
                      _fmt(o.new_p50, o.unit),
                      "" if o.change_pct is None else f"{o.change_pct:+.1f}%")
        if top and len(changed) > top:
            t.caption = f"… {len(changed) - top} more (--json lists all)"
        c.print(t)
        if d.verdict == "inconclusive":
            c.print(safe_text("Per-op tests compare runs within the two sessions; a re-run shifts ops as well."))
    elif d.verdict == "not_comparable":
        c.print("Per-op and placement changes: not compared (different programs).")
    else:
        c.print("No op changed significantly.")
    if uncertain:
        c.print(safe_text(f"{uncertain} op(s) moved by at least the minimum effect without a significant rank test: "
                          "uncertain, not counted as changed (--json lists them)."))
    for q in d.qnn or ():
        c.print(safe_text(f"QNN partition {q.partition}: accelerator cycles {_num(q.accel_cycles.base)} → "
                   f"{_num(q.accel_cycles.new)}; clock estimate {_num(q.clock_mhz_est.base)} → "
                   f"{_num(q.clock_mhz_est.new)} MHz"))


AXIS_STYLE = {"changed": "bold red", "regression": "bold red", "improvement": "bold green",
              "inconclusive": "yellow", "unknown": "dim", "no_change": ""}


def _num(v) -> str:
    """A count or a clock as a reader wants it: 116,520,300 cycles, 1,630 MHz; — when unknown."""
    return "—" if not isinstance(v, (int, float)) or v != v else f"{v:,.0f}"


def signed_ms(ms) -> str:
    """+0.29 ms, -58.68 ms, +22.9 µs: a signed duration in the unit that reads best."""
    if ms is None or ms != ms:
        return "—"
    return ("+" if ms > 0 else "-" if ms < 0 else "±") + fmt_ms(abs(ms))


def _render_axes(d, c: Console) -> None:
    """Each axis of change with its own verdict (analysis.diff.axes)."""
    if d.axes is None:
        return
    t = Table(title="Axes of change, each with its own verdict")
    t.add_column("axis", kind="name")
    t.add_column("verdict", kind="text")
    t.add_column("what", kind="text")
    for name, a in d.axes.named():
        t.add_row(name, Text(a.verdict.replace("_", " "), style=AXIS_STYLE.get(a.verdict, "")),
                  safe_text(a.summary or ""))
    c.print(t)


def _render_attribution(d, c: Console) -> None:
    """The latency change split into named parts, largest first, and the unexplained rest."""
    at = d.attribution
    if not at or not at.parts or not at.change_ms:     # nothing to split (--json still has it)
        return
    t = Table(title=f"Where the change came from: {fmt_ms(at.base_ms)} → {fmt_ms(at.new_ms)} "
                    f"({signed_ms(at.change_ms)}), each part's own p50, largest first"
                    + ("" if at.significant else "; the change is not significant: no shares"))
    t.add_column("part", kind="text")
    t.add_column("change", justify="right")
    t.add_column("share", justify="right")
    f = figures(d)
    for p in at.parts[:len(at.parts) - f.smaller_parts]:
        t.add_row(safe_text(p.name), signed_ms(p.change_ms), "" if p.share_pct is None else f"{p.share_pct:.0f}%")
        for q in getattr(p, "of_which", None) or ():
            t.add_row(safe_text("  of which " + q.name), signed_ms(q.change_ms), "")
    if f.smaller_parts:
        t.add_row(f"{f.smaller_parts} smaller parts", signed_ms(f.smaller_parts_ms), "")
    t.add_row("unexplained (p50s do not add)", signed_ms(at.unexplained_ms),
              "" if at.unexplained_pct is None else f"{at.unexplained_pct:.0f}%")
    c.print(t)
