"""QNN analysis on real QNN output (device text/CSV + QHAS) and on invariant-breaking series."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis import qnn
from etscope.cli import main
from etscope.formats.qhas import read_qhas
from etscope.formats.qnn_csv import read_qnn_csv
from etscope.formats.qnn_text import read_qnn_text
from qnn_typed import plain

Q = pytest.importorskip("pathlib").Path(__file__).parents[1] / "fixtures" / "qnn"


@pytest.fixture(scope="module")
def chain8():
    return plain(qnn.qnn_report(qnn_profile=read_qnn_text(Q / "chain8_sm8650.profile.txt"),
                          qhas=read_qhas(Q / "chain8_sm8650.qhas.json")))


def test_chain8_clock_per_run_and_cold_run(chain8):
    (p,) = chain8["partitions"]
    # Execute Stat 1-3: cycles 68365/47827/32837 over excluding-wait µs 86/22/15.
    assert p["per_run"]["clock_mhz_est"] == pytest.approx([68365 / 86, 47827 / 22, 32837 / 15])
    assert p["clock_basis"] == "Accelerator (execute excluding wait) time"
    lo, hi = p["clock_mhz_est_range"]
    assert lo < p["clock_mhz_est"] < hi
    # The first execute paid 11.9 ms of HVX + HMX power-on (domain.md §4).
    assert p["cold_runs"] == [0]
    assert p["clock_warning"] is None


def test_chain8_nesting_and_checks(chain8):
    (p,) = chain8["partitions"]
    names = [lv["name"] for lv in p["levels"]]
    assert names == ["QNN (execute) time", "RPC (execute) time", "QNN accelerator (execute) time",
                     "Accelerator (execute) time", "Accelerator (execute excluding wait) time",
                     "Accelerator (execute) time (cycles)"]
    assert p["levels"][0]["adds_us_p50"] == pytest.approx(np.median([3907 - 3770, 2467 - 2348, 2412 - 2330]),
                                                          abs=200)
    assert all(c["ok"] for c in p["checks"])
    assert p["counts"]["Number of HVX threads used"] == 4
    assert sum(o["share"] for o in p["ops"]) == pytest.approx(1.0)


def test_chain8_qhas_join_gives_hmx_hvx(chain8):
    (p,) = chain8["partitions"]
    ops = {o["base"]: o for o in p["ops"]}
    assert ops["MatMul_0"]["hmx"] is True
    assert ops["Input"]["hmx"] is False and ops["Input"]["dma"] is True
    # Per-op est. µs are cycles ÷ that run's clock estimate: they add up to the excluding-wait µs.
    est = sum(o["est_us_p50"] for o in p["ops"])
    assert est == pytest.approx(22, rel=0.25)
    q = chain8["qhas"]
    assert q["timeline_cycles"] == 64829 and q["peak_vtcm_alloc"] == 671744
    assert [r["type"] for r in q["resources"]] == ["HMX", "HVX", "HVX"]


def test_two_partitions_from_emulator_csv():
    r = plain(qnn.qnn_report(qnn_profile=read_qnn_csv(Q / "emulator_vit_mixed_qdq_detailed.qnn_profile.csv")))
    assert len(r["partitions"]) == 2
    for p in r["partitions"]:
        (chk,) = [c for c in p["checks"] if c["check"].startswith("sum of per-op")]
        assert chk["ok"] and chk["runs_checked"] == 6


def test_parallel_threads_make_an_implausible_clock_and_say_so():
    r = plain(qnn.qnn_report(qnn_profile=read_qnn_csv(Q / "resnet50_ortqnn.profile.csv")))
    (p,) = r["partitions"]
    assert p["clock_mhz_est"] > qnn.PLAUSIBLE_MAX_CLOCK_MHZ
    assert "parallel" in p["clock_warning"]


def _series(node_sum_off=0.0, qnn_us=100.0, dc_us=150.0):
    runs = 3
    nodes = np.array([[600.0] * runs, [400.0] * runs])
    roots = {qnn.ACCEL_CYCLES: np.full(runs, 1000.0 + node_sum_off), qnn.QNN_EXECUTE: np.full(runs, qnn_us),
             qnn.ACCEL_US: np.full(runs, 1.0)}
    return qnn.QnnSeries(key="t", instruction_id=3, runs=np.arange(runs), roots=roots,
                         node_names=["a:OpId_1 (cycles)", "b:OpId_2 (cycles)"], node_values=nodes,
                         node_unit=["cycles", "cycles"], delegate_call_ns=np.full(runs, dc_us * 1000))


def test_checks_fire_when_invariants_break():
    ok = plain(qnn.analyse_series(_series()))
    assert all(c["ok"] for c in ok["checks"])
    bad_sum = plain(qnn.analyse_series(_series(node_sum_off=50)))
    assert not next(c for c in bad_sum["checks"] if c["check"].startswith("sum of per-op"))["ok"]
    bad_nest = plain(qnn.analyse_series(_series(qnn_us=200, dc_us=150)))
    failing = [c for c in bad_nest["checks"] if not c["ok"]]
    assert failing and failing[0]["check"] == "QNN (execute) time ≤ DELEGATE_CALL"


def test_qnn_cli_json_and_text():
    r = CliRunner().invoke(main, ["qnn", "--qnn-csv", str(Q / "chain8_sm8650.profile.txt"),
                                  "--qhas", str(Q / "chain8_sm8650.qhas.json"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    (p,) = out["qnn"]["partitions"]
    for k in ("instruction_id", "runs", "delegate_call_ms", "qnn_execute_us", "accel_us", "accel_cycles",
              "clock_mhz_est", "ops"):
        assert k in p
    for k in ("qnn_name", "node", "op_type", "cycles_p50", "est_us_p50", "share", "hmx", "hvx"):
        assert k in p["ops"][0]
    r = CliRunner().invoke(main, ["qnn", "--qhas", str(Q / "chain8_sm8650.qhas.json")])
    assert r.exit_code == 0 and "utilisation" in r.output
    r = CliRunner().invoke(main, ["qnn"])
    assert r.exit_code == 2


def test_qnn_cli_rejects_wrong_kind(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("hello\n")
    r = CliRunner().invoke(main, ["qnn", "--qnn-csv", str(p)])
    assert r.exit_code == 2 and "not a QNN profile" in r.output


def test_optrace_alone_gives_the_same_hmx_hvx_as_qhas():
    from etscope.formats.optrace import read_optrace

    prof = read_qnn_text(Q / "chain8_sm8650.profile.txt")
    via_qhas = plain(qnn.qnn_report(qnn_profile=prof, qhas=read_qhas(Q / "chain8_sm8650.qhas.json")))
    via_trace = plain(qnn.qnn_report(qnn_profile=prof, optrace=read_optrace(Q / "chain8_sm8650.optrace.json")))
    a = {o["qnn_name"]: (o["hmx"], o["hvx"], o["dma"]) for o in via_qhas["partitions"][0]["ops"]}
    b = {o["qnn_name"]: (o["hmx"], o["hvx"], o["dma"]) for o in via_trace["partitions"][0]["ops"]}
    assert a == b
    assert sum(1 for v in a.values() if v[0]) == 8  # eight MatMuls used HMX
    assert via_trace["optrace"]["ops"] == 45


def test_soc_from_pte_compile_spec_sets_vtcm_capacity():
    pte = Q.parent / "qnn_pte" / "synthetic_qnn_cnn.pte"
    r = CliRunner().invoke(main, ["qnn", "--pte", str(pte), "--qhas", str(Q / "chain8_sm8650.qhas.json"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)["qnn"]
    assert out["soc"]["soc_model"] == "SM8650" and out["soc"]["vtcm_bytes"] == 8 * 2 ** 20
    assert out["qhas"]["peak_vtcm_share"] == pytest.approx(671744 / (8 * 2 ** 20))
