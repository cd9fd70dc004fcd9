"""Array helpers for the hot paths, where numpy's general routine is slow on event columns."""
from __future__ import annotations

import numpy as np


def unique(a) -> np.ndarray:
    """Sorted distinct values of an integer array (flattened), as ``np.unique(a)``.

    numpy >= 2.3's plain ``np.unique`` hashes, which on int64 event columns with many distinct
    values is ~20x slower than sorting (0.6 s against 0.03 s per million on this machine); the
    ``return_index`` / ``return_inverse`` forms still sort and need no helper."""
    s = np.sort(np.asarray(a).ravel())
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_chunked(values, n: int, chunk: int = 1 << 20) -> np.ndarray:
    """np.unique of ``values(slice)`` over slices of ``range(n)``: bounded temporaries when the
    selected values are many and the distinct ones few."""
    parts = [unique(values(slice(a, a + chunk))) for a in range(0, n, chunk)]
    return unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def unique_inverse(a, max_range: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_inverse=True)`` for an integer array (flattened; inverse as int64).

    When the values span at most ``max_range`` (instruction ids, (instruction, run) keys), a table
    over the span replaces the sort: linear time and no sorted copy, permutation or mask of the
    size of ``a``; wider spans fall back to numpy's sort."""
    a = np.asarray(a).ravel()
    if a.size == 0:
        return a.copy(), np.zeros(0, dtype=np.int64)
    lo, hi = int(a.min()), int(a.max())
    if hi - lo >= max_range:
        u, inv = np.unique(a, return_inverse=True)
        return u, inv.reshape(-1)
    off = a - lo if lo else a
    present = np.zeros(hi - lo + 1, dtype=bool)
    present[off] = True
    where = np.flatnonzero(present)
    code = np.cumsum(present, dtype=np.int64) - 1
    return (where + lo).astype(a.dtype), code[off]


def median(a, axis: int | None = None, overwrite: bool = False):
    """``np.median(a, axis)`` with the same result to the bit, without importing ``numpy.ma``
    (~8 ms: np.median's NaN check asks whether its data is a masked array).

    The same partition around the middle, the same ``np.mean`` of the middle one or two values,
    and NaN wherever the data holds a NaN (np.median puts NaNs last: the largest value tells).
    An empty input goes to np.median itself (its warning and NaN). ``overwrite``: a 2-D ``a``'s
    columns (axis 0) may be reordered in place, as np.median's ``overwrite_input`` (a temporary
    of the caller's: no copy of it)."""
    a = np.asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = axis % max(a.ndim, 1)
    n = a.shape[axis] if a.ndim else 1
    if a.size == 0 or a.ndim == 0 or a.dtype.kind not in "biuf":
        return np.median(a, axis=axis)
    half = n // 2
    middle = [half - 1, half] if n % 2 == 0 else [half]
    inexact = a.dtype.kind == "f"
    kth = middle + [n - 1] if inexact else middle
    if a.ndim == 2 and axis == 0:          # columns: half of them per core when large
        part = a if overwrite and a.flags.writeable else a.copy()
        partition_columns(part, kth)
    else:
        part = np.partition(a, kth, axis=axis)
    out = np.mean(np.take(part, range(middle[0], middle[-1] + 1), axis=axis), axis=axis)
    if inexact:
        last = np.take(part, n - 1, axis=axis)
        nan = np.isnan(last)
        if np.ndim(out) == 0:
            return last if nan else out
        if nan.any():
            out[nan] = last[nan]
    return out


def nanmedian(a):
    """``np.nanmedian`` of a 1-D array, to the bit, without importing ``numpy.ma`` (which
    np.nanmedian uses on small arrays): the median of the values that are not NaN."""
    a = np.asarray(a).reshape(-1)
    kept = a[~np.isnan(a)] if a.dtype.kind == "f" else a
    # No value (empty or all NaN): NaN, as np.nanmedian gives, without its RuntimeWarning on stderr.
    return median(kept) if kept.size else np.float64(np.nan)


def stable_argsort(a) -> np.ndarray:
    """``np.argsort(a, kind="stable")`` for a 1-D integer array; when its values span fewer than
    65,536 (instruction ids, string codes, small keys) as 16-bit offsets, which numpy sorts by
    radix: linear time, ~10x faster than its merge sort of 10M int32 or int64."""
    a = np.asarray(a)
    if a.size > 1 and a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < 1 << 16:
            return np.argsort((a - lo).astype(np.uint16) if lo else a.astype(np.uint16), kind="stable")
    return np.argsort(a, kind="stable")


def isin(a, values, max_range: int = 1 << 22) -> np.ndarray:
    """``np.isin(a, values)`` for integer arrays: a table over the values' span when it is at
    most ``max_range`` (instruction ids, codes): one gather instead of sorting ``a``."""
    a = np.asarray(a)
    values = np.asarray(values)
    if a.size == 0 or values.size == 0:
        return np.zeros(a.shape, dtype=bool)
    if a.dtype.kind not in "iu" or values.dtype.kind not in "iu":
        return np.isin(a, values)
    lo, hi = int(values.min()), int(values.max())
    if hi - lo >= max_range:
        return np.isin(a, values)
    table = np.zeros(hi - lo + 2, dtype=bool)   # the last entry: every value outside the span
    table[values.astype(np.int64) - lo] = True
    pos = a.astype(np.int64) - lo
    pos[(pos < 0) | (pos > hi - lo)] = hi - lo + 1
    return table[pos]


SORT_ROWS_UP_TO = 256    # rows this short are sorted (numpy's vectorised sort) rather than partitioned


def percentile_rows(a: np.ndarray, q) -> np.ndarray:
    """``np.percentile(a, q, axis=1)`` (method "linear") of a 2-D float64 array: the same numbers
    to the bit, written over ``a`` (pass a copy to keep it). A zero result may differ in sign when
    a row holds both 0.0 and -0.0 (equal values: which one lands first is the algorithm's).

    np.percentile partitions around four positions per percentile (first, last, and the two it
    interpolates between); numpy's partition is several times slower with a list of positions
    than with one. Here short rows are sorted whole and long rows partitioned once per pair of
    positions, the upper one of a pair being the minimum of what lies above the lower; NaN
    wherever a row holds a NaN, as np.percentile gives. Then numpy's own interpolation, step by
    step (``_lerp``: ``a + d*g``, or ``b - d*(1 - g)`` for g >= 0.5)."""
    qs = np.atleast_1d(np.true_divide(q, 100))
    if a.ndim != 2 or a.dtype != np.float64 or qs.ndim != 1 or not ((qs >= 0) & (qs <= 1)).all():
        return np.percentile(a, q, axis=1)
    rows, n = a.shape
    if n == 0 or rows == 0:
        return np.percentile(a, q, axis=1)
    lo, hi, gamma = percentile_positions(n, qs)
    has_nan = np.isnan(a).any(axis=1)
    values = _ranked_rows_on_two_cores(a, sorted(set(lo.tolist()) | set(hi.tolist())))
    out = interpolate_percentiles(values, q, lo, hi, gamma)
    if has_nan.any():
        out[..., has_nan] = np.nan
    return out


def percentile_positions(n: int, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where np.percentile (method "linear") reads each fraction ``qs`` of ``n`` sorted values:
    the ranks below and above it and the weight of the upper one (numpy's own steps)."""
    virtual = (n - 1) * qs
    prev = np.floor(virtual)
    top = virtual >= n - 1
    prev[top] = -1
    gamma = virtual - prev
    lo = np.where(top, n - 1, prev).astype(np.int64)
    hi = np.where(top, n - 1, lo + 1)
    return lo, hi, gamma


def interpolate_percentiles(values: dict[int, np.ndarray], q, lo: np.ndarray, hi: np.ndarray,
                            gamma: np.ndarray) -> np.ndarray:
    """np.percentile's interpolation (``_lerp``: ``a + d*g``, or ``b - d*(1 - g)`` for g >= 0.5)
    between the ranked values ``values[rank]`` at ``percentile_positions``: (len(q) x rows), or
    (rows,) for a scalar ``q``. A Python number ``q`` keeps its weights Python floats, as numpy's
    weak scalars do."""
    weak = type(q) in (int, float)
    out = np.empty((lo.size, len(values[int(lo[0])])))
    for i in range(lo.size):
        below, above = values[int(lo[i])], values[int(hi[i])]
        g = float(gamma[i]) if weak else gamma[i]
        diff = above - below
        res = np.add(below, diff * g)
        np.subtract(above, diff * (1 - g), out=res, where=g >= 0.5)
        out[i] = res
    return out[0] if np.ndim(q) == 0 else out


def _ranked_rows_on_two_cores(a: np.ndarray, ranks: list[int]) -> dict[int, np.ndarray]:
    """:func:`_ranked_in_rows`, half of the rows per core when there are many values."""
    half = a.shape[0] // 2
    if half == 0 or a.size < TWO_THREADS_MIN // 4:
        return _ranked_in_rows(a, ranks)
    found: list = [None, None]

    def work(parts) -> None:
        for i, rows in parts:
            found[i] = _ranked_in_rows(rows, ranks)

    in_two_threads(work, [(0, a[:half]), (1, a[half:])], True)
    return {r: np.concatenate([found[0][r], found[1][r]]) for r in ranks}


def _ranked_in_rows(a: np.ndarray, ranks: list[int]) -> dict[int, np.ndarray]:
    """Each row's ``ranks``-th smallest values (ascending ranks), ``a`` reordered in place."""
    n = a.shape[1]
    if n <= SORT_ROWS_UP_TO:
        a.sort(axis=1)
        return {r: a[:, r].copy() for r in ranks}
    got: dict[int, np.ndarray] = {}
    start = 0                      # a[:, :start] holds values no larger than any of a[:, start:]
    for r in ranks:
        if r in got:
            continue
        if r == start and got:     # the next one up: the smallest of the rest
            got[r] = a[:, start:].min(axis=1)
            continue
        a[:, start:].partition(r - start, axis=1)
        got[r] = a[:, r].copy()
        start = r + 1
    return got


# numpy releases the GIL while it partitions, sorts or compares a large array, so one such pass
# over columns split in two runs on two cores. Below this many elements a thread costs more.
TWO_THREADS_MIN = 1 << 20


def cores() -> int:
    """The cores this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def partition_columns(a: np.ndarray, ranks: list[int]) -> None:
    """``a.partition(ranks, axis=0)`` (in place; 2-D): the columns are independent, so with two
    cores each half of them is partitioned on its own thread (the same result: each column's
    partition is the one numpy gives it either way)."""
    if a.ndim != 2 or a.shape[1] < 2:
        a.partition(ranks, axis=0)
        return
    half = a.shape[1] // 2

    def work(parts) -> None:
        for part in parts:
            part.partition(ranks, axis=0)

    in_two_threads(work, [a[:, :half], a[:, half:]], a.size >= TWO_THREADS_MIN)


def in_two_threads(work, items: list, parallel: bool) -> None:
    """``work(items)``; when ``parallel`` and the process has two cores, ``work(items[1::2])`` on a
    second thread while this one does ``work(items[0::2])`` (numpy releases the GIL while it
    partitions, compares, gathers or copies large arrays). The items' work must be independent
    (disjoint writes); an error on the second thread is raised here."""
    if not parallel or len(items) < 2 or cores() < 2:
        work(items)
        return
    import threading

    failed: list[BaseException] = []

    def other() -> None:
        try:
            work(items[1::2])
        except BaseException as err:            # noqa: BLE001 (re-raised below)
            failed.append(err)

    worker = threading.Thread(target=other, name="etscope-worker")
    worker.start()
    try:
        work(items[0::2])
    finally:
        worker.join()
    if failed:
        raise failed[0]


def percentile(a, q):
    """``np.percentile(a, q)`` of a 1-D array of numbers, as :func:`percentile_rows` computes it
    (np.percentile's check for masked arrays imports numpy.ma: ~10 ms of a command)."""
    out = percentile_rows(np.array(a, dtype=np.float64).reshape(1, -1), q)   # a copy it may reorder
    return out[0] if np.ndim(q) == 0 else out[:, 0]


def _odd_multipliers(n: int, seed: int = 0x5EED) -> np.ndarray:
    """``n`` fixed odd 64-bit constants (splitmix64), without importing numpy.random (~25 ms)."""
    out, x = [], seed
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        out.append((z ^ (z >> 31)) | 1)
    return np.array(out, dtype=np.uint64)


HASH_MULTIPLIERS = _odd_multipliers(64)   # fixed odd constants for hashing rows of bytes


def distinct_rows(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a (m, n) uint8 array: (index of one row per distinct value, inverse).

    Rows are hashed 8 bytes at a time, then every row is compared with its group's representative,
    so a hash collision can only cost time (exact fallback), never give a wrong answer.
    """
    m, n = raw.shape
    width = (n + 7) // 8
    if width > len(HASH_MULTIPLIERS):
        _, first, inv = np.unique(raw.view(np.dtype((np.void, n))).reshape(-1), return_index=True,
                                  return_inverse=True)
        return first, inv.reshape(-1)
    padded = np.zeros((m, width * 8), dtype=np.uint8)
    padded[:, :n] = raw
    words = padded.view("<u8")
    with np.errstate(over="ignore"):
        h = (words * HASH_MULTIPLIERS[:width]).sum(axis=1, dtype=np.uint64)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    if not (raw == raw[first[inv]]).all():
        _, first, inv = np.unique(raw.view(np.dtype((np.void, n))).reshape(-1), return_index=True,
                                  return_inverse=True)
        inv = inv.reshape(-1)
    return first, inv
