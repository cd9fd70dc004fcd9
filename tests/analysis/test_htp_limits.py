"""HTP limits (analysis.qnn.limits): achieved bytes/s, the bound label, the sourced DRAM bandwidth
table and the LLM decode's memory wall; the arithmetic checked by hand-made inputs, and the real
stories260k program with the hybrid fixture end to end."""
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.analysis.qnn.htp_ops import QnnOpHtp
from etscope.analysis.qnn.limits import (DRAM_BANDWIDTH, Bandwidth, dram_bandwidth, memory_wall, op_limit,
                                         weight_bytes_per_token)
from etscope.cli import main

FIX = Path(__file__).parents[1] / "fixtures"
from shared_data import SHARED  # noqa: E402
from etscope.analysis.qnn.htp_ops import CategoryCycles
STORIES = SHARED / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
HYBRID = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"


def _op(cycles_by_cat: dict, dram=(None, None), vtcm=(None, None)) -> QnnOpHtp:
    return QnnOpHtp(qnn_op="op", qnn_op_type=None, cycles=float(sum(v for c, v in cycles_by_cat.items() if c != "idle")),
                    dominant_path_cycles=None, idle_cycles=cycles_by_cat.get("idle"),
                    by_category=tuple(CategoryCycles(c, v) for c, v in cycles_by_cat.items()), dram_read=dram[0], dram_write=dram[1],
                    vtcm_read=vtcm[0], vtcm_write=vtcm[1], htp_ops=(), htp_ops_total=0)


def test_bytes_per_second_at_the_stated_clock():
    # 1,000 cycles at 500 MHz = 2 µs; 100,000 DRAM bytes / 2 µs = 50 GB/s; 300,000 VTCM bytes -> 150 GB/s
    lim = op_limit(_op({"dma": 800.0, "hmx": 200.0}, dram=(60_000, 40_000), vtcm=(100_000, 200_000)), 500.0,
                   Bandwidth(100.0, "test"))
    assert lim.time_us == pytest.approx(2.0)
    assert lim.dram_gbps == pytest.approx(50.0) and lim.vtcm_gbps == pytest.approx(150.0)
    assert lim.dram_share_of_peak == pytest.approx(0.5)
    assert lim.bound == "DRAM bandwidth" and "50.0 GB/s, 50% of the 100 GB/s peak" in lim.basis


def test_bound_from_the_cycles_split_when_far_from_the_bandwidth():
    lim = op_limit(_op({"hmx": 700.0, "dma": 300.0, "idle": 50.0}, dram=(1000, 0)), 1000.0, Bandwidth(76.8, "x"))
    assert lim.bound == "HMX compute" and lim.largest_share == pytest.approx(0.7)   # idle left out of the split
    mixed = op_limit(_op({"hmx": 40.0, "hvx": 35.0, "dma": 25.0}), 1000.0, Bandwidth(None, "unknown"))
    assert mixed.bound == "mixed (largest: HMX compute)" and mixed.dram_gbps is None


def test_the_dominant_path_split_decides_when_known():
    """A DMA wait overlapping the op's compute takes cycles but little of the dominant path: the
    bound follows the path (real chain8 MatMul_3: 6,065 DMA cycles, 1,170 of its 1,665 path cycles HMX)."""
    from dataclasses import replace

    o = replace(_op({"hmx": 1170.0, "dma": 6065.0}), dominant_by_category=(CategoryCycles("hmx", 1170.0), CategoryCycles("dma", 495.0)))
    lim = op_limit(o, 1000.0, Bandwidth(None, "x"))
    assert lim.bound == "HMX compute" and "of its dominant-path cycles" in lim.basis
    assert op_limit(_op({"hmx": 1170.0, "dma": 6065.0}), 1000.0, Bandwidth(None, "x")).bound == "data movement (DMA)"


def test_no_clock_no_rates():
    lim = op_limit(_op({"dma": 10.0}, dram=(100, 0)), None, Bandwidth(76.8, "x"))
    assert lim.time_us is None and lim.dram_gbps is None and lim.bound == "data movement (DMA)"


def test_bandwidth_table_every_figure_sourced_and_unknown_said():
    for soc, (gbps, memory, source) in DRAM_BANDWIDTH.items():
        assert gbps > 0 and memory and re.search(r"https://\S+", source), soc
    bw = dram_bandwidth("SM8650")
    assert bw.gbps == 76.8 and "https://" in bw.source and "SM8650" in bw.text
    assert dram_bandwidth("SM8650", 50.0) == Bandwidth(50.0, "--dram-gbps", "SM8650")
    unknown = dram_bandwidth("SM8450")
    assert unknown.gbps is None and unknown.text.startswith("bandwidth unknown") and "--dram-gbps" in unknown.text
    assert dram_bandwidth(None).gbps is None


@dataclass
class _Delegate:
    backend_id: str
    location: str
    data_index: int
    blob_size: int


@dataclass
class _Method:
    name: str
    delegates: list = field(default_factory=list)


@dataclass
class _Program:
    methods: list
    constant_bytes: int = 0


def test_memory_wall_arithmetic():
    shared = _Delegate("QnnBackend", "segment", 1, 2_000_000)
    prog = _Program([_Method("prefill", [shared]), _Method("decode", [shared])], constant_bytes=1_000_000)
    per, _ = weight_bytes_per_token(prog, "decode")
    assert per == 3_000_000                           # the decode method's blob + the constants
    assert weight_bytes_per_token(prog, None)[0] == 3_000_000    # a blob shared by two methods counts once
    wall = memory_wall(prog, "decode", 10_000.0, "given", Bandwidth(60.0, "test"), synthetic=False)
    assert wall.streamed_gbps == pytest.approx(30.0)  # 3e6 B × 1e4 /s = 30 GB/s
    assert wall.share_of_bandwidth == pytest.approx(0.5) and "near the memory wall" in wall.text
    far = memory_wall(prog, "decode", 100.0, "given", Bandwidth(60.0, "test"), synthetic=True)
    assert far.share_of_bandwidth == pytest.approx(0.005) and "far below" in far.text and "synthetic" in far.text
    unknown = memory_wall(prog, "decode", 100.0, "given", Bandwidth(None, "no SoC"), synthetic=False)
    assert unknown.share_of_bandwidth is None and "cannot be said" in unknown.text
    assert "cannot be decided" in memory_wall(None, "decode", 100.0, "given", Bandwidth(60.0, "t"), False).text
    res = [{"type": "HMX", "cycles_used": 750, "timeline_cycles": 1000}]
    assert memory_wall(prog, "decode", 1.0, "", Bandwidth(60.0, "t"), False, prefill_resources=res
                       ).prefill_hmx_busy_share == 0.75


def test_decode_memory_wall_on_the_hybrid_fixture_with_the_real_program():
    """Inputs stated: bytes per token (the real .pte's kv_forward context binary), tokens/s (the
    fixture's decode), bandwidth and its source (SM8650 from the program's compile spec)."""
    if not STORIES.exists():
        pytest.skip("shared QNN device data not present")
    from etscope.formats.pte import read_pte

    blob = next(d.blob_size for m in read_pte(STORIES).methods if m.name == "kv_forward" for d in m.delegates)
    r = CliRunner().invoke(main, ["llm", str(HYBRID), "--pte", str(STORIES), "--json"])
    assert r.exit_code == 0, r.output
    llm = json.loads(r.stdout)["llm"]
    wall = llm["memory_wall"]
    assert wall["weight_bytes_per_token"] == blob + read_pte(STORIES).constant_bytes
    assert wall["decode_tokens_per_s"] == llm["decode_tokens_per_s"]
    assert wall["bandwidth"]["gbps"] == DRAM_BANDWIDTH["SM8650"][0] and "https://" in wall["bandwidth"]["source"]
    assert wall["streamed_gbps"] == pytest.approx(blob * llm["decode_tokens_per_s"] / 1e9)
    assert wall["share_of_bandwidth"] == pytest.approx(wall["streamed_gbps"] / 76.8)
    assert wall["synthetic"] and "synthetic fixture" in wall["text"]
    text = CliRunner().invoke(main, ["llm", str(HYBRID), "--pte", str(STORIES), "--dram-gbps", "10"]).stdout
    assert "Memory wall: decode streams at most" in text and "10 GB/s (--dram-gbps)" in text


def test_prefill_hmx_busy_share_from_the_qhas_pinned_to_prefill():
    """The report's LLM result: the memory wall with the prefill's HMX busy share read from the QHAS
    pinned to the prefill method (its HMX cycles used ÷ timeline cycles)."""
    if not STORIES.exists():
        pytest.skip("shared QNN device data not present")
    import etscope
    from etscope.api import llm_options, read_view_qnn_files, view_results

    shards = FIX / "qnn_shards"
    prefill = shards / "synthetic_hybrid_prefill.qhas.json"
    files = read_view_qnn_files((f"prefill_forward:0={prefill}", f"kv_forward:0={shards / 'synthetic_hybrid_kv.qhas.json'}"))
    profile = etscope.load(HYBRID, etrecord=HYBRID.with_suffix(".etrecord"), pte=STORIES).profile
    r = view_results(profile, files, pte=STORIES, llm_options=llm_options(STORIES))
    wall = r.llm.llm.memory_wall
    res = json.loads(prefill.read_text())["data"]["htp_overall_summary"]["data"][0]["htp_resources"]
    hmx = next(x for x in (res["data"] if isinstance(res, dict) else res) if x["type"] == "HMX")
    assert wall.prefill_hmx_busy_share == pytest.approx(hmx["cycles_used"] / hmx["timeline_cycles"])
    assert "QHAS of the prefill graph" in wall.prefill_hmx_from and "a synthetic fixture" in wall.prefill_hmx_from
