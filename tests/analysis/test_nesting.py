"""The nesting picture of a QNN partition and its headline rules (analysis.qnn.nesting).

Real SM8650 values: ``synthetic_qnn_chain8_device.etdump`` holds the device's chain8 profile
(DELEGATE_CALL ⊇ QNN execute 2,467 µs ⊇ RPC 2,348 µs ⊇ QNN accelerator 157 µs ⊇ Accelerator 46 µs ⊇
excluding wait 22 µs, p50 over 3 executes)."""
from pathlib import Path

import numpy as np
import pytest

import etscope
from etscope.analysis.qnn import nesting as N
from etscope.analysis import qnn
from etscope.formats.runtrace import read_runtrace
from qnn_typed import plain

FIX = Path(__file__).parents[1] / "fixtures"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
RT = FIX / "qnn" / "chain8_sm8650.runtrace.json"


def _chain8(runtrace=True):
    p = etscope.load(ETD).profile
    (part,) = plain(qnn.qnn_report(p, runtrace=read_runtrace(RT) if runtrace else None))["partitions"]
    return part, p


def test_chain8_bands_are_the_levels_outside_in_with_per_run_differences():
    part, p = _chain8()
    n = part["nesting"]
    names = [b["name"] for b in n["bands"]]
    assert names == ["Method::execute", "DELEGATE_CALL", "QNN (execute) time", "RPC (execute) time",
                     "QNN accelerator (execute) time", "Accelerator (execute) time",
                     "Accelerator (execute excluding wait) time"]
    us = [b["us_p50"] for b in n["bands"]]
    assert us[2:] == [2467, 2348, 157, 46, 22]
    assert us == sorted(us, reverse=True)                      # each contains the next
    lat = p.runs["latency_ns"] / 1e3
    assert us[0] == pytest.approx(np.median(lat))
    rpc = n["bands"][3]
    assert rpc["adds_us_p50"] == 2191 and "FastRPC" in rpc["adds"]
    assert n["bands"][-1]["adds_us_p50"] is None
    assert n["scale"] == "log"                                 # 2.54 ms vs 22 µs
    # cycles and the measured clock travel with the picture
    assert n["cycles_p50"] == 47827 and n["clock_source"] == "runtrace"
    assert n["cycles_us"] == pytest.approx(47827 / n["clock_mhz"])
    assert n["clock_bounds_mhz"] == part["clock_mhz_bounds"]


def test_chain8_headline_names_fastrpc_transport():
    part, _ = _chain8()
    assert part["nesting"]["headline_rule"] == "overhead_dominates"
    h = part["headline"]
    assert h.startswith("The NPU computes for 22 µs (46 µs with waits) of a 2.54 ms DELEGATE_CALL")
    assert "2.19 ms (86%) is FastRPC transport" in h
    # Issue 35: the headline says its statistic (llm's shard table gives per-run means of these levels).
    assert h.endswith("(p50 of each level over the runs).")


def _nest(**levels):
    order = ["Method::execute", "DELEGATE_CALL", "QNN (execute) time", "RPC (execute) time",
             "QNN accelerator (execute) time", "Accelerator (execute) time",
             "Accelerator (execute excluding wait) time"]
    return N.nesting([(k, np.array(levels[k], dtype=float)) for k in order if k in levels])


def test_rule_compute_dominates():
    n = _nest(**{"DELEGATE_CALL": [1000, 1010], "QNN (execute) time": [950, 960],
                 "Accelerator (execute) time": [800, 820]})
    assert n.headline_rule == "compute_dominates"
    assert "810 µs (waits included) of a 1.00 ms DELEGATE_CALL (81%)" in n.headline
    assert "largest overhead is QNN host-side work before and after the remote call: 145 µs" in n.headline
    assert n.scale == "linear"


def test_rule_overhead_picks_the_largest_level_not_the_outermost():
    n = _nest(**{"DELEGATE_CALL": [1000], "QNN (execute) time": [950], "Accelerator (execute) time": [400],
                 "Accelerator (execute excluding wait) time": [100]})
    assert n.headline_rule == "overhead_dominates"
    # QNN execute adds 550 over the accelerator, the waits 300, the backend 50.
    assert "550 µs (55%) is QNN host-side work" in n.headline


def test_rule_waits_can_be_the_largest_overhead():
    n = _nest(**{"QNN (execute) time": [1000], "Accelerator (execute) time": [950],
                 "Accelerator (execute excluding wait) time": [100]})
    assert n.headline_rule == "overhead_dominates"
    assert "of a 1.00 ms QNN execute" in n.headline and "850 µs (85%) is waits" in n.headline


def test_rule_no_accelerator_time():
    n = _nest(**{"DELEGATE_CALL": [500], "QNN (execute) time": [400]})
    assert n.headline_rule == "no_accelerator_time"


def test_rule_no_qnn_times():
    n = _nest(**{"Method::execute": [600], "DELEGATE_CALL": [500]})
    assert n.headline_rule == "no_qnn_times" and "500 µs" in n.headline


def test_levels_missing_in_every_run_are_dropped_and_differences_are_per_run():
    n = N.nesting([("DELEGATE_CALL", np.array([100.0, 200, 300])), ("RPC (execute) time", np.full(3, np.nan)),
                   ("Accelerator (execute) time", np.array([10.0, 150, 20]))])
    assert [b.name for b in n.bands] == ["DELEGATE_CALL", "Accelerator (execute) time"]
    # p50 of (90, 50, 280) = 90, not p50(outer) - p50(inner) = 200 - 20
    assert n.bands[0].adds_us_p50 == 90


@pytest.mark.parametrize("us,text", [(22, "22 µs"), (2.5, "2.5 µs"), (2538.4, "2.54 ms"), (1.2e6, "1.20 s")])
def test_fmt_us(us, text):
    assert N.fmt_us(us) == text


def test_every_rule_is_described():
    assert set(N.RULES) == {"no_qnn_times", "no_accelerator_time", "overhead_dominates", "compute_dominates"}


def test_effective_rate_is_named_so_and_has_no_bounds():
    """resnet50 (ORT QNN EP, 4 HVX threads): cycles ÷ µs = 3.6 GHz, above any HTP core clock."""
    from etscope.formats.qnn_csv import read_qnn_csv

    r = qnn.qnn_report(qnn_profile=read_qnn_csv(FIX / "qnn" / "resnet50_ortqnn.profile.csv"))
    n = r.partitions[0].nesting
    assert n.clock_source == "effective" and n.clock_bounds_mhz is None and n.clock_mhz > 2500
    assert [b.name for b in n.bands][0] == "QNN (execute) time"      # no ETDump: no Method::execute


def test_share_near_100_percent_is_not_rounded_up():
    n = _nest(**{"QNN (execute) time": [20749.0], "Accelerator (execute) time": [20716.0]})
    assert "(99.8%)" in n.headline
