"""Where the profile's timestamps start: the trace, the tables and the report place every timed
event relative to the first one."""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope.formats import etdump as etdump_format


def timed_mask(profile: P.Profile) -> np.ndarray:
    """Profile events whose start/end are timestamps (not QNN-style value events with start 0)."""
    ev = profile.events
    return (ev["kind"] == etdump_format.PROFILE) & (ev["start"] > 0)


def first_timed_ns(profile: P.Profile) -> int:
    """Start of the earliest timed event (0 when there is none): the origin of every timeline."""
    timed = timed_mask(profile)
    if not timed.any():
        return 0
    start = profile.events["start"]      # the minimum where timed: no copy of the timed starts (80 MB on 10M)
    return int(np.min(start, where=timed, initial=np.iinfo(start.dtype).max))


def since_origin(ns, t0: int) -> np.ndarray:
    """Exact ``ns - t0`` (int64) for raw timestamps, also past 2**63 (the schema's uint64): the
    difference is taken modulo 2**64 and read as signed, exact whenever it fits in int64. An int64
    array is read as the uint64 values it was cast from."""
    a = np.asarray(ns)
    u = a.view(np.uint64) if a.dtype == np.int64 else a.astype(np.uint64)
    with np.errstate(over="ignore"):
        return (u - np.uint64(t0)).view(np.int64)
