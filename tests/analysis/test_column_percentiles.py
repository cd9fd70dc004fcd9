"""ColumnPercentiles: the percentile of each column over all rows but a few, read from a sorted
window, must be np.percentile of the kept rows to the bit, and fall back when it cannot be."""
import numpy as np
import pytest

from etscope.analysis.llm import column_percentiles as CP
from etscope.analysis.llm.column_percentiles import ColumnPercentiles


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert np.array_equal(a.view(np.int64), b.view(np.int64)), (a, b)


@pytest.mark.parametrize("kind", ["continuous", "ties", "two_values", "constant"])
def test_leaving_rows_out_gives_numpys_percentile(kind):
    rng = np.random.default_rng(7)
    n, k = 1500, 6
    if kind == "continuous":
        M = rng.lognormal(3, 1, (n, k))
    elif kind == "ties":
        M = rng.integers(0, 40, (n, k)).astype(np.float64)      # many equal values at every place
    elif kind == "two_values":
        M = np.where(rng.random((n, k)) < 0.5, 1.0, 2.0)
    else:
        M = np.full((n, k), 3.5)
    cp = ColumnPercentiles(M)
    for q in (0, 10, 25, 50, 75, 90, 100, 37.5, np.float64(50)):
        for left in (0, 1, 2, 5, 30, cp.max_left_out, cp.max_left_out + 1, 700):
            for trial in range(3):
                rows = np.ones(n, dtype=bool)
                if left:
                    # the left-out rows: random, or all among the smallest / largest of column 0
                    pick = [rng.choice(n, left, replace=False), np.argsort(M[:, 0], kind="stable")[:left],
                            np.argsort(M[:, 0], kind="stable")[-left:]][trial]
                    rows[pick] = False
                _same_bits(cp(rows, q), np.percentile(M[rows], q, axis=0))


def test_the_window_answers_and_falls_back(monkeypatch):
    """Small numbers of rows left out are read from the window (no partition of the kept rows);
    more than it covers go to percentile_rows."""
    rng = np.random.default_rng(3)
    M = rng.random((4000, 5))
    cp = ColumnPercentiles(M)
    calls = []
    real = CP.percentile_rows
    monkeypatch.setattr(CP, "percentile_rows", lambda a, q: calls.append(a.shape) or real(a, q))
    rows = np.ones(4000, dtype=bool)
    rows[[5, 17]] = False
    _same_bits(cp(rows, 50), np.percentile(M[rows], 50, axis=0))
    assert calls == []
    rows[:cp.max_left_out + 1] = False
    _same_bits(cp(rows, 50), np.percentile(M[rows], 50, axis=0))
    assert len(calls) == 1


def test_non_finite_values_go_to_the_partition():
    M = np.random.default_rng(1).random((300, 3))
    M[10, 1] = np.nan
    M[11, 2] = np.inf
    cp = ColumnPercentiles(M)
    assert not cp.usable
    rows = np.ones(300, dtype=bool)
    rows[4] = False
    _same_bits(cp(rows, 50), np.percentile(M[rows], 50, axis=0))


@pytest.mark.parametrize("order", ["C", "F"])
def test_the_matrix_is_left_as_it_was(order):
    """The window is found on a copy, whatever the matrix's memory order (a Fortran-ordered
    matrix's transpose is contiguous: partitioning it in place would reorder the matrix)."""
    M = np.asarray(np.random.default_rng(5).random((500, 4)), order=order)
    before = M.copy()
    cp = ColumnPercentiles(M)
    rows = np.ones(500, dtype=bool)
    rows[[1, 2]] = False
    for q in (50, 75):
        _same_bits(cp(rows, q), np.percentile(before[rows], q, axis=0))
    assert np.array_equal(M, before)


@pytest.mark.parametrize("n", [3, 4, 9, 10, 1000, 1001])
def test_whether_a_median_reaches_a_threshold_is_np_median_s_answer(n):
    """cost_split keeps instructions whose median is at least 1 µs; counted instead of a median
    per column, with the columns whose middle values straddle the threshold partitioned."""
    from etscope.analysis.llm.cost_profile import _median_at_least

    rng = np.random.default_rng(n)
    t = 1000.0
    below = np.nextafter(t, 0)
    cols = [rng.lognormal(np.log(t), 0.05, n), np.full(n, t), np.full(n, below),
            np.r_[np.full(n // 2, below), np.full(n - n // 2, t)],          # half below, half at: the tie
            np.r_[np.full(n // 2, below), np.full(n - n // 2, 3 * t)],
            np.r_[np.full(n // 2, 0.0), np.full(n - n // 2, 2 * t)],        # mean of the middle exactly t
            np.r_[np.full(n // 2, 0.0), np.full(n - n // 2, np.inf)],
            rng.permutation(np.r_[np.full(n // 2, below), np.full(n - n // 2, t)])]
    T = np.stack(cols, axis=1)
    for M in (T, np.asfortranarray(T)):
        assert np.array_equal(_median_at_least(M, t), np.median(M, axis=0) >= t)
