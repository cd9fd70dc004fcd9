"""`etscope trend --html`: one self-contained page per dataset, designed like the report.

:func:`trend_page_data` turns an ``analysis.diff.trend.Trend`` into one plain dict: per model x SoC x
phase series its builds (p50, quartiles of the runs, 95% interval of the p50, change vs the
previous build, the test against the baseline), the chart's axes decided here (a unit per series,
µs / ms / s; y ticks at round values; which builds carry an x label, by a stated rule) and the
change points with their explanation in words (``render.trend_words``). :func:`trend_page` puts it
into the page as the report does (``render.html``): one JSON blob with ``<``, ``>``, ``&``
escaped, drawn by an inlined script (common.js + trend.js) that writes data only through
``textContent`` and attributes; Jinja2 autoescapes the rest; a Content-Security-Policy forbids any
network access.
"""
from __future__ import annotations

import datetime as _dt
import math

from etscope.analysis.diff.trend_result import ALL_PHASES, Series, Trend
from etscope.display import without_controls
from etscope.render.trend_words import backend_counts, explanations, facts_sentence, p_words, pct
from etscope.version import __version__

SCHEMA = "etscope.trend-page/1"
# The chart's geometry (px), shared with trend.js through the data: the script draws what is decided here.
WIDTH, PAD_L, PAD_R, PAD_T, PAD_B, HEIGHT = 1180, 78, 24, 40, 118, 300   # HEIGHT: the plot; pad_b per series
MIN_LABEL_PX = 16            # x labels are rotated; closer than this they overlap
MAX_LABEL_CHARS = 22         # longer build labels are cut on the axis (whole in the table and the hover)
MAX_BUILDS = 5000            # builds drawn per series (a longer series: the last ones; the table says so)


def unit_for(max_ms: float) -> tuple[str, float]:
    """(unit name, factor from ms) for a series whose largest drawn value is ``max_ms``."""
    if not math.isfinite(max_ms) or max_ms < 1:
        return "µs", 1000.0
    if max_ms >= 1000:
        return "s", 0.001
    return "ms", 1.0


def nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round y ticks covering [lo, hi]: steps of 1, 2, 2.5 or 5 times a power of ten, at most
    ``most`` ticks (at least two), the first at or below ``lo`` and the last at or above ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi - lo <= abs(hi) * 1e-9:
        pad = abs(hi) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(1, most - 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10, 20):
        step = m * mag
        first = math.floor(lo / step + 1e-9) * step
        count = math.ceil((hi - first) / step - 1e-9) + 1
        if count <= most:
            break
    ticks = [round(first + i * step, 12) for i in range(max(2, count))]
    return ticks


LOG_RATIO = 20.0            # drawn values spanning more than this factor: a log axis (intervals are ratios)


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks of a log axis covering [lo, hi] (> 0): powers of ten, with 2 and 5 times them when
    the range spans at most two decades."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if b - a <= 2 else (1,)
    ticks = [m * 10.0 ** e for e in range(a, b + 1) for m in steps]
    first = max(t for t in ticks if t <= lo * (1 + 1e-9))
    last = min(t for t in ticks if t >= hi * (1 - 1e-9))
    return [float(f"{t:.12g}") for t in ticks if first <= t <= last]


def compact_time(ms: float) -> str:
    """A log axis tick in its own unit: 1 µs, 10 µs, 2 ms, 1 s."""
    for unit, k in (("s", 1e-3), ("ms", 1.0), ("µs", 1e3), ("ns", 1e6)):
        if abs(ms) * k >= 1 or unit == "ns":
            return f"{ms * k:.3g} {unit}"
    return f"{ms:.3g} ms"


def tick_decimals(ticks: list[float]) -> int:
    """Decimals that tell the ticks apart (0.25 steps: 2)."""
    if len(ticks) < 2:
        return 0
    step = ticks[1] - ticks[0]
    for d in range(0, 7):
        if abs(round(step, d) - step) < step * 1e-6:
            return d
    return 6


def labelled_builds(n: int, forced: set[int], width: int = WIDTH - PAD_L - PAD_R) -> tuple[list[int], int]:
    """(indices of the builds that carry an x label, k). Every build when they fit
    (``MIN_LABEL_PX`` each); else every k-th build from the first, the last and each change
    point (``forced``), a regular label dropped when it is closer than k builds to a forced one
    (so no two labels are closer than k builds, except forced ones next to each other)."""
    if n <= 0:
        return [], 1
    fits = max(1, width // MIN_LABEL_PX)
    if n <= fits:
        return list(range(n)), 1
    k = math.ceil(n / fits)
    must = set(i for i in forced if 0 <= i < n) | {n - 1}
    regular = [i for i in range(0, n, k) if i in must or all(abs(i - j) >= k for j in must)]
    return sorted(set(regular) | must), k


def unit_decimals(largest: float) -> int:
    """Decimals for a series' values in its unit: three significant digits of the largest (1.15 ms:
    2, 26.3 ms: 1, 197 µs: 0), the same for every value of the series."""
    if _f(largest) is None or largest <= 0:
        return 2
    return max(0, 2 - math.floor(math.log10(largest)))


def in_unit(ms, k: float, decimals: int) -> str:
    """A value of the series in its unit with the series' decimals: the table and the chart read
    alike ("0.98" and "1.01" ms, never "999.4 µs" next to "1.01 ms")."""
    if _f(ms) is None:
        return "n/a"
    return f"{ms * k:,.{decimals}f}"


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _f(v) -> float | None:
    return float(v) if v is not None and isinstance(v, (int, float)) and math.isfinite(v) else None


def _title(s: Series) -> str:
    return f"{s.model} on {s.soc}" + (f", {s.phase} runs" if s.phase != ALL_PHASES else "")


def series_data(s: Series, index: int, summaries: dict | None = None, dataset_arg: str = "",
                alpha: float = float("nan"), min_effect_pct: float = float("nan")) -> dict:
    """One series of the page (``alpha``, ``min_effect_pct``: the trend's, said in its summary line). ``summaries``: {(model, soc, phase, build): BuildSummary} of the builds
    whose stored summary the page embeds (``fleet.summaries.build_summaries``; None: none at all);
    ``dataset_arg``: the dataset as a shell word, for the command line that shows any build's."""
    builds = s.builds[-MAX_BUILDS:]
    cut = len(s.builds) - len(builds)
    drawn = [v for p in builds for v in (p.p50_ms, p.lo_ms, p.hi_ms, p.q1_ms, p.q3_ms) if _f(v) is not None]
    p50s = [p.p50_ms for p in builds if _f(p.p50_ms) is not None]
    log = bool(drawn) and min(drawn) > 0 and max(drawn) / min(drawn) > LOG_RATIO
    unit, k = unit_for(max(p50s if log else drawn) if drawn else float("nan"))
    if log:         # wide intervals (few sessions): every whisker whole on a log axis, ticks in their own unit
        ticks = [t * k for t in log_ticks(min(drawn), max(drawn))]
        tick_labels = [compact_time(t / k) for t in ticks]
    else:
        ticks = nice_ticks(min(drawn) * k, max(drawn) * k) if drawn else [0.0, 1.0]
        tick_labels = [f"{t:.{tick_decimals(ticks)}f}" for t in ticks]
    dp = unit_decimals(max(p50s if log else drawn) * k if drawn else float("nan"))
    why = explanations(s)
    pos = {p.build: i for i, p in enumerate(builds)}
    found = []
    for b, lines in why.items():
        if b not in pos:
            continue
        ch = next((c for c in s.changes if c.build == b), None)
        kind = ch.verdict if ch else ("placement" if any(pc.build == b for pc in s.placement_changes) else "op")
        head = f"{pct(ch.change_pct)}" if ch else ("placement" if kind == "placement" else "op change")
        found.append((pos[b], b, kind, head, lines))
    found.sort(key=lambda m: m[0])
    marker_at = {i: n for n, (i, *_) in enumerate(found, 1)}      # build index -> its marker's number
    markers = [{"index": i, "build": b, "kind": kind, "headline": head, "explain": lines, "n": n}
               for n, (i, b, kind, head, lines) in enumerate(found, 1)]
    placement_at = {pc.build: backend_counts(pc.counts_after) for pc in s.placement_changes}
    if s.placement_changes and s.placement_changes[0].previous_build in pos:
        placement_at.setdefault(s.placement_changes[0].previous_build, backend_counts(s.placement_changes[0].counts_before))
    facts_at = {fc.build: facts_sentence(fc).split(": ", 1)[1] for fc in s.fact_changes}
    longest = max((len(p.build) if len(p.build) <= MAX_LABEL_CHARS else MAX_LABEL_CHARS for p in builds), default=1)
    labelled, every = labelled_builds(len(builds), set(marker_at),
                                      WIDTH - max(PAD_L, 12 + int(6.2 * 0.72 * longest)) - PAD_R)
    rows = []
    prev = None
    shorts = [p.build if len(p.build) <= MAX_LABEL_CHARS else p.build[:MAX_LABEL_CHARS - 1] + "…" for p in builds]
    for i, p in enumerate(builds):
        vs_prev = None if prev is None or not _f(prev.p50_ms) or not _f(p.p50_ms) else (p.p50_ms / prev.p50_ms - 1) * 100
        rows.append({
            "build": p.build, "short": shorts[i],
            "order_key": p.order_key, "sessions": p.sessions, "runs": p.runs,
            "p50": _f(p.p50_ms * k), "lo": _f(p.lo_ms * k), "hi": _f(p.hi_ms * k),
            "q1": _f(p.q1_ms * k), "q3": _f(p.q3_ms * k),
            "p50_text": f"{in_unit(p.p50_ms, k, dp)} {unit}",
            "iqr_text": "n/a" if _f(p.q1_ms) is None else f"{in_unit(p.q1_ms, k, dp)} to {in_unit(p.q3_ms, k, dp)} {unit}",
            "ci_text": "n/a" if _f(p.lo_ms) is None else (
                f"{compact_time(p.lo_ms)} to {compact_time(p.hi_ms)}" if log else
                f"{in_unit(p.lo_ms, k, dp)} to {in_unit(p.hi_ms, k, dp)} {unit}"),
            "vs_prev_text": pct(vs_prev),
            "test_text": (p.verdict if p.verdict == "not tested" else
                          f"{p.verdict} ({pct(p.change_pct)}, {p_words(p.p_value)})"),
            "verdict": p.verdict, "placement": placement_at.get(p.build, ""), "facts": facts_at.get(p.build, ""),
            "marker": marker_at.get(i),
            **_summary_link(s, index, p.build, summaries, dataset_arg),
        })
        prev = p
    sd = "unknown (too few sessions)" if s.session_sd_pct is None else f"{s.session_sd_pct:.1f}%"
    rule = ("every build is labelled" if every == 1 else
            f"every {_ordinal(every)} build is labelled from the first (one next to a change point or the last build "
            f"gives way to it), and the last one and each change point; all {len(builds)} are in the table")
    notes = list(s.notes)
    if 0 < s.session_sd_df < 5:
        notes.insert(0, f"the between-session spread is measured from {s.session_sd_df} degree(s) of freedom only: "
                        "the intervals are wide; more sessions per build narrow them")
    if cut:
        notes.insert(0, f"the first {cut} builds are left out of the chart and the table (at most {MAX_BUILDS} drawn)")
    spread = sd if s.session_sd_pct is None else f"{sd} ({s.session_sd_df} df)"
    linked = sum(1 for p in builds if (summaries or {}).get((s.model, s.soc, s.phase, p.build)) is not None)
    return {"id": f"series-{index}", "title": _title(s), "model": s.model, "soc": s.soc, "phase": s.phase,
            # rotated x labels reach down and to the left of their build: room for the longest
            "pad_b": 24 + int(6.2 * 0.72 * max(map(len, shorts), default=1)),
            "pad_l": max(PAD_L, 12 + int(6.2 * 0.72 * max(map(len, shorts), default=1))),
            "unit": unit, "ticks": ticks, "tick_labels": tick_labels, "log": log,
            "axis_title": "p50 latency (log scale)" if log else f"p50 latency ({unit})", "labelled": labelled, "label_every": every,
            "label_rule": rule, "builds": rows, "markers": markers, "notes": notes,
            "summary": (f"{len(rows)} builds; between-session spread measured from the series: {spread}; "
                        f"a change needs p < {alpha:g}/{s.tests} (Bonferroni over the series) "
                        f"and at least {min_effect_pct:g}%"),
            "spread": spread, "tests": s.tests,
            "summaries_hint": _summaries_hint(len(builds), linked, summaries is not None, dataset_arg)}


def _command(dataset_arg: str, build: str) -> str:
    import shlex

    return f"etscope trend --dataset {dataset_arg or 'DATASET'} --summary {shlex.quote(build)}"


def _summary_link(s: Series, index: int, build: str, summaries: dict | None, dataset_arg: str) -> dict:
    """A build row's link to its stored summary: the anchor and the card (None: not embedded)."""
    from etscope.render.trend_summary_card import anchor, summary_card

    bs = (summaries or {}).get((s.model, s.soc, s.phase, build))
    if bs is None:
        return {"anchor": None, "summary": None}
    a = anchor(index, build)
    return {"anchor": a, "summary": summary_card(bs, build, a, _command(dataset_arg, build))}


def _summaries_hint(n: int, linked: int, given: bool, dataset_arg: str) -> str:
    """What the page says about the builds' stored summaries: how to open one, how many are not on the page."""
    how = _command(dataset_arg, "BUILD")
    if not given:
        return f"Stored summaries are not embedded in this page; {how} prints one."
    if linked == n:
        return "Click a build (its point on the chart or its name in the table) to see the summary stored when it was collected."
    if linked == 0:
        return f"No build of this series has a stored summary on this page; {how} prints one."
    return (f"Click a build (its point on the chart or its name in the table) to see the summary stored when it was "
            f"collected; the latest {linked} builds' summaries are on this page, the {n - linked} before them are "
            f"left out (the page stays small): {how} prints any build's.")


def _clean(x):
    """Strings without control characters (they would show raw in the page's text), recursively."""
    if isinstance(x, str):
        return without_controls(x)
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def trend_page_data(t: Trend, dataset: str = "", title: str | None = None, summaries: dict | None = None,
                    dataset_arg: str = "") -> dict:
    series = [series_data(s, i, summaries, dataset_arg, t.alpha, t.min_effect_pct) for i, s in enumerate(t.series)]
    return _clean({
        "schema": SCHEMA, "title": title or (f"etscope trend: {dataset}" if dataset else "etscope trend"),
        "dataset": dataset, "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "generator": f"etscope {__version__}", "alpha": t.alpha, "min_effect_pct": t.min_effect_pct,
        "geometry": {"width": WIDTH, "height": HEIGHT, "pad_l": PAD_L, "pad_r": PAD_R, "pad_t": PAD_T, "pad_b": PAD_B},
        "series": series})


PAGE_CSS = """
.trend-series .chart svg .whisker { stroke: #455a64; stroke-width: 1.4; }
.trend-series .chart svg .iqr { fill: #bbdefb; stroke: #64b5f6; }
.trend-series .chart svg .p50 { fill: #1565c0; }
.trend-series .chart svg .line { fill: none; stroke: #1565c0; stroke-width: 1.5; }
.trend-series .chart svg .marker line { stroke-dasharray: 5 3; stroke-width: 1.5; }
.trend-series .chart svg .marker.regression line, .trend-series .chart svg .marker.regression rect { stroke: #c62828; }
.trend-series .chart svg .marker.improvement line, .trend-series .chart svg .marker.improvement rect { stroke: #2e7d32; }
.trend-series .chart svg .marker.placement line, .trend-series .chart svg .marker.placement rect,
.trend-series .chart svg .marker.op line, .trend-series .chart svg .marker.op rect { stroke: #6a1b9a; }
.trend-series .chart svg .marker rect { fill: #fff; }
.trend-series .chart svg .x-label { font-size: 11px; }
.trend-series .chart svg .x-label.changed { font-weight: 600; }
ol.changes li { margin-bottom: 6px; }
ol.changes li ul { margin: 2px 0 0; padding-left: 18px; }
tr.v-regression td.verdict { color: #c62828; font-weight: 600; }
tr.v-improvement td.verdict { color: #2e7d32; font-weight: 600; }
table.builds td:nth-child(2) { white-space: nowrap; }
table.builds td.verdict { min-width: 15em; }
.legend .whisker-sw { display: inline-block; width: 2px; height: 14px; background: #455a64; margin: 0 6px -2px 5px; }
.build-summary { display: none; border: 1px solid #90caf9; border-left: 4px solid #1565c0; border-radius: 6px;
                 padding: 8px 14px; margin: 12px 0; background: #fafcff; }
.build-summary:target { display: block; }
.build-summary h4 { margin: 4px 0 6px; }
.build-summary h5 { margin: 10px 0 4px; font-size: 13px; }
.build-summary .summary-headline { font-weight: 600; }
.trend-series .chart svg a.build-link { cursor: pointer; }
.trend-series .chart svg a.build-link:hover .p50 { fill: #0d47a1; r: 5; }
table.builds a.build-link { font-weight: 600; }
table.builds tr.is-target td { background: #e3f2fd; }
.trend-series .chart svg a.is-target .p50 { fill: #0d47a1; stroke: #ffb300; stroke-width: 2.5; }
.build-summary .table-wrap { display: inline-block; max-width: 100%; vertical-align: top; }
.build-summary table.data { width: auto; }
.legend .iqr-sw { display: inline-block; width: 10px; height: 12px; background: #bbdefb; border: 1px solid #64b5f6; margin-right: 5px; vertical-align: -1px; }
"""


def trend_page(t: Trend, dataset: str = "", title: str | None = None, summaries: dict | None = None,
               dataset_arg: str = "") -> str:
    """The page. ``summaries``: the builds' stored summaries to embed (see :func:`series_data`)."""
    from markupsafe import Markup

    from etscope.render.html import _asset, _template, glossary_words, json_for_script

    data = trend_page_data(t, dataset, title, summaries, dataset_arg)
    js = "\n".join(["(function () {", "  'use strict';",
                    "  var DATA = JSON.parse(document.getElementById('etscope-data').textContent);",
                    # the glossary's names of statistics, as the report page has them
                    "  var WORDS = JSON.parse(document.getElementById('etscope-words').textContent);",
                    _asset("common.js"), _asset("trend.js"), "})();"])
    if "</" in js:      # cannot end the <script> element early
        raise ValueError("inlined trend script contains '</'")
    return _template("trend.html.j2").render(
        data=data, data_json=Markup(json_for_script(data)), words_json=Markup(json_for_script(glossary_words())),
        css=Markup(_asset("report.css") + PAGE_CSS), js=Markup(js))


def write_trend_page(out, t: Trend, dataset: str = "", summaries: dict | None = None, dataset_arg: str = "") -> int:
    from etscope.paths import write_text

    return write_text(out, trend_page(t, dataset, summaries=summaries, dataset_arg=dataset_arg))
