"""Inside the HTP in every view: qnn text and JSON, --dram-gbps, the sql/export table, the notebook
DataFrames; values equal the analysis' (and the QHAS rows)."""
import json
from pathlib import Path

from click.testing import CliRunner

import etscope
from etscope.cli import main

FIX = Path(__file__).parents[1] / "fixtures"
Q = FIX / "qnn"
QHAS = Q / "chain8_sm8650.qhas.json"
OPTRACE = Q / "chain8_sm8650.optrace.json"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _instances():
    return json.loads(QHAS.read_text())["data"]["htp_op_instances"]["data"]


def test_qnn_json_carries_the_breakdown_and_limits():
    r = run("qnn", "--qhas", QHAS, "--optrace", OPTRACE, "--dram-gbps", "76.8", "--json")
    assert r.exit_code == 0, r.output
    (h,) = json.loads(r.stdout)["qnn"]["htp_ops"]
    b, lim = h["breakdown"], h["limits"]
    assert b["source"] == "qhas" and b["unit"] == "cycles" and b["active_cycles"] == sum(x["cycles"] for x in _instances())
    split = {c["category"]: c for c in b["by_category"]}
    assert round(100 * split["layout"]["share"], 1) == 43.5 and split["layout"]["label"] == "layout conversion"
    assert lim["bandwidth"] == {"gbps": 76.8, "source": "--dram-gbps", "soc": None, "text": "76.8 GB/s (--dram-gbps)"}
    assert lim["clock_source"] == "qhas"      # timeline cycles ÷ graph execute µs: no runtrace given
    m0 = next(x for x in lim["ops"] if x["qnn_op"] == "MatMul_0")
    mhz = lim["clock_mhz"]
    assert abs(m0["dram_gbps"] - (67584 / (32707 / mhz)) / 1e3) < 1e-9     # its DRAM bytes ÷ its time
    assert m0["bound"] == "layout conversion"


def test_qnn_without_qhas_or_optrace_has_no_htp_key():
    r = run("qnn", "--qnn-csv", Q / "chain8_sm8650.profile.txt", "--json")
    assert r.exit_code == 0 and "htp_ops" not in json.loads(r.stdout)["qnn"]


def test_qnn_text_section_and_bandwidth_unknown():
    r = run("qnn", "--qhas", QHAS)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "Inside the HTP" in out and "layout conversion 29,862 (43.5%)" in out
    assert "HTP ops of MatMul_0 (the largest)" in out and "q::ForceFormat_Crouton" in out
    assert "bandwidth unknown" in out and "--dram-gbps" in out
    assert "without HMX" not in out


def test_dram_gbps_must_be_positive():
    r = run("qnn", "--qhas", QHAS, "--dram-gbps", "0")
    assert r.exit_code == 2


def test_sql_table_sums_to_the_qhas_rows():
    r = run("sql", "select category, sum(cycles) as c from htp_ops group by category order by category",
            "--qhas", QHAS, "--format", "json")
    assert r.exit_code == 0, r.output
    got = {x["category"]: x["c"] for x in json.loads(r.stdout)}
    rows = _instances()
    assert got["layout"] == sum(x["cycles"] for x in rows if x["fmt_change"])
    assert got["hmx"] == sum(x["cycles"] for x in rows if x["hmx"])
    assert sum(got.values()) == sum(x["cycles"] for x in rows)


def test_notebook_dataframes():
    q = etscope.load(ETD).qnn(qhas=QHAS, optrace=OPTRACE)
    df = q.htp_ops()
    assert len(df) == len(_instances())
    assert set(df["category"]) == {"hmx", "layout", "dma", "sync"}
    split = q.htp_split().set_index("category")
    assert split.loc["layout", "cycles"] == 29862
    assert "htp_ops()" in repr(q)


def test_qhas_and_optrace_of_different_runs_are_told_apart():
    same = run("qnn", "--qhas", QHAS, "--optrace", OPTRACE, "--json")
    (h,) = json.loads(same.stdout)["qnn"]["htp_ops"]
    assert any("same 11 QNN ops with the same cycles" in n for n in h["breakdown"]["notes"])
    hyb = FIX / "qnn_hybrid"
    other = run("qnn", "--qhas", hyb / "synthetic_qnn_4shard.shard0.qhas.json",
                "--optrace", hyb / "synthetic_qnn_4shard.shard1.optrace.json", "--json")
    (h,) = json.loads(other.stdout)["qnn"]["htp_ops"]
    assert h["breakdown"]["source"] == "qhas"
    assert any("may come from different runs" in n for n in h["breakdown"]["notes"])
