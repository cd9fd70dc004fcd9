"""The Inspector-decoded tensor of a TensorId (``NAME.oracle.npz``, keyed r<RunData>_e<event>_t<item>,
written by tools/make_numerics_fixtures.py and tools/make_numerics_pairs.py; the drift pair's are
packed, equal tensors stored once: ``_pack_oracle`` there)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from etscope.profile import event_runs

NUM = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "numerics"


class _Packed:
    """The packed layout read back as a mapping key -> array (blob/keys/offset/nbytes/dtype/ndim/shape)."""

    def __init__(self, z):
        self.blob = z["blob"]
        self.at = {str(k): i for i, k in enumerate(z["keys"])}
        self.offset, self.nbytes, self.dtype = z["offset"], z["nbytes"], z["dtype"]
        self.ndim, self.shape = z["ndim"], z["shape"]

    def __getitem__(self, key):
        i = self.at[key]
        raw = self.blob[int(self.offset[i]):int(self.offset[i]) + int(self.nbytes[i])].tobytes()
        return np.frombuffer(raw, dtype=np.dtype(str(self.dtype[i]))).reshape(
            tuple(int(x) for x in self.shape[i][:int(self.ndim[i])]))


def load_oracle(name):
    o = np.load(NUM / f"{name}.oracle.npz")
    return _Packed(o) if "blob" in o.files else o


def oracle_of(p, name):
    """TensorId -> the Inspector's decoded array (from the npz), by RunData/event/item."""
    o = load_oracle(name)
    data = p.etdump
    firsts = [r.first_event for r in data.runs]

    def get(tid):
        e = int(data.tensors.columns["event"][tid.index])
        r = int(event_runs(p, np.array([e]))[0])
        return o[f"r{r}_e{e - firsts[r]}_t{int(data.tensors.columns['item'][tid.index])}"]
    return get
