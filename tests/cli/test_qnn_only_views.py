"""Every QNN input alone works in every view (issue 15 item 4): report, trace, export and sql take
--qnn-csv, --optrace, --qhas or --runtrace without an ETDump; the tables hold what the file has and
the views say what is missing. On the real SM8650 files (tests/fixtures/qnn, copies of
shared/data/qnn-device) and the real ONNX Runtime QNN / emulator profiles."""
import csv
import json
import re

import pytest
from click.testing import CliRunner

from etscope.cli import main
from trace_format import validate
from pathlib import Path

QNN = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"
KINDS = {   # option, file, the tables its export holds
    "qnn_csv_text": ("--qnn-csv", QNN / "chain8_sm8650.profile.txt", {"qnn_ops", "qnn_partitions"}),
    "qnn_csv_csv": ("--qnn-csv", QNN / "resnet50_ortqnn.profile.csv", {"qnn_ops", "qnn_partitions"}),
    "qnn_csv_json": ("--qnn-csv", QNN / "tiny_sm8750.qnn_profile.json", {"qnn_ops", "qnn_partitions"}),
    "optrace": ("--optrace", QNN / "chain8_sm8650.optrace.json", {"qnn_ops", "qnn_units", "htp_ops"}),
    "qhas": ("--qhas", QNN / "chain8_sm8650.qhas.json", {"qnn_ops", "qnn_units", "htp_ops"}),
    "qhas_trimmed": ("--qhas", QNN / "resnet50_ortqnn_trimmed.qhas.json", {"qnn_ops", "qnn_units"}),
    "runtrace": ("--runtrace", QNN / "chain8_sm8650.runtrace.json", {"qnn_runtrace"}),
}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("kind", list(KINDS))
def test_export_holds_what_the_file_has_and_says_what_is_missing(tmp_path, kind):
    opt, path, tables = KINDS[kind]
    r = run("export", opt, path, "-o", tmp_path / "x")
    assert r.exit_code == 0, r.output
    assert {p.stem for p in (tmp_path / "x").iterdir()} == tables
    assert "note: no ETDump: no Method::execute, DELEGATE_CALL" in r.stderr
    for name in tables:
        assert _rows(tmp_path / "x" / f"{name}.csv"), name


@pytest.mark.parametrize("kind", list(KINDS))
def test_sql_trace_report_from_one_file(tmp_path, kind):
    opt, path, tables = KINDS[kind]
    table = sorted(tables)[0]
    r = run("sql", opt, path, f"SELECT count(*) AS n FROM {table}", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["n"] > 0
    r = run("sql", opt, path, "SELECT * FROM events")
    assert r.exit_code == 2 and "tables here: " in r.stderr and "no ETDump" in r.stderr
    r = run("trace", opt, path, "-o", tmp_path / "t.json")
    assert r.exit_code == 0, r.output
    t = json.loads((tmp_path / "t.json").read_text())
    assert validate(t) == [] and sum(e["ph"] == "X" for e in t["traceEvents"]) > 0
    r = run("report", opt, path, "-o", tmp_path / "r.html")
    assert r.exit_code == 0, r.output
    blob = re.search(r'id="etscope-data">(.*?)</script>', (tmp_path / "r.html").read_text(), re.S).group(1)
    data = json.loads(blob)
    assert data["summary"]["qnn_only"]["files"] == [opt[2:].replace("-", "_")]
    assert any("no ETDump" in w for w in data["warnings"])
    assert data["guide"][0].startswith("Only QNN files were given")


def test_optrace_tables_agree_with_the_file(tmp_path):
    """Per-op cycles and per-unit busy cycles are two sums of the same optrace op events."""
    path = KINDS["optrace"][1]
    r = run("export", "--optrace", path, "-o", tmp_path / "x")
    assert r.exit_code == 0, r.output
    ops, units = _rows(tmp_path / "x" / "qnn_ops.csv"), _rows(tmp_path / "x" / "qnn_units.csv")
    assert sum(float(o["cycles"]) for o in ops) == sum(float(u["busy_cycles"]) for u in units) == 68626
    hmx = [u for u in units if u["unit"] == "HMX" and u["ops"] not in ("", "0")]
    assert [(u["tid"], u["ops"], float(u["busy_cycles"])) for u in hmx] == [("256", "43", 38764.0)]
    # The file's own bytes: 45 op events, their durations on the overview process summed per track.
    doc = json.loads(path.read_text())
    assert len(ops) == 11 and sum(int(u["ops"] or 0) for u in units) == 45
    assert doc  # parsed by json independently of etscope


def test_runtrace_table_holds_the_measured_clock(tmp_path):
    r = run("sql", "--runtrace", KINDS["runtrace"][1],
            "SELECT round(clock_mhz, 3) AS mhz FROM qnn_runtrace WHERE name = 'Graph Execute' ORDER BY execute",
            "--format", "json")
    assert r.exit_code == 0, r.output
    assert [x["mhz"] for x in json.loads(r.stdout)] == [806.365, 1868.14, 1894.34]


def test_qnn_csv_partition_table(tmp_path):
    r = run("sql", "--qnn-csv", KINDS["qnn_csv_text"][1], "--runtrace", KINDS["runtrace"][1],
            "SELECT runs, accel_cycles, qnn_execute_us, clock_source, round(clock_mhz, 2) AS mhz FROM qnn_partitions",
            "--format", "json")
    assert r.exit_code == 0, r.output
    # chain8 profile: accelerator cycles 68365, 47827, 32837 over three executes (p50 47827).
    assert json.loads(r.stdout) == [{"runs": 3, "accel_cycles": 47827.0, "qnn_execute_us": 2467.0,
                                     "clock_source": "runtrace", "mhz": 1868.14}]


def test_optrace_trace_uses_the_measured_clock(tmp_path):
    r = run("trace", "--optrace", KINDS["optrace"][1], "-o", tmp_path / "a.json")
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["otherData"]["time_unit"] == "cycles"           # no clock: said, never passed off as µs
    r = run("trace", "--optrace", KINDS["optrace"][1], "--runtrace", KINDS["runtrace"][1], "-o", tmp_path / "b.json")
    assert r.exit_code == 0, r.output
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["otherData"]["time_unit"] == "us"
    ops_a = [e for e in a["traceEvents"] if e.get("cat") == "htp_op"]
    # With a clock, the unit tracks are the same as with an ETDump (analysis.qnn.htp_units): one clock
    # rule, the inference the optrace records (the runtrace's first Graph Execute, 806 MHz).
    ops_b = [e for e in b["traceEvents"] if e.get("ph") == "X" and e.get("cat", "").startswith("htp_")]
    assert len(ops_a) == len(ops_b) == 45
    assert sorted(x["args"]["cycles"] for x in ops_a) == sorted(y["args"]["cycles"] for y in ops_b)
    for y in ops_b:
        assert y["dur"] == pytest.approx(y["args"]["cycles"] / 806.365, abs=0.002)
        assert y["args"]["clock"] == "runtrace" and not y["args"]["estimated"]


def test_qnn_optrace_alone_prints_findings():
    r = run("qnn", "--optrace", KINDS["optrace"][1])
    assert r.exit_code == 0, r.output
    assert "No QNN data found" not in r.stdout
    assert "11 QNN ops, 68,626 cycles in all; the largest is MatMul_0 (32,707 cycles, 48%)" in r.stdout
    # The 8 MatMuls compute on HMX; QNN's Input/Output and the sync op never use HMX (by construction):
    # they are left out of the sentence, not counted "without HMX".
    assert "All 8 computing ops used HMX" in r.stdout and "without HMX" not in r.stdout
    # The units are listed once, in the HTP units table (its busy cycles and op counts), not again
    # as sentences under the findings.
    units = [ln.split() for ln in r.stdout.splitlines() if ln.startswith(("HMX ", "HVX "))]
    assert [(u[0], u[3], u[4]) for u in units] == [("HMX", "43", "38,764"), ("HVX", "1", "24,061"),
                                                   ("HVX", "1", "5,801")]
    assert "optrace: HMX" not in r.stdout and r.stdout.count("38,764") == 1
    assert "Missing: no ETDump" in r.stdout
    j = json.loads(run("qnn", "--optrace", KINDS["optrace"][1], "--json").stdout)
    assert len(j["qnn"]["files"]["ops"]) == 11


def test_runtrace_alone_in_qnn():
    r = run("qnn", "--runtrace", KINDS["runtrace"][1])
    assert r.exit_code == 0, r.output
    assert "HTP clock 1,868 MHz measured" in r.stdout


def test_views_need_some_input(tmp_path):
    r = run("export", "-o", tmp_path / "x")
    assert r.exit_code == 2 and "give an ETDump, or QNN files alone" in r.output
    r = run("trace", "--etrecord", QNN / "chain8_sm8650.qhas.json", "--optrace", KINDS["optrace"][1])
    assert r.exit_code == 2 and "give the ETDUMP too" in r.output
