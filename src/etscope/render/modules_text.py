"""`etscope ops --by module`: the module tree with inclusive time (``analysis.ops.modules``), for people."""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

from etscope.analysis.ops.modules import ModuleRow, ModuleTimes
from etscope.render.text import Screen, Table, console_or_default, shown
from etscope.units import fmt_ms

# One letter per source of time, so the table fits 80 columns; the legend under it spells them out.
SHORT_HOW = {"measured": "M", "matched by kind and order": "K", "partition": "P", "estimated": "E"}


def module_label(m: ModuleRow) -> str:
    """``attention (AttentionMHA)``: the module's attribute name and the last part of its type."""
    ty = (m.type or "").rsplit(".", 1)[-1]
    return m.name + (f" ({ty})" if ty and ty != m.name else "")


def how_text(m: ModuleRow) -> str:
    """Where the module's time comes from, largest share first: ``K61 P39`` (percent)."""
    total = m.total_us or 0.0
    parts = sorted(((us, h) for h, us in m.how_us.items() if us > 0), reverse=True)
    if not total or not parts:
        return ""
    return " ".join(f"{SHORT_HOW.get(h, h)}{us / total * 100:.0f}" for us, h in parts)


def short_placement(p: str) -> str:
    """``XnnpackBackend`` -> ``Xnnpack``, ``cpu`` -> ``CPU``."""
    return "CPU" if p == "cpu" else (p[:-len("Backend")] if p.endswith("Backend") and len(p) > 7 else p)


# Under the row when the terminal is narrow, the highest first: module, total and share stay.
_DETAIL = {"how %": 3, "where": 2, "self": 1}


def render_modules(mt: ModuleTimes, console: Console | Screen | None = None, limit: int | None = None) -> None:
    """The module tree as a table on the shared Screen (render.screen): on a terminal it fits the
    width (names shortened in the middle, columns moved under their rows); piped, nothing is cut."""
    c = console_or_default(console)
    execute = mt.method_execute_us or 0.0
    rows = mt.modules
    shown_rows = rows if limit is None else rows[:limit]
    t = Table(title="Time per source module (mean per run, inclusive)")
    for col, right in (("module", False), ("total", True), ("share", True), ("self", True),
                       ("where", False), ("how %", False)):
        t.add_column(col, justify="right" if right else "left", kind="text" if col in ("where", "how %") else None,
                     detail=_DETAIL.get(col, 0))
    for m in shown_rows:
        placement = " ".join(shown(short_placement(p)) for p in m.placement_us)
        t.add_row("  " * m.depth + shown(module_label(m)), fmt_ms(m.total_us / 1e3),
                  f"{m.total_us / execute:.1%}" if execute else "", fmt_ms(m.self_us / 1e3),
                  placement, how_text(m))
    caption = [f"Method::execute {fmt_ms(execute / 1e3)} = modules {fmt_ms(mt.attributed_us / 1e3)} + "
               f"framework overhead {fmt_ms((mt.framework_overhead_us or 0.0) / 1e3)}"]
    if limit is not None and len(rows) > limit:
        caption.append(f"… {len(rows) - limit} more modules (--limit 0 shows all)")
    t.caption = "; ".join(caption)
    c.print(t)
    c.print(Text("how %: " + "; ".join(f"{SHORT_HOW.get(h, h)} {shown(text)}" for h, text in mt.how.items()),
                 style="dim"))
    for e in mt.estimates:
        c.print(Text(shown(e.text), style="dim"))
