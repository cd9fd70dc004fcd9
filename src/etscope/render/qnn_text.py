"""Terminal view of the QNN analysis (etscope qnn)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from etscope.render.safe import clean
from etscope.render.text import console_or_default, safe_text
from etscope.units import fmt_bytes


def _num(x, fmt="{:,.0f}") -> str:
    return "—" if x is None else fmt.format(x)


MAX_PARTITIONS_SHOWN = 50
MAX_WARNINGS_SHOWN = 100


def render_qnn(report: dict, console: Console | None = None, top: int = 25) -> None:
    c = console_or_default(console)
    parts = report["partitions"]
    if not parts and not report.get("qhas"):
        c.print("No QNN data found.")
    # rich lays out each partition's tables in milliseconds: a file with thousands of partitions
    # is summarised past the first MAX_PARTITIONS_SHOWN (--json has them all).
    if len(parts) > MAX_PARTITIONS_SHOWN:
        c.print(safe_text(f"{len(parts)} QNN partitions: the first {MAX_PARTITIONS_SHOWN} are shown (--json lists all)"))
    for p in parts[:MAX_PARTITIONS_SHOWN]:
        title = f"QNN partition: {p['key']}"
        if p.get("backend"):
            title += f" ({p['backend']})"
        c.print(Text(clean(title), style="bold"))
        c.print(safe_text(f"{p['runs']} execute(s) from {p['source']}" + (
            "; QNN events accumulate across executes and were de-duplicated" if p["accumulating"] else ""),
            limit=500))
        t = Table(title="What contains what (p50 over runs, true units)", title_justify="left")
        for col in ("level", "p50", "adds over the next level", "meaning"):
            t.add_column(col, justify="right" if col == "p50" else "left", overflow="fold")
        for lv in p["levels"]:
            if lv["unit"] == "cycles":
                val = f"{_num(lv.get('p50_cycles'))} cycles"
            else:
                val = f"{_num(lv['p50_us'], '{:,.1f}')} µs"
            adds = "" if lv["adds_us_p50"] is None else f"+{lv['adds_us_p50']:,.1f} µs: {lv['adds_over_next']}"
            t.add_row(safe_text(lv["name"]), val, safe_text(adds, 300), safe_text(lv["what"], 300))
        c.print(t)
        line = clock_sentence(p)
        if line:
            c.print(safe_text(line, 1500), soft_wrap=True)
        if p["clock_warning"]:
            c.print(Text(clean(p["clock_warning"], 800), style="yellow"), soft_wrap=True)
        if p["cold_runs"]:
            c.print(safe_text(f"Cold run(s) {p['cold_runs']}: HVX/HMX power-on and VTCM acquire inflate them; "
                       "exclude them from steady-state numbers.", 500))
        if p["counts"]:
            c.print(safe_text("Counts: " + ", ".join(f"{k} = {_num(v)}" for k, v in p["counts"].items()), 500))
        if p["bytes"]:
            c.print(safe_text("Bytes: " + ", ".join(f"{k} = {fmt_bytes(v)}" for k, v in p["bytes"].items()
                                                    if v is not None), 500))
        # Ordered by the statistic the table shows (p50 over runs); ties keep the graph order.
        ops = sorted(p["ops"], key=lambda o: -(o["cycles_p50"] or 0))
        if ops:
            have_qhas = any(o["hmx"] is not None or o["hvx"] is not None for o in ops)
            have_graph = any(o["node"] for o in ops)
            t = Table(title=f"Per-op HTP cycles, p50 over runs ({len(ops)} ops, highest p50 first; µs are "
                            "estimates; share = the op's cycles summed over all runs ÷ the accelerator's)",
                      title_justify="left")
            cols = ["QNN op"] + (["graph node", "op type"] if have_graph else []) + [
                "cycles p50", "est. µs", "share"]
            if have_qhas:
                cols += ["HMX", "HVX", "DMA", "DRAM r/w", "VTCM r/w"]
            if have_graph:
                cols += ["source"]
            for col in cols:
                t.add_column(col, justify="right" if col in ("cycles p50", "est. µs", "share") else "left",
                             overflow="fold")
            for o in ops[:top]:
                graph_cells = [safe_text(o["node"] or "—"), safe_text(o["op_type"] or "—")] if have_graph else []
                row = [safe_text(o["qnn_name"])] + graph_cells + [
                       _num(o["cycles_p50"]), _num(o.get("est_us_at_clock"), "{:,.2f}"),
                       "—" if o["share"] is None else f"{o['share']:.1%}"]
                if have_qhas:
                    row += [_yn(o["hmx"]), _yn(o["hvx"]), _yn(o["dma"]),
                            _rw(o["dram_read"], o["dram_write"]), _rw(o["vtcm_read"], o["vtcm_write"])]
                if have_graph:
                    row += [safe_text(o["source"] or "")]
                t.add_row(*row)
            if len(ops) > top:
                t.caption = f"… {len(ops) - top} more (--json has all)"
            c.print(t)
        for chk in p["checks"]:
            style = "green" if chk["ok"] else "red"
            mark = "ok" if chk["ok"] else "FAILED"
            c.print(Text(clean(f"check {mark}: {chk['check']} ({chk['runs_checked']} runs"
                               + (f", {chk['runs_failing']} failing" if chk["runs_failing"] else "") + ")", 500),
                         style=style))
        for n in p["notes"]:
            c.print(Text("note: " + clean(n, 500), style="dim"))
        c.print()
    q = report.get("qhas")
    if q:
        _render_qhas(c, q)
    warnings = report.get("warnings", [])
    for w in warnings[:MAX_WARNINGS_SHOWN]:
        c.print(Text("warning: " + clean(w, 500), style="yellow"))
    if len(warnings) > MAX_WARNINGS_SHOWN:
        c.print(Text(f"… {len(warnings) - MAX_WARNINGS_SHOWN} more warnings (--json lists all)", style="yellow"))


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"


def clock_sentence(p: dict) -> str | None:
    """The HTP clock of a partition in words: measured (runtrace) or estimated, with what bounds it
    and what the per-op µs are divided by."""
    est = p.get("clock_mhz_est")
    if est is None:
        return None
    basis = p.get("clock_basis")
    lo, hi = p.get("clock_mhz_bounds") or (None, None)
    rng = p.get("clock_mhz_est_per_run_range")
    per_run = f"; per run the estimate spans {_mhz(rng[0])}–{_mhz(rng[1])} MHz" if rng and rng[0] != rng[1] else ""
    bound = p.get("clock_bound")
    if bound == "between":
        what = (f"≈{est:,.0f} MHz p50 = cycles ÷ '{basis}', an upper bound; cycles ÷ 'Accelerator (execute) "
                f"time' (waits included) is the lower bound, so the clock lies in {_mhz(lo)}–{_mhz(hi)} MHz "
                f"(p50 over runs, ±0.5 µs rounding included){per_run}")
    elif bound == "lower":
        what = (f"≥ {_mhz(lo)} MHz p50: cycles ÷ '{basis}' ({est:,.0f} MHz) is a lower bound only, as that "
                f"time includes waits and the profile has no excluding-wait time (±0.5 µs rounding "
                f"allowed for){per_run}")
    elif bound == "upper":
        what = f"≤ {est:,.0f} MHz p50 = cycles ÷ '{basis}', an upper bound{per_run}"
    else:
        what = (f"{est:,.0f} MHz p50 = cycles ÷ '{basis}', an effective rate, not a core clock (see the "
                f"warning){per_run}")
    used = p.get("clock_mhz_used")
    if p.get("clock_source") == "runtrace":
        per = p.get("clock_mhz_measured_per_execute") or []
        spread = f", executes {_mhz(min(per))}–{_mhz(max(per))} MHz" if len(per) > 1 else ""
        same = (" Its executes are these runs (same VTCM-acquire and power-on counts): per run, cycles are "
                "divided by that run's measured clock (trace, export)." if p.get("clock_measured_per_run") else "")
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


def _render_qhas(c, q: dict) -> None:
    c.print(Text("QHAS (QNN HTP Analysis Summary) — " + clean(q["note"]), style="bold"))
    lines = []
    if q.get("percent_utilization") is not None:
        lines.append(f"NPU utilisation {q['percent_utilization']:.1f}% of {_num(q['timeline_cycles'])} "
                     f"timeline cycles (idle {q['percent_idle']:.1f}%)")
    if q.get("inf_per_s") is not None:
        lines.append(f"{q['inf_per_s']:,.1f} inferences/s (graph execute {q['graph_execute_us']} µs)")
    if q.get("peak_vtcm_alloc") is not None:
        s = f"peak VTCM {fmt_bytes(q['peak_vtcm_alloc'])}"
        if q.get("vtcm_bytes"):
            s += f" of {fmt_bytes(q['vtcm_bytes'])} on {q.get('soc') or 'this SoC'} ({q['peak_vtcm_share']:.1%})"
        lines.append(s)
    if q.get("total_dram") is not None:
        lines.append(f"DRAM {fmt_bytes(q['total_dram_read'] or 0)} read / {fmt_bytes(q['total_dram_write'] or 0)} "
                     f"written; VTCM {fmt_bytes(q['total_vtcm_read'] or 0)} read / "
                     f"{fmt_bytes(q['total_vtcm_write'] or 0)} written")
    for ln in lines:
        c.print(safe_text(ln, 500))
    if q["resources"]:
        t = Table(title="HTP units", title_justify="left")
        for col in ("unit", "tid", "utilisation", "cycles used", "timeline cycles"):
            t.add_column(col, justify="left" if col == "unit" else "right")
        for r in q["resources"]:
            t.add_row(safe_text(r.get("type")), safe_text(r.get("tid")),
                      "—" if r.get("utilization") is None else f"{r['utilization']:.1f}%",
                      _num(r.get("cycles_used")), _num(r.get("timeline_cycles")))
        c.print(t)
