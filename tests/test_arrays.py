"""etscope.arrays.unique: np.unique's answer, by sorting."""
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
