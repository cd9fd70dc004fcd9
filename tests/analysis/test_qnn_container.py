"""QNN per-op times as shares of the measured container (``analysis.qnn.container``, issue 34 item 4)
and the finding when cycles ÷ clock do not fit it (``analysis.findings``, ``ops_exceed_container``).

Hand-made series with every number known: two ops, three runs."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis.findings import findings
from etscope.analysis.qnn.container import op_mean_us, op_shares, summary_fields
from etscope.analysis.qnn.model import ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, QnnSeries
from etscope.analysis.qnn.partition import analyse_series
from etscope.cli import main
from qnn_typed import plain, report

FIX = Path(__file__).parents[1] / "fixtures"
RESNET = FIX / "qnn_etdump" / "synthetic_qnn_resnet50_device"
CHAIN8_RUNTRACE = Path(__file__).parents[2] / "src" / "etscope" / "data" / "sample_qnn_chain8.runtrace.json"


def _series(ops, accel_cycles, accel_us, call_us, excl_us=None, units=None):
    ops = np.asarray(ops, dtype=np.float64)
    roots = {ACCEL_CYCLES: np.asarray(accel_cycles, dtype=np.float64), ACCEL_US: np.asarray(accel_us, dtype=np.float64)}
    if excl_us is not None:
        roots[ACCEL_EXCL_WAIT_US] = np.asarray(excl_us, dtype=np.float64)
    n = ops.shape[1]
    return QnnSeries(key="instruction 0", instruction_id=0, runs=np.arange(n), roots=roots,
                     node_names=[f"aten_op_{i}:OpId_{i} (cycles)" for i in range(len(ops))], node_values=ops,
                     node_unit=units or ["cycles"] * len(ops),
                     delegate_call_ns=np.asarray(call_us, dtype=np.float64) * 1e3)


def test_each_op_is_its_cycle_share_of_the_accelerator_time_per_run():
    # Run 0 a prefill (op 1 only there), runs 1-2 decodes: the old per-op p50 counted op 1's
    # prefill time in every run (the 21 ms in a 5 ms call of issue 34).
    s = _series([[100, 10, 10], [300, np.nan, np.nan]], [400, 10, 10], [40, 2, 3], [50, 5, 5])
    sh = op_shares(s, np.array([10.0, 5.0, 10 / 3]))
    assert sh.container == "Accelerator (execute) time"
    assert sh.op_us[:, 0] == pytest.approx([10, 30])
    assert sh.op_us[:, 1] == pytest.approx([2, 0])
    assert sh.op_us[:, 2] == pytest.approx([3, 0])
    assert op_mean_us(sh, s) == pytest.approx([(10 + 2 + 3) / 3, 30 / 3])      # absent runs count 0
    assert sum(op_mean_us(sh, s)) <= np.mean([50, 5, 5])
    f = summary_fields(sh, np.array([10.0, 5.0, 10 / 3]), 3)
    assert f.estimate == "estimate: share of measured Accelerator (execute) time"
    assert f.ops_us_mean == pytest.approx(45 / 3) and f.container_us_mean == pytest.approx(45 / 3)
    assert f.runs_over == 0


def test_the_container_never_exceeds_the_delegate_call():
    s = _series([[50, 50]], [50, 50], [80, 20], [60, 30])
    sh = op_shares(s, np.array([1.0, 1.0]))
    assert sh.container_us == pytest.approx([60, 20]) and sh.clipped_runs == 1
    assert sh.ops_us == pytest.approx([60, 20])


def test_ops_short_of_the_accelerator_cycles_leave_the_rest_unattributed():
    s = _series([[10], [30]], [80], [8], [10])
    sh = op_shares(s, np.array([10.0]))
    assert sh.op_us[:, 0] == pytest.approx([1, 3])


def test_without_any_qnn_time_the_ops_are_shares_of_the_delegate_call():
    s = _series([[1, 3]], [1, 3], [np.nan, np.nan], [7, 9])
    s.roots.pop(ACCEL_US)
    sh = op_shares(s, np.array([np.nan, np.nan]))
    assert sh.container == "DELEGATE_CALL" and sh.ops_us == pytest.approx([7, 9])


def test_a_clock_too_slow_for_the_measured_time_is_a_finding_with_both_figures():
    # 10,000 cycles in 10 µs of accelerator time: at least 1,000 MHz; a runtrace said 500 MHz.
    s = _series([[6000, 6000], [4000, 4000]], [10000, 10000], [10, 10], [30, 30])
    measured = {"mhz": 500.0, "per_execute": [500.0], "path": "x", "graphs": ["g"],
                "graph_mhz": np.array([500.0]), "ticks": {}}
    p = analyse_series(s, measured=measured)
    ot = p.op_times
    assert ot.runs_over == 2 and ot.over_raw_us_mean == pytest.approx(20.0)
    assert ot.over_bound_us_mean == pytest.approx(10.0) and ot.over_clock_mhz_to_fit == pytest.approx(1000)
    assert sum(o.us_in_container for o in p.ops) == pytest.approx(10.0)    # the views: shares of 10 µs
    (f,) = [f for f in findings(None, report([p])) if f.kind == "ops_exceed_container"]
    assert "add up to 20 µs per run" in f.text and "holds them, 10 µs" in f.text and "at least 1,000 MHz" in f.text
    assert "500 MHz" in f.text and f.severity == "medium"


def test_a_clock_derived_from_the_same_run_fits_and_is_no_finding():
    s = _series([[600, 60], [400, 40]], [1000, 100], [2, 1], [3, 3], excl_us=[1, 0.5])
    p = analyse_series(s)
    assert p.op_times.runs_over == 0
    assert not [f for f in findings(None, report([p])) if f.kind == "ops_exceed_container"]


def test_hostile_values_give_no_negative_times_and_no_warnings():
    s = _series([[-5, np.inf, 1e308], [np.nan, 3, 1e308]], [np.nan, -1, np.inf], [np.inf, -2, 1e308],
                [np.nan, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sh = op_shares(s, np.array([0.0, np.nan, -1.0]))
        f = summary_fields(sh, np.array([0.0, np.nan, -1.0]), 3)
    assert (sh.op_us >= 0).all() and np.isfinite(sh.op_us).all()
    ok = ~np.isnan(sh.ops_us)
    assert (sh.ops_us[ok] <= sh.container_us[ok]).all()
    json.dumps(plain(f))


def test_non_cycle_rows_have_no_share():
    s = _series([[5, 5], [7, 7]], [5, 5], [1, 1], [2, 2], units=["cycles", "us"])
    sh = op_shares(s, np.array([5.0, 5.0]))
    assert op_mean_us(sh, s) == [pytest.approx(1.0), None]


def test_the_finding_reaches_text_and_json_of_the_qnn_command():
    args = ["qnn", f"{RESNET}.etdump", "--etrecord", f"{RESNET}.etrecord", "--runtrace", str(CHAIN8_RUNTRACE)]
    res = CliRunner().invoke(main, args + ["--json"])
    assert res.exit_code == 0, res.output
    q = json.loads(res.stdout)["qnn"]
    (f,) = [f for f in q["findings"] if f["kind"] == "ops_exceed_container"]
    assert "1,868 MHz" in f["text"] and "at least" in f["text"]
    text = CliRunner().invoke(main, args, env={"COLUMNS": "400"}).stdout
    assert "per-op times from cycles ÷ the runtrace's clock (1,868 MHz)" in text


def test_shares_fill_the_excluding_wait_time_and_waits_stay_outside():
    # cycles 1,000: 10 µs excluding waits, 40 µs with them; the ops are shares of the 10 µs.
    s = _series([[600], [400]], [1000], [40], [50], excl_us=[10])
    sh = op_shares(s, np.array([100.0]))
    assert sh.container == "Accelerator (execute excluding wait) time" and sh.bound == "Accelerator (execute) time"
    assert sh.op_us[:, 0] == pytest.approx([6, 4])


def test_a_measured_clock_between_the_bounds_is_no_finding():
    """Real SM8650 chain8 (its own runtrace, 1,868 MHz warm): cycles ÷ that clock pass the whole-µs
    excluding-wait time (the clock's upper bound) but fit the time with waits."""
    etd = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
    res = CliRunner().invoke(main, ["qnn", str(etd), "--runtrace", str(FIX / "qnn" / "chain8_sm8650.runtrace.json"), "--json"])
    assert res.exit_code == 0, res.output
    q = json.loads(res.stdout)["qnn"]
    (p,) = q["partitions"]
    assert p["clock_source"] == "runtrace" and p["op_times"]["runs_over"] == 0
    assert p["op_times"]["ops_raw_us_mean"] > p["op_times"]["ops_us_mean"]       # above the excluding-wait time
    assert not [f for f in q["findings"] if f["kind"] == "ops_exceed_container"]


def test_a_clock_a_few_percent_off_is_info_not_medium():
    s = _series([[5250, 5250]], [5250, 5250], [500, 500], [600, 600])    # at least 10.5 MHz; told 10
    measured = {"mhz": 10.0, "per_execute": [10.0], "path": "x", "graphs": ["g"],
                "graph_mhz": np.array([10.0]), "ticks": {}}
    (f,) = [f for f in findings(None, report([analyse_series(s, measured=measured)]))
            if f.kind == "ops_exceed_container"]
    assert f.severity == "info" and "525 µs" in f.text


def test_a_run_without_its_delegate_call_gets_no_op_times():
    s = _series([[10, 10]], [10, 10], [5, 5], [8, np.nan])
    sh = op_shares(s, np.array([2.0, 2.0]))
    assert sh.op_us[0] == pytest.approx([5, 0]) and np.isnan(sh.ops_us[1])


def test_logged_events_longer_than_their_box_become_shares_with_a_check():
    from etscope.analysis.views.report import _overfull
    from etscope.analysis.views.report_parts import Box, fitted

    def box(name, ms, *children):
        return Box(name=name, ms=ms, kind="k", children=children or None)

    tree = fitted(box("Method::execute", 10.0, box("op (#1)", 4.0, box("kernel", 6.0, box("x", 3.0)))))
    k = tree.children[0].children[0]
    assert k.ms == pytest.approx(4.0) and k.children[0].ms == pytest.approx(2.0)
    assert k.estimate == "estimate: share of measured op (#1)"
    assert tree.children[0].children_logged_ms == pytest.approx(6.0)
    out: list[str] = []
    _overfull(tree, [], out)
    assert out == ["'Method::execute > op (#1)': the events logged inside add up to 6 ms per run, more than its own "
                   "4 ms (events overlap, or the clock is not monotonic); they are shown as their shares of it."]


def test_the_qnn_levels_nest_run_by_run_inside_the_delegate_call():
    from etscope.analysis.qnn.model import QNN_EXECUTE, RPC_EXECUTE

    s = _series([[10, 10]], [10, 10], [6, np.nan], [20, 20], excl_us=[4, 3])
    s.roots[QNN_EXECUTE] = np.array([25.0, 15.0])        # run 0: longer than its DELEGATE_CALL
    s.roots[RPC_EXECUTE] = np.array([12.0, np.nan])
    sh = op_shares(s, np.array([2.0, 2.0]))
    names = [nm for nm, _ in sh.levels]
    assert names == ["QNN (execute) time", "RPC (execute) time", "Accelerator (execute) time",
                     "Accelerator (execute excluding wait) time"]
    v = dict(sh.levels)
    assert v["QNN (execute) time"] == pytest.approx([20, 15])
    assert v["RPC (execute) time"][0] == 12 and np.isnan(v["RPC (execute) time"][1])   # not made up
    assert np.isnan(v["Accelerator (execute) time"][1])
    assert sh.container_us == pytest.approx([4, 3]) and sh.clipped_runs == 1
    assert sh.bound == "Accelerator (execute) time"


def test_graph_nodes_of_qnn_say_what_their_estimate_is_a_share_of(tmp_path):
    from etscope.render.model_explorer import ESTIMATE_COLOR, node_data

    hyb = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories"
    from etscope import api

    r = api.results(api.load(f"{hyb}.etdump", etrecord=f"{hyb}.etrecord"))
    qnn_nodes = [n for n in r.nodes.nodes if n.estimated]
    assert qnn_nodes and {n.time_how for n in qnn_nodes} == {"estimate: share of measured Accelerator (execute) time"}
    assert all(n.instruction_id == 0 for n in qnn_nodes)
    how = node_data(r.nodes)["node_time_how.json"]["results"]
    assert how[qnn_nodes[0].name]["bgColor"] == ESTIMATE_COLOR
