"""Terminal output (rich). For people; the layout may change (use --json for machines)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from etscope.analysis.glossary import MEAN_PER_RUN, P50, SHARE_OF_MEAN
from etscope.render.guide import reading_guide
from etscope.render.nesting_text import nesting_table
from etscope.display import without_controls
from etscope.render.screen import Screen, Table, screen
from etscope.render.warmup_text import warmup_sentence
from etscope.units import fmt_ms


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

__all__ = ["Screen", "Table", "breakdown_table", "console_or_default", "render_ops", "render_summary", "safe_text",
           "screen", "shown"]


def shown(s) -> str:
    """A value from the inputs as text: controls replaced, nothing cut (the Screen fits it)."""
    return "" if s is None else without_controls(str(s))


def safe_text(s, limit: int | None = None) -> Text:
    """``shown(s)`` as rich Text. ``limit`` is ignored: text views no longer cut strings, the Screen
    wraps them or, on a terminal, shortens names in the middle."""
    return Text(shown(s))


def console_or_default(console: Console | Screen | None) -> Screen:
    """The Screen every text view prints to (render.screen: width policy, tables)."""
    return screen(console)


def breakdown_table(breakdown, title: str) -> Table:
    """Method::execute split into delegate calls per backend, CPU kernels and overhead (parts with
    ``kind``, ``backend``, ``calls_per_run``, ``mean_ms``, ``p50_ms``, ``share``)."""
    t = Table(title=title)
    # The share is of the mean (over the same steady runs as the p50), so it can disagree with the p50s' ratio.
    for col in ("part", "calls/run", "mean", P50.label, SHARE_OF_MEAN.label):
        t.add_column(col, justify="right" if col != "part" else "left")
    for b in breakdown:
        label = {"delegate": f"delegate: {b.backend}", "cpu_ops": "CPU kernels (fallback)",
                 "framework_overhead": "framework overhead"}[b.kind]
        calls = b.calls_per_run
        t.add_row(safe_text(label), "" if calls is None else f"{calls:g}", fmt_ms(b.mean_ms),
                  fmt_ms(b.p50_ms), f"{b.share:.1%}")
    return t


FALLBACK_SHOWN = 15     # on a terminal; piped output lists every fallback kernel


def render_summary(s, console: Console | None = None, title: str | None = None, findings=()) -> None:
    """``s``: a summary (``analysis.views.summary_result``); ``findings``: the ranked findings of the
    same inputs (``Results.findings``), after the guide."""
    c = console_or_default(console)
    if title:
        c.print(Text(shown(title), style="bold"))
    inputs = ", ".join(f"{k}: {shown(v)}" for k, v in s.inputs.items())
    if inputs:
        c.print(Text(inputs, style="dim"))
    for line in reading_guide(s):
        c.print(safe_text(line))
        c.print()
    if findings:       # the ranked findings of these inputs (qnn and report list the same)
        from etscope.render.findings_text import render_findings

        render_findings(c, findings)
    for q in s.qnn or ():
        if q.nesting:
            c.print(Text(shown(f"QNN partition at instruction {q.instruction_id}: {q.headline or ''}"),
                         style="bold"))
            table, after = nesting_table(q.nesting)
            if table is not None:
                c.print(table)
            c.lines([shown(ln) for ln in after])
            c.print()
    if s.runs.latency_ms:
        c.print(breakdown_table(s.breakdown, f"Where Method::execute's time goes ({MEAN_PER_RUN.label})"))
    fb = s.fallback_ops
    if fb:
        t = Table(title=f"CPU-fallback kernels ({len(fb)} instructions, slowest first)")
        for col in ("instr", "op type", "kernel", "mean", "share", "source"):
            t.add_column(col, justify="right" if col in ("instr", "mean", "share") else "left",
                         detail=col == "source")
        top = len(fb) if c.complete else FALLBACK_SHOWN
        for f in sorted(fb, key=lambda f: -f.share)[:top]:
            t.add_row(str(f.instruction_id), safe_text(f.op_type), safe_text(f.kernel), fmt_ms(f.mean_ms),
                      f"{f.share:.1%}", safe_text(f.source or "—"))
        if len(fb) > top:
            t.caption = f"… {len(fb) - top} more: `etscope ops` lists all"
        c.print(t)
    if s.load:
        c.print(safe_text("Before the runs: " + ", ".join(f"{shown(e.name)} {fmt_ms(e.ms)}" for e in s.load)))
    for w in s.warnings:
        c.print(Text("warning: " + shown(w), style="yellow"))


OPS_COLUMNS = ("instr", "name", "op type", "placement", "calls/run", "p50", "mean", "total", "share", "source")
_RIGHT = {"instr", "calls/run", "p50", "mean", "total", "share"}
# Under the row when the terminal is narrow, the highest first (never the column sorted by).
_DETAIL = {"source": 6, "op type": 5, "placement": 4, "calls/run": 3, "mean": 2, "p50": 1}
OPS_SHOWN = 60                        # rows on a terminal without --limit; piped output lists all


def _ops_cells(r: dict, nested_placement: bool = True) -> list[str]:
    """The row's cells; ``nested_placement`` False leaves a nested row's placement (its
    instruction's, on the row above) blank."""
    if r.unit == "ns":
        p50, mean, total = fmt_ms(r.p50_ms), fmt_ms(r.mean_ms), fmt_ms(r.total_ms)
    else:
        unit = r.unit
        p50, mean = f"{r.p50:,.0f} {unit}", f"{r.mean:,.0f} {unit}"
        total = f"{r.total:,.0f} {unit}" if r.total is not None else "— (per run)"
    return [str(r.instruction_id), "  " * r.level + shown(r.name), shown(r.op_type),
            shown(r.placement) if nested_placement or not r.level else "", f"{r.calls_per_run:g}" if r.calls_per_run is not None else "",
            p50, mean, total, f"{r.share:.1%}" if r.share is not None else "", shown(r.source)]


def render_ops(rows: list[OpRow], console: Console | Screen | None = None, limit: int | None = None,
               order: str | None = None, sort: str | None = None) -> None:
    """The per-op table. ``limit``: rows shown (0: all; None: all when piped, OPS_SHOWN on a
    terminal); ``order``: how the rows were sorted, said in the title; ``sort``: the column sorted
    by (it stays in the row when the terminal is narrow)."""
    c = console_or_default(console)
    if limit is None:
        limit = None if c.complete else OPS_SHOWN
    limit = limit or None
    title = "Per-op table (every event kept; time in true units" + (f"; {order}" if order else "") + ")"
    shown_rows = rows if limit is None else rows[:limit]
    below = _fallbacks_below(rows, limit)
    t = Table(title=title)
    for col in OPS_COLUMNS:
        t.add_column(col, justify="right" if col in _RIGHT else "left",
                     detail=0 if col == sort else _DETAIL.get(col, 0))
    for r in shown_rows + below[:FALLBACKS_BELOW_SHOWN]:
        t.add_row(*_ops_cells(r, nested_placement=c.complete))
    if limit is not None and len(rows) > limit:
        calls = sum(1 for r in below if r.role == "operator_call")
        listed = sum(1 for r in below[:FALLBACKS_BELOW_SHOWN] if r.role == "operator_call")
        more = len(rows) - limit - min(len(below), FALLBACKS_BELOW_SHOWN)
        t.caption = (f"… {more} more rows (--limit 0 shows all)" if more else "") + (
            ("; " if more else "") + f"the {listed} CPU fallback op(s) below the cut are listed last"
            + (f", {calls - listed} more not shown" if calls > listed else "") if calls else "")
    c.print(t)


FALLBACKS_BELOW_SHOWN = 20    # CPU fallback rows (with their kernels) listed past the row limit


def _fallbacks_below(rows: list[OpRow], limit: int | None) -> list[OpRow]:
    """The CPU fallback rows (OPERATOR_CALL, with the kernel rows nested under them) that the row
    limit would hide: a user's second question (what fell back to the CPU) is never cut off."""
    if limit is None or len(rows) <= limit:
        return []
    out, keep = [], False
    for r in rows[limit:]:
        if r.level == 0:
            keep = r.role == "operator_call"
        if keep:
            out.append(r)
    return out


def render_warmup(w, console=None) -> None:
    """Print :func:`warmup_sentence` of ``w`` (nothing when no run was left out)."""
    line = warmup_sentence(w)
    if line:
        console_or_default(console).print(safe_text(line[0].upper() + line[1:] + "."))
