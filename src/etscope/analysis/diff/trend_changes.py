"""The change test of a trend: a sequential t test over builds against the baseline (the builds
since the last change), Bonferroni over the series, a change placed at the best two-level split
(see ``analysis.diff.trend`` for the statistics)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from etscope.analysis.diff.compare import t975
from etscope.analysis.diff.trend_result import NOT_TESTED
from etscope.analysis.stats import t_two_sided_p

ALPHA = 0.05                 # family-wise false-alarm rate per series (latency), likewise for its ops
MIN_EFFECT_PCT = 2.0
MIN_BASELINE_BUILDS = 2      # a baseline of one build knows only its sessions' spread, not builds'
MIN_BASELINE_SESSIONS = 3
CHANGED = ("regression", "improvement")


@dataclass(frozen=True)
class BuildTest:
    """One build's test against the baseline (builds since the last change); a change point also
    carries the interval of its step and the build whose test first crossed the threshold."""
    change_pct: float | None = None      # None: not tested
    p_value: float | None = None
    verdict: str = NOT_TESTED            # not tested / no change / regression / improvement
    significant_at: int | None = None    # index of the build whose test crossed the threshold
    lo_pct: float | None = None          # 95% interval of the step (a change point only)
    hi_pct: float | None = None



def detect(build_of_session: np.ndarray, y: np.ndarray, n_builds: int, alpha_per_test: float,
           min_effect_pct: float) -> tuple[list[BuildTest], list[int]]:
    """Sequential test over builds 0..n_builds-1 of log values ``y`` (one per session, build index
    in ``build_of_session``). Returns per build its :class:`BuildTest` and the segment start of each build.

    A build whose sessions alone are not enough (one session, a small step) is often found one or
    two builds later, against a baseline it now belongs to: once build d is significant, the
    change is placed at the split of the builds since the baseline began that fits two levels
    best (least squares), and the baseline restarts there. ``significant_at`` names d."""
    results = [BuildTest() for _ in range(n_builds)]
    seg_of = [0] * n_builds
    start = 0
    for b in range(n_builds):
        cur = y[build_of_session == b]
        base_mask = (build_of_session >= start) & (build_of_session < b)
        base = y[base_mask]
        n_base_builds = len(np.unique(build_of_session[base_mask]))
        seg_of[b] = start
        if not (cur.size and n_base_builds >= MIN_BASELINE_BUILDS and base.size >= MIN_BASELINE_SESSIONS):
            continue
        diff, p = _t_test(base, cur)
        change = (math.exp(diff) - 1) * 100
        results[b] = BuildTest(change_pct=change, p_value=p, verdict="no change")
        if not (p < alpha_per_test and abs(change) >= min_effect_pct):
            continue
        k = _best_split(build_of_session, y, start, b)
        before = y[(build_of_session >= start) & (build_of_session < k)]
        after = y[(build_of_session >= k) & (build_of_session <= b)]
        diff_k, p_k = _t_test(before, after)
        half = _half_width(before, after)
        for j in range(k, b + 1):      # builds after k: now the new baseline, their old tests void
            seg_of[j] = k
            results[j] = BuildTest()
        results[k] = BuildTest(change_pct=(math.exp(diff_k) - 1) * 100, p_value=p_k,
                          verdict="regression" if diff > 0 else "improvement", significant_at=b,
                          lo_pct=(math.exp(diff_k - half) - 1) * 100, hi_pct=(math.exp(diff_k + half) - 1) * 100)
        start = k
    return results, seg_of


def _t_test(base: np.ndarray, cur: np.ndarray) -> tuple[float, float]:
    """(difference of means, two-sided p) with the variance of ``base`` alone (df = its size - 1)."""
    sd = float(np.std(base, ddof=1))
    diff = float(cur.mean() - base.mean())
    se = sd * math.sqrt(1 / cur.size + 1 / base.size)
    if se > 0:
        return diff, t_two_sided_p(diff / se, base.size - 1)
    return diff, (1.0 if diff == 0 else 0.0)


def _half_width(base: np.ndarray, cur: np.ndarray) -> float:
    """Half the 95% interval of the step ``cur.mean() - base.mean()`` (log scale) with the variance
    of ``base`` alone, as :func:`_t_test` tests it (0 without a spread)."""
    if base.size < 2:
        return float("nan")
    sd = float(np.std(base, ddof=1))
    return t975(base.size - 1) * sd * math.sqrt(1 / cur.size + 1 / base.size)


def _best_split(build_of_session: np.ndarray, y: np.ndarray, start: int, end: int) -> int:
    """The build k in (start, end] where two levels ([start, k) and [k, end]) fit best."""
    best, best_k = math.inf, end
    for k in range(start + 1, end + 1):
        a = y[(build_of_session >= start) & (build_of_session < k)]
        c = y[(build_of_session >= k) & (build_of_session <= end)]
        if a.size == 0 or c.size == 0:
            continue
        sse = float(((a - a.mean()) ** 2).sum() + ((c - c.mean()) ** 2).sum())
        if sse < best - 1e-15:
            best, best_k = sse, k
    return best_k


def possible_tests(n_builds: int) -> int:
    """How many builds of a series can be tested (the m of the Bonferroni correction)."""
    return max(1, n_builds - MIN_BASELINE_BUILDS)

