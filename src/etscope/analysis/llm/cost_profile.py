"""Prefill runs told from the others by their cost profile: the same token-dependent instructions
several times costlier (or cheaper) in some runs than in the others, the rest not (``cost_split``)."""
from __future__ import annotations

import numpy as np

from etscope.analysis.llm.column_percentiles import ColumnPercentiles
from etscope.arrays import median, percentile_rows, unique

MIN_OPS_FOR_COST_SPLIT = 8   # instructions with >= 1 µs median needed to split by cost
MIN_OP_NS = 1000.0
SENSITIVE_LOG2 = 1.0         # an instruction "costs several times" more or less: >= 2x (after centring)
MIN_SENSITIVE_OPS = 3
LONE_RUN_EVIDENCE_LOG2 = 20.0  # a group of one run: its pattern summed over instructions, log2 (10 at 4x)
PREFILL_MAX_SHARE = 0.6      # a group of costlier runs must be fewer than this share of the runs
DECODE_MAX_SHARE = 0.75      # a group of cheaper runs likewise
CLOCK_NONE, CLOCK_CPU, CLOCK_DELEGATE = 0, 1, 2   # cost_split's column classes (see there)


def cost_split(T: np.ndarray, timed: np.ndarray | None = None) -> dict | None:
    """Split runs (rows of T, ns per instruction, NaN = not run) into prefill-like runs and the rest
    by their cost profile, whichever phase has more runs.

    Costs are compared in log2. A run is *off* in an instruction when it is at least 2x away from
    the instruction's median over the other runs (those outside the group being tested, so the
    reference is the other phase whatever its share) and beyond its usual spread over them (upper
    quartile + 3 IQR). A group is grown from a seed run (one of those with most off
    instructions): the token-dependent instructions are those off in at least half the group, the
    group is the runs where at least half of them are off; both are refined until they agree. It
    is kept only when it is clean (every other run, but one in 200, shows at most a third of the
    pattern and at least 0.3 less of it than any run of the group), shared (enough instructions
    off in two thirds of the group: unrelated spikes are not), spread (its wall-time columns span
    at least half the run: token-dependent operators recur in every layer, a spell of contention
    slows one stretch) and not in delegate calls alone while enough CPU instructions keep their
    cost (a thread pool slowed by contention). A group of one run, one test among many runs, must
    also be off by log2 20 summed over its instructions, each counted up to 8x (a dozen
    instructions 3-7x costlier, as a prompt makes them; not two contention spikes of 50x). Among
    the seeds the best separated, broadest wins.
    The searches, first found wins:

    1. runs cheaper (decode-like) than the median of all runs, seen when decodes are fewer than
       half the runs (prefills are the majority).
    2. runs costlier (prefill-like) that stand out from the spread of all runs: a few prompts
       among many decodes; fewer than 60% of the runs, >= 4 instructions (8 for a single run).
    3. runs cheaper than the upper quartile of all runs, at least half of them: decodes are 50%
       to 75% of the runs, too many for 1 and leaving too many prefills for 2.

    Noise rarely makes a run cheaper, but it can (a run that escaped contention), so a group of
    cheaper runs needs two runs and 8 instructions. Runs slower or faster everywhere are the
    machine, not the token count: each run's own level over the wall-time columns is taken out
    (for costlier runs its lower quartile; for cheaper runs its upper quartile, and only when that
    is below the reference, so a run slowed in some instructions by contention does not make its
    other instructions look cheap). ``timed`` (per column, default all 1) gives each column its
    clock class: 0 = not wall time (cycle counts do not slow down with the machine; compared as
    they are), 1 = CPU instructions, 2 = delegate calls. The level is taken out per class of at
    least 8 columns (smaller classes join class 1): contention slows a delegate's thread pool
    (spin-waiting threads descheduled) while single-threaded CPU operators keep their speed, so
    a run slower in its delegate calls alone is the machine too.

    Returns {"prefill": bool mask, "ops": column indices of the token-dependent instructions (most
    separated first), "strength_log2": their prefill / other log2 cost ratio (medians),
    "gap_log2": the median of those, "score": per-run share of the pattern, "found_from":
    "cheaper runs" | "costlier runs"} or None.
    """
    n, k = T.shape
    if n < 3 or k == 0:
        return None
    prepared = _log_costs(T, timed)
    if prepared is None:
        return None
    R, tm, cols = prepared
    reference = ColumnPercentiles(R)       # the columns' medians (or quartiles) over most runs, many times
    searches = (  # (direction, seeds measured against, at least this many runs, instructions)
        (-1, "median", 2, MIN_OPS_FOR_COST_SPLIT),
        (+1, "spread", 1, 4),
        (-1, "upper quartile", max(2, (n + 1) // 2), MIN_OPS_FOR_COST_SPLIT),
    )
    for direction, seeds, min_runs, min_ops in searches:
        max_share = PREFILL_MAX_SHARE if direction > 0 else DECODE_MAX_SHARE
        found = _cost_pattern(R, reference, tm, direction, seeds, max_share, min_runs, min_ops)
        if found is not None:
            break
    else:
        return None
    group, ops, score = found
    pre = group if direction > 0 else ~group
    strength = median(R[pre][:, ops], axis=0, overwrite=True) - median(R[~pre][:, ops], axis=0, overwrite=True)
    order = np.argsort(-strength, kind="stable")
    return {"prefill": pre, "ops": cols[ops][order], "strength_log2": strength[order], "score": score,
            "gap_log2": float(median(strength)),
            "found_from": "costlier runs" if direction > 0 else "cheaper runs"}


def _log_costs(T: np.ndarray, timed) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """log2 costs of the columns usable for a cost split (logged in >= 90% of the runs, median
    >= 1 µs), missing values at the median: (runs x columns, timed per column, column indices)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = np.isfinite(T)
        keep = finite.mean(axis=0) >= 0.9
        if finite.all():            # nothing to fill in: only whether each median reaches MIN_OP_NS
            base = None
            keep &= _median_at_least(T, MIN_OP_NS)
        else:
            base = _nanmedian_cols(T)
            keep &= base >= MIN_OP_NS
        del finite
        if keep.sum() < MIN_OPS_FOR_COST_SPLIT:
            return None
        R = np.log2(np.maximum(T[:, keep], 1.0))
        if base is not None:
            R = np.where(np.isfinite(R), R, np.log2(base[keep]))
    tm = np.ones(R.shape[1], dtype=np.int8) if timed is None else np.asarray(timed, dtype=np.int8)[keep]
    for c in unique(tm[tm > CLOCK_CPU]):
        if (tm == c).sum() < MIN_OPS_FOR_COST_SPLIT:
            tm[tm == c] = CLOCK_CPU
    return R, tm, np.nonzero(keep)[0]


def _relative_costs(R: np.ndarray, reference: ColumnPercentiles, rest: np.ndarray, tm: np.ndarray,
                    direction: int, ref_q: float = 50) -> np.ndarray:
    """log2 cost against each column's median (or ``ref_q`` percentile) over ``rest``
    (``reference``: those of ``R``), each run's own level over the timed columns taken out (see
    cost_split); positive = off in ``direction`` (+1 costlier, -1 cheaper)."""
    L = R - reference(rest, ref_q)
    for c in unique(tm[tm != CLOCK_NONE]):
        cls = tm == c
        if direction > 0:
            level = percentile_rows(L[:, cls], 25)[:, None]
        else:
            level = np.minimum(percentile_rows(L[:, cls], 75)[:, None], 0.0)
        L[:, cls] -= level
    if direction < 0:
        np.negative(L, out=L)
    return L


def _column_percentiles(M: np.ndarray, rows: np.ndarray, q):
    """``np.percentile(M[rows], q, axis=0)``, the same numbers (``percentile_rows``): computed on
    each column's values gathered contiguous (``compress`` of the transpose, a copy it may
    overwrite), so the partition runs along memory instead of across it."""
    return percentile_rows(np.compress(rows, M.T, axis=1), q)


def _cost_pattern(R, reference: ColumnPercentiles, tm, direction: int, seeds: str, max_share: float, min_runs: int,
                  min_ops: int):
    """The group of runs off in ``direction`` in a common set of columns (see cost_split), grown
    from seeds measured against the ``seeds`` reference ("spread", "median", "upper quartile"):
    (group mask, column mask, per-run score) or None."""
    n = R.shape[0]
    # The seeds' searches often meet the same group (the same reference runs): each off-matrix is
    # computed once (its percentiles over thousands of runs are most of the cost).
    seen: dict[tuple, np.ndarray] = {}

    def off(rest: np.ndarray, spread: bool = True, ref_q: float = 50) -> np.ndarray:
        key = (np.packbits(rest).tobytes(), spread, ref_q)
        if key not in seen:
            C = _relative_costs(R, reference, rest, tm, direction, ref_q)
            if spread:
                q25, q75 = _column_percentiles(C, rest, [25, 75])
                seen[key] = C > np.maximum(SENSITIVE_LOG2, q75 + 3 * (q75 - q25))
            else:
                seen[key] = C > SENSITIVE_LOG2
        return seen[key]

    everyone = np.ones(n, dtype=bool)
    ref_q = 75 if seeds == "upper quartile" else 50
    F0 = off(everyone) if seeds == "spread" else off(everyone, spread=False, ref_q=ref_q)
    s0 = F0.sum(axis=1)
    best = None
    for seed in np.argsort(-s0, kind="stable")[:5]:
        if s0[seed] < MIN_SENSITIVE_OPS:
            break
        group = np.zeros(n, dtype=bool)
        group[seed] = True
        F = F0 if seeds == "spread" else off(~group, spread=False, ref_q=ref_q)
        found = None
        for _ in range(12):
            ops = F[group].mean(axis=0) >= (0.5 if group.sum() > 1 else 1.0)
            if ops.sum() < MIN_SENSITIVE_OPS:
                break
            score = F[:, ops].mean(axis=1)
            new = score >= 0.5
            if (new == group).all():
                found = (group, ops, score)
                break
            group = new
            if group.sum() == 0 or group.sum() > max_share * n:
                break
            F = off(~group)
        if found is None:
            continue
        group, ops, score = found
        # Among hundreds of other runs a few may show part of the pattern by chance (a burst of
        # contention): one in 200 is allowed above the line.
        outside = np.sort(score[~group])
        out_max = float(outside[-(1 + outside.size // 200)])
        margin = float(score[group].min()) - out_max
        need = min_ops if group.sum() > 1 else max(min_ops, 8)
        shared = (F[group][:, ops].mean(axis=0) >= 2 / 3).sum()   # noise spikes are not shared
        if out_max > 0.34 or margin < 0.3 or group.sum() < min_runs or shared < need:
            continue
        if group.sum() == 1 and _evidence_log2(R, group, ops, direction) < LONE_RUN_EVIDENCE_LOG2:
            continue
        if _only_delegate_calls(ops, tm) or _in_one_stretch(ops, tm):
            continue
        quality = margin * int(ops.sum())
        if best is None or quality > best[0]:
            best = (quality, group, ops, score)
    return None if best is None else best[1:]


def _evidence_log2(R: np.ndarray, group: np.ndarray, ops: np.ndarray, direction: int) -> float:
    """How far the group is off in its pattern, as measured (no level taken out): the sum over
    the pattern's instructions of log2(group / others) in ``direction``, each counted up to 8x
    (a contention spike can make one instruction 50x slower; tokens make many several times)."""
    off = direction * (R[group][:, ops].mean(axis=0) - median(R[~group][:, ops], axis=0, overwrite=True))
    return float(np.clip(off, 0.0, 3.0).sum())


def _only_delegate_calls(ops: np.ndarray, tm: np.ndarray) -> bool:
    """Contention, not tokens: the pattern is in delegate calls while the CPU instructions of the
    same runs (enough of them to tell) keep their cost."""
    delegate = tm == CLOCK_DELEGATE
    return bool(delegate.any() and (~delegate).sum() >= MIN_OPS_FOR_COST_SPLIT
                and (ops & ~delegate).sum() < MIN_SENSITIVE_OPS)


def _in_one_stretch(ops: np.ndarray, tm: np.ndarray) -> bool:
    """A burst, not tokens: token-dependent operators recur in every layer, so they spread over
    the run; a spell of contention slows one stretch of it (here: under half of it)."""
    timed = np.nonzero(tm != CLOCK_NONE)[0]          # columns are in execution order
    if timed.size < 2 * MIN_OPS_FOR_COST_SPLIT:
        return False
    at = np.searchsorted(timed, np.nonzero(ops & (tm != CLOCK_NONE))[0])
    return at.size >= 2 and (at.max() - at.min() + 1) < timed.size / 2


def _median_at_least(T: np.ndarray, threshold: float) -> np.ndarray:
    """Per column of ``T`` (no NaN), whether its median (``np.median``) is at least ``threshold``,
    mostly by counting: with more than half of a column's values at or above it the middle ones
    are too (their mean as well: doubles at or above it add to at least twice it), with fewer
    than half neither is (two doubles below it add to less than twice it). Only the columns with
    exactly half of an even count there, whose middle values straddle it, are partitioned."""
    n = T.shape[0]
    above = np.count_nonzero(T >= threshold, axis=0)
    out = above >= n // 2 + 1
    tie = np.flatnonzero(above == n // 2) if n % 2 == 0 else np.zeros(0, dtype=np.int64)
    if tie.size:
        out[tie] = median(T[:, tie], axis=0) >= threshold
    return out


def _nanmedian_cols(T: np.ndarray) -> np.ndarray:
    if not np.isnan(T).any():
        return median(T, axis=0)
    out = np.full(T.shape[1], np.nan)
    for j in range(T.shape[1]):
        col = T[:, j]
        col = col[~np.isnan(col)]
        if col.size:
            out[j] = median(col)
    return out

