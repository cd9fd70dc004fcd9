"""The fast path of ops.event_stats (runs with identical event sequences) gives exactly the rows and
samples of the general path."""
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis import ops
from etscope.profile import load

FIX = Path(__file__).resolve().parents[1] / "fixtures"
FILES = sorted(FIX.glob("real/*.etdump")) + sorted(FIX.glob("qnn_etdump/*.etdump"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fast_path_equals_general_path(monkeypatch, path):
    fast_p = load(path)
    fast = ops.event_stats(fast_p)
    fast_samples = ops.samples(fast_p, fast)
    monkeypatch.setattr(ops, "_template_event_stats", lambda p: None)
    gen_p = load(path)
    gen = ops.event_stats(gen_p)
    gen_samples = ops.samples(gen_p, gen)

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "group"} for r in rows]

    assert strip(fast) == strip(gen)
    np.testing.assert_array_equal(fast_samples, gen_samples)


def test_fast_path_is_used_on_static_graphs():
    assert ops._template_event_stats(load(FIX / "real" / "gen_llama.etdump")) is not None
