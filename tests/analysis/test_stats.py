"""analysis/stats.py grouped: statistics per group against numpy, and the same to the bit when the
caller lets it overwrite its inputs."""
from __future__ import annotations

import numpy as np
import pytest

from etscope import units
from etscope.analysis.stats import grouped


@pytest.mark.parametrize("integers", [True, False])      # packed sort / lexsort
@pytest.mark.parametrize("transform", [None, units.ns_to_ms])
def test_grouped_matches_numpy_and_overwriting_changes_nothing(integers, transform):
    rng = np.random.default_rng(7)
    groups = rng.integers(0, 9, 50_000).astype(np.int64)     # group 9 stays empty
    values = rng.integers(0, 3_000_000, groups.size).astype(np.float64)
    if not integers:
        values += 0.25
    kept = grouped(groups.copy(), values.copy(), 10, transform=transform)
    g, v = groups.copy(), values.copy()
    over = grouped(g, v, 10, transform=transform, overwrite=True)
    assert over.keys() == kept.keys()
    for k in kept:
        np.testing.assert_array_equal(over[k], kept[k], err_msg=k)
    f = (lambda x: x) if transform is None else transform
    for j in range(9):
        x = f(values[groups == j])
        assert kept["count"][j] == x.size
        for q in (10, 50, 90, 99):
            assert kept[f"p{q}"][j] == pytest.approx(np.percentile(x, q), rel=1e-12)
        assert kept["min"][j] == x.min() and kept["max"][j] == x.max()
        assert kept["total"][j] == pytest.approx(x.sum(), rel=1e-12)
    assert kept["count"][9] == 0 and np.isnan(kept["p50"][9])
