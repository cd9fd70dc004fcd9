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


def _column_cases():
    rng = np.random.default_rng(11)
    ints = rng.integers(0, 3_000_000, (1001, 7)).astype(np.float64)          # int32 path
    wide = ints * 4096.0                                                       # past int32: float path
    frac = ints + 0.25
    odd = rng.standard_normal((64, 5)) * 1e6
    odd[3, 0], odd[10, 1], odd[0, 2], odd[5, 2], odd[7, 3] = np.nan, np.inf, -np.inf, np.nan, -5.0
    rough = rng.standard_normal((5000, 1)) * 10.0 ** rng.integers(-6, 7, (5000, 1))   # sums depend on order
    return {"one_column": rough, "two_columns": np.ascontiguousarray(rough.reshape(2500, 2)), "int32": ints,
            "wide": wide, "fractions": frac, "nan_inf": odd, "two_rows": ints[:2].copy(), "one_row": ints[:1].copy(),
            "no_rows": ints[:0].copy()}


@pytest.mark.parametrize("case", list(_column_cases()))
@pytest.mark.parametrize("transform", [None, units.ns_to_ms])
def test_column_stats_equal_grouped_to_the_bit(case, transform):
    """One group per column of a complete matrix, samples in run order: exactly what grouped gives
    for the same samples (whichever of its sorts it takes), NaN and infinities included."""
    from etscope.analysis.stats import column_stats

    m = _column_cases()[case]
    n, k = m.shape
    groups = np.repeat(np.arange(k, dtype=np.int64), n)
    want = grouped(groups, m.T.reshape(-1).copy(), k, transform=transform)
    for overwrite in (False, True):
        work = m.copy()
        got = column_stats(work, transform=transform, overwrite=overwrite)
        assert got.keys() == want.keys()
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{case} {key}")
        if not overwrite:
            np.testing.assert_array_equal(work, m)


@pytest.mark.parametrize("case", list(_column_cases()))
@pytest.mark.parametrize("quantiles, extremes", [((10, 50, 90), True), ((50,), False), ((99,), True)])
def test_column_stats_of_fewer_percentiles_are_the_same_numbers(case, quantiles, extremes):
    """Asking for fewer percentiles (fewer positions to partition around) gives exactly those of
    the full set, and only them."""
    from etscope.analysis.stats import QUANTILES, column_stats

    m = _column_cases()[case]
    full = column_stats(m.copy(), transform=units.ns_to_ms)
    got = column_stats(m.copy(), transform=units.ns_to_ms, quantiles=quantiles, extremes=extremes)
    keys = {"count", "total", "mean"} | {f"p{q}" for q in quantiles} | ({"min", "max"} if extremes else set())
    assert set(got) == keys and set(quantiles) <= set(QUANTILES)
    for key in keys:
        np.testing.assert_array_equal(got[key], full[key], err_msg=f"{case} {key}")
