"""Terminal view of `etscope diff`."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from etscope.render.safe import clean
from etscope.render.text import console_or_default, safe_text
from etscope.units import fmt_ms


def _fmt(v, unit):
    if v is None:
        return "—"
    return fmt_ms(v / 1e6) if unit == "ns" else f"{v:,.0f} {unit}"


def render_diff(d: dict, console: Console | None = None, top: int = 20) -> None:
    c = console_or_default(console)
    style = {"regression": "bold red", "improvement": "bold green", "no_change": "bold",
             "inconclusive": "bold yellow"}.get(d["verdict"], "bold")
    c.print(Text(f"Verdict: {d['verdict'].replace('_', ' ')}", style=style))
    lat = d["latency"]
    dropped = lat["warmup_runs_dropped"]
    c.print(safe_text(f"Method::execute p50: {fmt_ms(lat['base_p50_ms'])} ({lat['base_runs']} runs) → "
               f"{fmt_ms(lat['new_p50_ms'])} ({lat['new_runs']} runs): {lat['change_pct']:+.1f}% "
               f"(95% CI {lat['ci_pct'][0]:+.1f}% … {lat['ci_pct'][1]:+.1f}%); warm-up runs left out: "
               f"base {sum(dropped['base'])}, new {sum(dropped['new'])}", 500))
    for r in d["reasons"]:
        c.print(safe_text("• " + r, 500))
    if d["placement_changes"]:
        t = Table(title="Placement changes", title_justify="left")
        for col in ("change", "op / backend", "source", "detail"):
            t.add_column(col)
        for p in d["placement_changes"]:
            if p["kind"] == "partitions_changed":
                t.add_row("partitions changed", safe_text(p["backend"]), "",
                          f"{p['base_partitions']} → {p['new_partitions']} ({p['detail']})")
            else:
                detail = f"×{p['count']} {p.get('from') or '?'} → {p.get('to') or '?'}"
                if p.get("evidence"):
                    detail += f" ({p['matched_by']}: {', '.join(p['evidence'])})"
                elif p.get("undecided"):
                    detail += f" ({p['undecided']})"
                t.add_row(p["kind"].replace("_", " "), safe_text(p["op_type"]), safe_text(p["source"] or ""),
                          safe_text(detail, 400))
        c.print(t)
    t = Table(title="Where the time went (p50 per run, steady runs; parts need not add up)", title_justify="left")
    for col in ("part", "base", "new", "change"):
        t.add_column(col, justify="left" if col == "part" else "right")
    for b in d["breakdown"]:
        label = f"delegate: {b['backend']}" if b["kind"] == "delegate" else b["kind"].replace("_", " ")
        t.add_row(safe_text(label), fmt_ms(b["base_p50_ms"]) if b["base_p50_ms"] is not None else "—",
                  fmt_ms(b["new_p50_ms"]) if b["new_p50_ms"] is not None else "—", f"{b['change_ms'] * 1000:+,.1f} µs")
    c.print(t)
    changed = [o for o in d["ops"] if o["status"] != "same"]
    if changed:
        t = Table(title=f"Ops that changed ({len(changed)}; p50 per run over steady runs; rank test p<0.01 and ≥ min "
                        "effect)", title_justify="left")
        for col in ("status", "op", "op type", "placement", "base p50", "new p50", "change"):
            t.add_column(col, justify="right" if col in ("base p50", "new p50", "change") else "left")
        for o in changed[:top]:
            pl = o["placement_new"] or o["placement_base"] or ""
            if o["placement_base"] and o["placement_new"] and o["placement_base"] != o["placement_new"]:
                pl = f"{o['placement_base']} → {o['placement_new']}"
            t.add_row(o["status"], safe_text(o["name"]), safe_text(o["op_type"] or ""), safe_text(pl),
                      _fmt(o["base_p50"], o["unit"]),
                      _fmt(o["new_p50"], o["unit"]),
                      "" if o["change_pct"] is None else f"{o['change_pct']:+.1f}%")
        c.print(t)
        if d["verdict"] == "inconclusive":
            c.print(safe_text("Per-op tests compare runs within the two sessions; a re-run shifts ops as well.", 300))
    else:
        c.print("No op changed significantly.")
    for q in d.get("qnn") or []:
        c.print(safe_text(f"QNN partition {q['partition']}: accelerator cycles {q['accel_cycles']['base']} → "
                   f"{q['accel_cycles']['new']}; clock estimate {q['clock_mhz_est']['base']} → "
                   f"{q['clock_mhz_est']['new']} MHz", 500))
    if d["gate"]["why"]:
        c.print(Text(("GATE FAILED: " if d["gate"]["fail"] else "gate passed: ") + clean("; ".join(d["gate"]["why"]), 800),
                     style="red" if d["gate"]["fail"] else "green"))
