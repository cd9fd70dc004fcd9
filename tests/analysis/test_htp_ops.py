"""Inside the HTP (analysis.qnn.htp_ops): each QNN op's HTP ops from QHAS/optrace, categories from
the rows' own flags; expected values read from the files (the real SM8650 chain8 QHAS/optrace and
the 4-shard fixture's files), not written down."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.analysis.qnn.htp_ops import QHAS_FLAGS, breakdown, classify, from_optrace, from_qhas
from etscope.cli import main
from etscope.formats.optrace import read_optrace
from etscope.formats.qhas import read_qhas
from qnn_typed import plain

FIX = Path(__file__).parents[1] / "fixtures"
QHAS = FIX / "qnn" / "chain8_sm8650.qhas.json"
OPTRACE = FIX / "qnn" / "chain8_sm8650.optrace.json"
HYB = FIX / "qnn_hybrid"


def _rows(path, table):
    return json.loads(Path(path).read_text())["data"][table]["data"]


def test_matmul0_breakdown_equals_the_qhas_rows():
    """MatMul_0 = ForceFormat_Crouton (HVX, layout) + ConvLayer_s1.opt (HMX) + bias/weights to VTCM
    (DMA), each HTP op's cycles and bytes exactly the QHAS row's; Output holds ForceFormat_Flat."""
    b = from_qhas(read_qhas(QHAS))
    rows = [r for r in _rows(QHAS, "htp_op_instances") if r["qnn_op"] == "MatMul_0"]
    m = b.op("MatMul_0")
    assert sorted((h.htp_op, h.cycles, h.dram_read, h.vtcm_write) for h in m.htp_ops) == sorted(
        (r["htp_op"], r["cycles"], r["dram_read"], r["vtcm_write"]) for r in rows)
    by_htp = {h.htp_op: h for h in m.htp_ops}
    row = {r["htp_op"]: r for r in rows}
    crouton = by_htp["q::ForceFormat_Crouton"]
    assert (crouton.unit, crouton.category) == ("HVX", "layout") and row["q::ForceFormat_Crouton"]["fmt_change"]
    assert crouton.cycles == row["q::ForceFormat_Crouton"]["cycles"] == 24061
    conv = by_htp["q::ConvLayer_s1.opt"]
    assert (conv.unit, conv.category, conv.cycles) == ("HMX", "hmx", row["q::ConvLayer_s1.opt"]["cycles"]) == (
        "HMX", "hmx", 4095)
    assert {by_htp[k].category for k in ("q::ConvLayer.opt.bias_to_vtcm", "q::ConvLayer.opt.weights_to_vtcm")} == {"dma"}
    assert by_htp["q::ConvLayer.opt.bias_to_vtcm"].cycles == 3225 and by_htp["q::ConvLayer.opt.weights_to_vtcm"].cycles == 1326
    node = next(r for r in _rows(QHAS, "qnn_op_instances_nodes") if r["qnn_op"] == "MatMul_0")
    assert m.cycles == node["cycles"] == 32707 and m.dram_read == node["dram_read"] and m.vtcm_read == node["vtcm_read"]
    assert m.category_cycles("layout") + m.category_cycles("hmx") + m.category_cycles("dma") == m.cycles
    out = b.op("Output")
    flat = next(r for r in _rows(QHAS, "htp_op_instances") if r["qnn_op"] == "Output" and r["fmt_change"])
    assert out.category_cycles("layout") == flat["cycles"] == 5801 and flat["htp_op"] == "q::ForceFormat_Flat"


def test_every_qnn_op_sums_to_its_qhas_node_row():
    b = from_qhas(read_qhas(QHAS))
    for node in _rows(QHAS, "qnn_op_instances_nodes"):
        o = b.op(node["qnn_op"])
        assert o.cycles == node["cycles"] and o.dominant_path_cycles == node["num_dominant_path_cycles_htp_0"]
        assert sum(x.cycles for x in o.dominant_by_category) == node["num_dominant_path_cycles_htp_0"]
        for k in ("dram_read", "dram_write", "vtcm_read", "vtcm_write"):
            assert getattr(o, k) == node[k], (node["qnn_op"], k)


def test_layout_share_of_active_cycles_from_the_rows_flags():
    b = from_qhas(read_qhas(QHAS))
    rows = _rows(QHAS, "htp_op_instances")
    active = sum(r["cycles"] for r in rows)
    layout = sum(r["cycles"] for r in rows if r["fmt_change"])
    assert b.active_cycles == active == sum(r["cycles"] for r in _rows(QHAS, "qnn_op_types")) == 68626
    assert b.category_cycles("layout") == layout == 29862
    assert round(100 * b.share("layout"), 1) == 43.5
    hmx = sum(r["cycles"] for r in rows if r["hmx"])
    types = {r["op"]: r for r in _rows(QHAS, "htp_op_types")}
    assert b.category_cycles("hmx") == hmx == types["q::ConvLayer_s1.opt"]["cycles"]
    assert round(100 * b.share("hmx"), 1) == round(types["q::ConvLayer_s1.opt"]["percent_active_cycles"], 1) == 17.9


def test_dominant_path_idle_is_the_rows_that_are_no_op():
    b = from_qhas(read_qhas(QHAS))
    ids = {r["op_id"] for r in _rows(QHAS, "htp_op_instances")}
    path = _rows(QHAS, "dominant_path_htp_0")
    idle = sum(r["dp_cycles"] for r in path if r["op_id"] not in ids)
    timeline = json.loads(QHAS.read_text())["data"]["htp_overall_summary"]["data"][0]["timeline_cycles"]
    assert b.idle_cycles == idle > 0 and b.timeline_cycles == timeline == sum(r["dp_cycles"] for r in path)
    assert sum(o.idle_cycles or 0 for o in b.ops) == idle
    assert b.category_cycles("idle") == idle


@pytest.mark.parametrize("flags, unit, category", [
    ({"hmx"}, "HMX", "hmx"), ({"hvx"}, "HVX", "hvx"), ({"hvx", "fmt_change"}, "HVX", "layout"),
    ({"dma"}, "DMA", "dma"), ({"dma_wait"}, "DMA", "dma"), ({"dma_set"}, "DMA", "dma"), ({"sync"}, "sync", "sync"),
    ({"hmx", "hvx"}, "HMX+HVX", "unknown"), (set(), "none", "unknown"), ({"ref_op"}, "none", "unknown"),
    ({"fmt_change"}, "none", "unknown"), ({"hvx", "sync"}, "HVX+sync", "unknown"),
])
def test_classify_from_flags_unknown_combinations_shown(flags, unit, category):
    u, c, label = classify(flags)
    assert (u, c) == (unit, category)
    if category == "unknown":
        assert label.startswith("unknown: flags ") and all(f in label for f in flags)


def test_classification_never_reads_the_op_name():
    """The same flags give the same category whatever the HTP op is called."""
    q = read_qhas(QHAS)
    for r in q.htp_op_instances:
        r["htp_op"] = "q::Renamed"
    b = from_qhas(q)
    assert round(100 * b.share("layout"), 1) == 43.5


def test_optrace_alone_matches_qhas_cycles_and_says_what_it_lacks():
    q, o = from_qhas(read_qhas(QHAS)), from_optrace(read_optrace(OPTRACE))
    assert o.active_cycles == q.active_cycles
    assert {x.qnn_op: x.cycles for x in o.ops} == {x.qnn_op: x.cycles for x in q.ops if x.htp_ops}
    assert o.category_cycles("hmx") == q.category_cycles("hmx")
    # No fmt_change flag in the real optrace: its conversions count as HVX, and it says so.
    assert o.category_cycles("layout") == 0 and o.category_cycles("hvx") == q.category_cycles("layout")
    assert any("fmt_change" in n for n in o.notes) and o.idle_cycles is None
    assert o.op("MatMul_0").dram_read is None


def test_trimmed_qhas_falls_back_to_the_optrace():
    trimmed = read_qhas(QHAS)
    trimmed.htp_op_instances.clear()
    assert from_qhas(trimmed) is None
    assert breakdown(trimmed, read_optrace(OPTRACE)).source == "optrace"


def test_four_shards_each_from_its_own_file():
    """The 4-shard fixture: each partition's breakdown is its own QHAS file's, joined to the graph."""
    from etscope.api import qnn_from_files

    qhas = [HYB / f"synthetic_qnn_4shard.shard{k}.qhas.json" for k in range(4)]
    optrace = [HYB / f"synthetic_qnn_4shard.shard{k}.optrace.json" for k in range(4)]
    r = qnn_from_files(HYB / "synthetic_qnn_4shard.etdump", HYB / "synthetic_qnn_4shard.etrecord",
                       qhas=[str(p) for p in qhas], optrace=[str(p) for p in optrace])
    truth = json.loads((HYB / "synthetic_qnn_4shard.qnn_files.truth.json").read_text())
    got = {Path(h.breakdown.path).name: plain(h.breakdown) for h in r.htp_ops}
    assert sorted(got) == sorted(p.name for p in qhas)
    for p in qhas:
        b = got[p.name]
        rows = _rows(p, "htp_op_instances")
        assert b["active_cycles"] == sum(x["cycles"] for x in rows)
        assert {o["qnn_op"] for o in b["ops"] if o["htp_ops"]} == {x["qnn_op"] for x in rows}
        iid = next(t["instruction_id"] for t in truth["partitions"] if t["qhas"] == p.name)
        assert b["partition"] == f"instruction {iid}"          # the partition the fixture made it for
        joined = [o for o in b["ops"] if o["node"]]
        assert joined and all(o["source"] for o in joined)
    assert len({b["partition"] for b in got.values()}) == 4


def test_qhas_flags_are_the_documented_ones():
    assert set(QHAS_FLAGS) == {"hmx", "hvx", "dma", "dma_wait", "dma_set", "sync", "fmt_change", "ref_op"}


def test_odd_rows_do_not_break_the_breakdown():
    """Rows without cycles, with negative or huge values, unknown flags and no dominant path: the
    breakdown keeps what is there and says unknown where it must."""
    from etscope.formats.qhas import parse_qhas

    doc = {"header": {"artifact_type": "QHAS"}, "data": {
        "htp_overall_summary": {"data": [{"timeline_cycles": 10}]},
        "htp_op_instances": {"data": [
            {"qnn_op": "a", "htp_op": "x", "hmx": True, "hvx": True, "cycles": 5},
            {"qnn_op": "a", "htp_op": "y"},
            {"qnn_op": "b", "htp_op": "z", "dma": True, "cycles": 1e300, "start_cycle": 2**70},
            {"qnn_op": None, "htp_op": "w", "cycles": 3},
            {"htp_op": "v", "sync": True, "cycles": -4, "qnn_op": "c"}]},
        "dominant_path_htp_0": {"data": [{"op_id": None, "dp_cycles": 2, "start_cycle": 1}, {"dp_cycles": 1}]}}}
    b = from_qhas(parse_qhas(doc, "odd.json"))
    a = b.op("a")
    assert a.cycles == 5 and a.category_cycles("unknown") == 5     # hmx+hvx: an unknown combination
    assert {h.label for h in a.htp_ops} == {"unknown: flags hmx+hvx", "unknown: flags none set"}
    assert b.op("b").category_cycles("dma") == 1e300
    assert b.idle_cycles == 2 and b.op("(after the last op)").idle_cycles == 2
    plain(b)           # its JSON is writable (huge and odd values included)
    r = CliRunner().invoke(main, ["qnn", "--qhas", str(FIX / "qnn" / "chain8_sm8650.qhas.json"), "--top", "3"])
    assert r.exit_code == 0 and "more QNN ops" in r.stdout
