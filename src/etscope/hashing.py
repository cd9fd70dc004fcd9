"""Order-independent hashes of sets of integers, vectorised (numpy): used to group runs that
executed the same things without a Python object per event."""
from __future__ import annotations

import numpy as np

MIX1 = np.uint64(0x9E3779B97F4A7C15)
MIX2 = np.uint64(0xBF58476D1CE4E5B9)
MIX3 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, elementwise on uint64."""
    with np.errstate(over="ignore"):
        x = (np.asarray(x).astype(np.uint64) + MIX1).astype(np.uint64)
        x = (x ^ (x >> np.uint64(30))) * MIX2
        x = (x ^ (x >> np.uint64(27))) * MIX3
        return x ^ (x >> np.uint64(31))


def sum_u64(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Wrap-around uint64 sum per group (exact, unlike a float bincount)."""
    out = np.zeros(n, dtype=np.uint64)
    if groups.size:
        lo = values & np.uint64(0xFFFFFFFF)
        hi = values >> np.uint64(32)
        s_lo = np.bincount(groups, weights=lo.astype(np.float64), minlength=n)
        s_hi = np.bincount(groups, weights=hi.astype(np.float64), minlength=n)
        # Partial sums of 32-bit halves stay exact in float64 for < 2**21 events per run.
        with np.errstate(over="ignore"):
            out = (s_lo.astype(np.uint64) + (s_hi.astype(np.uint64) << np.uint64(32))).astype(np.uint64)
    return out
