"""Terminal view of the QNN analysis (etscope qnn)."""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

from etscope.analysis.ops.ordering import QNN_SORT_TITLE, order_qnn_ops
from etscope.analysis.qnn.op_tables import QhasSummary
from etscope.analysis.qnn.partition_result import Partition
from etscope.analysis.qnn.result import QnnReport, QnnView
from etscope.render.findings_text import render_findings
from etscope.analysis.glossary import P50
from etscope.render.warmup_text import warmup_count_sentence
from etscope.render.nesting_text import OVER_RUNS, nesting_table
from etscope.render.text import Table, console_or_default, safe_text, shown
from etscope.units import fmt_ms, fmt_bytes


def _num(x, fmt="{:,.0f}") -> str:
    return "—" if x is None else fmt.format(x)


# On a terminal (piped output lists all, --json too).
MAX_PARTITIONS_SHOWN = 50
MAX_WARNINGS_SHOWN = 100
TOP = 25


def render_qnn(report: QnnReport | QnnView, console: Console | None = None, top: int | None = None, sort: str = "cycles") -> None:
    """``report``: ``analysis.qnn.result.QnnView``; its ranked findings (analysis.findings) are printed
    first. ``top``: per-op rows per partition (0: all; None: all when piped, TOP on a terminal);
    ``sort``: the per-op order (analysis.ops.ordering.QNN_SORT_KEYS)."""
    c = console_or_default(console)
    if top is None:
        top = 0 if c.complete else TOP
    parts = report.partitions
    if isinstance(report, QnnView) and report.findings:     # the bare report (analysis) has none
        render_findings(c, report.findings)
    if not parts and not report.qhas and not report.htp_timeline:
        c.print("No QNN data found.")
    n_parts = len(parts) if c.complete else MAX_PARTITIONS_SHOWN
    if len(parts) > n_parts:
        c.print(safe_text(f"{len(parts)} QNN partitions: the first {n_parts} are shown (--json lists all)"))
    for p in parts[:n_parts]:
        _render_partition(c, p, top, sort)
    if report.qhas:
        _render_qhas(c, report.qhas)
    if report.htp_timeline:
        _render_units(c, report.htp_timeline)
    if report.htp_ops:
        from etscope.render.htp_text import render_htp

        render_htp(c, report.htp_ops, top)
    warnings = report.warnings
    n_warn = len(warnings) if c.complete else MAX_WARNINGS_SHOWN
    for w in warnings[:n_warn]:
        c.print(Text("warning: " + shown(w), style="yellow"))
    if len(warnings) > n_warn:
        c.print(Text(f"… {len(warnings) - n_warn} more warnings (--json lists all)", style="yellow"))



def _render_partition(c, p: Partition, top: int, sort: str) -> None:
    title = f"QNN partition: {p.key}"
    if p.backend:
        title += f" ({p.backend})"
    c.print(Text(shown(title), style="bold"))
    c.print(safe_text(f"{p.runs} execute(s) from {p.source}" + (
        "; QNN events accumulate across executes and were de-duplicated" if p.accumulating else "")))
    if warmup_count_sentence(p.warmup_runs_left_out):
        c.print(safe_text(warmup_count_sentence(p.warmup_runs_left_out)))
    if p.headline:
        c.print(Text(shown(p.headline), style="bold cyan"))
    table, after = nesting_table(p.nesting)
    if table is not None:
        c.print(table)
    c.lines([shown(ln) for ln in after])
    t = Table(title=f"The levels in detail ({OVER_RUNS}, true units)")
    for col in ("level", P50.label, "adds over the next level", "meaning"):
        t.add_column(col, justify="right" if col == P50.label else "left",
                     kind="num" if col == P50.label else "text", detail=col == "meaning")
    for lv in p.levels:
        if lv.unit == "cycles":
            val = f"{_num(lv.p50_cycles)} cycles"
        else:
            val = f"{_num(lv.p50_us, '{:,.1f}')} µs"
        adds = "" if lv.adds_us_p50 is None else f"+{lv.adds_us_p50:,.1f} µs: {lv.adds_over_next}"
        t.add_row(safe_text(lv.name), val, safe_text(adds), safe_text(lv.what))
    c.print(t)
    line = clock_sentence(p)
    if line:
        c.print(safe_text(line))
    if p.clock_warning:
        c.print(Text(shown(p.clock_warning), style="yellow"))
    if p.cold_runs:
        c.print(safe_text(f"Cold run(s) {list(p.cold_runs)}: HVX/HMX power-on and VTCM acquire inflate them; "
                   "exclude them from steady-state numbers."))
    if p.counts:
        c.print(safe_text("Counts: " + ", ".join(f"{k} = {_num(v)}" for k, v in p.counts.items())))
    if p.bytes:
        c.print(safe_text("Bytes: " + ", ".join(f"{k} = {fmt_bytes(v)}" for k, v in p.bytes.items() if v is not None)))
    # Ordered by the statistic the table shows (--sort; ties keep the graph order).
    ops = order_qnn_ops(p.ops, sort)
    if ops:
        have_qhas = any(o.hmx is not None or o.hvx is not None for o in ops)
        have_graph = any(o.node for o in ops)
        t = Table(title=f"Per-op HTP cycles, {OVER_RUNS} ({len(ops)} ops, {QNN_SORT_TITLE[sort]}; µs are "
                        "estimates; share = the op's cycles summed over the runs ÷ the accelerator's)")
        stats = [f"cycles {P50.label}"] + (["cycles mean"] if sort == "mean" else []) + ["est. µs", "share"]
        cols = ["QNN op"] + (["graph node", "op type"] if have_graph else []) + stats
        if have_qhas:
            cols += ["HMX", "HVX", "DMA", "DRAM r/w", "VTCM r/w"]
        if have_graph:
            cols += ["source"]
        for col in cols:
            t.add_column(col, justify="right" if col in stats else "left",
                         kind="num" if col in stats or col in ("HMX", "HVX", "DMA") else None,
                         detail=col in ("op type", "source", "DRAM r/w", "VTCM r/w"))
        for o in ops[:top or None]:
            row = [safe_text(o.qnn_name)] + ([safe_text(o.node or "—"), safe_text(o.op_type or "—")] if have_graph else []) + [
                   _num(o.cycles_p50)] + ([_num(o.cycles_mean)] if sort == "mean" else []) + [
                   _num(o.est_us_at_clock, "{:,.2f}"), "—" if o.share is None else f"{o.share:.1%}"]
            if have_qhas:
                row += [_yn(o.hmx), _yn(o.hvx), _yn(o.dma),
                        _rw(o.dram_read, o.dram_write), _rw(o.vtcm_read, o.vtcm_write)]
            if have_graph:
                row += [safe_text(o.source or "")]
            t.add_row(*row)
        if top and len(ops) > top:
            t.caption = f"… {len(ops) - top} more (--top 0 or --json has all)"
        c.print(t)
    for chk in p.checks:
        style = "green" if chk.ok else "red"
        mark = "ok" if chk.ok else "FAILED"
        c.print(Text(shown(f"check {mark}: {chk.check} ({chk.runs_checked} runs"
                           + (f", {chk.runs_failing} failing" if chk.runs_failing else "") + ")"),
                     style=style))
    for n in p.notes:
        c.print(Text("note: " + shown(n), style="dim"))
    c.print()


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"


def clock_sentence(p: Partition) -> str | None:
    """The HTP clock of a partition in words: measured (runtrace) or estimated, with what bounds it
    and what the per-op µs are divided by."""
    est = p.clock_mhz_est
    if est is None:
        return None
    basis = p.clock_basis
    lo, hi = p.clock_mhz_bounds or (None, None)
    rng = p.clock_mhz_est_per_run_range
    per_run = f"; per run the estimate spans {_mhz(rng[0])}–{_mhz(rng[1])} MHz" if rng and rng[0] != rng[1] else ""
    bound = p.clock_bound
    if bound == "between":
        what = (f"≈{est:,.0f} MHz p50 = cycles ÷ '{basis}', an upper bound; cycles ÷ 'Accelerator (execute) "
                f"time' (waits included) is the lower bound, so the clock lies in {_mhz(lo)}–{_mhz(hi)} MHz "
                f"({OVER_RUNS}, ±0.5 µs rounding included){per_run}")
    elif bound == "lower":
        what = (f"≥ {_mhz(lo)} MHz p50: cycles ÷ '{basis}' ({est:,.0f} MHz) is a lower bound only, as that "
                f"time includes waits and the profile has no excluding-wait time (±0.5 µs rounding "
                f"allowed for){per_run}")
    elif bound == "upper":
        what = f"≤ {est:,.0f} MHz p50 = cycles ÷ '{basis}', an upper bound{per_run}"
    else:
        what = (f"{est:,.0f} MHz p50 = cycles ÷ '{basis}', an effective rate, not a core clock (see the "
                f"warning){per_run}")
    used = p.clock_mhz_used
    if p.clock_source == "runtrace":
        per = p.clock_mhz_measured_per_execute or []
        spread = f", executes {_mhz(min(per))}–{_mhz(max(per))} MHz" if len(per) > 1 else ""
        same = (" Its executes are these runs (same VTCM-acquire and power-on counts): per run, cycles are "
                "divided by that run's measured clock (trace, export)." if p.clock_measured_per_run else "")
        head = (f"HTP clock: {used:,.0f} MHz measured (runtrace 'Graph Execute', p50 of {len(per)} "
                f"execute(s){spread}); this profile's estimate: {what}.{same}")
        tail = f" Per-op µs below are cycles p50 ÷ {used:,.0f} MHz (measured)."
    else:
        head = f"HTP clock (estimate): {what}."
        tail = f" Per-op µs below are cycles p50 ÷ {used:,.0f} MHz (the estimate)." if used else ""
    return head + tail


def _yn(v) -> str:
    return "—" if v is None else ("yes" if v else "no")


def _rw(r, w) -> str:
    if r is None and w is None:
        return "—"
    return f"{fmt_bytes(r or 0)} / {fmt_bytes(w or 0)}"


def _render_qhas(c, q: QhasSummary) -> None:
    c.print(Text("QHAS (QNN HTP Analysis Summary) — " + shown(q.note), style="bold"))
    lines = []
    if q.percent_utilization is not None:
        lines.append(f"NPU utilisation {q.percent_utilization:.1f}% of {_num(q.timeline_cycles)} "
                     f"timeline cycles (idle {q.percent_idle:.1f}%)")
    if q.inf_per_s is not None:
        lines.append(f"{q.inf_per_s:,.1f} inferences/s (1 ÷ graph execute {q.graph_execute_us} µs of that one "
                     "inference)")
    for pc in q.per_call or ():
        lines.append(f"this ETDump's calls ({pc.partition}): the NPU is busy {pc.npu_busy_p50:.1%} of a "
                     f"{fmt_ms(pc.delegate_call_ms)} DELEGATE_CALL (p50 over {pc.runs} warm run(s)): at most "
                     f"{pc.calls_per_s:,.0f} calls/s, not the QHAS rate")
    if q.peak_vtcm_alloc is not None:
        s = f"peak VTCM {fmt_bytes(q.peak_vtcm_alloc)}"
        if q.vtcm_bytes:
            s += f" of {fmt_bytes(q.vtcm_bytes)} on {q.soc or 'this SoC'} ({q.peak_vtcm_share:.1%})"
        lines.append(s)
    if q.total_dram is not None:
        lines.append(f"DRAM {fmt_bytes(q.total_dram_read or 0)} read / {fmt_bytes(q.total_dram_write or 0)} "
                     f"written; VTCM {fmt_bytes(q.total_vtcm_read or 0)} read / "
                     f"{fmt_bytes(q.total_vtcm_write or 0)} written")
    for ln in lines:
        c.print(safe_text(ln))
    if q.resources:
        t = Table(title="HTP units")
        for col in ("unit", "tid", "utilisation", "cycles used", "timeline cycles"):
            t.add_column(col, justify="left" if col == "unit" else "right")
        for r in q.resources:
            t.add_row(safe_text(r.type), safe_text(r.tid),
                      "—" if r.utilization is None else f"{r.utilization:.1f}%",
                      _num(r.cycles_used), _num(r.timeline_cycles))
        c.print(t)


def _render_units(c, tl) -> None:
    """HMX / HVX / DMA per thread from the optrace timeline: busy cycles, ops, share of the span."""
    tracks = tl.tracks
    c.print(Text("HTP units (optrace, one inference of the optrace run)", style="bold"))
    if tracks:
        t = Table()
        for col in ("unit", "thread", "ops", "busy cycles", "share of span"):
            t.add_column(col, justify="left" if col in ("unit", "thread") else "right",
                         kind=None if col in ("unit", "thread") else "num")
        for u in tracks:
            t.add_row(safe_text(u.kind), safe_text(u.name), _num(u.slices_total), _num(u.busy_cycles),
                      "—" if u.busy_share is None else f"{u.busy_share:.1%}")
        c.print(t)
    span = f"span {_num(tl.span_cycles)} cycles"
    if tl.span_us is not None:
        span += f" = {tl.span_us:,.1f} µs at {tl.clock_mhz:,.0f} MHz"
    hidden = f"; {tl.hidden_tracks} thread(s) without an executed op not listed" if tl.hidden_tracks else ""
    c.print(safe_text(f"{span} ({tl.clock_note or 'no clock'}){hidden}"))
    c.print()
