"""Terminal view of `etscope trend`: one block per model x SoC (x phase, for an LLM's prefill and decode)."""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

from etscope.analysis.diff.trend_result import ALL_PHASES, Trend
from etscope.render.text import Table, console_or_default, safe_text
from etscope.render.trend_words import counts_change, facts_sentence, step_sentence
from etscope.units import fmt_ms

VERDICT_STYLE = {"regression": "bold red", "improvement": "bold green", "no change": "", "not tested": "dim"}


def _pct(v) -> str:
    return "—" if v is None else f"{v:+.1f}%"


def _p(v) -> str:
    return "—" if v is None else f"{v:.2g}"


def render_trend(t: Trend, console: Console | None = None, top_ops: int = 10, footer: str = "") -> None:
    """The trend as text; ``footer``: a last line (where a build's stored summary can be seen)."""
    c = console_or_default(console)
    if not t.series:
        c.print("No runs in the dataset for this selection.")
        return
    for s in t.series:
        c.print(Text(f"{s.model} on {s.soc}" + (f", {s.phase} runs" if s.phase != ALL_PHASES else ""), style="bold"))
        sd = "unknown (too few sessions)" if s.session_sd_pct is None else f"{s.session_sd_pct:.1f}%"
        c.print(safe_text(f"{len(s.builds)} builds; between-session spread from the series: {sd} "
                   f"({s.session_sd_df} df); a change needs p < {t.alpha:g}/{s.tests} (Bonferroni over the "
                   f"series) and at least {t.min_effect_pct:g}%"))
        if s.changes:
            for ch in s.changes:
                c.print(safe_text(f"• at {ch.build} (after {ch.previous_build}): {step_sentence(ch)}"),
                        style=VERDICT_STYLE.get(ch.verdict))
        else:
            c.print("• no significant change in p50 latency")
        # The shared Table (render.screen): it fits the terminal and cuts nothing when piped; the
        # interval is "lo to hi" so a "…" never means a shortened value.
        table = Table()
        for col in ("build", "order", "sessions", "p50", "95% interval", "vs baseline", "p", "verdict"):
            table.add_column(col, justify="right" if col in ("sessions", "p50", "vs baseline", "p") else "left",
                             kind="text" if col in ("95% interval", "verdict") else None,
                             detail={"order": 3, "95% interval": 2, "p": 1}.get(col, 0))
        for p in s.builds:
            table.add_row(safe_text(p.build), safe_text(p.order_key), str(p.sessions), fmt_ms(p.p50_ms),
                          "—" if p.lo_ms != p.lo_ms else f"{fmt_ms(p.lo_ms)} to {fmt_ms(p.hi_ms)}",
                          _pct(p.change_pct), _p(p.p_value), p.verdict, style=VERDICT_STYLE.get(p.verdict))
        c.print(table)
        if s.op_changes:
            ops = Table(title="Op changes")
            for col in ("build", "op", "placement", "change", "p", "verdict"):
                ops.add_column(col, justify="right" if col in ("change", "p") else "left",
                               kind="text" if col == "verdict" else None,
                               detail={"placement": 2, "p": 1}.get(col, 0))
            for o in s.op_changes[:top_ops]:
                ops.add_row(safe_text(o.build), safe_text(o.op), safe_text(o.placement or "—"), _pct(o.change_pct),
                            _p(o.p_value), o.verdict, style=VERDICT_STYLE.get(o.verdict))
            c.print(ops)
            if len(s.op_changes) > top_ops:
                c.print(f"({len(s.op_changes) - top_ops} more op changes in --json)")
        for pc in s.placement_changes:
            c.print(safe_text(f"Placement changed at {pc.build} (after {pc.previous_build}): ops per backend "
                       f"{counts_change(pc.counts_before, pc.counts_after)}"))
            for m in pc.moved[:top_ops]:
                c.print(safe_text(f"  {m.op}: {m.before or '(absent)'} → {m.after or '(absent)'}"))
            if max(pc.moved_total, len(pc.moved)) > top_ops:
                c.print(f"  … and {max(pc.moved_total, len(pc.moved)) - top_ops} more (all in --json)")
        for fc in s.fact_changes:
            c.print(safe_text(f"At {fc.build}: {facts_sentence(fc)}"))
        for n in s.notes:
            c.print(safe_text("note: " + n), style="dim")
        c.print("")
    if footer:
        c.print(safe_text(footer))
