"""Statistics over runs, vectorised over many groups at once.

Percentiles use numpy's default (linear interpolation between closest ranks), the same as
ExecuTorch's Inspector, so the two can be compared exactly.
"""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.memo import per_profile
from etscope.arrays import median, partition_columns


def grouped(groups: np.ndarray, values: np.ndarray, n_groups: int | None = None,
            transform=None, overwrite: bool = False) -> dict[str, np.ndarray]:
    """Statistics of ``values`` per group id (0..n_groups-1). Empty groups give NaN (count 0).

    ``transform`` (monotone non-decreasing, e.g. ``units.ns_to_ms``): statistics of
    ``transform(values)``, sorted by the raw values, which as integers (ns) sort several times
    faster than the transformed floats; the result is the same to the bit.

    ``overwrite``: ``groups`` (int64) and ``values`` (float64) are the caller's temporaries and may
    be overwritten (two arrays of their size fewer at the peak)."""
    groups = np.asarray(groups, dtype=np.int64)
    raw = np.asarray(values, dtype=np.float64)
    if n_groups is None:
        n_groups = int(groups.max()) + 1 if groups.size else 0
    count = np.bincount(groups, minlength=n_groups).astype(np.int64)
    total = np.bincount(groups, weights=raw if transform is None else np.asarray(transform(raw), dtype=np.float64),
                        minlength=n_groups)
    out = {"count": count, "total": total}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["mean"] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    sorted_vals = _values_sorted_by_group(groups, raw, overwrite)
    if transform is units.ns_to_ms and sorted_vals is raw:
        units.ns_to_ms_in_place(sorted_vals)         # raw is ours to overwrite
    elif transform is not None:
        sorted_vals = np.asarray(transform(sorted_vals), dtype=np.float64)
    first = np.cumsum(count) - count
    nonempty = count > 0
    for q in QUANTILES:
        res = np.full(n_groups, np.nan)
        pos = (count[nonempty] - 1) * (q / 100.0)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, count[nonempty] - 1)
        frac = pos - lo
        base = first[nonempty]
        a, b = sorted_vals[base + lo], sorted_vals[base + hi]
        res[nonempty] = a + (b - a) * frac
        out[f"p{q}"] = res
    mins = np.full(n_groups, np.nan)
    maxs = np.full(n_groups, np.nan)
    mins[nonempty] = sorted_vals[first[nonempty]]
    maxs[nonempty] = sorted_vals[first[nonempty] + count[nonempty] - 1]
    out["min"], out["max"] = mins, maxs
    return out


QUANTILES = (10, 50, 90, 99)


def column_stats(values: np.ndarray, transform=None, overwrite: bool = False, quantiles=QUANTILES,
                 extremes: bool = True) -> dict[str, np.ndarray]:
    """:func:`grouped` of a complete (samples x groups) matrix, one group per column, samples in
    the order grouped would add them: the same result to the bit, for the percentiles
    ``quantiles`` (and min and max when ``extremes``): each order statistic left out is a
    position fewer for the partition.

    No sort: the percentiles need only a few order statistics per column, which a partition finds,
    on int32 copies of the values when they are integers in its range (ns and cycles of single
    events are): half the bytes, twice as fast. ``overwrite``: ``values`` may be reordered."""
    n, k = values.shape
    total = sum_in_order(values if transform is None else np.asarray(transform(values), dtype=np.float64))
    out = {"count": np.full(k, n, dtype=np.int64), "total": total}
    if n == 0:                                   # as grouped gives empty groups
        for key in ["mean"] + [f"p{q}" for q in quantiles] + (["min", "max"] if extremes else []):
            out[key] = np.full(k, np.nan)
        return out
    out["mean"] = total / n
    spots = [(q, (n - 1) * (q / 100.0)) for q in quantiles]
    ranks = sorted(({0, n - 1} if extremes else set()) | {int(np.floor(pos)) for _, pos in spots} |
                   {min(int(np.floor(pos)) + 1, n - 1) for _, pos in spots})
    ranked = order_statistics(values, ranks, overwrite)
    if transform is not None:
        ranked = np.asarray(transform(ranked), dtype=np.float64)
    row = {r: ranked[i] for i, r in enumerate(ranks)}
    for q, pos in spots:
        lo = int(np.floor(pos))
        a, b = row[lo], row[min(lo + 1, n - 1)]
        out[f"p{q}"] = a + (b - a) * (pos - lo)
    if extremes:
        out["min"], out["max"] = row[0].copy(), row[n - 1].copy()
    return out


def sum_in_order(values: np.ndarray) -> np.ndarray:
    """Column sums of ``values`` (samples x groups) added one sample after the other, as a bincount
    adds them. numpy reduces a C-ordered matrix over its rows row after row, but a single column
    as one contiguous run, pairwise, which rounds differently: that one is accumulated
    (sequential by definition). Tested on both shapes against the bincount."""
    values = np.ascontiguousarray(values)
    if values.shape[1] == 1 and values.shape[0]:
        return np.add.accumulate(values[:, 0])[-1:]
    return np.add.reduce(values, axis=0)


def order_statistics(values: np.ndarray, ranks: list[int], overwrite: bool = False) -> np.ndarray:
    """Per column of ``values`` (samples x groups): its ``ranks``-th smallest values, NaN last as in a
    sort (len(ranks) x groups, float64)."""
    with np.errstate(invalid="ignore"):
        narrow = values.astype(np.int32)
    if np.array_equal(narrow, values):           # integers in int32's range: no NaN, no rounding
        partition_columns(narrow, ranks)
        return narrow[ranks].astype(np.float64)
    del narrow
    work = values if overwrite else values.copy()
    partition_columns(work, ranks)
    return work[ranks].astype(np.float64, copy=True)


_HUGE = 1e300     # past this a sum of a few values may overflow float64


def _power_of_two_above(x: float) -> float:
    """A power of two > ``x / 2`` and finite (2**1023 at most; x = m * 2**e with 0.5 <= m < 1, this
    is 2**(e-1)): values divided by it lie within [-2, 2], and dividing is exact (only the exponent
    changes)."""
    return float(np.ldexp(1.0, int(np.frexp(x)[1]) - 1))


def finite_mean(values: np.ndarray) -> float | None:
    """The mean of the non-NaN ``values`` (None when there are none), finite whenever they are:
    values past 1e300 are averaged scaled by a power of two (``np.nanmean`` of [1.7e308] * 3 is
    inf, with a numpy overflow warning). Below that, exactly ``np.nanmean``."""
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    if not ok.any():
        return None
    big = float(np.max(np.abs(v[ok])))
    if not big > _HUGE or big == np.inf:
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.nanmean(v))
    scale = _power_of_two_above(big)
    return float(np.mean(v[ok] / scale) * scale)


def quiet_nansum(values: np.ndarray, axis=None):
    """``np.nansum`` whose overflow to inf (values near float64's limit) is the answer, not a
    warning on stderr."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.nansum(values, axis=axis)


def ratio_of_sums(num: np.ndarray, den: np.ndarray) -> float | None:
    """nansum(num) / nansum(den), computed on both scaled by one power of two when either holds
    values past 1e300 (their sums would overflow to inf / inf); None when the denominator is 0."""
    a, b = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    big = max([float(np.nanmax(np.abs(x))) for x in (a, b) if x.size and not np.isnan(x).all()] + [0.0])
    if big > _HUGE and big != np.inf:
        scale = _power_of_two_above(big)
        a, b = a / scale, b / scale
    total, total_den = float(quiet_nansum(a)), float(quiet_nansum(b))
    if not total_den:
        return None
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return float(np.float64(total) / np.float64(total_den))


def describe(values: np.ndarray) -> dict[str, float]:
    """Statistics of one sample as plain floats."""
    values = np.asarray(values, dtype=np.float64)
    res = grouped(np.zeros(values.shape, dtype=np.int64), values, 1)
    return {k: (int(v[0]) if k == "count" else float(v[0])) for k, v in res.items()}


_CHUNK = 1 << 20     # values converted at a time while packing


def _values_sorted_by_group(groups: np.ndarray, values: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """``values`` sorted by (group, value). When values are small non-negative integers (durations
    in ns or cycles) both are packed into one int64 and sorted as such (numpy's vectorised sort:
    several times faster than an argsort), the values read back from the low bits. ``overwrite``:
    the packing is done in ``groups`` and the result written over ``values``."""
    if values.size and np.isfinite(values).all():
        vmin, vmax = float(values.min()), float(values.max())
        gmax = int(groups.max()) if groups.size else 0
        bits = max(1, int(vmax).bit_length()) if vmax >= 1 else 1
        if vmin >= 0 and vmax < 2 ** 52 and (gmax + 1).bit_length() + bits <= 62 and (
                values == np.floor(values)).all():
            if overwrite and groups.dtype == np.int64 and values.dtype == np.float64:
                packed = groups
                packed <<= bits
            else:
                packed = groups << bits         # in place from here: one array of the input's size
            for a in range(0, packed.size, _CHUNK):
                packed[a:a + _CHUNK] |= values[a:a + _CHUNK].astype(np.int64)
            packed.sort()
            packed &= (1 << bits) - 1
            if overwrite and values.dtype == np.float64:
                values[:] = packed
                return values
            return packed.astype(np.float64)
    return values[np.lexsort((values, groups))]


WARMUP_FACTOR = 2.0      # a leading run this many times the median of the runs after it is warm-up
WARMUP_MAX_SHARE = 0.1   # at most this share of the runs (at least one) is ever called warm-up
WARMUP_MIN_RUNS = 4      # fewer runs are not judged


def leading_warmup(latency: np.ndarray) -> int:
    """How many leading runs are warm-up (first execute: cold caches, lazy init, XNNPACK weight
    packing, HTP power-up): each more than WARMUP_FACTOR x the median of the runs after it, at
    most WARMUP_MAX_SHARE of them (one when that rounds to none); series of fewer than
    WARMUP_MIN_RUNS are not judged. One rule for `etscope llm` (per phase) and `etscope diff`."""
    lat = np.asarray(latency, dtype=np.float64)
    if lat.size < WARMUP_MIN_RUNS:
        return 0
    cap = max(1, int(np.floor(WARMUP_MAX_SHARE * lat.size)))
    n = 0
    while n < cap:
        rest = lat[n + 1:]
        rest = rest[np.isfinite(rest)]
        if rest.size == 0 or not (lat[n] > WARMUP_FACTOR * median(rest)):
            break
        n += 1
    return n


def steady_mask(latency: np.ndarray, phase_of_run: np.ndarray | None = None) -> np.ndarray:
    """Per run: True for a steady run, False for a leading warm-up run of its phase
    (:func:`leading_warmup` over each phase's runs in the order they ran; ``phase_of_run``: a phase
    code per run, None: one phase). What `etscope llm` leaves out of a phase's statistics."""
    lat = np.asarray(latency, dtype=np.float64)
    steady = np.ones(lat.shape[0], dtype=bool)
    if phase_of_run is None:
        steady[:leading_warmup(lat)] = False
        return steady
    phase_of_run = np.asarray(phase_of_run)
    for code in np.unique(phase_of_run):
        runs = np.flatnonzero(phase_of_run == code)
        steady[runs[:leading_warmup(lat[runs])]] = False
    return steady


@per_profile
def steady_runs(profile: P.Profile) -> np.ndarray:
    """The runs the single-file views' statistics over runs are over (p50, mean per run, share of
    mean, the per-op table): the profile's Execute runs without the leading warm-up runs
    (:func:`steady_mask` of Method::execute; the profile is one phase, or one phase's runs). A
    view of several phases pooled passes each phase's own (``RunPhases.warmup``) instead."""
    steady = steady_mask(units.ns_to_ms(np.asarray(profile.runs["latency_ns"], dtype=np.float64)))
    steady.flags.writeable = False          # shared by every analysis of the profile
    return steady


def steady_or_default(profile: P.Profile, steady: np.ndarray | None) -> np.ndarray:
    """``steady`` (bool per run) when given, else :func:`steady_runs` of the profile."""
    return steady_runs(profile) if steady is None else np.asarray(steady, dtype=bool)


def runs_counted(profile: P.Profile, steady: np.ndarray | None = None) -> int:
    """How many runs a mean per run divides by: the steady ones (at least 1)."""
    return max(int(np.count_nonzero(steady_or_default(profile, steady))), 1)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) (Numerical Recipes' method; no SciPy dependency)."""
    import math

    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with ``df`` degrees of freedom."""
    if t != t or df <= 0:
        return float("nan")
    return betainc(df / 2.0, 0.5, df / (df + t * t))
