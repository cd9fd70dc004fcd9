"""The nesting of a QNN partition (``analysis.qnn.nesting.Nesting``) as lines of text: one line per
level, indented as it nests, a bar to scale (log when the levels span more than LOG_SCALE_RATIO),
the p50 and what the level adds over the next one inside it."""
from __future__ import annotations

import math

from etscope.analysis.glossary import P50
from etscope.analysis.qnn.nesting import Nesting
from etscope.units import fmt_us

BAR = 24
OVER_RUNS = f"{P50.label} over the steady runs"     # the statistic of every QNN level (analysis.glossary)


def bar_fraction(us: float, bands, scale: str) -> float:
    """Where ``us`` lies on the picture's axis, 0..1 (shared by the text and HTML views' data)."""
    top = max((b.us_p50 for b in bands), default=0.0)
    if top <= 0 or us <= 0:
        return 0.0
    if scale != "log":
        return min(us / top, 1.0)
    low = min(b.us_p50 for b in bands if b.us_p50 > 0) / 2
    return max(0.0, min(1.0, (math.log10(us) - math.log10(low)) / (math.log10(top) - math.log10(low))))


def nesting_table(n: Nesting | None):
    """The nesting as a table for the shared screen (render.screen): level (indented as it nests),
    p50, a bar to scale and what the level adds over the one inside it (moved under its row when
    the terminal is narrow); then the cycles/clock line. None without levels."""
    from etscope.render.screen import Table

    bands = n.bands if n is not None else ()
    if not bands:
        return None, []
    t = Table(title=f"What contains what, {OVER_RUNS} ({'log' if n.scale == 'log' else 'linear'} scale bars)")
    for col, justify, kind, detail in (("level", "left", "num", 0), (P50.label, "right", "num", 0),
                                       ("scale", "left", "num", 1), ("adds", "left", "text", 2)):
        t.add_column(col, justify=justify, kind=kind, detail=detail)
    for i, b in enumerate(bands):
        name = ("  " * (i - 1) + "└ " if i else "") + b.label
        filled = round(BAR * bar_fraction(b.us_p50, bands, n.scale))
        adds = f"= {b.adds}" if b.adds_us_p50 is None else f"+{fmt_us(b.adds_us_p50)} {b.adds}"
        t.add_row(name, fmt_us(b.us_p50), "█" * filled + "·" * (BAR - filled), adds)
    return t, nesting_lines(n)[len(bands) + 1:]


def nesting_lines(n: Nesting | None) -> list[str]:
    bands = n.bands if n is not None else ()
    if not bands:
        return []
    width = max(len(b.label) for b in bands) + 2 * (len(bands) - 1) + 2
    out = [f"What contains what, {OVER_RUNS} ({'log' if n.scale == 'log' else 'linear'} scale bars):"]
    for i, b in enumerate(bands):
        name = ("  " * (i - 1) + "└ " if i else "") + b.label
        filled = round(BAR * bar_fraction(b.us_p50, bands, n.scale))
        bar = "█" * filled + "·" * (BAR - filled)
        adds = "" if b.adds_us_p50 is None else f"  +{fmt_us(b.adds_us_p50)} {b.adds}"
        if b.adds_us_p50 is None:
            adds = f"  = {b.adds}"
        out.append(f"  {name.ljust(width)} {bar} {fmt_us(b.us_p50).rjust(9)}{adds}")
    cyc = n.cycles_p50
    if cyc is not None:
        line = f"  HTP cycles p50: {cyc:,.0f}"
        if n.clock_mhz:
            how = {"runtrace": "measured (runtrace)", "effective": "effective rate (cycles summed over parallel "
                   "threads, not a core clock)"}.get(n.clock_source, "estimated")
            line += f" ÷ {n.clock_mhz:,.0f} MHz {how} = {fmt_us(n.cycles_us)}"
        lo, hi = n.clock_bounds_mhz or (None, None)
        if lo is not None or hi is not None:
            line += f"; this profile bounds the clock to {_mhz(lo)}–{_mhz(hi)} MHz"
        out.append(line)
    return out


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"
