"""`etscope trend --html`: one offline page, one small chart per model x SoC (inline SVG: p50 per
build with its 95% interval, changes marked), then the changes as tables. Every string from the
dataset is escaped (``html.escape``); no script, no external resource."""
from __future__ import annotations

import html
import math

from etscope.analysis.trend import ALL_PHASES, Series, Trend
from etscope.render.safe import without_controls

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 560, 180, 56, 12, 14, 28
COLOR = {"regression": "#c62828", "improvement": "#2e7d32"}


def e(s) -> str:
    return html.escape(without_controls("" if s is None else str(s)), quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}"


def chart(s: Series) -> str:
    """An SVG line chart of p50 (ms) over the builds, interval whiskers, a line at each change."""
    pts = [(i, p) for i, p in enumerate(s.builds) if math.isfinite(p.p50_ms)]
    if not pts:
        return "<p>no timed runs</p>"
    ys = [v for _, p in pts for v in (p.p50_ms, p.lo_ms, p.hi_ms) if math.isfinite(v)]
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-12:
        lo, hi = lo * 0.95, hi * 1.05 + 1e-9
    n = max(1, len(s.builds) - 1)

    def x(i):
        return PAD_L + (W - PAD_L - PAD_R) * (i / n if len(s.builds) > 1 else 0.5)

    def y(v):
        return PAD_T + (H - PAD_T - PAD_B) * (1 - (v - lo) / (hi - lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
           f'aria-label="p50 latency per build: {e(_title(s))}">',
           f'<rect x="0" y="0" width="{W}" height="{H}" fill="#fff"/>']
    for v in (lo, (lo + hi) / 2, hi):
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{_num(y(v))}" y2="{_num(y(v))}" stroke="#eee"/>'
                   f'<text x="{PAD_L - 4}" y="{_num(y(v) + 4)}" font-size="10" text-anchor="end">{v:.3g} ms</text>')
    index = {p.build: i for i, p in enumerate(s.builds)}
    for ch in s.changes:
        i = index.get(ch["build"])
        if i is not None:
            out.append(f'<line x1="{_num(x(i))}" x2="{_num(x(i))}" y1="{PAD_T}" y2="{H - PAD_B}" '
                       f'stroke="{COLOR.get(ch["verdict"], "#555")}" stroke-dasharray="4 3">'
                       f'<title>{e(ch["verdict"])} at {e(ch["build"])}: {ch["change_pct"]:+.1f}%</title></line>')
    for i, p in pts:
        if math.isfinite(p.lo_ms) and math.isfinite(p.hi_ms):
            out.append(f'<line x1="{_num(x(i))}" x2="{_num(x(i))}" y1="{_num(y(p.lo_ms))}" y2="{_num(y(p.hi_ms))}" '
                       f'stroke="#90a4ae"/>')
    out.append('<polyline fill="none" stroke="#1565c0" stroke-width="1.5" points="'
               + " ".join(f"{_num(x(i))},{_num(y(p.p50_ms))}" for i, p in pts) + '"/>')
    for i, p in pts:
        out.append(f'<circle cx="{_num(x(i))}" cy="{_num(y(p.p50_ms))}" r="2.5" fill="{COLOR.get(p.verdict, "#1565c0")}">'
                   f'<title>{e(p.build)}: p50 {p.p50_ms:.4g} ms ({p.sessions} session(s))</title></circle>')
    first, last = s.builds[0].build, s.builds[-1].build
    out.append(f'<text x="{PAD_L}" y="{H - 8}" font-size="10">{e(first[:24])}</text>'
               f'<text x="{W - PAD_R}" y="{H - 8}" font-size="10" text-anchor="end">{e(last[:24])}</text>')
    out.append("</svg>")
    return "".join(out)


def _pct(v) -> str:
    return "—" if v is None else f"{v:+.1f}%"


def _title(s: Series) -> str:
    """The series: model on SoC, and the phase of an LLM's runs (prefill and decode apart)."""
    return f"{s.model} on {s.soc}" + (f", {s.phase} runs" if s.phase != ALL_PHASES else "")


def series_section(s: Series, alpha: float) -> str:
    sd = "unknown" if s.session_sd_pct is None else f"{s.session_sd_pct:.1f}%"
    parts = [f"<section><h2>{e(_title(s))}</h2>",
             f"<p>{len(s.builds)} builds; between-session spread from the series {e(sd)}; "
             f"a change needs p &lt; {alpha:g}/{s.tests}.</p>", chart(s)]
    if s.changes:
        parts.append("<table><tr><th>change</th><th>build</th><th>after</th><th>p50 change</th><th>p</th>"
                     "<th>significant from</th></tr>")
        for ch in s.changes:
            parts.append(f"<tr><td>{e(ch['verdict'])}</td><td>{e(ch['build'])}</td><td>{e(ch['previous_build'])}</td>"
                         f"<td>{_pct(ch['change_pct'])}</td><td>{ch['p_value']:.2g}</td><td>{e(ch['significant_at'])}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No significant change in p50 latency.</p>")
    if s.op_changes:
        parts.append("<table><tr><th>op changes: build</th><th>op</th><th>placement</th><th>change</th><th>p</th></tr>")
        for o in s.op_changes:
            parts.append(f"<tr><td>{e(o.build)}</td><td>{e(o.op)}</td><td>{e(o.placement)}</td>"
                         f"<td>{_pct(o.change_pct)}</td><td>{o.p_value:.2g}</td></tr>")
        parts.append("</table>")
    for pc in s.placement_changes:
        moved = "".join(f"<li>{e(m['op'])}: {e(m['before'] or '(absent)')} → {e(m['after'] or '(absent)')}</li>"
                        for m in pc.moved)
        if pc.moved_total > len(pc.moved):
            moved += f"<li>… and {pc.moved_total - len(pc.moved)} more</li>"
        parts.append(f"<p>Placement changed at {e(pc.build)} (after {e(pc.previous_build)}):</p><ul>{moved}</ul>")
    for n in s.notes:
        parts.append(f"<p class=note>{e(n)}</p>")
    parts.append("</section>")
    return "".join(parts)


def trend_page(t: Trend, title: str = "etscope trend") -> str:
    body = "".join(series_section(s, t.alpha) for s in t.series) or "<p>No runs for this selection.</p>"
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{e(title)}</title><style>body{{font:14px system-ui,sans-serif;margin:1.5em;max-width:60em}}"
            "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}"
            ".note{color:#666}</style></head><body>"
            f"<h1>{e(title)}</h1>{body}</body></html>\n")


def write_trend_page(out, t: Trend) -> int:
    from etscope.paths import write_text

    return write_text(out, trend_page(t))
