"""`etscope numerics`: text/JSON on the real fixtures, exit 2 with one line on bad buffers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

NUM = Path(__file__).resolve().parents[1] / "fixtures" / "numerics"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _inputs(name, program=None):
    program = program or name
    return [NUM / f"{name}.etdump", "--debug-buffer", NUM / f"{name}.debugbuf",
            "--etrecord", NUM / f"{program}.etrecord", "--pte", NUM / f"{program}.pte"]


def test_stats_json_and_text():
    r = run("numerics", *_inputs("num_q8"), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["schema"] == "etscope.numerics/1" and d["runs"] == 3 and len(d["tensors"]) == 90
    int8 = [t for t in d["tensors"] if t["dtype"] == "int8"]
    assert int8 and all(t["at_limits_share"] is not None for t in int8)
    assert d["flagged"] == sum(1 for t in d["tensors"] if t["flags"])
    r = run("numerics", *_inputs("num_q8"), "--limit", "8")
    assert r.exit_code == 0 and "aten_" in r.output and "more (--limit 0" in r.output


def test_compare_json_and_text():
    args = ["numerics", *_inputs("num_q8"), "--reference", NUM / "num_cpu.etdump", "--reference-buffer",
            NUM / "num_cpu.debugbuf", "--reference-etrecord", NUM / "num_cpu.etrecord"]
    r = run(*args, "--threshold", "snr=40", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["schema"] == "etscope.numerics.compare/1"
    assert d["thresholds"] == {"cosine_below": 0.999, "snr_db_below": 40.0}
    assert d["first_divergence"] == {"name": "aten_tanh_default", "runs": [0, 1, 2]}
    r = run(*args, "--threshold", "snr=40", "--threshold", "cosine=off")
    assert r.exit_code == 0 and "<- first divergence" in r.output and "SNR < 40.0 dB" in r.output
    assert "cosine <" not in r.output


def test_cpu_vs_cpu_text_says_exact():
    r = run("numerics", *_inputs("num_cpu_b", "num_cpu"), "--reference", NUM / "num_cpu.etdump",
            "--reference-buffer", NUM / "num_cpu.debugbuf", "--reference-etrecord", NUM / "num_cpu.etrecord")
    assert r.exit_code == 0, r.output
    assert "first divergence: none" in r.output and "exact" in r.output


@pytest.mark.parametrize("cut", [0, 100, 33039])   # the last tensor ends at byte 33040
def test_truncated_buffer_exit_2_one_line(tmp_path, cut):
    b = tmp_path / "cut.debugbuf"
    b.write_bytes((NUM / "num_cpu.debugbuf").read_bytes()[:cut])
    r = run("numerics", NUM / "num_cpu.etdump", "--debug-buffer", b)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "cut.debugbuf" in lines[0] and "run past the end" in lines[0], r.output


def test_another_programs_buffer_is_refused(tmp_path):
    # num_q8's ETDump points past the end of num_xnn's (smaller) buffer
    r = run("numerics", NUM / "num_q8.etdump", "--debug-buffer", NUM / "num_xnn.debugbuf")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and "not this ETDump's buffer" in r.output


def test_usage_errors():
    assert run("numerics", NUM / "num_cpu.etdump").exit_code == 2        # --debug-buffer required
    r = run("numerics", *_inputs("num_cpu"), "--reference", NUM / "num_cpu.etdump")
    assert r.exit_code == 2 and "go together" in r.output
    r = run("numerics", *_inputs("num_cpu"), "--reference", NUM / "num_cpu.etdump", "--reference-buffer",
            NUM / "num_cpu.debugbuf", "--threshold", "psnr=3")
    assert r.exit_code == 2


def test_export_csv_and_parquet(tmp_path):
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    args = ["numerics", *_inputs("num_q8"), "--reference", NUM / "num_cpu.etdump", "--reference-buffer",
            NUM / "num_cpu.debugbuf", "--reference-etrecord", NUM / "num_cpu.etrecord", "--threshold", "snr=40"]
    r = CliRunner().invoke(main, [str(a) for a in [*args, "--export", tmp_path / "cmp.csv", "--json"]])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)                          # the "wrote" line went to stderr
    t = pacsv.read_csv(tmp_path / "cmp.csv").to_pylist()
    want = [(run["run"], x["name"], x["snr_db"]) for run in d["runs"] for x in run["tensors"]]
    assert [(x["run"], x["name"], x["snr_db"]) for x in t] == want
    assert [x["name"] for x in t if x["first_divergence"]] == ["aten_tanh_default"] * 3
    r = run("numerics", *_inputs("num_q8"), "--export", tmp_path / "stats.parquet")
    assert r.exit_code == 0
    assert pq.read_table(tmp_path / "stats.parquet").num_rows == 90
    r = run("numerics", *_inputs("num_q8"), "--export", tmp_path / "stats.txt")
    assert r.exit_code == 2 and not (tmp_path / "stats.txt").exists()
    r = run("numerics", *_inputs("num_q8"), "--export", NUM / "num_q8.etdump")     # never an input
    assert r.exit_code == 2


def test_taps_sidecar_and_cross_graph_coverage(tmp_path):
    """--taps names the tapped program outputs; against the CPU run the text says how pairs were
    matched and the coverage; a bad sidecar is one line, exit 2."""
    tapped = [NUM / "tap_cnn_xnn.etdump", "--debug-buffer", NUM / "tap_cnn_xnn.debugbuf", "--pte", NUM / "tap_cnn_xnn.pte",
              "--taps", NUM / "tap_cnn_xnn.taps.json"]
    r = run("numerics", *tapped, "--json")
    assert r.exit_code == 0, r.output
    assert sum(t["role"] == "tap" for t in json.loads(r.output)["tensors"]) == 18
    r = run("numerics", *tapped, "--reference", NUM / "pair_cnn_cpu.etdump", "--reference-buffer",
            NUM / "pair_cnn_cpu.debugbuf", "--reference-etrecord", NUM / "pair_cnn_cpu.etrecord")
    assert r.exit_code == 0, r.output
    assert "matched by: tap node name in from_node provenance / source node (from_node) x6" in r.output
    assert "coverage: " in r.output
    bad = tmp_path / "bad.taps.json"
    bad.write_text('{"schema": "etscope.taps/1", "taps": 3}')
    r = run("numerics", *tapped[:5], "--taps", bad)
    assert r.exit_code == 2 and "bad.taps.json" in r.output and "Traceback" not in r.output


def _drift_args():
    c, r = NUM / "drift_llm_q8", NUM / "drift_llm_cpu"
    return ["numerics", f"{c}.etdump", "--etrecord", f"{c}.etrecord", "--debug-buffer", f"{c}.debugbuf",
            "--reference", f"{r}.etdump", "--reference-buffer", f"{r}.debugbuf", "--reference-etrecord", f"{r}.etrecord"]


def test_drift_table_text_json_and_export(tmp_path):
    """The LLM drift pair: the text table (80 columns: the steps past the width counted), the JSON
    drift, and the export's layer/phase/step/position columns, whose per-(layer, run) lowest SNR and
    largest max abs error are the drift cells."""
    import pyarrow.csv as pacsv

    r = run(*_drift_args(), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    dr = d["drift"]
    assert [s["label"] for s in dr["steps"]][:2] == ["prefill", "d1@3"] and len(dr["steps"]) == 7
    assert [r_["step"] for r_ in d["runs"]] == [None, 1, 2, 3, 4, 5, 6]
    assert [r_["position"] for r_ in d["runs"]] == [None, 3, 4, 5, 6, 7, 8]
    fd = dr["first_divergence"]
    assert fd["layer"] == "m.layers.0" and fd["step"] == "prefill" and fd["snr_db"] < 30
    r = run(*_drift_args())
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("drift over steps"))
    table = lines[start + 3:start + 4 + len(dr["layers"])]
    assert table[0].split()[:2] == ["layer", "prefill"] and all(len(ln) <= 80 for ln in lines[start:start + 13])
    assert "(1 more step(s) not shown, up to d6@8" in r.output
    assert "first crossing: layer m.layers.0 at prefill (run 0)" in r.output
    # one phase chosen (--phase decode): its runs in order, steps unknown (r<run>), the table still there
    r = run(*_drift_args(), "--phase", "decode", "--json")
    assert r.exit_code == 0, r.output
    assert [s["label"] for s in json.loads(r.output)["drift"]["steps"]] == [f"r{k}" for k in range(6)]
    row = next(ln for ln in table if ln.startswith("m.layers.1 "))
    cells = dr["cells"][[x["name"] for x in dr["layers"]].index("m.layers.1")]
    assert row.split()[1:7] == [f"{c['snr_db']:.1f}" + ("*" if c["diverged"] else "") for c in cells[:6]]
    out = tmp_path / "drift.csv"
    r = run(*_drift_args(), "--export", out)
    assert r.exit_code == 0, r.output
    t = pacsv.read_csv(out).to_pylist()
    assert {"layer", "phase", "step", "position", "snr_db", "max_abs_error"} <= set(t[0])
    for i, lay in enumerate(dr["layers"]):
        for j, s in enumerate(dr["steps"]):
            rows = [x for x in t if x["layer"] == lay["name"] and x["run"] == s["run"] and x["compared"]]
            c = dr["cells"][i][j]
            assert bool(rows) == (c is not None)
            if c is None:
                continue
            assert {x["phase"] for x in rows} == {s["phase"]} and {x["position"] for x in rows} == {s["position"]}
            assert len(rows) == c["tensors"]
            assert max(x["max_abs_error"] for x in rows) == pytest.approx(c["max_abs_error"], rel=1e-12)
            if c["snr_db"] is not None:
                assert min(x["snr_db"] for x in rows if x["snr_db"] is not None) == pytest.approx(c["snr_db"], rel=1e-12)
