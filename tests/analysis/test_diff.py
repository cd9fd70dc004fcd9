"""etscope diff on real fixture pairs (tools/make_fixtures.py, tests/fixtures/diff/README.md):
10 sessions of the same program, an export where ops moved from XNNPACK to the CPU, a slower and a
faster variant. Sessions of the same program on this 2-core machine differ by up to 2× in p50, so
the tests give the noise-aware comparison several base sessions, as a CI gate should."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import diff_json as diff
from etscope.cli import main
from etscope.profile import load

D = Path(__file__).parents[1] / "fixtures" / "diff"
pytestmark = pytest.mark.skipif(not (D / "diff_same_00.etdump").exists(), reason="diff fixtures not generated")


@pytest.fixture(scope="module")
def same():
    return [load(D / f"diff_same_{i:02d}.etdump", etrecord=D / "diff_same.etrecord") for i in range(10)]


def _variant(name):
    return load(D / f"diff_{name}.etdump", etrecord=D / f"diff_{name}.etrecord")


def test_noise_alone_never_trips_the_gate_on_10_same_model_pairs(same):
    for i in range(10):
        base = [p for k, p in enumerate(same) if k != i]
        d = diff.compare(base, same[i], fail_on_regression_pct=5)
        assert d["verdict"] == "no_change", (i, d["latency"])
        assert not d["gate"]["fail"]
        assert d["placement_changes"] == []


def test_slower_variant_is_a_regression_and_trips_the_gate(same):
    d = diff.compare(same, _variant("slower"), fail_on_regression_pct=5)
    assert d["verdict"] == "regression" and d["gate"]["fail"]
    assert d["latency"]["ci_pct"][0] > 5


def test_faster_variant_is_never_a_regression_and_the_interval_reflects_the_session_spread(same):
    # The 10 base sessions' p50s span 20.8-43.8 µs (two clusters); the faster variant's one
    # session is 17.4 µs: below every base session, but not beyond what 10 sessions this spread
    # allow at 95% (pooled-variance t on the sessions' log p50s, 9 degrees of freedom).
    d = diff.compare(same, _variant("faster"), fail_on_regression_pct=5)
    assert d["verdict"] in ("improvement", "no_change") and not d["gate"]["fail"]
    lo, hi = d["latency"]["ci_pct"]
    assert d["latency"]["change_pct"] < -30 and lo < -60


def test_ops_moved_to_cpu_are_called_out_first_and_gate_on_fallback(same):
    d = diff.compare(same[0], _variant("cpu_moved"), fail_on_fallback=True)
    moved = [c for c in d["placement_changes"] if c["kind"] == "moved_to_cpu"]
    assert moved and d["placement_changes"][0]["kind"] == "moved_to_cpu"
    assert all(c["from"] == "XnnpackBackend" and c["to"] == "cpu" for c in moved)
    assert d["gate"]["fail"] and "moved off the delegate" in " ".join(d["gate"]["why"])
    cpu = [b for b in d["breakdown"] if b["kind"] == "cpu_ops"][0]
    assert cpu["change_ms"] > 0  # CPU-fallback time added


def test_same_session_against_itself_is_exactly_no_change(same):
    d = diff.compare(same[0], same[0])
    assert d["verdict"] == "no_change" and d["latency"]["change_pct"] == 0
    assert all(o["status"] == "same" for o in d["ops"])


def test_op_identities_survive_reexport(same):
    d = diff.compare(same[0], _variant("slower"))
    cpu = [o for o in d["ops"] if o["placement_base"] == "cpu"]
    assert cpu and all(o["status"] != "new" for o in cpu)  # cumsum matched across the two exports


def test_bootstrap_and_rank_test_basics():
    rng = np.random.default_rng(1)
    a = rng.normal(100, 5, 200)
    change, lo, hi = diff.bootstrap_median_ratio(a, a * 1.2)
    assert 15 < change < 25 and lo > 10
    assert diff.mann_whitney_p(a, a * 1.2) < 1e-6
    assert diff.mann_whitney_p(a, rng.permutation(a)) > 0.5


def test_cli_gate_exit_codes_and_json(tmp_path):
    args = ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_slower.etdump"), "--json",
            "--fail-on-regression", "5%"]
    for i in range(1, 10):
        args += ["--base-also", str(D / f"diff_same_{i:02d}.etdump")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1
    out = json.loads(r.output)
    assert out["verdict"] == "regression" and out["gate"]["fail"] and out["latency"]["base_sessions"] == 10
    r = CliRunner().invoke(main, ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_same_00.etdump"),
                                  "--fail-on-regression", "5%"])
    assert r.exit_code == 0
    r = CliRunner().invoke(main, ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_cpu_moved.etdump"),
                                  "--etrecord-base", str(D / "diff_same.etrecord"),
                                  "--etrecord-new", str(D / "diff_cpu_moved.etrecord"), "--fail-on-fallback"])
    assert r.exit_code == 1 and "moved" in r.output
