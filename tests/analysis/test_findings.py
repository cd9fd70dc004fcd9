"""Findings first (analysis.findings): each rule on its own, the ranking, and the real SM8650 chain8
case (ETDump of the device profile + its QHAS, optrace and runtrace)."""
from pathlib import Path

import etscope
from etscope.analysis import findings as F
from etscope.api import results
from etscope.render.guide import reading_guide
from qnn_typed import partition, qhas, report

FIX = Path(__file__).parents[1] / "fixtures"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
Q = FIX / "qnn"


def _chain8(**kw):
    return results(etscope.load(ETD), **kw)


def test_chain8_findings_ranked_with_sections():
    r = _chain8(qhas=Q / "chain8_sm8650.qhas.json", optrace=Q / "chain8_sm8650.optrace.json",
                runtrace=Q / "chain8_sm8650.runtrace.json")
    got = r.view.findings
    # No "Input and Output ran without HMX": QNN's I/O ops only move data (true by construction).
    # No "mostly DMA" either: MatMul_3's 6,065 DMA cycles are mostly a wait that overlaps other
    # work; on the dominant path its HMX compute dominates (1,170 of 1,665).
    # The FastRPC level is medium, not high: its VTCM acquire (135 µs p50 of the warm runs) is larger
    # than the 111 µs the DSP-side level adds, so QNN's levels overlap (issue 35 item 3).
    assert [f.kind for f in got] == ["layout", "cold_runs", "overhead_level", "weights_to_vtcm",
                                     "idle", "clock", "vtcm"]
    top = got[2]
    assert top.severity == "medium" and "FastRPC transport" in top.text and top.section == "qnn-p0"
    assert top.us_per_run == 2191
    assert top.evidence.startswith("RPC execute 2.35 ms contains QNN accelerator 157 µs; the difference, p50 over 3 run(s): 2.19 ms")
    assert "levels overlap" in top.evidence and "profiled by QNN" in top.evidence
    assert "29,862 of 68,626 active HTP cycles (43.5%)" in got[0].text and got[0].section == "qnn-htp"
    assert got[0].text.startswith("DELEGATE_CALL #0: ") and "fmt_change" in got[0].evidence
    assert "806–1,894 MHz" in got[5].text                     # the runtrace's executes
    assert "unknown (give the .pte)" in got[6].text            # no .pte: VTCM size not known


def _bands(qnn_adds: float = 900.0):
    return [{"name": "DELEGATE_CALL", "label": "DELEGATE_CALL", "us_p50": 1000.0, "adds_us_p50": 50.0},
            {"name": "QNN (execute) time", "label": "QNN execute", "us_p50": 950.0, "adds_us_p50": qnn_adds},
            {"name": "Accelerator (execute) time", "label": "Accelerator", "us_p50": 50.0, "adds_us_p50": None}]


def _part(**over):
    """A typed partition (analysis.qnn.partition_result) of the fields the rules read."""
    return partition(**{"instruction_id": 4, "runs": 3, "nesting": {"bands": _bands(), "headline": "H."}, **over})


def test_overhead_level_threshold_and_severity():
    (f,) = F.findings(None, report([_part()]))
    assert (f.kind, f.severity, f.us_per_run, f.section) == ("overhead_level", "high", 900.0, "qnn-p0")
    small = _part(nesting={"bands": _bands(0.05 * 1000), "headline": "H."})
    assert F.findings(None, report([small])) == []     # 5 % < OVERHEAD_SHARE


def test_cpu_fallback_by_share_with_source():
    from summary_typed import op_type, summary

    s = summary(top_fallback_op_types=(
        op_type(op_type="aten.pow.Tensor_Scalar", instructions=2, mean_ms=0.5, share=0.25,
                sources=["model.py:12", "model.py:30"]),
        op_type(op_type="aten.sum.dim_IntList", instructions=1, mean_ms=0.05, share=0.025, sources=[]),
        op_type(op_type="aten.tiny", instructions=1, mean_ms=0.001, share=0.0005, sources=[])))
    got = F.findings(s, None)
    assert [f.text.split(":")[1].split("×")[0].strip() for f in got] == ["aten.pow.Tensor_Scalar", "aten.sum.dim_IntList"]
    assert got[0].severity == "high" and "model.py:12 (+1 more)" in got[0].evidence
    assert got[1].severity == "medium" and "no ETRecord" in got[1].evidence
    assert all(f.section == "placement" for f in got)


def test_no_hmx_counts_only_ops_flagged_without_hmx():
    ops = [{"qnn_name": "a", "base": "conv", "hmx": True, "hvx": False, "dma": True, "cycles_p50": 600, "est_us_at_clock": 6},
           {"qnn_name": "b", "base": "softmax", "hmx": False, "hvx": True, "dma": False, "cycles_p50": 400, "est_us_at_clock": 4},
           {"qnn_name": "c", "base": "x", "hmx": None, "hvx": None, "dma": None, "cycles_p50": 100},
           {"qnn_name": "d", "base": "reshape", "hmx": False, "hvx": False, "dma": False, "cycles_p50": 0},
           # QNN's own I/O op: never uses HMX, by construction: not a finding (graph_op False)
           {"qnn_name": "Input OpId_2", "base": "Input", "hmx": False, "hvx": False, "dma": True,
            "cycles_p50": 300, "graph_op": False}]
    for o in ops[:4]:
        o["graph_op"] = True
    got = [f for f in F.findings(None, report([_part(ops=ops, nesting={})]))]
    (f,) = got
    assert f.kind == "no_hmx" and "1 QNN op(s)" in f.text and "29%" in f.text   # 400 / 1400 (all rows' cycles)
    assert "Input" not in f.evidence
    assert f.severity == "medium" and f.us_per_run == 4 and "softmax (HVX)" in f.evidence


def test_vtcm_gauge_rules():
    assert F.findings(None, report(qhas=qhas(peak_vtcm_alloc=None))) == []
    (f,) = F.findings(None, report(qhas=qhas(peak_vtcm_alloc=7.5 * 2**20, vtcm_bytes=8 * 2**20, soc="SM8650")))
    assert f.severity == "high" and "94%" in f.text and "little headroom" in f.text
    (f,) = F.findings(None, report(qhas=qhas(peak_vtcm_alloc=2**20, vtcm_bytes=8 * 2**20)))
    assert f.severity == "info" and "7.0 MiB headroom" in f.text


def test_cold_runs_and_clock_rules():
    p = _part(nesting={}, cold_runs=[0], per_run={"power_on_us": [12000.0, 20.0, 22.0]},
              clock_mhz_measured_per_execute=[800.0, 1900.0, 1890.0], clock_measured_within_bounds=False,
              clock_mhz_measured=1868.0, clock_mhz_bounds=[1000.0, 1500.0])
    kinds = [(f.kind, f.severity) for f in F.findings(None, report([p]))]
    assert kinds == [("cold_runs", "medium"), ("clock", "medium"), ("clock", "info")]
    steady = _part(nesting={}, clock_mhz_est_per_run_range=[1800.0, 1900.0])
    assert F.findings(None, report([steady])) == []    # 1.06× spread: not a finding


def test_guide_names_the_qnn_files_given():
    bare = _chain8()
    line = reading_guide(bare.summary, bare.qnn)[-1]
    assert "add `--qhas ... --optrace ...`" in line
    full = _chain8(qhas=Q / "chain8_sm8650.qhas.json", optrace=Q / "chain8_sm8650.optrace.json")
    line = reading_guide(full.summary, full.qnn)[-1]
    assert "given here: QHAS, optrace" in line and "--qhas" not in line and "--optrace" not in line
    half = _chain8(qhas=Q / "chain8_sm8650.qhas.json")
    line = reading_guide(half.summary, half.qnn)[-1]
    assert "given here: QHAS" in line and "--optrace" in line and "--qhas" not in line


def test_overhead_finding_says_its_basis_and_that_the_levels_overlap():
    """Issue 35 item 3: the SM8650 chain8 profile's largest level (RPC - QNN accelerator, 2.19 ms) is
    measured on a profiled run, and its 194 µs VTCM acquire (p50 of the warm runs: 194, 76 -> 135 µs)
    is larger than the 111 µs the DSP-side level adds: stated, and not 'high' as a plain fact."""
    from etscope.api import qnn_from_files
    from tests.shared_data import SHARED

    r = qnn_from_files(qnn_csv=str(SHARED / "qnn-device" / "chain8_sm8650.profile.txt"))
    f = next(x for x in r.findings if x.kind == "overhead_level")
    assert f.severity == "medium"
    assert "profiled by QNN" in f.evidence and "levels overlap" in f.evidence
    assert "initial VTCM acquire (135 µs" in f.evidence and "111 µs" in f.evidence


def test_qhas_rates_sit_beside_this_etdumps_calls():
    """Issue 35 item 3: QHAS's 1,254.7 inferences/s and 97% utilisation describe one 80 µs inference
    of a separate run; beside them, the ETDump's own calls: accelerator ÷ DELEGATE_CALL per warm run."""
    import numpy as np

    r = _chain8(qhas=Q / "chain8_sm8650.qhas.json")
    p = r.qnn.partitions[0]
    pc = r.qnn.qhas.per_call[0]
    warm = [i for i in range(p.runs) if i not in p.cold_runs]
    share = [p.per_run.accel_us[i] / p.per_run.delegate_call_us[i] for i in warm]
    assert pc.npu_busy_p50 == np.median(share) and pc.runs == len(warm) and pc.npu_busy_p50 < 0.05
    assert pc.calls_per_s == 1000.0 / p.delegate_call_ms


def test_counters_have_no_sum_over_runs():
    """'Number of HVX threads used' is 4 per run: a total of 12 over 3 runs means nothing."""
    rows = [o for o in _chain8().ops if o.unit == "count"]
    assert rows and all(o.total is None and o.p50 is not None for o in rows)
