"""Several QHAS/optrace files, one per QNN partition (issue 16 item 2): each lands on the partition
whose per-op names it holds, whatever the order given; METHOD:INSTRUCTION=FILE pins a file; when names
cannot decide it is one line and exit 2. Files: tests/fixtures/qnn_shards (tools/synth_qnn_shard_files.py)."""
import json
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
S = FIX / "qnn_shards"
VIT = FIX / "qnn_etdump" / "synthetic_qnn_vit_2part"
HYB = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def qnn_json(*args):
    r = run("qnn", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["qnn"]


def _qhas_cycles(path):
    rows = json.loads(path.read_text())["data"]["qnn_op_instances_nodes"]["data"]
    return {r["qnn_op"]: r["cycles"] for r in rows}


def test_each_file_lands_on_its_partition_in_any_order():
    files = [S / "synthetic_vit_2part_instr0.qhas.json", S / "synthetic_vit_2part_instr3.qhas.json",
             S / "synthetic_vit_2part_instr0.optrace.json", S / "synthetic_vit_2part_instr3.optrace.json"]
    for order in (files, files[::-1]):
        args = [VIT.with_suffix(".etdump"), "--etrecord", VIT.with_suffix(".etrecord")]
        for f in order:
            args += ["--qhas" if f.name.endswith(".qhas.json") else "--optrace", f]
        q = qnn_json(*args)
        where = {Path(f["path"]).name: (f["partition"], f["match_ratio"]) for f in q["shards"]["files"]}
        assert where == {"synthetic_vit_2part_instr0.qhas.json": ("instruction 0", 1.0),
                         "synthetic_vit_2part_instr3.qhas.json": ("instruction 3", 1.0),
                         "synthetic_vit_2part_instr0.optrace.json": ("instruction 0", 1.0),
                         "synthetic_vit_2part_instr3.optrace.json": ("instruction 3", 1.0)}
        # Each partition's ops carry their own file's QHAS cycles, and HMX/HVX.
        for p in q["partitions"]:
            iid = p["instruction_id"]
            truth = _qhas_cycles(S / f"synthetic_vit_2part_instr{iid}.qhas.json")
            got = {o["base"]: o["qhas_cycles"] for o in p["ops"] if o["base"] in truth}
            assert got == truth and all(o["hmx"] is not None for o in p["ops"])
        totals = q["shards"]["totals_over_shards"]
        per = [f["qhas"]["total_dram_read"] for f in q["shards"]["files"] if f["kind"] == "qhas"]
        assert totals["total_dram_read"] == sum(per) and len(per) == 2


def test_units_table_per_partition(tmp_path):
    r = run("sql", VIT.with_suffix(".etdump"), "--qhas", S / "synthetic_vit_2part_instr0.qhas.json", "--qhas",
            S / "synthetic_vit_2part_instr3.qhas.json",
            "SELECT partition, unit, busy_cycles FROM qnn_units WHERE file = 'qhas' ORDER BY 1, 2", "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert {x["partition"] for x in rows} == {"instruction 0", "instruction 3"}
    for iid in (0, 3):
        doc = json.loads((S / f"synthetic_vit_2part_instr{iid}.qhas.json").read_text())
        res = doc["data"]["htp_overall_summary"]["data"][0]["htp_resources"]
        assert sorted((x["unit"], x["busy_cycles"]) for x in rows if x["partition"] == f"instruction {iid}") == \
            sorted((u["type"], u["cycles_used"]) for u in res)


def test_names_that_cannot_decide_are_an_error():
    # One file holding both partitions' ops matches both equally.
    r = run("qnn", VIT.with_suffix(".etdump"), "--qhas", S / "synthetic_vit_2part_both.qhas.json", "--qhas",
            S / "synthetic_vit_2part_instr3.qhas.json")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    # The hybrid program: prefill and kv graphs have the same op names, one partition at instruction 0.
    r = run("report", HYB.with_suffix(".etdump"), "--qhas", S / "synthetic_hybrid_prefill.qhas.json",
            "--qhas", S / "synthetic_hybrid_kv.qhas.json", "-o", "-")
    assert r.exit_code == 2 and "pin each as --qhas METHOD:INSTRUCTION=FILE" in r.stderr
    # Pinned, but the ETDump alone does not name its method.
    r = run("qnn", HYB.with_suffix(".etdump"), "--qhas", f"prefill_forward:0={S / 'synthetic_hybrid_prefill.qhas.json'}",
            "--qhas", f"kv_forward:0={S / 'synthetic_hybrid_kv.qhas.json'}")
    assert r.exit_code == 2 and "give --method" in r.stderr


def test_pins_tell_the_hybrid_methods_apart():
    pins = ["--qhas", f"prefill_forward:0={S / 'synthetic_hybrid_prefill.qhas.json'}",
            "--qhas", f"kv_forward:0={S / 'synthetic_hybrid_kv.qhas.json'}"]
    for method, used in (("prefill_forward", "prefill"), ("kv_forward", "kv")):
        q = qnn_json(HYB.with_suffix(".etdump"), "--etrecord", HYB.with_suffix(".etrecord"), "--method", method, *pins)
        by = {Path(f["path"]).name: f for f in q["shards"]["files"]}
        on = by[f"synthetic_hybrid_{used}.qhas.json"]
        assert on["partition"] == "instruction 0" and on["how"] == f"pinned {method}:0"
        other = next(f for n, f in by.items() if n != f"synthetic_hybrid_{used}.qhas.json")
        assert other["partition"] is None and "not used here" in other["note"]     # reported, not dropped
        truth = _qhas_cycles(S / f"synthetic_hybrid_{used}.qhas.json")
        got = {o["base"]: o["qhas_cycles"] for o in q["partitions"][0]["ops"] if o["base"] in truth}
        assert got == truth


def test_pin_to_no_qnn_partition_and_unmatched_file():
    r = run("qnn", VIT.with_suffix(".etdump"), "--qhas", f"forward:1={S / 'synthetic_vit_2part_instr0.qhas.json'}")
    assert r.exit_code == 2 and "no QNN partition at instruction 1" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    # A file of another model matches no partition: said in warnings and kept at file level.
    q = qnn_json(VIT.with_suffix(".etdump"), "--qhas", S / "synthetic_vit_2part_instr0.qhas.json",
                 "--qhas", FIX / "qnn" / "chain8_sm8650.qhas.json")
    chain8 = next(f for f in q["shards"]["files"] if f["path"].endswith("chain8_sm8650.qhas.json"))
    assert chain8["partition"] is None and chain8["match_ratio"] == 0.0 and "matches no partition" in chain8["note"]
    assert any("chain8_sm8650.qhas.json: no partition" in w for w in q["warnings"])
    assert q["qhas"]["resources"]           # its units are still shown
