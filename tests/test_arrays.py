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
