"""profile/build.py: each ETDump event's role, value and unit; the Execute runs; load = build of
what was read."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from etscope import units
from etscope.formats import etdump as etdump_format
from etscope.formats.etdump import read_etdump
from etscope.profile import (ROLE_DEBUG, ROLE_DELEGATE_CALL, ROLE_DELEGATE_INTERNAL, ROLE_KERNEL, ROLE_METHOD,
                             ROLE_OPERATOR_CALL, ROLE_OTHER, build, load)

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CNN = FIX / "real" / "cnn.etdump"
QNN = FIX / "qnn_etdump" / "synthetic_qnn_cnn.etdump"


def test_roles_follow_the_runtime_s_event_names():
    p = load(CNN)
    ev, names = p.events, np.array(p.names(p.events["name"]), dtype=object)
    role = ev["role"]
    assert set(names[role == ROLE_METHOD]) == {"Method::execute"}
    assert set(names[role == ROLE_DELEGATE_CALL]) == {"DELEGATE_CALL"}
    assert set(names[role == ROLE_OPERATOR_CALL]) == {"OPERATOR_CALL"}
    assert set(names[role == ROLE_KERNEL]) == {"native_call_cumsum.out"}       # nested in OPERATOR_CALL
    assert set(names[role == ROLE_OTHER]) == {"Program::load_method", "Method::init"}
    assert (ev["kind"][role == ROLE_DEBUG] == etdump_format.DEBUG).all() and (role == ROLE_DEBUG).sum() == 40
    inner = role == ROLE_DELEGATE_INTERNAL                                    # XNNPACK's per-op events
    assert inner.sum() == 80 and ((ev["delegate_id_str"][inner] >= 0) | (ev["delegate_id_int"][inner] >= 0)).all()


def test_interval_values_are_durations_in_ns_and_debug_values_are_not_numbers():
    p = load(CNN)
    ev = p.events
    prof = ev["kind"] == etdump_format.PROFILE
    assert (ev["unit"][prof] == units.NS).all()
    raw = read_etdump(CNN).events
    assert np.array_equal(ev["value"][prof], (raw["end"][prof].astype(np.int64) - raw["start"][prof].astype(np.int64)))
    assert np.isnan(ev["value"][~prof]).all() and (ev["unit"][~prof] == units.UNKNOWN).all()


def test_value_events_take_their_value_from_end_and_their_unit_from_the_name():
    p = load(QNN)
    ev = p.events
    vs = (ev["role"] == ROLE_DELEGATE_INTERNAL) & (ev["start"] == 0)
    raw = read_etdump(QNN).events
    assert vs.sum() > 0 and np.array_equal(ev["value"][vs], raw["end"][vs].astype(np.float64))
    for code, unit in zip(ev["delegate_id_str"][vs], ev["unit"][vs]):
        assert unit == units.unit_from_suffix(p.strings[code])
    assert {units.NAMES[u] for u in np.unique(ev["unit"][vs])} >= {"us", "cycles", "count"}


def test_runs_are_the_execute_run_data_and_latency_is_method_execute():
    p = load(CNN)
    assert p.n_runs == 10 and [p.etdump.runs[r].name for r in p.runs["etdump_run"]] == ["Execute"] * 10
    m = p.events["role"] == ROLE_METHOD
    assert np.array_equal(p.runs["latency_ns"], p.events["value"][m])
    assert np.array_equal(p.runs["start_ns"], p.events["start"][m].astype(np.int64))
    assert (p.events["execute"][p.events["role"] == ROLE_OTHER] == -1).all()   # load and init: before the runs
    assert np.array_equal(np.bincount(p.events["execute"][p.events["execute"] >= 0]), p.runs["event_count"])


def test_load_is_build_of_what_was_read():
    a = load(CNN)
    b = build(read_etdump(CNN))
    assert a.sources == {"etdump": str(CNN)} and b.sources == {}
    for k in a.events:
        assert np.array_equal(a.events[k], b.events[k], equal_nan=True), k
    assert a.instructions == b.instructions and a.warnings == b.warnings


def test_roles_of_repeated_runs_are_the_roles_of_every_event():
    """Runs the reader copied (``repeats_of``) take their roles from the run they repeat: the same
    roles as computing every event, on every fixture (and some fixtures do repeat runs)."""
    from etscope.profile.build import _roles, _roles_of_repeated_runs

    repeating = 0
    for path in sorted(FIX.glob("*/*.etdump")):
        data = read_etdump(path)
        if data.repeats_of is not None:
            repeating += 1
            assert len(data.repeats_of) == len(data.runs)
            own = data.repeats_of < 0
            assert (data.repeats_of[~own] < np.flatnonzero(~own)).all()     # an earlier run
        strings = list(data.strings)
        assert np.array_equal(_roles_of_repeated_runs(strings, data.events, data), _roles(strings, data.events)), path
    assert repeating >= 4


def test_a_subset_of_runs_forgets_which_runs_repeat():
    from etscope.profile import select_runs

    p = load(FIX / "real" / "gen_llama.etdump")
    assert p.etdump.repeats_of is not None
    sub = select_runs(p, np.arange(p.n_runs) % 2 == 1)
    assert sub.etdump.repeats_of is None


def test_runs_the_reader_found_repeated_need_no_column_comparison(monkeypatch):
    """identical_runs trusts the reader's repeats_of (each Execute run repeats one of a few runs,
    those compared): the same answer as comparing every run's identity columns, on every fixture,
    most of which take the shortcut."""
    import etscope.profile.repeats as R

    shortcut = 0
    for path in sorted(FIX.glob("*/*.etdump")):
        p = load(path)
        fast = R._identical_runs(p)
        shortcut += fast is not None and R._repeats_of_identical_runs(p, fast.stop - fast.start)
        with monkeypatch.context() as m:
            m.setattr(R, "_repeats_of_identical_runs", lambda profile, k: False)
            assert R._identical_runs(p) == fast, path
    assert shortcut >= 10


def test_values_computed_on_two_threads_are_the_same(monkeypatch):
    import importlib

    import etscope.arrays as A

    B = importlib.import_module("etscope.profile.build")      # the package exports the function build
    data = read_etdump(FIX / "real" / "gen_llama.etdump")
    strings = list(data.strings)
    role = B._roles(strings, data.events)
    want = B._values_and_units(strings, data.events, role)
    monkeypatch.setattr(B, "TWO_THREADS_MIN", 1)
    monkeypatch.setattr(A, "cores", lambda: 2)
    got = B._values_and_units(strings, data.events, role)
    assert np.array_equal(got[0], want[0], equal_nan=True) and np.array_equal(got[1], want[1])
