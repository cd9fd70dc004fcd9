"""The statistics of `etscope diff`: the interval of a whole-run latency change (bootstrap over
runs with one session per side; a pooled-variance t interval over the sessions' p50s with several)
and the rank test of one op's per-run values (Mann-Whitney U)."""
from __future__ import annotations

import math

import numpy as np

from etscope.arrays import median

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_CHUNK_VALUES = 1 << 21   # resampled values held at once (16 MB of float64), whatever the run count


def bootstrap_medians(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``values``, drawn a block of resamples at a
    time so memory stays at BOOTSTRAP_CHUNK_VALUES values (a resamples x runs matrix of 40k runs
    would be 1.3 GB)."""
    n = values.size
    out = np.empty(resamples)
    rows = max(1, BOOTSTRAP_CHUNK_VALUES // max(n, 1))
    for start in range(0, resamples, rows):
        k = min(rows, resamples - start)
        out[start:start + k] = median(values[rng.integers(0, n, (k, n))], axis=1)
    return out


def bootstrap_median_ratio(base: np.ndarray, new: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                           seed: int = 0) -> tuple[float, float, float]:
    """(change %, lo %, hi %) of median(new)/median(base) - 1, bootstrap percentile 95% interval."""
    base = base[~np.isnan(base)]
    new = new[~np.isnan(new)]
    if base.size == 0 or new.size == 0:
        return float("nan"), float("nan"), float("nan")
    point = median(new) / median(base) - 1 if median(base) else float("nan")
    if base.size < 2 or new.size < 2:       # one run has no spread to resample: no interval
        return float(point * 100), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    mb = bootstrap_medians(base, resamples, rng)
    mn = bootstrap_medians(new, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = mn / mb - 1
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return point * 100, float("nan"), float("nan")
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(point * 100), float(lo * 100), float(hi * 100)


# Student t 97.5% quantiles for 1..30 degrees of freedom; beyond, the Cornish-Fisher expansion.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def session_interval(base: list[np.ndarray], new: list[np.ndarray], prior_sd: float = 0.0,
                     prior_df: float = 0.0) -> tuple[float, float, float]:
    """(change %, lo %, hi %) for repeated sessions: the change is the ratio of the pooled p50s; the
    95% interval is a pooled-variance t interval on the sessions' log p50s, so its width is the
    between-session spread measured from the sessions given (one session on a side borrows the
    other side's spread). Few sessions give a wide interval, as they should (t with
    n_base + n_new - 2 degrees of freedom). ``prior_sd``/``prior_df``: a prior session SD counted
    as that many extra degrees of freedom (scaled inverse chi-square)."""
    base = [s[np.isfinite(s)] for s in base]
    new = [s[np.isfinite(s)] for s in new]
    base, new = [s for s in base if s.size], [s for s in new if s.size]
    if not base or not new or len(base) + len(new) + prior_df < 3:
        return float("nan"), float("nan"), float("nan")
    pb, pn = median(np.concatenate(base)), median(np.concatenate(new))
    if not (pb > 0 and pn > 0):
        return float("nan"), float("nan"), float("nan")
    lb = np.log([median(s) for s in base])
    ln = np.log([median(s) for s in new])
    df = len(lb) + len(ln) - 2
    ss = float(((lb - lb.mean()) ** 2).sum() + ((ln - ln.mean()) ** 2).sum())
    ss, df = ss + prior_df * prior_sd ** 2, df + prior_df
    se = math.sqrt(ss / df * (1 / len(lb) + 1 / len(ln)))
    centre = math.log(pn / pb)
    half = t975(int(round(df))) * se
    return (float((pn / pb - 1) * 100), float((math.exp(centre - half) - 1) * 100),
            float((math.exp(centre + half) - 1) * 100))



def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    a = a[~np.isnan(a)]
    b = b[~np.isnan(b)]
    n1, n2 = a.size, b.size
    if n1 < 2 or n2 < 2:
        return float("nan")
    allv = np.concatenate([a, b])
    order = np.argsort(allv, kind="mergesort")
    ranks = np.empty(allv.size)
    sorted_v = allv[order]
    # Average ranks for ties.
    _, first, counts = np.unique(sorted_v, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    tie = (counts ** 3 - counts).sum()
    sigma2 = n1 * n2 / 12.0 * ((n + 1) - tie / (n * (n - 1)))
    if sigma2 <= 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(sigma2)
    return float(math.erfc(max(z, 0.0) / math.sqrt(2)))

