"""Warm-up runs, positions in the generation, and decode latency against position (drift, the
first decode after a prefill)."""
from __future__ import annotations

import numpy as np

from etscope.arrays import median, percentile, stable_argsort
from etscope.analysis.llm.result import ByPosition, Drift, FirstDecode, WarmupNote
from etscope.analysis.stats import leading_warmup

# A finding is stated only when the data carry it (issue: three values once made a "fact"):
FIRST_DECODE_MIN_INSTANCES = 5   # prefill->decode transitions needed to judge the first decode
FIRST_DECODE_MIN_SHARE = 0.8     # ... above the other decodes' upper quartile in this share of them
FIRST_DECODE_HINT_RATIO = 1.3    # a median ratio past this is mentioned even when not established
DRIFT_MIN_POSITIONS = 32         # a narrower range of positions cannot show a drift


def warmup_runs(runs: np.ndarray, latency: np.ndarray, name: str) -> tuple[list[int], list[WarmupNote]]:
    """The phase's leading warm-up runs (stats.leading_warmup) and a note on each: its latency and
    the median of the phase's runs after it, which it was compared with."""
    lat = latency[runs]
    out, notes = [], []
    for i in range(leading_warmup(lat)):
        rest = lat[i + 1:]
        rest = rest[np.isfinite(rest)]
        med = float(median(rest))
        q25, q75 = (float(v) for v in percentile(rest, [25, 75]))
        out.append(int(runs[i]))
        notes.append(WarmupNote(run=int(runs[i]), phase=name, latency_ms=float(lat[i]), phase_p50_ms=med,
                                ratio=float(lat[i] / med) if med else None, later_runs=int(rest.size),
                                later_iqr_ms=(q25, q75)))
    return out, notes


def positions(assign, names, tokens) -> tuple[np.ndarray, np.ndarray]:
    """Per run: decode step since the last prefill (1, 2, ...) and token position when known.

    A decode run's step counts the decode runs since the last prefill (or since the start); its
    position is the last prefill's token count (when known) plus the tokens of the decode runs
    between (one for a run of unknown count). Counted with running sums, not a loop over runs."""
    n = len(assign)
    steps = np.full(n, -1, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    if "decode" not in names:
        return steps, pos
    assign = np.asarray(assign)
    tokens = np.asarray(tokens, dtype=np.int64)
    is_d = assign == names.index("decode")
    is_p = assign == names.index("prefill") if "prefill" in names else np.zeros(n, dtype=bool)
    if not is_p.any():
        steps[:] = np.where(is_d, np.cumsum(is_d), -1)
        return steps, pos
    decodes = np.cumsum(is_d)                                        # decode runs so far (running sums
    at_prefill = np.maximum.accumulate(np.where(is_p, decodes, 0))   # only grow: the last prefill's is the max)
    steps[is_d] = (decodes - at_prefill)[is_d]
    last = np.maximum.accumulate(np.where(is_p, np.arange(n), -1))   # the last prefill at or before each run
    start = np.where(last >= 0, tokens[np.maximum(last, 0)], -1)     # its tokens
    add = np.where(is_d, np.where(tokens > 0, tokens, 1), 0)
    added = np.cumsum(add) - add                                     # decode tokens before each run
    since = added - np.maximum.accumulate(np.where(is_p, added, 0))
    known = is_d & (start > 0)
    pos[known] = (start + since)[known]
    return steps, pos


def decode_drift(assign, names, warm, latency, steps, positions, decode) -> Drift | None:
    if decode is None or "decode" not in names:
        return None
    d = names.index("decode")
    sel = (assign == d) & ~warm & np.isfinite(latency) & (steps > 0)
    first = None
    if "prefill" in names and (sel & (steps == 1)).any() and (sel & (steps > 1)).any():
        # The first decode after a prefill may pay for the shape change: judged on its own (see
        # first_decode) and left out of the fit either way.
        first = first_decode(latency[sel & (steps == 1)], latency[sel & (steps > 1)])
        sel &= steps > 1
    if sel.sum() < 3:
        return None
    use_pos = (positions[sel] >= 0).all()
    x = (positions if use_pos else steps)[sel].astype(np.float64)
    y = latency[sel]
    if np.ptp(x) == 0:
        return None
    ux, inv = np.unique(x, return_inverse=True)
    inv = inv.reshape(-1)
    order = stable_argsort(inv)
    bounds = np.searchsorted(inv[order], np.arange(len(ux) + 1))
    med = np.array([median(y[order[bounds[j]:bounds[j + 1]]]) for j in range(len(ux))])
    cnt = np.diff(bounds)
    by = tuple((int(v), int(c), float(m)) for v, c, m in zip(ux, cnt, med))
    # Least squares on the per-position medians (weighted by runs): robust to noisy single runs.
    slope, intercept = np.polyfit(ux, med, 1, w=np.sqrt(cnt))
    base = float(intercept + slope * ux[0])
    ci = _slope_ci95(ux, med, cnt, slope, intercept)
    resid = y - (intercept + slope * x)
    spread = float(np.subtract(*percentile(resid, [75, 25])))
    change = float(abs(slope) * (ux[-1] - ux[0]))
    shown = bool(ux[-1] - ux[0] >= DRIFT_MIN_POSITIONS and ci is not None and (ci[0] > 0 or ci[1] < 0)
                 and change > spread)
    return Drift(
        x="token position" if use_pos else "decode step since the last prefill",
        positions=(int(ux[0]), int(ux[-1])),
        slope_ms_per_100_tokens=float(slope * 100),
        slope_ci95_ms_per_100_tokens=(ci[0] * 100, ci[1] * 100) if ci else None,
        relative_per_100_tokens=float(slope * 100 / base) if base > 0 else None,
        intercept_ms=float(intercept),
        runs=int(sel.sum()),
        change_over_range_ms=change,
        spread_ms=spread,
        drift_shown=shown,
        first_decode_after_prefill=first,
        by_position=ByPosition(columns=("position", "runs", "p50_ms"), rows=by),
    )


def first_decode(first: np.ndarray, others: np.ndarray) -> FirstDecode:
    """The first decodes after a prefill against the other decodes: is it slower, and how surely."""
    q25, q50, q75 = (float(v) for v in percentile(others, [25, 50, 75]))
    f50 = float(median(first))
    slower = int((first > q75).sum())
    n = int(first.size)
    holds = bool(n >= FIRST_DECODE_MIN_INSTANCES and slower >= FIRST_DECODE_MIN_SHARE * n and f50 - q50 > q75 - q25)
    return FirstDecode(p50_ms=f50, ratio=f50 / q50 if q50 else None, instances=n,
                       range_ms=(float(first.min()), float(first.max())), above_upper_quartile=slower,
                       others_runs=int(others.size), others_p50_ms=q50, others_iqr_ms=(q25, q75), slower=holds)


def _slope_ci95(x, y, w, slope, intercept) -> tuple[float, float] | None:
    """95% interval of a weighted least-squares slope (weights ``w``), t distribution."""
    df = len(x) - 2
    if df < 1:
        return None
    xm = np.average(x, weights=w)
    sxx = float(np.sum(w * (x - xm) ** 2))
    if sxx <= 0:
        return None
    s2 = float(np.sum(w * (y - intercept - slope * x) ** 2)) / df
    half = _t975(df) * (s2 / sxx) ** 0.5
    return float(slope - half), float(slope + half)


def _t975(df: int) -> float:
    """97.5% quantile of Student's t: table to df 4, then the Cornish-Fisher expansion (within 0.2%)."""
    z = 1.959963984540054
    if df <= 4:
        return (12.706, 4.303, 3.182, 2.776)[df - 1]
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2) \
        + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3)

