"""The Inspector-decoded tensor of a TensorId (``NAME.oracle.npz``, keyed r<RunData>_e<event>_t<item>,
written by tools/make_numerics_fixtures.py and tools/make_numerics_pairs.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from etscope.profile import event_runs

NUM = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "numerics"


def oracle_of(p, name):
    """TensorId -> the Inspector's decoded array (from the npz), by RunData/event/item."""
    o = np.load(NUM / f"{name}.oracle.npz")
    data = p.etdump
    firsts = [r.first_event for r in data.runs]

    def get(tid):
        e = int(data.tensors.columns["event"][tid.index])
        r = int(event_runs(p, np.array([e]))[0])
        return o[f"r{r}_e{e - firsts[r]}_t{int(data.tensors.columns['item'][tid.index])}"]
    return get
