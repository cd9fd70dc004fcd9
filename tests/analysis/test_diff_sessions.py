"""`etscope diff` and the session as a level of variation (issue 19: defects 3, 4 and 10).

Real sessions: tests/fixtures/diff (README there; tools/make_fixtures.py and
tools/make_diff_sessions.py). Synthetic pairs for the localised/uniform logic are built in the
test with the fuzz harness's ETDump builder (exact per-op times, so the expected verdict is known).
"""
import gzip
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import diff_json as diff
from etscope.analysis.diff import noise as diff_noise
from etscope.cli import main
from etscope.profile import load
from etscope.render.diff_text import render_diff

D = Path(__file__).parents[1] / "fixtures" / "diff"
pytestmark = pytest.mark.skipif(not (D / "diff_conv_cpu.etdump").exists(), reason="diff fixtures not generated")


@pytest.fixture(scope="module")
def sessions():
    return [load(D / f"diff_same_{i:02d}.etdump") for i in range(10)]


# ---- defect 3: a re-run of the same program is not a regression ---------------------------------------
def test_one_session_each_of_one_program_is_never_a_change_nor_gated(sessions):
    # 90 ordered pairs of 10 sessions of one .pte: before, 5 pairs were "regression" (gate exit 1)
    # and 29 "improvement".
    seen = set()
    for a, b in itertools.permutations(sessions, 2):
        d = diff.compare(a, b, fail_on_regression_pct=5)
        assert d["verdict"] in ("no_change", "inconclusive"), (d["verdict"], d["reasons"])
        assert not d["gate"]["fail"]
        seen.add(d["verdict"])
    assert "inconclusive" in seen    # within each session the change is significant, but not beyond re-runs


def test_uniform_shift_on_an_identical_program_is_called_an_environment_change(sessions):
    pte = D / "diff_same.pte"
    a = load(D / "diff_same_00.etdump", pte=pte)
    b = load(D / "diff_same_02.etdump", pte=pte)
    d = diff.compare(a, b, fail_on_regression_pct=5)
    assert d["latency"]["change_pct"] < -40 and d["latency"]["ci_pct"][1] < 0   # -48%, CI excludes 0
    assert d["verdict"] == "inconclusive" and not d["gate"]["fail"]
    assert d["program"]["identical"] is True and "byte-identical delegate blob" in d["program"]["basis"]
    text = " ".join(d["reasons"])
    assert "environment change" in text and "programs are identical" in text
    assert d["session_noise"]["uniform_shift"] and not d["session_noise"]["localised"]
    # Without the .pte files the blobs are unknown: said so, identity not claimed.
    d = diff.compare(sessions[0], sessions[2])
    assert d["program"]["identical"] is None and "--pte-base" in d["program"]["basis"]
    assert "same instructions and delegate events" in " ".join(d["reasons"])


def test_a_different_program_is_never_called_identical():
    d = diff.compare(load(D / "diff_same_00.etdump", pte=D / "diff_same.pte"),
                     load(D / "diff_slower.etdump", pte=D / "diff_slower.pte"))
    assert d["program"]["identical"] is False and "different delegate blobs" in d["program"]["basis"]
    d = diff.compare(load(D / "diff_same_00.etdump"), load(D / "diff_conv_cpu.etdump"))
    assert d["program"]["identical"] is False


def test_change_beyond_the_allowance_is_a_regression_with_one_session_each():
    d = diff.compare(load(D / "diff_conv_xnnpack.etdump"), load(D / "diff_conv_cpu.etdump"), fail_on_regression_pct=5)
    assert d["verdict"] == "regression" and d["gate"]["fail"]
    assert d["session_noise"]["beyond_allowance"]
    lo = d["latency"]["ci_pct"][0]
    assert 1 + lo / 100 > 1 + diff_noise.SESSION_ALLOWANCE_PCT / 100


def test_the_allowance_is_a_parameter_and_the_cli_option(sessions):
    d = diff.compare(sessions[0], sessions[2], session_allowance_pct=10)   # a calm device
    assert d["verdict"] == "improvement" and d["latency"]["session_allowance_pct"] == 10
    r = CliRunner().invoke(main, ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_same_02.etdump"), "--json",
                                  "--session-allowance", "10%"])
    assert r.exit_code == 0 and json.loads(r.output)["verdict"] == "improvement"
    r = CliRunner().invoke(main, ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_same_02.etdump"), "--json"])
    out = json.loads(r.output)
    assert out["verdict"] == "inconclusive" and out["schema"] == "etscope.diff/2"


def _fuzz_harness():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import fuzz_harness

    return fuzz_harness


def _synthetic(path, scale, runs=40, seed=0):
    """Three instructions (XNNPACK call, CPU op, XNNPACK call) of 10 µs each times ``scale[i]``,
    ±2% run-to-run noise."""
    h = _fuzz_harness()
    rng = np.random.default_rng(seed)
    out = [{"name": "Default", "events": [("P", "Method::init", -1, 0, None, None, None, 10, 20)]}]
    t = 1_000_000
    for _ in range(runs):
        ev, t0 = [], t
        for i, s in enumerate(scale):
            d = int(10_000 * s * rng.uniform(0.98, 1.02))
            if i == 1:
                ev.append(("P", "native_call_cumsum.out", 0, i, None, None, None, t + 50, t + d - 50))
                ev.append(("P", "OPERATOR_CALL", 0, i, None, None, None, t, t + d))
            else:
                ev.append(("P", None, 0, i, None, "Convolution (NHWC, F32) IGEMM #1", None, t + 100, t + d - 100))
                ev.append(("P", "DELEGATE_CALL", 0, i, None, None, None, t, t + d))
            t += d + 200
        ev.append(("P", "Method::execute", -1, 0, None, None, None, t0 - 100, t + 100))
        out.append({"name": "Execute", "events": ev})
        t += 100_000
    path.write_bytes(h.build_etdump(out))
    return load(path)


def test_localised_change_within_the_allowance_is_still_a_regression(tmp_path):
    pytest.importorskip("flatbuffers")
    base = _synthetic(tmp_path / "synthetic_base.etdump", [1, 1, 1], seed=1)
    # One delegate call x4 (beyond the op allowance), the others unchanged: the whole run x2 is
    # within the between-session allowance, but an environment shift would have moved every op.
    local = _synthetic(tmp_path / "synthetic_local.etdump", [4, 1, 1], seed=2)
    d = diff.compare(base, local, fail_on_regression_pct=5)
    assert 1.9 < 1 + d["latency"]["change_pct"] / 100 < 1 + diff_noise.SESSION_ALLOWANCE_PCT / 100
    assert d["verdict"] == "regression" and d["session_noise"]["localised"] and d["gate"]["fail"]
    assert d["session_noise"]["localised_ops"] == ["DELEGATE_CALL XnnpackBackend #1"]
    assert "localised" in d["reasons"][0]
    # The same x2 spread over every op, CPU and delegate alike: inconclusive, environment.
    uniform = _synthetic(tmp_path / "synthetic_uniform.etdump", [2, 2, 2], seed=3)
    d = diff.compare(base, uniform, fail_on_regression_pct=5)
    assert d["verdict"] == "inconclusive" and not d["gate"]["fail"]
    assert d["session_noise"]["uniform_shift"] and "environment change" in " ".join(d["reasons"])


def test_several_sessions_per_side_measure_the_spread(tmp_path):
    pytest.importorskip("flatbuffers")
    # Sessions whose runs are tight (±2%) but whose levels differ by up to 30% between sessions.
    levels_b, levels_n = [1.0, 1.3, 1.1], [1.25, 1.0, 1.15]
    bs = [_synthetic(tmp_path / f"synthetic_b{i}.etdump", [s] * 3, seed=10 + i) for i, s in enumerate(levels_b)]
    ns = [_synthetic(tmp_path / f"synthetic_n{i}.etdump", [s] * 3, seed=20 + i) for i, s in enumerate(levels_n)]
    d = diff.compare(bs, ns, fail_on_regression_pct=5)
    lo, hi = d["latency"]["ci_pct"]
    assert lo < -10 and hi > 10                # the interval carries the between-session spread
    assert d["verdict"] == "no_change" and not d["gate"]["fail"]
    # Each pair of single sessions, by contrast, is significant within the sessions.
    assert diff.compare(bs[0], ns[0])["latency"]["significant"]
    # A shift far beyond the sessions' spread is still found with several sessions.
    slow = [_synthetic(tmp_path / f"synthetic_s{i}.etdump", [s * 3] * 3, seed=30 + i) for i, s in enumerate(levels_n)]
    d = diff.compare(bs, slow, fail_on_regression_pct=5)
    assert d["verdict"] == "regression" and d["gate"]["fail"]


@pytest.mark.parametrize("prior_df", [0, 2])
def test_session_interval_against_a_hand_computed_t_interval(prior_df):
    rng = np.random.default_rng(0)
    b = [np.full(11, m) + rng.normal(0, 1e-9, 11) for m in (10.0, 12.0)]
    n = [np.full(11, m) for m in (11.0, 13.0, 12.0)]
    prior_sd = 0.2
    change, lo, hi = diff.session_interval(b, n, prior_sd, prior_df)
    lb, ln = np.log([10.0, 12.0]), np.log([11.0, 13.0, 12.0])
    ss = ((lb - lb.mean()) ** 2).sum() + ((ln - ln.mean()) ** 2).sum() + prior_df * prior_sd ** 2
    t = {3: 3.182, 5: 2.571}[3 + prior_df]
    half = t * np.sqrt(ss / (3 + prior_df) * (1 / 2 + 1 / 3))
    pooled_b, pooled_n = np.median(np.concatenate(b)), 12.0
    assert change == pytest.approx((pooled_n / pooled_b - 1) * 100)
    assert lo == pytest.approx((np.exp(np.log(pooled_n / pooled_b) - half) - 1) * 100, rel=1e-6)
    assert hi == pytest.approx((np.exp(np.log(pooled_n / pooled_b) + half) - 1) * 100, rel=1e-6)


# ---- defect 4: a fallback without an ETRecord --------------------------------------------------------
@pytest.mark.parametrize("with_pte", [False, True])
def test_conv_moved_out_of_xnnpack_is_a_fallback_without_etrecord(with_pte):
    kw_b = {"pte": D / "diff_same.pte"} if with_pte else {}     # byte-identical to diff_conv_xnnpack's
    kw_n = {"pte": D / "diff_conv_cpu.pte"} if with_pte else {}
    d = diff.compare(load(D / "diff_conv_xnnpack.etdump", **kw_b), load(D / "diff_conv_cpu.etdump", **kw_n),
                     fail_on_fallback=True)
    moved = [c for c in d["placement_changes"] if c["kind"] == "moved_to_cpu"]
    assert len(moved) == 1 and moved[0]["count"] == 2 and moved[0]["from"] == "XnnpackBackend"
    assert moved[0]["op_type"] == "aten.convolution.out"
    assert moved[0]["evidence"] == ["Convolution (NHWC, F32) IGEMM #1 (in XnnpackBackend #1)",
                                    "Convolution (NHWC, F32) IGEMM #1 (in XnnpackBackend #2)"]
    assert not [c for c in d["placement_changes"] if c["kind"] == "new_cpu_op"]
    assert d["gate"]["fail"] and "2 op(s) moved off the delegate" in d["gate"]["why"][0]


def test_cli_fail_on_fallback_exits_1_without_etrecord():
    args = ["diff", str(D / "diff_conv_xnnpack.etdump"), str(D / "diff_conv_cpu.etdump"), "--fail-on-fallback"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "moved to cpu" in r.output and "Convolution (NHWC, F32) IGEMM" in r.output
    r = CliRunner().invoke(main, args + ["--pte-base", str(D / "diff_same.pte"), "--pte-new", str(D / "diff_conv_cpu.pte")])
    assert r.exit_code == 1


def test_with_etrecords_the_graph_decides_and_agrees():
    d = diff.compare(load(D / "diff_conv_xnnpack.etdump", etrecord=D / "diff_conv_xnnpack.etrecord"),
                     load(D / "diff_conv_cpu.etdump", etrecord=D / "diff_conv_cpu.etrecord"), fail_on_fallback=True)
    moved = [c for c in d["placement_changes"] if c["kind"] == "moved_to_cpu"]
    assert sum(c["count"] for c in moved) == 2 and all(c["matched_by"] == "op type" for c in moved)
    assert d["gate"]["fail"]


def test_undecided_new_cpu_op_says_the_etrecord_is_needed():
    # diff_cpu_moved: the linear left XNNPACK as permute_copy + addmm. Without ETRecords the addmm
    # matches the vanished "Fully Connected" events; the permute_copy (a weight transpose) has no
    # delegate event of its kind, so it is undecided and the ETRecord is asked for.
    d = diff.compare(load(D / "diff_same_00.etdump"), load(D / "diff_cpu_moved.etdump"), fail_on_fallback=True)
    kinds = {c["op_type"]: c for c in d["placement_changes"] if "op_type" in c}
    assert kinds["aten.addmm.out"]["kind"] == "moved_to_cpu"
    assert kinds["aten.addmm.out"]["evidence"] == ["Fully Connected (NC, F32) GEMM #1 (in XnnpackBackend #2)"]
    perm = kinds["aten.permute_copy.out"]
    assert perm["kind"] == "new_cpu_op" and "--etrecord-base" in perm["undecided"]
    assert any("ETRecords" in r for r in d["reasons"])
    # With the ETRecords nothing is undecided.
    d = diff.compare(load(D / "diff_same_00.etdump", etrecord=D / "diff_same.etrecord"),
                     load(D / "diff_cpu_moved.etdump", etrecord=D / "diff_cpu_moved.etrecord"))
    assert not any(c.get("undecided") for c in d["placement_changes"])


# ---- defect 10: one statistic per view ----------------------------------------------------------------
def _raw_per_run(name):
    """Per Execute run of the executorch-decoded oracle: Method::execute, Σ DELEGATE_CALL and the
    first DELEGATE_CALL's duration (ns)."""
    raw = json.load(gzip.open(D / f"{name}.raw.json.gz"))
    lat, dcall, first = [], [], []
    for run in raw["run_data"]:
        if run["name"] != "Execute":
            continue
        ev = [e for e in run["events"] if e[0] == "P"]
        lat.append(sum(e[7] - e[6] for e in ev if e[1] == "Method::execute"))
        calls = [e for e in ev if e[1] == "DELEGATE_CALL"]
        dcall.append(sum(e[7] - e[6] for e in calls))
        first.append(calls[0][7] - calls[0][6])
    return np.array(lat), np.array(dcall), np.array(first)


def test_breakdown_ops_and_verdict_share_one_statistic_on_the_same_runs():
    a, b = load(D / "diff_same_00.etdump"), load(D / "diff_slower.etdump")
    d = diff.compare(a, b)
    for side, name in (("base", "diff_same_00"), ("new", "diff_slower")):
        lat, dcall, first = _raw_per_run(name)
        n = d["latency"]["warmup_runs_dropped"][side][0]
        assert n >= 1                                    # these sessions have a warm-up run
        assert d["latency"][f"{side}_p50_ms"] == pytest.approx(np.median(lat[n:]) / 1e6)
        xnn = [r for r in d["breakdown"] if r["backend"] == "XnnpackBackend"][0]
        assert xnn[f"{side}_p50_ms"] == pytest.approx(np.median(dcall[n:]) / 1e6)
        assert xnn[f"{side}_p50_ms"] != pytest.approx(np.mean(dcall) / 1e6)   # not the old mean with warm-up
        op = [o for o in d["ops"] if o["name"] == "DELEGATE_CALL XnnpackBackend #1"][0]
        assert op[f"{side}_p50"] == pytest.approx(np.median(first[n:]))
    assert all("base_mean_ms" not in r for r in d["breakdown"])


def test_text_view_names_its_statistic(capsys):
    from rich.console import Console

    from etscope.analysis.diff.compare import compare

    d = compare(load(D / "diff_same_00.etdump"), load(D / "diff_slower.etdump"))
    con = Console(width=200, record=True)
    render_diff(d, console=con)
    text = con.export_text()
    assert "Where the time went (p50 per run, steady runs" in text and "mean" not in text
    assert "warm-up runs left out" in text


def test_one_run_per_side_has_no_interval_and_no_verdict():
    from etscope.profile import select_runs

    a, b = load(D / "diff_same_00.etdump"), load(D / "diff_same_01.etdump")
    one = lambda p, i: select_runs(p, np.arange(p.n_runs) == i)   # noqa: E731
    d = diff.compare(one(a, 5), one(b, 3), fail_on_regression_pct=5)   # run 3 of b: a 4.7 ms outlier
    assert d["verdict"] == "no_change" and not d["gate"]["fail"]
    assert "too few runs" in d["reasons"][0]
