"""profile/subset.py: a profile of some Execute runs keeps everything outside the runs and each
kept event's place in the file."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from etscope.profile import end_times, load, select_runs

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_selected_runs_keep_their_events_and_their_file_positions():
    p = load(REAL / "cnn.etdump", REAL / "cnn.etrecord", REAL / "cnn.pte")
    keep = np.zeros(p.n_runs, dtype=bool)
    keep[[1, 4, 7]] = True
    s = select_runs(p, keep)
    assert s.n_runs == 3 and np.array_equal(s.runs["latency_ns"], p.runs["latency_ns"][keep])
    ex = p.events["execute"]
    wanted = np.flatnonzero((ex < 0) | np.isin(ex, [1, 4, 7]))           # load/init stay
    assert np.array_equal(s.events["file_event"], wanted)
    for k in ("name", "start", "role", "value"):
        assert np.array_equal(s.events[k], p.events[k][wanted], equal_nan=True), k
    assert np.array_equal(end_times(s), end_times(p)[wanted])
    assert sorted(set(s.events["execute"].tolist())) == [-1, 0, 1, 2]
    assert s.method == p.method and s.instructions.keys() == p.instructions.keys()
    assert s.etdump.event_count == len(wanted)
    # A subset of a subset still points into the file.
    s2 = select_runs(s, np.array([False, True, False]))
    assert np.array_equal(s2.events["file_event"], np.flatnonzero((ex < 0) | (ex == 4)))


def test_compact_runs_equals_select_runs_and_uses_the_profile_up():
    """compact_runs moves the kept events to the front of the profile's own buffers (no copy of a
    big phase): the result equals select_runs' column for column, and the given profile is emptied
    so that a later use fails instead of reading moved data."""
    from etscope.analysis.views.summary import summarize
    from etscope.profile import compact_runs

    for name in ("llama", "gen_llama"):
        keep = np.arange(load(REAL / f"{name}.etdump").n_runs) % 3 != 0
        copied = select_runs(load(REAL / f"{name}.etdump"), keep)
        p = load(REAL / f"{name}.etdump")
        moved = compact_runs(p, keep)
        assert p.events == {} and p.etdump.events == {}
        assert set(moved.events) == set(copied.events)
        for k in copied.events:
            assert np.array_equal(moved.events[k], copied.events[k], equal_nan=True), k
        assert [(r.first_event, r.event_count) for r in moved.etdump.runs] == \
            [(r.first_event, r.event_count) for r in copied.etdump.runs]
        assert summarize(moved).runs == summarize(copied).runs
