"""etscope.arrays: np.unique's and np.median's answers, without their slow paths."""
import numpy as np
import pytest

from etscope.arrays import unique


@pytest.mark.parametrize("a", [
    np.array([], dtype=np.int64), np.array([7]), np.array([3, 1, 3, 2, 1]),
    np.random.default_rng(0).integers(-50, 50, 10_000).astype(np.int32),
    np.random.default_rng(1).integers(0, 2 ** 62, 5_000, dtype=np.uint64),
    np.array([[2, 1], [1, 0]], dtype=np.int8),
])
def test_unique_matches_numpy(a):
    got = unique(a)
    assert got.dtype == a.dtype and got.tolist() == np.unique(a).tolist()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_unique_matches_numpy_on_every_integer_dtype(dtype):
    """Narrow and wide spans, type limits included."""
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    for trial in range(200):
        n = int(rng.integers(0, 3000))
        lo = int(rng.integers(max(info.min, -10 ** 6), min(info.max, 10 ** 6)))
        span = int(rng.integers(1, 20_000))
        vals = rng.integers(lo, min(info.max, lo + span) + 1, n).astype(dtype) if n else np.zeros(0, dtype)
        if trial % 7 == 0 and n:
            vals[0], vals[-1] = info.max, info.min
        got = unique(vals)
        assert got.dtype == vals.dtype and np.array_equal(got, np.unique(vals)), (lo, span, n)


def test_unique_inverse_matches_numpy_on_narrow_and_wide_spans():
    from etscope.arrays import unique_inverse

    rng = np.random.default_rng(7)
    for a in (rng.integers(-5, 40, 1000).astype(np.int32), rng.integers(0, 1 << 40, 1000),
              np.array([3], dtype=np.int64), np.zeros(0, dtype=np.int32)):
        for max_range in (1 << 22, 4):     # the table, and numpy's sort
            u, inv = unique_inverse(a, max_range)
            nu, ninv = np.unique(a, return_inverse=True)
            assert u.dtype == a.dtype and np.array_equal(u, nu) and np.array_equal(inv, ninv.reshape(-1))
            assert np.array_equal(u[inv], a)


@pytest.mark.filterwarnings("ignore:All-NaN slice")
def test_median_is_numpys_to_the_bit():
    from etscope.arrays import median, nanmedian

    rng = np.random.default_rng(7)
    for trial in range(600):
        shape = tuple(int(x) for x in rng.integers(1, 7, int(rng.integers(1, 3))))
        kind = trial % 5
        a = rng.normal(size=shape) * 10.0 ** int(rng.integers(-5, 15)) if kind < 2 else rng.integers(-999, 999, shape)
        if kind == 1:
            a.flat[int(rng.integers(0, a.size))] = np.nan
        a = a.astype(np.uint32) if kind == 3 else a.astype(np.float32) if kind == 4 else a
        for axis in [None, *range(a.ndim), -1]:
            want, got = np.median(a, axis=axis), median(a, axis=axis)
            assert type(got) is type(want) and np.shape(got) == np.shape(want)
            assert np.array_equal(got, want, equal_nan=True)
            mine = a.copy()                 # overwrite: the same numbers, the copy reordered at most
            assert np.array_equal(median(mine, axis=axis, overwrite=True), want, equal_nan=True)
            assert np.array_equal(np.sort(mine, axis=None), np.sort(a, axis=None), equal_nan=True)
        flat = a.reshape(-1).astype(float)
        assert np.array_equal(nanmedian(flat), np.nanmedian(flat), equal_nan=True)


def test_median_leaves_numpy_ma_unimported():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from etscope.arrays import median, nanmedian; "
            "median(np.array([3.0, np.nan, 1.0])); nanmedian(np.array([1.0, np.nan])); print('numpy.ma' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_isin_and_stable_argsort_are_numpys():
    from etscope.arrays import isin, stable_argsort

    rng = np.random.default_rng(3)
    for _ in range(300):
        a = rng.integers(-70_000, 70_000, int(rng.integers(0, 300)))
        v = rng.integers(-80_000, 80_000, int(rng.integers(0, 12)))
        small = a % 1000
        assert (isin(a, v) == np.isin(a, v)).all()
        assert (isin(small.astype(np.int32), v % 1000) == np.isin(small, v % 1000)).all()
        assert (stable_argsort(small) == np.argsort(small, kind="stable")).all()
        assert (stable_argsort(a) == np.argsort(a, kind="stable")).all()


def _same_bits(got, want):
    """Equal bit for bit, NaN for NaN; a zero may differ in sign (0.0 == -0.0: which of the two a
    sort or a partition puts first among equals is the algorithm's)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    same = (got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want)) | (
        (got == 0) & (want == 0))
    assert same.all(), (got[~same], want[~same])


@pytest.mark.parametrize("cols", [1, 2, 5, 41, 256, 257, 3000])
def test_percentile_rows_is_numpys_to_the_bit(cols):
    """Sorted short rows and partitioned long rows give np.percentile's numbers, bit for bit: every
    percentile form (scalar int/float, lists, 0 and 100), ties, signed zeros, infinities and NaN."""
    from etscope.arrays import percentile_rows

    rng = np.random.default_rng(cols)
    blocks = [rng.normal(size=(7, cols)) * 10.0 ** rng.integers(-3, 6, (7, 1)),
              rng.integers(-3, 4, (5, cols)).astype(np.float64),          # many ties
              np.where(rng.random((4, cols)) < 0.5, 0.0, -0.0),           # signed zeros only
              rng.normal(size=(3, cols))]
    blocks[3][0, rng.integers(cols)] = np.inf
    blocks[3][1, rng.integers(cols)] = -np.inf
    blocks[3][2, rng.integers(cols)] = np.nan
    a = np.vstack(blocks)
    for q in (25, 50, 75.0, 0, 100, 2.5, 97.5, 99.9, [25, 75], [10, 50, 90, 99], np.array([0.0, 100.0]), [33.3]):
        with np.errstate(invalid="ignore"):          # inf - inf in the interpolation, as numpy's own
            want = np.percentile(a, q, axis=1)
            got = percentile_rows(a.copy(), q)
        _same_bits(got, want)


def test_percentile_rows_falls_back_outside_its_case():
    from etscope.arrays import percentile_rows

    ints = np.arange(12).reshape(3, 4)
    assert np.array_equal(percentile_rows(ints.copy(), 50), np.percentile(ints, 50, axis=1))
    with pytest.raises(ValueError):
        percentile_rows(np.ones((2, 3)), 101)


def test_partition_columns_in_two_threads_is_numpys(monkeypatch):
    """Each column partitioned as numpy partitions it, whether the halves run on two threads or
    not, on integers and on floats with NaN; an error in the other thread reaches the caller."""
    import etscope.arrays as A

    rng = np.random.default_rng(5)
    ints = rng.integers(-50, 50, (3000, 401)).astype(np.int32)
    floats = rng.normal(size=(2000, 600))
    floats[rng.random(floats.shape) < 0.01] = np.nan
    ranks = [0, 10, 11, 1000, 1001, 1999]
    monkeypatch.setattr(A, "TWO_THREADS_MIN", 1)
    monkeypatch.setattr(A, "cores", lambda: 2)
    for a in (ints, floats):
        want = a.copy()
        want.partition(ranks, axis=0)
        got = a.copy()
        A.partition_columns(got, ranks)
        assert np.array_equal(got[ranks], want[ranks], equal_nan=True)
        assert np.array_equal(np.sort(got, axis=0), np.sort(a, axis=0), equal_nan=True)
    with pytest.raises(ValueError):
        A.partition_columns(ints.copy(), [5000])          # a rank past the rows: numpy's error


def test_percentiles_and_medians_on_two_threads_are_numpys(monkeypatch):
    """The threaded paths (rows or columns split between two cores) give numpy's numbers."""
    import etscope.arrays as A

    monkeypatch.setattr(A, "TWO_THREADS_MIN", 4)
    monkeypatch.setattr(A, "cores", lambda: 2)
    rng = np.random.default_rng(9)
    for shape in ((7, 300), (301, 9), (2, 2), (3, 1000)):
        a = rng.normal(size=shape)
        a[0, 0] = np.nan
        with np.errstate(invalid="ignore"):
            for q in (50, [25, 75], 99.9):
                _same_bits(A.percentile_rows(a.copy(), q), np.percentile(a, q, axis=1))
        for axis in (0, 1, None):
            _same_bits(A.median(a, axis=axis), np.median(a, axis=axis))


def test_percentile_of_one_series_is_numpys():
    from etscope.arrays import percentile

    rng = np.random.default_rng(11)
    for a in (rng.normal(size=501), rng.integers(-9, 9, 64), [3.0], np.array([1.0, np.nan, 2.0]), [5, 1, 4]):
        for q in (50, [25, 75], [10, 90], [25, 50, 75], 2.5):
            _same_bits(percentile(a, q), np.percentile(a, q))
