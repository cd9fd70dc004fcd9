"""Delegate events that accumulated across executes (QNN's profiler can hand back every event
since its handle was created): detected, and each run keeps its own copy."""
from __future__ import annotations

import numpy as np

from etscope.arrays import unique_inverse
from etscope.profile.model import ROLE_DELEGATE_INTERNAL, Accumulation, Profile
from etscope.profile.repeats import identical_runs
from etscope.profile.subset import event_subset

_CHUNK = 1 << 20


def remove_accumulated_copies(profile: Profile) -> None:
    """Keep one copy of each delegate execute's events where the backend logged them accumulated.

    QNN's profiler may hand back every event since its profile handle was created, so execute k of
    a delegate logs the events of its executes 1..k, oldest first (whether it does is not settled
    in ExecuTorch's source: it is detected here). Such a delegate is recognised by all of: in its
    j-th run (j = 1, 2, ...) each event name occurs j times as often as in its first run, and
    the older copies repeat the values the earlier runs logged as their own. Each run then keeps
    its newest copy (the last occurrences of each name). Anything less regular is left alone."""
    ev = profile.events
    n_runs, n = profile.n_runs, profile.n_events
    ids = np.array(sorted(i for i, ins in profile.instructions.items() if ins.kind == "delegate"),
                   dtype=np.int64)
    if n_runs < 2 or not ids.size:
        return
    if identical_runs(profile) is not None:
        return      # every run logged the same events: none grows from one execute to the next
    role, execute, instr = ev["role"], ev["execute"], ev["instruction_id"]
    # Cheap first test: delegate-internal events per (instruction, run) growing 1x, 2x, 3x, ...
    # Counted sparsely (pairs that occur), in chunks: memory follows the events, not ids x runs.
    keys, counts = [], []
    for a in range(0, n, _CHUNK):
        sl = slice(a, a + _CHUNK)
        m = (role[sl] == ROLE_DELEGATE_INTERNAL) & (execute[sl] >= 0)
        if not m.any():
            continue
        i = instr[sl][m].astype(np.int64)
        k = np.minimum(np.searchsorted(ids, i), len(ids) - 1)
        ok = ids[k] == i
        u, c = np.unique(k[ok] * n_runs + execute[sl][m][ok], return_counts=True)
        keys.append(u)
        counts.append(c)
    if not keys:
        return
    pair, inv = np.unique(np.concatenate(keys), return_inverse=True)
    count = np.bincount(inv.reshape(-1), weights=np.concatenate(counts)).astype(np.int64)
    bounds = np.searchsorted(pair // n_runs, np.arange(len(ids) + 1))
    keep = None
    removed: dict[int, int] = {}
    for row, iid in enumerate(ids.tolist()):
        c = count[bounds[row]:bounds[row + 1]]           # per run holding its events, in run order
        present = pair[bounds[row]:bounds[row + 1]] % n_runs
        if present.size < 2 or not (c == c[0] * np.arange(1, present.size + 1)).all():
            continue
        idx = np.flatnonzero((role == ROLE_DELEGATE_INTERNAL) & (execute >= 0) & (instr == iid))
        drop = _older_copies(ev, idx, present)
        if drop is None:
            profile.warnings.append(
                f"the backend events of delegate instruction {iid} grow by one copy per execute, but "
                "the older copies do not repeat the earlier runs' values: kept as logged, not de-duplicated")
            continue
        if keep is None:
            keep = np.ones(n, dtype=bool)
        keep[idx[drop]] = False
        removed[iid] = int(drop.sum())
    if keep is None:
        return
    record = Accumulation(events_removed=removed, file_events=n)
    data, events = event_subset(profile, keep)
    runs = dict(profile.runs)
    runs["event_count"] = data.run_counts()[np.asarray(runs["etdump_run"], dtype=np.int64)]
    profile.etdump = data
    profile.events = events
    profile.runs = runs
    profile.accumulation = record
    profile.warnings.append(record.warning())


def _older_copies(ev, idx: np.ndarray, present: np.ndarray) -> np.ndarray | None:
    """For the delegate-internal events ``idx`` of one delegate (runs ``present`` hold its events;
    the j-th of them j copies): which are older copies. None when a copy's name counts or values
    differ from those the earlier run logged as its own."""
    run = ev["execute"][idx].astype(np.int64)
    ds = ev["delegate_id_str"][idx]
    _, code = unique_inverse(np.where(ds >= 0, ds, ev["name"][idx]))   # dense names
    code = code.reshape(-1).astype(np.int64)
    value = ev["value"][idx]
    rank = np.searchsorted(present, run)                  # 0 for the first run holding events
    width = int(code.max()) + 1
    key = rank * width + code                             # (run, name), in run order
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    sizes = np.diff(np.append(starts, ks.size))
    group = np.cumsum(np.r_[True, ks[1:] != ks[:-1]]) - 1
    occ = np.empty(idx.size, dtype=np.int64)
    occ[order] = np.arange(idx.size) - starts[group]
    count = np.empty(idx.size, dtype=np.int64)
    count[order] = sizes[group]
    per_copy = np.bincount(code[rank == 0], minlength=width)[code]   # occurrences per copy
    if not (count == (rank + 1) * per_copy).all():
        return None
    copy = occ // np.maximum(per_copy, 1)                 # which execute's copy (0 = first run's)
    newest = copy == rank
    # Each older copy must repeat what the run it came from logged as its own newest copy.
    depth = int(per_copy.max())
    slot = (copy * width + code) * depth + occ - copy * per_copy     # (execute copy, name, index)
    own_slot = slot[newest]
    by_slot = np.argsort(own_slot)
    at = np.searchsorted(own_slot[by_slot], slot)
    found = at < own_slot.size
    found[found] = own_slot[by_slot[at[found]]] == slot[found]
    if not found.all():
        return None
    if not np.array_equal(value[newest][by_slot[at]], value, equal_nan=True):
        return None
    return ~newest
