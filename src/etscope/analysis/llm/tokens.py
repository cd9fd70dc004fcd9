"""Token count per run from the shapes of the tensors the runs logged (debug events)."""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope.arrays import unique
from etscope.formats import etdump as etdump_format


def tokens_from_debug(profile: P.Profile) -> tuple[np.ndarray, str | None]:
    """Token count per run from the shapes of logged tensors (debug events), -1 when unknown.

    For every debug-event signature (instruction, occurrence) whose tensor keeps its rank but
    changes in exactly one dimension across runs, that dimension per run is a candidate; the
    candidate most signatures agree on is the token count.
    """
    n = profile.n_runs
    none = np.full(n, -1, dtype=np.int64)
    ev = profile.events
    if "tensor_shape" not in ev or n < 2:
        return none, None
    sel = (ev["kind"] == etdump_format.DEBUG) & (ev["execute"] >= 0)
    idx = np.nonzero(sel)[0]
    if idx.size == 0:
        return none, None
    shape = ev["tensor_shape"][idx].astype(np.int64)
    run = ev["execute"][idx].astype(np.int64)
    from etscope.analysis.ops.per_op import occurrences

    instr = ev["instruction_id"][idx].astype(np.int64)
    occ = occurrences(run, instr, np.zeros_like(run))
    codes = unique(shape[shape >= 0])
    dims = {}
    for c in codes:
        s = profile.strings[int(c)]
        try:
            dims[int(c)] = tuple(int(x) for x in s.split("x")) if s and s != "scalar" else ()
        except ValueError:
            dims[int(c)] = None
    # Matrix of shape codes: signature x run, for the signatures logged in every run (only those
    # can give a token count per run; the others would make it signatures x runs from as many events).
    key = instr * (int(occ.max()) + 1 if occ.size else 1) + occ
    sig, sinv = np.unique(key, return_inverse=True)
    sinv = sinv.reshape(-1)
    everywhere = np.bincount(sinv, minlength=len(sig)) == n
    row_of = np.cumsum(everywhere) - 1
    in_all = everywhere[sinv]
    M = np.full((int(row_of[-1]) + 1, n), -2, dtype=np.int64)
    M[row_of[sinv[in_all]], run[in_all]] = shape[in_all]
    votes: dict[tuple, int] = {}
    for row in M:
        if (row < 0).any():
            continue
        u = unique(row)
        if len(u) < 2 or len(u) > 64:
            continue
        ds = [dims.get(int(c)) for c in u]
        if any(d is None for d in ds) or len({len(d) for d in ds}) != 1 or not ds[0]:
            continue
        arr = np.array(ds)
        varying = np.nonzero((arr != arr[0]).any(axis=0))[0]
        if len(varying) != 1:
            continue
        pos = int(varying[0])
        lookup = {int(c): d[pos] for c, d in zip(u, ds)}
        cand = tuple(lookup[int(c)] for c in row)
        votes[cand] = votes.get(cand, 0) + 1
    if not votes:
        return none, None
    best, count = max(votes.items(), key=lambda kv: kv[1])
    tokens = np.array(best, dtype=np.int64)
    if (tokens < 1).any():
        return none, None
    return tokens, (f"debug events: the token dimension of {count} logged tensor(s) "
                    f"(of {len(sig)} per run) changes between runs")

