"""What a diff page (``etscope diff --html``) and the report's "Compared with base" section show:
the typed result of ``analysis.diff.compare.compare`` with each side's per-run ``Method::execute``
latency and its statistics (the diff result has only the p50), the options used and the input paths.

Every figure the page shows is computed here or in the comparison, once, over the runs the verdict
used: a side's steady runs (its sessions' leading warm-up runs left out) pooled over its sessions,
every run (no cut). The p50 is the verdict's own (``latency.base_p50_ms``); p10, p90, mean, min, max
and the histogram come from the same runs. The page's script only draws and formats them.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from etscope import units
from etscope.analysis.diff.result import AnyAxis, Diff, Latency, Sides

HISTOGRAM_MIN_BINS, HISTOGRAM_MAX_BINS = 8, 40


@dataclass(frozen=True)
class RunStats:
    """One side's steady runs (the verdict's: warm-up runs left out, sessions pooled), in ms."""
    steady_runs: int
    warmup_runs: int
    p10: float | None
    p50: float | None          # the verdict's p50 (``Latency.base_p50_ms`` / ``new_p50_ms``)
    p90: float | None
    mean: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class Histogram:
    """Both sides' steady runs binned alike: ``edges`` (ms, bins + 1), runs per bin per side."""
    edges: tuple[float, ...]
    base: tuple[int, ...]
    new: tuple[int, ...]


@dataclass(frozen=True)
class RunSeries:
    """The per-run latency of both sides of one comparison (the whole runs, or one phase's).
    ``base`` / ``new``: ms per run, every run, a side's sessions one after the other; ``sessions``:
    runs per session; ``warmup``: indices (into ``base`` / ``new``) of the warm-up runs left out."""
    base: tuple[float, ...]
    new: tuple[float, ...]
    sessions: Sides
    warmup: Sides
    stats: Sides               # RunStats of each side
    histogram: Histogram | None


ATTRIBUTION_SHOWN = 12      # attribution parts a view lists one by one; the rest as one line


@dataclass(frozen=True)
class Figures:
    """What a view of one comparison shows beside the diff result's own figures, derived here once:
    the p50 change in ms, the between-session allowance as a ratio band, the ops moved to the CPU,
    each breakdown part's change in %, and the attribution parts after the first ATTRIBUTION_SHOWN
    together."""
    p50_change_ms: float | None
    allowance_ratio: tuple[float, float] | None
    moved_to_cpu: int
    breakdown_change_pct: tuple[float | None, ...]     # per ``breakdown`` part, in its order
    smaller_parts: int
    smaller_parts_ms: float


def figures(d) -> Figures:
    """The :class:`Figures` of one comparison (a ``Comparison``, ``PhaseComparison`` or the top level
    of a phase-split diff)."""
    lat = d.latency
    change = (lat.new_p50_ms - lat.base_p50_ms if lat is not None and lat.base_p50_ms is not None
              and lat.new_p50_ms is not None else None)
    band = 1 + lat.session_allowance_pct / 100 if lat is not None and lat.session_allowance_pct is not None else None
    rest = d.attribution.parts[ATTRIBUTION_SHOWN:] if d.attribution is not None else ()
    return Figures(p50_change_ms=change, allowance_ratio=(1 / band, band) if band else None,
                   moved_to_cpu=sum(c.count or 1 for c in d.placement_changes if c.kind == "moved_to_cpu"),
                   breakdown_change_pct=tuple((b.new_p50_ms / b.base_p50_ms - 1) * 100
                                              if b.base_p50_ms and b.new_p50_ms is not None else None
                                              for b in d.breakdown),
                   smaller_parts=len(rest), smaller_parts_ms=sum(p.change_ms for p in rest))


@dataclass(frozen=True)
class DiffView:
    diff: Diff                                  # analysis.diff.compare.compare
    series: RunSeries | None                    # a one-phase diff's runs
    phase_series: tuple[tuple[str, RunSeries], ...] = ()    # a phase-split diff: each phase's runs, by name
    inputs: tuple[tuple[str, str], ...] = ()    # what was read: (label, path)
    options: tuple[tuple[str, object], ...] = ()    # min_effect_pct, fail_on_regression_pct, fail_on_fallback
    labels: Sides = field(default_factory=lambda: Sides("base", "new"))   # file name(s) of each side, for titles
    axes: tuple[tuple[str, AnyAxis], ...] = ()  # the axes the page shows at the top (of the phases: merged)
    figures: Figures | None = None              # of the comparison (a phase-split diff: its leading phase's)
    phase_figures: tuple[tuple[str, Figures], ...] = ()     # of each compared phase, by name

    def series_of(self, phase: str) -> RunSeries | None:
        return dict(self.phase_series).get(phase)


def _label(paths: list[str]) -> str:
    """``a.etdump``, or ``a.etdump + 2 more sessions``: the file names a title shows."""
    names = [os.path.basename(p) or p for p in paths]
    if not names:
        return ""
    more = len(names) - 1
    return names[0] + (f" + {more} more session{'s' if more > 1 else ''}" if more else "")


def _sessions(p) -> list:
    return [] if p is None else list(p) if isinstance(p, (list, tuple)) else [p]


def _finite(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def run_stats(steady: np.ndarray, warmup: int, p50: float | None) -> RunStats:
    """Statistics of one side's steady runs (ms); ``p50``: the verdict's, over the same runs."""
    v = steady[np.isfinite(steady)]
    if not v.size:
        return RunStats(int(steady.size), warmup, None, None, None, None, None, None)
    p10, p90 = np.percentile(v, [10, 90])
    return RunStats(steady_runs=int(steady.size), warmup_runs=warmup, p10=float(p10), p50=_finite(p50),
                    p90=float(p90), mean=float(v.mean()), min=float(v.min()), max=float(v.max()))


def histogram(base: np.ndarray, new: np.ndarray) -> Histogram | None:
    """Shared bins over both sides' steady runs: 2·√n bins (n: the larger side), 8 to 40."""
    a, b = base[np.isfinite(base)], new[np.isfinite(new)]
    if not (a.size or b.size):
        return None
    bins = min(HISTOGRAM_MAX_BINS, max(HISTOGRAM_MIN_BINS, round(math.sqrt(max(a.size, b.size)) * 2)))
    both = np.concatenate([a, b])
    lo, hi = float(both.min()), float(both.max())
    if hi == lo:
        hi = lo + (abs(lo) or 1.0) * 0.01
    width = (hi - lo) / bins

    def counts(v: np.ndarray) -> tuple[int, ...]:
        k = np.minimum(bins - 1, np.floor((v - lo) / width).astype(np.int64))
        return tuple(int(c) for c in np.bincount(k, minlength=bins))

    return Histogram(edges=tuple(lo + i * width for i in range(bins + 1)), base=counts(a), new=counts(b))


def _series(lat: Latency, base, new, runs: Sides | None = None) -> RunSeries:
    """ms per run of each side (its sessions one after the other), runs per session, the indices
    of the leading warm-up runs the comparison left out, and the statistics of the steady runs.
    ``runs``: per side, per session, the runs to show (a phase's); None: every run."""
    dropped = lat.warmup_runs_dropped
    out: dict = {}
    for side, p, p50 in (("base", base, lat.base_p50_ms), ("new", new, lat.new_p50_ms)):
        drop = getattr(dropped, side)
        picks = getattr(runs, side) if runs is not None else None
        vals, warm, lens, steady = [], [], [], []
        k = 0         # sessions that have these runs (the comparison's warm-up counts are per such session)
        for i, q in enumerate(_sessions(p)):
            lat_ns = np.asarray(q.runs["latency_ns"])
            if picks is not None:
                sel = [int(r) for r in (picks[i] if i < len(picks) else ()) if 0 <= int(r) < len(lat_ns)]
                if not sel:
                    continue
                lat_ns = lat_ns[sel]
            w = int(drop[k]) if k < len(drop) and drop[k] else 0
            k += 1
            ms = np.asarray(units.to_ms(lat_ns, units.NS), dtype=np.float64)
            warm += range(len(vals), len(vals) + min(w, len(ms)))
            vals += ms.tolist()
            steady.append(ms[w:])
            lens.append(len(ms))
        steady_all = np.concatenate(steady) if steady else np.zeros(0)
        if steady_all.size != getattr(lat, f"{side}_runs"):
            # Not the comparison's runs (one session of several, another file): its statistics would
            # not be the verdict's. The page once showed two base p50s this way.
            raise ValueError(f"diff_view: {steady_all.size} steady {side} runs given, the comparison used "
                             f"{getattr(lat, f'{side}_runs')}: pass every session it compared")
        out[side] = (tuple(vals), tuple(warm), tuple(lens), steady_all, run_stats(steady_all, len(warm), p50))
    b, n = out["base"], out["new"]
    return RunSeries(base=b[0], new=n[0], sessions=Sides(b[2], n[2]), warmup=Sides(b[1], n[1]),
                     stats=Sides(b[4], n[4]), histogram=histogram(b[3], n[3]))


def diff_view(diff: Diff, base=None, new=None, options: dict | None = None) -> DiffView:
    """``base`` / ``new``: the Profiles compared, or lists of Profiles (every session: their runs
    are concatenated in order, as the comparison pooled them)."""
    from etscope.analysis.diff.phases import merged_axes

    series, phase_series = None, ()
    if base is not None or new is not None:
        if diff.phases:      # each phase's own runs (``runs``: its run indices per session of a side)
            phase_series = tuple((e.name, _series(e.latency, base, new, e.runs)) for e in diff.phases
                                 if e.latency is not None)
        elif diff.latency is not None:
            series = _series(diff.latency, base, new)
    given = {"base": list(diff.inputs.base), "new": list(diff.inputs.new)} if diff.inputs is not None else {}
    inputs = {k: ", ".join(v) for k, v in given.items()}
    labels = {}
    for side, p in (("base", base), ("new", new)):
        sess = _sessions(p)
        for k, v in (sess[0].sources.items() if sess else ()):
            inputs.setdefault(side if k == "etdump" else f"{side} {k}", str(v))
        if len(sess) > 1:
            inputs.setdefault(f"{side} sessions", str(len(sess)))
        files = given.get(side) or [q.sources["etdump"] for q in sess if q.sources.get("etdump")]
        labels[side] = _label(files) or side
    if diff.phases:
        axes = tuple(merged_axes([e for e in diff.phases if e.latency is not None]).items())
    else:
        axes = diff.axes.named() if diff.axes is not None else ()
    return DiffView(diff=diff, series=series, phase_series=phase_series, inputs=tuple(inputs.items()),
                    options=tuple((options or {}).items()), labels=Sides(labels["base"], labels["new"]), axes=axes,
                    figures=figures(diff) if diff.latency is not None else None,
                    phase_figures=tuple((e.name, figures(e)) for e in diff.phases if e.latency is not None))
