"""A percentile of each column of one matrix over all its rows but a few, asked again and again.

``cost_split`` measures runs against the median of the other runs many times: of all runs, of all
but one seed run, of all but a small group. Each answer is a partition of every column, over
thousands of runs. Leaving s rows out moves a column's percentile by at most s places in its sorted
values, so the values around the percentile's place are found once (a sorted window of each
column); every later question with up to ``max_left_out`` rows left out is then answered from the
window by counting: how many of the column's values, and of the rows left out, lie at or below
each value of the window. Those are the same order statistics a partition of the kept rows finds,
interpolated by the same steps (``arrays.interpolate_percentiles``): the same numbers to the bit.
Whatever the window cannot settle (more rows left out, non-finite values, ties across its upper
edge) is computed as before (``percentile_rows`` of the kept rows).
"""
from __future__ import annotations

import numpy as np

from etscope.arrays import (TWO_THREADS_MIN, in_two_threads, interpolate_percentiles, percentile_positions,
                            percentile_rows)

MIN_LEFT_OUT = 64          # rows that may be left out of a window's answers, at least...
LEFT_OUT_SHARE = 16        # ...or this share of the rows


class ColumnPercentiles:
    """``np.percentile(M[rows], q, axis=0)`` (scalar ``q``, method "linear") of a fixed float64 matrix
    ``M`` (rows x columns) for many row masks ``rows`` that keep all rows but a few."""

    def __init__(self, M: np.ndarray):
        self.M = M
        self.n = M.shape[0]
        self.max_left_out = min(self.n - 1, max(MIN_LEFT_OUT, self.n // LEFT_OUT_SHARE))
        self.usable = M.ndim == 2 and M.dtype == np.float64 and M.shape[1] > 0 and self.n > 1 and \
            bool(np.isfinite(M).all())
        self._windows: dict[float, tuple[int, int, np.ndarray, np.ndarray]] = {}

    def __call__(self, rows: np.ndarray, q) -> np.ndarray:
        left_out = np.flatnonzero(~rows)
        if self.usable and np.ndim(q) == 0 and 0 <= q <= 100 and left_out.size <= self.max_left_out:
            got = self._from_window(left_out, q)
            if got is not None:
                return got
        return percentile_rows(np.compress(rows, self.M.T, axis=1), q)

    def _window(self, q) -> tuple[int, int, np.ndarray, np.ndarray]:
        """(first place, end place, each column's values at those places sorted (columns x width),
        how many of each column's values are at or below each of them)."""
        key = float(q)
        if key not in self._windows:
            qs = np.atleast_1d(np.true_divide(q, 100))
            n, most = self.n, self.max_left_out
            lo_fewest = int(percentile_positions(n - most, qs)[0][0])    # places only fall as rows go
            hi_all = int(percentile_positions(n, qs)[1][0])
            # a kept row's place among all rows is its place among the kept plus at most `most`; one
            # more value tells whether the last one needed ties with values above the window
            start, end = lo_fewest, min(n, hi_all + most + 2)
            window = _sorted_window(self.M, start, end)
            # values at or below each one: its place in the window + the equal ones after it, + start
            width = window.shape[1]
            last_equal = np.where(np.diff(window, axis=1) != 0, np.arange(width - 1), width - 1)
            last_equal = np.minimum.accumulate(np.concatenate(
                [last_equal, np.full((window.shape[0], 1), width - 1)], axis=1)[:, ::-1], axis=1)[:, ::-1]
            self._windows[key] = (start, end, window, start + last_equal + 1)
        return self._windows[key]

    def _from_window(self, left_out: np.ndarray, q) -> np.ndarray | None:
        start, end, window, at_or_below = self._window(q)
        qs = np.atleast_1d(np.true_divide(q, 100))
        lo, hi, gamma = percentile_positions(self.n - left_out.size, qs)
        kept = at_or_below
        if left_out.size:
            out = np.sort(self.M[left_out].T, axis=1)       # columns x rows left out
            kept = at_or_below - np.stack([np.searchsorted(o, w, side="right") for o, w in zip(out, window)])
        columns = np.arange(window.shape[0])
        values: dict[int, np.ndarray] = {}
        for rank in sorted({int(lo[0]), int(hi[0])}):
            if rank < start:            # below the window: values under it could be the answer
                return None
            reached = kept >= rank + 1
            place = reached.argmax(axis=1)
            value = window[columns, place]
            # the count at the window's last value is exact only when nothing above ties with it
            if not (reached[columns, place].all() and (end == self.n or (value < window[:, -1]).all())):
                return None
            values[rank] = value
        return interpolate_percentiles(values, q, lo, hi, gamma)


def _sorted_window(M: np.ndarray, start: int, end: int) -> np.ndarray:
    """Each column's values at sorted places ``start`` to ``end`` (excluded), sorted: (columns x
    width). Found on a copy of the columns (M may be in Fortran order, its transpose contiguous),
    half of them per core when there are many values."""
    columns = np.array(M.T, order="C")
    window = np.empty((columns.shape[0], end - start))

    def find(parts) -> None:
        for a, b in parts:
            rows = columns[a:b]
            rows.partition(start, axis=1)
            if end - 1 > start:
                rows[:, start + 1:].partition(end - 2 - start, axis=1)
            window[a:b] = np.sort(rows[:, start:end], axis=1)

    half = columns.shape[0] // 2
    in_two_threads(find, [(0, half), (half, columns.shape[0])], half > 0 and columns.size >= TWO_THREADS_MIN // 4)
    return window
