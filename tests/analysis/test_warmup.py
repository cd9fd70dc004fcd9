"""stats.leading_warmup: the one warm-up rule of `etscope llm` (per phase) and `etscope diff`."""
import numpy as np
import pytest

from etscope.analysis.stats import leading_warmup


@pytest.mark.parametrize("latency, expected", [
    ([10, 5] + [1] * 18, 2),          # each over 2x the median of the runs after it; cap 10% = 2
    ([10, 5, 4] + [1] * 17, 2),       # the cap holds
    ([1.9, 1, 1, 1], 0),              # under 2x
    ([3, 1, 1, 1], 1),                # 10% of 4 rounds to none: one is still allowed
    ([3, 1, 1], 0),                   # fewer than 4 runs are not judged
    ([1, 3, 1, 1, 1], 0),             # only leading runs
    ([3, np.nan, 1, 1], 1),           # missing latencies are left out of the median
    ([], 0),
])
def test_leading_warmup(latency, expected):
    assert leading_warmup(np.array(latency, dtype=float)) == expected
