"""A Profile restricted to some Execute runs (or some events): boolean selection of the event
columns, the ETDump's RunData following."""
from __future__ import annotations

import dataclasses

import numpy as np

from etscope.profile.instructions import join_method
from etscope.profile.model import Profile, run_ends

def select_runs(profile: Profile, keep, method: str | None = None, phase=None) -> Profile:
    """A Profile of the Execute runs where ``keep`` (bool per run) is true, joined again to
    ``method`` (default: the profile's), .pte and ETRecord; events outside the runs (load, init)
    stay. ``phase``: the ``PhaseSelection`` these runs are."""
    data, events, runs = run_subset(profile, np.asarray(keep, dtype=bool))
    return _sub_profile(profile, data, events, runs, method, phase)


def _sub_profile(profile: Profile, data, events: dict, runs: dict, method: str | None, phase) -> Profile:
    """The Profile of a subset of ``profile``'s runs (``data``, ``events``, ``runs``), joined to
    ``method`` (default: the profile's)."""
    sub = Profile(etdump=data, strings=profile.strings, events=events, runs=runs, instructions={},
                  method=None, etrecord=profile.etrecord, pte=profile.pte, sources=dict(profile.sources),
                  warnings=[], method_split=profile.method_split, phase=phase)
    join_method(sub, profile.etrecord, profile.pte, method or profile.method)
    sub.accumulation = profile.accumulation     # its events are the de-duplicated ones
    return sub


COMPACT_CHUNK = 1 << 20      # events moved per step by compact_runs (its only temporary memory)


def compact_runs(profile: Profile, keep, method: str | None = None, phase=None) -> Profile:
    """``select_runs`` without the copy: the kept events are moved to the front of the profile's own
    column buffers (in chunks, each write behind its read) and the new Profile views them. The
    profile given is used up: its events are emptied, so a later use fails loudly instead of reading
    moved data. For the largest phase of a big LLM file, whose copy would double the memory."""
    keep = np.asarray(keep, dtype=bool)
    ev = profile.events
    keep_event = _kept_events(keep, ev["execute"])
    movable = {k: v for k, v in ev.items() if v.ndim == 1 and v.strides[0] != 0 and v.flags.writeable}
    cols = list(movable.values())
    if len(movable) != sum(1 for v in ev.values() if v.ndim != 1 or v.strides[0] != 0) or any(
            np.may_share_memory(a, b) for i, a in enumerate(cols) for b in cols[i + 1:]):
        return select_runs(profile, keep, method=method, phase=phase)     # read-only or shared columns: copy
    n, w = len(keep_event), 0
    file_event = ev.get("file_event")
    new_file_event = None if file_event is not None else _positions(keep_event)
    for a in range(0, n, COMPACT_CHUNK):
        m = keep_event[a:a + COMPACT_CHUNK]
        k = int(m.sum())
        if k:
            for col in movable.values():
                col[w:w + k] = col[a:a + COMPACT_CHUNK][m]
        w += k
    events = {key: (movable[key][:w] if key in movable else _select(v, keep_event)) for key, v in ev.items()}
    if new_file_event is not None:
        events["file_event"] = new_file_event
    events["execute"][:] = _renumbered_runs(keep)[events["execute"]]
    data = _data_of(profile, events, keep_event)
    sub = _sub_profile(profile, data, events, {k: np.asarray(v)[keep] for k, v in profile.runs.items()},
                       method, phase)
    profile.events = {}                                    # used up: see the docstring
    profile.etdump = dataclasses.replace(profile.etdump, events={}, tensors=None)
    return sub


def run_subset(profile: Profile, keep: np.ndarray):
    """The profile's ETDump data, events and runs restricted to the Execute runs where ``keep``
    is true (events outside the runs, such as load and init, stay): boolean selection, so only
    the kept events are copied. RunData of dropped runs stay listed, with no events."""
    execute = profile.events["execute"]
    data, events = event_subset(profile, _kept_events(keep, execute))
    events["execute"] = _renumbered_runs(keep)[events["execute"]].astype(execute.dtype)
    runs = {k: np.asarray(v)[keep] for k, v in profile.runs.items()}
    return data, events, runs


def event_subset(profile: Profile, keep_event: np.ndarray):
    """The profile's ETDump data and events where ``keep_event``; each RunData's first event and
    count follow. Events keep their index in the file (column ``file_event``, added on the first
    subset: until then an event's position is its index)."""
    ev = profile.events
    events = {k: _select(v, keep_event) for k, v in ev.items()}
    if "file_event" not in events:
        events["file_event"] = _positions(keep_event)
    return _data_of(profile, events, keep_event), events


def _kept_events(keep: np.ndarray, execute: np.ndarray) -> np.ndarray:
    """Per event, whether its run is kept (events outside runs, execute -1, always are)."""
    return np.append(keep, True)[execute]


def _renumbered_runs(keep: np.ndarray) -> np.ndarray:
    """Old run index -> new one (-1: dropped), with a last entry for execute -1."""
    return np.append(np.where(keep, np.cumsum(keep) - 1, -1), -1)


def _data_of(profile: Profile, events: dict, keep_event: np.ndarray):
    """The profile's ETDump data for the kept ``events``: each RunData's first event and count
    follow, the debug tensors are cut alike."""
    data = profile.etdump
    counts = _kept_per_run(profile, events, keep_event)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    run_data = [dataclasses.replace(r, first_event=int(f), event_count=int(c))
                for r, f, c in zip(data.runs, firsts, counts)]
    tensors = data.tensors.subset(keep_event) if data.tensors is not None else None
    return dataclasses.replace(data, runs=run_data, events={k: events[k] for k in data.events}, tensors=tensors,
                               repeats_of=None)


def _positions(keep_event: np.ndarray) -> np.ndarray:
    """The kept events' positions in the file, int32 when they fit (half the memory on big files)."""
    pos = np.flatnonzero(keep_event)
    return pos.astype(np.int32) if len(keep_event) < 2 ** 31 else pos


def _kept_per_run(profile: Profile, events: dict[str, np.ndarray], keep_event: np.ndarray) -> np.ndarray:
    """Per RunData, how many of its events are kept."""
    data = profile.etdump
    if "run" in events:
        return np.bincount(events["run"], minlength=len(data.runs)) if len(events["run"]) else \
            np.zeros(len(data.runs), np.int64)
    ends = run_ends(data)
    counts = np.zeros(len(ends), dtype=np.int64)
    nonempty = np.flatnonzero(np.diff(ends, prepend=0) > 0)
    if nonempty.size:           # each segment from a non-empty run's first event to the next one's
        counts[nonempty] = np.add.reduceat(keep_event, (ends - np.diff(ends, prepend=0))[nonempty], dtype=np.int64)
    return counts


def _select(column: np.ndarray, keep: np.ndarray) -> np.ndarray:
    # Columns holding one value everywhere are zero-stride views (see formats.etdump): keep them so.
    if column.ndim == 1 and column.strides[0] == 0 and len(column):
        return np.broadcast_to(column[:1], (int(keep.sum()),))
    return column[keep]
