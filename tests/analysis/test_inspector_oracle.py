"""etscope's per-event statistics against ExecuTorch's Inspector on the same real files."""
import csv
from collections import defaultdict

import numpy as np
import pytest

from etscope.analysis.ops import per_op as ops
from etscope.profile import load

STATS = (("p10_ms", "p10 (ms)"), ("p50_ms", "p50 (ms)"), ("p90_ms", "p90 (ms)"),
         ("mean_ms", "avg (ms)"), ("min_ms", "min (ms)"), ("max_ms", "max (ms)"))


@pytest.mark.parametrize("name", ["cnn", "llama_nodebug"])
def test_every_inspector_row_matches_within_0_1_percent(real, name):
    profile = load(real / f"{name}.etdump")
    # The Inspector hides OPERATOR_CALL wrappers; everything else has one row per event signature.
    ours = defaultdict(list)
    # The Inspector counts every run (the views leave warm-up runs out: stats.steady_runs); the
    # statistics code is checked over the same runs as the Inspector's.
    for s in ops.event_stats(profile, steady=np.ones(profile.n_runs, dtype=bool)):
        if s.role != "operator_call":
            ours[(s.block, s.name)].append(s)
    rows = list(csv.DictReader(open(real / f"{name}.inspector.tsv"), delimiter="\t"))
    assert rows
    for r in rows:
        candidates = ours[(r["event_block_name"], r["event_name"])]
        assert candidates, r["event_name"]
        s = candidates.pop(0)  # both list signatures in order of first appearance
        for mine, theirs in STATS:
            assert s.in_ms(mine.removesuffix("_ms")) == pytest.approx(float(r[theirs]), rel=1e-3, abs=1e-9), (r["event_name"], mine)
    assert not any(ours.values()), "etscope has events the Inspector does not show"
