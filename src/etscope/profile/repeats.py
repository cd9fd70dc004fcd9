"""Runs that logged the same events: a static graph writes, run after run, the same events in the
same order, only their times and values differ. Checked here once, column by column, so the
analyses that depend only on what ran (not on how long) can read the first run for all of them."""
from __future__ import annotations

import weakref

import numpy as np

from etscope.arrays import unique
from etscope.profile.model import Profile

# What identifies an event apart from its times and value: runs equal in these logged the same.
IDENTITY_COLUMNS = ("kind", "role", "instruction_id", "name", "delegate_id_str")


# Per profile: the columns the answer rests on (weakly, so that a replaced event table is neither
# kept alive nor mistaken for the new one) and the answer. The build, the method split and llm ask.
_checked: "weakref.WeakKeyDictionary[Profile, tuple]" = weakref.WeakKeyDictionary()
_READ = IDENTITY_COLUMNS + ("execute",)


def identical_runs(profile: Profile) -> slice | None:
    """The first run's events when every Execute run's events are the same in ``IDENTITY_COLUMNS``
    (runs of one length, back to back in the file, their events and only theirs in their run:
    checked), else None. Checked again only when a column it reads was replaced."""
    arrays = [profile.events[c] for c in _READ] + [profile.runs["event_count"], profile.runs["etdump_run"]]
    hit = _checked.get(profile)
    if hit is not None and all(ref() is a for ref, a in zip(hit[0], arrays)):
        return hit[1]
    found = _identical_runs(profile)
    _checked[profile] = ([weakref.ref(a) for a in arrays], found)
    return found


def _identical_runs(profile: Profile) -> slice | None:
    ev = profile.events
    n = profile.n_runs
    counts = np.asarray(profile.runs["event_count"], dtype=np.int64)
    if n < 2 or counts[0] == 0 or (counts != counts[0]).any():
        return None
    k = int(counts[0])
    first = profile.etdump.runs[int(profile.runs["etdump_run"][0])].first_event
    last = profile.etdump.runs[int(profile.runs["etdump_run"][-1])].first_event
    block = slice(first, first + n * k)
    if last != first + (n - 1) * k or block.stop > profile.n_events:
        return None
    ex = ev["execute"][block].reshape(n, k)
    if not (ex == np.arange(n)[:, None]).all() or int((ev["execute"] >= 0).sum()) != n * k:
        return None
    if not _repeats_of_identical_runs(profile, k):
        for col in IDENTITY_COLUMNS:
            rows = ev[col][block].reshape(n, k)
            if not (rows == rows[0]).all():
                return None
    return slice(first, first + k)


# Per profile, its identity columns as the build made them from what was read (weakly, as above).
_as_read: "weakref.WeakKeyDictionary[Profile, list]" = weakref.WeakKeyDictionary()


def columns_as_read(profile: Profile) -> None:
    """Record that ``profile``'s identity columns are those ``profile.etdump.repeats_of`` describes
    (the build calls it); a column replaced later is compared again."""
    _as_read[profile] = [weakref.ref(profile.events[c]) for c in IDENTITY_COLUMNS]


MAX_ROOT_RUNS = 64     # runs other runs repeat, compared with each other (more: every run is compared)


def _repeats_of_identical_runs(profile: Profile, k: int) -> bool:
    """Every Execute run repeats (``EtdumpData.repeats_of``: the reader compared the bytes, equal
    in every column but the times; roles follow from those columns) or is one of a few runs whose
    ``k`` events are the same in the identity columns (compared here): then all are the same."""
    of = profile.etdump.repeats_of
    columns = _as_read.get(profile)
    if of is None or columns is None or any(ref() is not profile.events[c] for ref, c in zip(columns, IDENTITY_COLUMNS)):
        return False              # not the columns the reader's repeats_of describes (replaced since)
    runs = np.asarray(profile.runs["etdump_run"], dtype=np.int64)
    roots = unique(np.where(of[runs] >= 0, of[runs], runs))
    if roots.size > MAX_ROOT_RUNS:
        return False
    data, ev = profile.etdump, profile.events
    at = data.run_firsts()[roots].tolist()
    if (data.run_counts()[roots] != k).any():
        return False
    for col in IDENTITY_COLUMNS:
        first = ev[col][at[0]:at[0] + k]
        if any(not np.array_equal(ev[col][a:a + k], first) for a in at[1:]):
            return False
    return True


def distinct_event_slices(profile: Profile) -> list[slice]:
    """Slices of the events that hold every event's identity (``IDENTITY_COLUMNS``) at least once:
    with identical runs, the first of them and the events outside them (load, init); else all."""
    n = profile.n_events
    first = identical_runs(profile)
    if first is None:
        return [slice(0, n)]
    end = first.start + profile.n_runs * (first.stop - first.start)      # past the identical runs
    return [s for s in (slice(0, first.stop), slice(end, n)) if s.stop > s.start]
