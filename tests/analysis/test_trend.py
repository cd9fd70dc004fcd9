"""etscope trend on generated build series (tests/analysis/trend_series.py): a change planted at a
known commit is found there, a series without one reports none; rates measured over many seeds
(the numbers are in BENCHMARKS.md, "trend: false alarms and detection")."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from etscope.analysis.diff.trend import ALPHA, Moved, build_order, detect, trend
from trend_series import series

NULL_SEEDS = 300
PLANTED_SEEDS = 150


def _any_change(t) -> bool:
    return bool(t.series[0].changes)


def test_false_alarm_rate_on_series_without_change():
    """No change planted: how often does trend report one (latency) anywhere in a 20-build series?
    Bonferroni over the series bounds it by ALPHA (5%); the measured rate must not exceed that by
    more than sampling error (300 series: SD 1.3 points)."""
    alarms = sum(_any_change(trend(series(seed)[0])) for seed in range(NULL_SEEDS))
    rate = alarms / NULL_SEEDS
    print(f"trend false-alarm rate (latency, 20 builds x 3 sessions, session SD 3%): {rate:.3f} over {NULL_SEEDS} series")
    assert rate <= ALPHA + 0.03


def test_false_alarms_of_ops_and_placement_on_series_without_change():
    alarms = 0
    for seed in range(60):
        s = trend(*series(seed)).series[0]
        alarms += bool(s.op_changes)
        assert s.placement_changes == ()
    assert alarms / 60 <= ALPHA + 0.05


def test_pure_normal_sessions_false_alarm_rate_at_most_alpha():
    """The test itself, on exchangeable normal sessions (2,000 series): at most ALPHA."""
    rng = np.random.default_rng(7)
    builds, sessions = 20, 3
    b_of = np.repeat(np.arange(builds), sessions)
    n = 2000
    alarms = 0
    for _ in range(n):
        res, _ = detect(b_of, rng.normal(0, 0.03, b_of.size), builds, ALPHA / (builds - 2), 2.0)
        alarms += any(r.verdict != "no change" and r.verdict != "not tested" for r in res)
    assert alarms / n <= ALPHA + 0.01


def test_planted_regression_found_at_its_commit():
    """One op (30% of the latency) 25% slower from build c012 on: latency +7.5%, with a
    between-session SD of 3% (a single-session diff could not tell this from session noise)."""
    found = exact = op_found = 0
    for seed in range(PLANTED_SEEDS):
        s = trend(*series(seed, change=(1, 1.25, 12))).series[0]
        reg = [c for c in s.changes if c.verdict == "regression"]
        found += bool(reg)
        exact += bool(reg) and reg[0].build == "c012"
        op_found += any(c.op == "native_call_cumsum.out" and c.build == "c012" and c.verdict == "regression"
                        for c in s.op_changes)
    print(f"planted +7.5%: detected {found / PLANTED_SEEDS:.2f}, at c012 {exact / PLANTED_SEEDS:.2f}, "
          f"op at c012 {op_found / PLANTED_SEEDS:.2f}")
    assert found / PLANTED_SEEDS >= 0.85
    assert exact / PLANTED_SEEDS >= 0.7
    assert op_found / PLANTED_SEEDS >= 0.9


def test_planted_regression_details():
    runs, ops = series(6, change=(1, 1.25, 12))
    s = trend(runs, ops).series[0]
    assert [c.build for c in s.changes] == ["c012"]
    c = s.changes[0]
    assert c.previous_build == "c011" and c.verdict == "regression" and 4 < c.change_pct < 12
    point = s.builds[12]
    assert point.verdict == "regression" and point.lo_ms < point.p50_ms < point.hi_ms
    assert all(p.verdict == "not tested" for p in s.builds[:2])     # the first baseline
    assert 1.5 < s.session_sd_pct < 5                                 # the 3% planted, measured from the series
    assert [o.op for o in s.op_changes] == ["native_call_cumsum.out"]


def test_improvement_and_placement_change():
    runs, ops = series(6, change=(0, 0.7, 9), moved=(2, 15))
    s = trend(runs, ops).series[0]
    assert [(c.build, c.verdict) for c in s.changes] == [("c009", "improvement")]
    assert [p.build for p in s.placement_changes] == ["c015"]
    pc = s.placement_changes[0]
    assert pc.counts_before == {"XnnpackBackend": 2, "cpu": 1} and pc.counts_after == {"XnnpackBackend": 1, "cpu": 2}
    assert Moved("DELEGATE_CALL (XnnpackBackend) #2", "XnnpackBackend", None) in pc.moved


def test_builds_ordered_by_order_key_not_by_name_or_row_order():
    runs, ops = series(11, builds=6, change=(1, 1.5, 4))
    # rename builds so their names sort backwards, and shuffle the rows
    runs["build"] = np.array([f"z{999 - int(b[1:])}" for b in runs["build"]])
    perm = np.random.default_rng(0).permutation(runs["build"].size)
    runs = {k: v[perm] for k, v in runs.items()}
    s = trend(runs).series[0]
    assert [p.build for p in s.builds] == [f"z{999 - i}" for i in range(6)]
    assert [c.build for c in s.changes] == ["z995"]


def test_numeric_order_keys_sort_as_numbers():
    assert build_order({"a": ["10"], "b": ["9"], "c": ["100"]}) == ["b", "a", "c"]
    assert build_order({"a": ["2026-01-10"], "b": ["2026-01-09"]}) == ["b", "a"]


def test_series_per_model_and_soc():
    r1, o1 = series(1, builds=4, model="cnn", soc="sm8650")
    r2, o2 = series(2, builds=5, model="cnn", soc="sm8750")
    runs = {k: np.concatenate([r1[k], r2[k]]) for k in r1}
    ops = {k: np.concatenate([o1[k], o2[k]]) for k in o1}
    t = trend(runs, ops)
    assert [(s.model, s.soc, len(s.builds)) for s in t.series] == [("cnn", "sm8650", 4), ("cnn", "sm8750", 5)]


def test_too_few_builds_says_so():
    s = trend(series(1, builds=2)[0]).series[0]
    assert s.changes == () and all(p.verdict == "not tested" for p in s.builds)
    assert any("3rd build" in n for n in s.notes)


@pytest.mark.parametrize("seed", range(3))
def test_json_round_trip(seed):
    from etscope.render.json import dumps

    doc = json.loads(dumps(trend(*series(seed, builds=5))))
    assert doc["schema"] == "etscope.trend/1" and list(doc) == ["series", "alpha", "min_effect_pct", "schema"]
    assert list(doc["series"][0]) == ["model", "soc", "builds", "session_sd_pct", "session_sd_df", "tests", "changes",
                                      "op_changes", "placement_changes", "notes", "phase", "fact_changes"]


def test_the_result_is_a_tree_of_frozen_dataclasses():
    """Nothing changes a trend after analysis: every node is a frozen dataclass holding tuples (the
    ops per backend of a placement change are a mapping by backend name, the one dict)."""
    runs, ops = series(6, change=(0, 0.7, 9), moved=(2, 15))
    t = trend(runs, ops)
    seen = set()

    def walk(x):
        if dataclasses.is_dataclass(x):
            seen.add(type(x).__name__)
            assert type(x).__dataclass_params__.frozen, type(x)
            for f in dataclasses.fields(x):
                v = getattr(x, f.name)
                assert not isinstance(v, list), (type(x), f.name)
                assert not isinstance(v, dict) or f.name in ("counts_before", "counts_after"), (type(x), f.name)
                walk(v)
        elif isinstance(x, tuple):
            for v in x:
                walk(v)

    walk(t)
    assert {"Trend", "Series", "BuildPoint", "Change", "OpChange", "PlacementChange", "Moved"} <= seen
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.series[0].phase = "decode"
