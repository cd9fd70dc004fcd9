"""Terminal output (rich). For people; the layout may change (use --json for machines)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from etscope.render.guide import reading_guide
from etscope.render.safe import clean
from etscope.units import fmt_ms


def safe_text(s, limit: int = 200) -> Text:
    """A rich Text of an input-derived value: control characters removed, cut at ``limit`` (None: empty)."""
    return Text(clean(s, limit)) if s is not None else Text("")


def console_or_default(console: Console | None) -> Console:
    """The caller's console, else stdout's (160 columns wide when not a terminal)."""
    if console is not None:
        return console
    c = Console(highlight=False)
    if not c.is_terminal:
        c = Console(highlight=False, width=160)
    return c


def breakdown_table(breakdown: list[dict], title: str) -> Table:
    """Method::execute split into delegate calls per backend, CPU kernels and overhead."""
    t = Table(title=title, title_justify="left")
    for col in ("part", "calls/run", "mean", "p50", "share"):
        t.add_column(col, justify="right" if col != "part" else "left")
    for b in breakdown:
        label = {"delegate": f"delegate: {b.get('backend')}", "cpu_ops": "CPU kernels (fallback)",
                 "framework_overhead": "framework overhead"}[b["kind"]]
        calls = b.get("calls_per_run")
        t.add_row(safe_text(label), "" if calls is None else f"{calls:g}", fmt_ms(b["mean_ms"]),
                  fmt_ms(b["p50_ms"]), f"{b['share']:.1%}")
    return t


def render_summary(s: dict, console: Console | None = None, title: str | None = None) -> None:
    c = console_or_default(console)
    if title:
        c.print(Text(clean(title, 1000), style="bold"))
    inputs = ", ".join(f"{k}: {clean(v)}" for k, v in s["inputs"].items())
    if inputs:
        c.print(Text(inputs, style="dim"))
    for line in reading_guide(s):
        c.print(safe_text(line, limit=4000), soft_wrap=True)
        c.print()
    if s["runs"].get("latency_ms"):
        c.print(breakdown_table(s["breakdown"], "Where Method::execute's time goes (mean per run)"))
    fb = s["fallback_ops"]
    if fb:
        t = Table(title=f"CPU-fallback kernels ({len(fb)} instructions, slowest first)", title_justify="left")
        for col in ("instr", "op type", "kernel", "mean", "share", "source"):
            t.add_column(col, justify="right" if col in ("instr", "mean", "share") else "left")
        for f in sorted(fb, key=lambda f: -f["share"])[:15]:
            t.add_row(str(f["instruction_id"]), safe_text(f["op_type"]), safe_text(f["kernel"]), fmt_ms(f["mean_ms"]),
                      f"{f['share']:.1%}", safe_text(f["source"] or "—"))
        if len(fb) > 15:
            t.caption = f"… {len(fb) - 15} more: `etscope ops` lists all"
        c.print(t)
    if s.get("load"):
        c.print(safe_text("Before the runs: " + ", ".join(f"{clean(e['name'])} {fmt_ms(e['ms'])}" for e in s["load"])))
    for w in s.get("warnings", []):
        c.print(Text("warning: " + clean(w), style="yellow"))


OPS_COLUMNS = ("instr", "name", "op type", "placement", "calls/run", "p50", "mean", "total", "share", "source")
_RIGHT = {"instr", "calls/run", "p50", "mean", "total", "share"}
# rich lays out a table at ~1-2 ms a row: past this many rows the table is written as plain
# fixed-width columns (same cells), so `ops --limit 0` stays linear and fast on huge tables.
RICH_TABLE_MAX_ROWS = 500


def _ops_cells(r: dict) -> list[str]:
    if r["unit"] == "ns":
        p50, mean, total = fmt_ms(r["p50_ms"]), fmt_ms(r["mean_ms"]), fmt_ms(r["total_ms"])
    else:
        unit = r["unit"]
        p50, mean, total = f"{r['p50']:,.0f} {unit}", f"{r['mean']:,.0f} {unit}", f"{r['total']:,.0f} {unit}"
    return [str(r["instruction_id"]), clean("  " * r["level"] + (r["name"] or "")), clean(r["op_type"] or ""),
            clean(r["placement"] or ""), f"{r['calls_per_run']:g}" if r["calls_per_run"] is not None else "",
            p50, mean, total, f"{r['share']:.1%}" if r["share"] is not None else "", clean(r["source"] or "")]


def render_ops(rows: list[dict], console: Console | None = None, limit: int | None = None) -> None:
    c = console_or_default(console)
    title = "Per-op table (every event kept; time in true units)"
    shown = rows if limit is None else rows[:limit]
    caption = f"… {len(rows) - limit} more rows (--limit 0 shows all)" if limit is not None and len(rows) > limit \
        else None
    if len(shown) > RICH_TABLE_MAX_ROWS:
        _plain_table(c, title, OPS_COLUMNS, [_ops_cells(r) for r in shown], caption)
        return
    t = Table(title=title, title_justify="left")
    for col in OPS_COLUMNS:
        t.add_column(col, justify="right" if col in _RIGHT else "left")
    for r in shown:
        t.add_row(*(Text(x) for x in _ops_cells(r)))
    if caption:
        t.caption = caption
    c.print(t)


def _plain_table(c: Console, title: str, columns, cells: list[list[str]], caption: str | None) -> None:
    """Fixed-width columns written straight to the console's file (cells are already cleaned)."""
    widths = [max([len(col)] + [len(row[i]) for row in cells]) for i, col in enumerate(columns)]

    def line(values):
        return "  ".join(v.rjust(w) if col in _RIGHT else v.ljust(w)
                         for v, w, col in zip(values, widths, columns)).rstrip()

    out = [title, line(columns), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells]
    if caption:
        out.append(caption)
    c.file.write("\n".join(out) + "\n")
    c.file.flush()
