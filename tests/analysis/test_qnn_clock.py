"""HTP clock: honest bounds, the measured clock from a runtrace, and sentences whose numbers add up.

Real SM8650 data: chain8 profile text (3 executes, cycles 68,365 / 47,827 / 32,837, accelerator µs
with waits 832 / 46 / 25, excluding waits 86 / 22 / 15) and its runtrace (Graph Execute measured
806 / 1,868 / 1,894 MHz). ``synthetic_qnn_chain8_device.etdump`` holds the same values as an ETDump."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis import qnn
from etscope.cli import main
from etscope.formats.qnn_csv import read_qnn_csv
from etscope.formats.qnn_text import read_qnn_text
from etscope.formats.runtrace import read_runtrace
from qnn_typed import plain

FIX = Path(__file__).parents[1] / "fixtures"
Q = FIX / "qnn"
TXT = Q / "chain8_sm8650.profile.txt"
RT = Q / "chain8_sm8650.runtrace.json"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
CYC = np.array([68365, 47827, 32837.0])
WAIT = np.array([832, 46, 25.0])
EXCL = np.array([86, 22, 15.0])


def _part(runtrace=None):
    r = plain(qnn.qnn_report(qnn_profile=read_qnn_text(TXT), runtrace=read_runtrace(runtrace) if runtrace else None))
    (p,) = r["partitions"]
    return p, r


def test_bounds_bracket_the_measured_clock():
    p, _ = _part()
    assert p["clock_bound"] == "between"
    lo, hi = p["clock_mhz_bounds"]
    assert lo == pytest.approx(np.median(CYC / (WAIT + 0.5)))        # 1,029 MHz: waits included
    assert hi == pytest.approx(np.median(CYC / (EXCL - 0.5)))        # 2,225 MHz: waits excluded
    assert lo < 1868.14 < hi                                          # the runtrace's measured clock
    assert p["clock_mhz_est_per_run_range"] == pytest.approx([(CYC / EXCL).min(), (CYC / EXCL).max()])
    assert p["clock_source"] == "estimate" and p["clock_mhz_used"] == pytest.approx(47827 / 22)


def test_per_op_us_are_cycles_over_the_stated_clock():
    """'Per-op µs below are cycles p50 ÷ N MHz' holds for the column shown (MatMul_3: 8,871 cycles)."""
    p, r = _part()
    for o in p["ops"]:
        assert o["est_us_at_clock"] == pytest.approx(o["cycles_p50"] / p["clock_mhz_used"])
    m3 = next(o for o in p["ops"] if o["qnn_name"].startswith("MatMul_3:"))
    assert m3["cycles_p50"] == 8871 and m3["est_us_at_clock"] == pytest.approx(4.0806, abs=1e-4)
    out = CliRunner().invoke(main, ["qnn", "--qnn-csv", str(TXT)], terminal_width=250).output
    said = re.search(r"Per-op µs below are cycles p50 ÷ ([\d,]+) MHz", out)
    assert said and said.group(1) == "2,174"
    row = next(ln for ln in out.splitlines() if "MatMul_3:OpId_30" in ln)
    assert "8,871" in row and "4.08" in row and "5.31" not in row
    assert "±0.5 µs quantisation" not in out and "1,029–2,225 MHz" in out


def test_runtrace_replaces_the_estimate():
    p, r = _part(RT)
    assert p["clock_source"] == "runtrace"
    assert p["clock_mhz_measured"] == pytest.approx(1868.14)
    assert p["clock_mhz_measured_per_execute"] == pytest.approx([806.365, 1868.14, 1894.34])
    assert p["clock_mhz_used"] == pytest.approx(1868.14)
    assert p["clock_mhz_est"] == pytest.approx(47827 / 22)           # still shown beside it
    # same session: the runtrace's VTCM-acquire / power-on ticks equal the profile's values run by
    # run, so each run is divided by its own measured clock (the cold first one ran at 806 MHz)
    assert p["clock_measured_per_run"] is True
    assert p["per_run"]["clock_mhz_used"] == pytest.approx([806.365, 1868.14, 1894.34])
    assert p["clock_measured_within_bounds"] is True
    qp = read_qnn_text(TXT)
    for o in p["ops"]:
        per_run = [b.node_cycles[b.node_names.index(o["qnn_name"])] for b in qp.execute_blocks()]
        assert o["est_us_p50"] == pytest.approx(np.median(np.array(per_run) / [806.365, 1868.14, 1894.34]))
        assert o["est_us_at_clock"] == pytest.approx(o["cycles_p50"] / 1868.14)
    assert r["runtrace"]["clock_mhz"] == pytest.approx(1868.14) and not r["warnings"]
    out = CliRunner().invoke(main, ["qnn", "--qnn-csv", str(TXT), "--runtrace", str(RT)],
                             terminal_width=250).output
    assert "1,868 MHz measured" in out and "≈2,174 MHz" in out
    assert "Per-op µs below are cycles p50 ÷ 1,868 MHz (measured)" in out


def test_runtrace_outside_the_bounds_is_said():
    """indep8: cycles summed over 4 HVX threads (3,696+ MHz 'clock'), runtrace 1,893 MHz."""
    r = plain(qnn.qnn_report(qnn_profile=read_qnn_text(Q / "indep8_native_sm8650.profile.txt"),
                       runtrace=read_runtrace(Q / "indep8_native_sm8650.runtrace.json")))
    (p,) = r["partitions"]
    assert p["clock_bound"] == "effective" and p["clock_measured_within_bounds"] is False
    assert any("outside this profile's bounds" in w for w in r["warnings"])
    assert p["clock_measured_per_run"] is True      # its own runtrace: same executes


def test_runtrace_of_another_run_gives_one_clock():
    """chain8's runtrace with indep8's profile: executes do not match, so its p50 is used for all."""
    r = plain(qnn.qnn_report(qnn_profile=read_qnn_text(Q / "indep8_native_sm8650.profile.txt"), runtrace=read_runtrace(RT)))
    (p,) = r["partitions"]
    assert p["clock_measured_per_run"] is False
    assert p["per_run"]["clock_mhz_used"] == pytest.approx([1868.14] * 3)


def test_wait_inclusive_only_is_a_lower_bound():
    """Emulator CSV: only 'Accelerator (execute) time' (waits included): the estimate is a lower
    bound, not a ±0.5 µs range, and the per-run spread is shown."""
    qp = read_qnn_csv(Q / "emulator_cnn_small_qdq_detailed.qnn_profile.csv")
    r = plain(qnn.qnn_report(qnn_profile=qp))
    (p,) = r["partitions"]
    cyc = np.array([b.accel_cycles for b in qp.execute_blocks()])
    us = np.array([b.root_value("Accelerator (execute) time", "us") for b in qp.execute_blocks()])
    assert p["clock_bound"] == "lower"
    assert p["clock_mhz_bounds"][0] == pytest.approx(np.median(cyc / (us + 0.5)))
    assert p["clock_mhz_bounds"][1] is None
    assert p["clock_mhz_est_per_run_range"] == pytest.approx([(cyc / us).min(), (cyc / us).max()])
    out = CliRunner().invoke(main, ["qnn", "--qnn-csv", str(Q / "emulator_cnn_small_qdq_detailed.qnn_profile.csv")],
                             terminal_width=250).output
    lo, hi = p["clock_mhz_est_per_run_range"]
    assert f"≥ {p['clock_mhz_bounds'][0]:,.0f} MHz p50: cycles ÷ 'Accelerator (execute) time' " \
           f"({p['clock_mhz_est']:,.0f} MHz) is a lower bound only" in out
    assert f"per run the estimate spans {lo:,.0f}–{hi:,.0f} MHz" in out


def test_summary_names_the_basis_and_takes_a_runtrace():
    out = CliRunner().invoke(main, ["summary", str(ETD)], terminal_width=250).output
    line = " ".join(out.split())
    assert "46.0 µs (waits included), = 47,827 cycles" in line
    assert "≈2,174 MHz estimated = p50 of cycles ÷ 'Accelerator (execute excluding wait) time' (22.0 µs p50)" in line
    assert "1,029–2,225 MHz" in line
    res = CliRunner().invoke(main, ["summary", str(ETD), "--runtrace", str(RT), "--json"])
    assert res.exit_code == 0, res.output
    (q,) = json.loads(res.output)["qnn"]
    assert q["clock_source"] == "runtrace" and q["clock_mhz_used"] == pytest.approx(1868.14)
    assert q["clock_mhz_bounds"] == pytest.approx([np.median(CYC / (WAIT + 0.5)), np.median(CYC / (EXCL - 0.5))])
    out = CliRunner().invoke(main, ["summary", str(ETD), "--runtrace", str(RT)], terminal_width=250).output
    assert "HTP clock 1,868 MHz measured (runtrace)" in " ".join(out.split())


def test_trace_and_report_use_the_measured_clock(tmp_path):
    t = tmp_path / "t.json"
    res = CliRunner().invoke(main, ["trace", str(ETD), "--runtrace", str(RT), "-o", str(t)])
    assert res.exit_code == 0, res.output
    ops = [e for e in json.loads(t.read_text())["traceEvents"] if e.get("cat") == "qnn_op_estimated"]
    assert len(ops) == 36
    clocks = [806.365, 1868.14, 1894.34]
    for e in ops:
        assert e["args"]["clock_source"] == "runtrace"
        assert e["args"]["est_us"] == pytest.approx(e["args"]["cycles"] / clocks[e["args"]["run"]], abs=1e-3)
    h = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", str(ETD), "--runtrace", str(RT), "-o", str(h)])
    assert res.exit_code == 0, res.output
    assert '"clock_source": "runtrace"' in h.read_text() or '"clock_source":"runtrace"' in h.read_text()


def test_bad_runtrace_is_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"header": {"artifact_type": "RUN_TRACE"}, "traceEvents": [{"ph": "X", "name": "Graph Execute", '
                   '"args": {"summary_htp_frequency_ghz": 99}}]}')
    for cmd in (["qnn", str(ETD)], ["summary", str(ETD)], ["trace", str(ETD), "-o", str(tmp_path / "t.json")],
                ["report", str(ETD), "-o", str(tmp_path / "r.html")]):
        res = CliRunner().invoke(main, cmd + ["--runtrace", str(bad)])
        assert res.exit_code == 2, (cmd, res.output)
        assert "not an HTP clock" in res.output and "Traceback" not in res.output
