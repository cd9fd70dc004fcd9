"""Issue 31's smaller defects outside the dataset, SQL and numerics: each a traceback or a warning
before its fix. The CLI runs in this process with every warning recorded (numpy's included)."""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "etscope" / "data"
# The real device profile, in the clone (tests/fixtures/shared: a plain clone runs this test too).
SHARED = Path(os.environ.get("ETSCOPE_SHARED_DATA") or ROOT / "tests" / "fixtures" / "shared")
CHAIN8_PROFILE = SHARED / "qnn-device" / "chain8_sm8650.profile.txt"
CHAIN8_ETDUMP = DATA / "synthetic_qnn_chain8.etdump"     # the package's sample ETDump of the chain8 run


def run(*args):
    """(exit code, stdout, stderr, warnings) of the CLI; an exception other than the exit fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"traceback: {r.exception!r}\n{r.output}")
    return r.exit_code, r.stdout, r.stderr, [str(w.message) for w in caught]


def _qnn_profiles():
    """The package's own sample ETDump with the real device profile (never skipped: it is in the clone)."""
    return [(CHAIN8_ETDUMP, CHAIN8_PROFILE)]


@pytest.mark.parametrize("etdump, profile", _qnn_profiles(), ids=lambda p: Path(p).name)
def test_report_with_a_qnn_profile_beside_the_etdump(tmp_path, etdump, profile):
    """``report ETDump --qnn-csv profile.txt``: the profile's partition has no DELEGATE_CALL, and the
    reading guide formatted its None as milliseconds (TypeError)."""
    rc, out, err, caught = run("report", etdump, "--qnn-csv", profile, "-o", tmp_path / "r.html")
    assert rc == 0, err
    assert not caught, caught
    from etscope.cli.common import load_results
    from etscope.render.guide import reading_guide

    r = load_results(str(etdump), None, None, None, {"qnn_profile": str(profile)})
    lines = [ln for ln in reading_guide(r.summary, r.qnn) if ln.startswith("QNN partition")]
    assert any("from the QNN profile file" in ln and "no DELEGATE_CALL" in ln for ln in lines), lines
    assert not any("None" in ln for ln in lines), lines


def test_guide_of_a_partition_without_delegate_call():
    from etscope.render.guide import reading_guide
    from qnn_typed import brief
    from summary_typed import latency, summary

    s = summary(runs=latency(2, 1.0, 1.0, 1.0, 1.0),
                qnn=(brief(instruction_id=None, delegate_call_ms=None, runs=2, qnn_execute_us=900.0),))
    (line,) = [ln for ln in reading_guide(s) if ln.startswith("QNN partition")]
    assert line.startswith("QNN partition from the QNN profile file (2 execute(s), no DELEGATE_CALL)")
    assert "QNN (execute) p50 900.0 µs" in line


@pytest.mark.parametrize("digits", [5000, 11])
@pytest.mark.parametrize("command", ["qnn", "trace"])
def test_pin_with_a_huge_instruction_number(tmp_path, digits, command):
    """``--qhas forward:<5000 digits>=file``: int() of more than 4,300 digits raised ValueError."""
    pin = f"forward:{'9' * digits}={DATA / 'sample_qnn_chain8.qhas.json'}"
    extra = ["-o", tmp_path / "t.json"] if command == "trace" else []
    rc, out, err, caught = run(command, CHAIN8_ETDUMP, "--qhas", pin, *extra)
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("etscope: "), err
    assert "not an instruction id" in err and len(err) < 400


def test_pin_within_int32_still_pins():
    from etscope.api import split_pin

    assert split_pin("forward:0007=x.json") == (("forward", 7), "x.json")
    assert split_pin("forward:2147483647=x.json") == (("forward", 2 ** 31 - 1), "x.json")


def _huge_cycles_csv(path: Path) -> Path:
    rows = ["Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier"]
    for e in range(3):
        rows.append(f"{e},EXECUTE,1.7e308,US,BACKEND,ROOT,QNN (execute) time")
        rows.append(f"{e},EXECUTE,1.7e308,CYCLES,BACKEND,ROOT,Accelerator (execute) time (cycles)")
        rows += [f"{e},NODE,1.7e308,CYCLES,BACKEND,SUB-EVENT,op_{i}:OpId_{i} (cycles)" for i in range(3)]
    path.write_text("\n".join(rows))
    return path


def test_mean_of_huge_finite_cycles_is_finite_and_quiet(tmp_path):
    """Per-op cycles of 1.7e308 (finite): the mean overflowed to inf (shown as null) with numpy
    overflow warnings on stderr, from every command reading the profile."""
    csv = _huge_cycles_csv(tmp_path / "big.csv")
    rc, out, err, caught = run("qnn", "--json", "--qnn-csv", csv)
    assert rc == 0 and not caught, caught
    op = json.loads(out)["qnn"]["partitions"][0]["ops"][0]
    assert op["cycles_p50"] == 1.7e308
    assert op["cycles_mean"] is not None and math.isclose(op["cycles_mean"], 1.7e308, rel_tol=1e-12)
    assert op["share"] is not None and math.isclose(op["share"], 1.0)
    for args in (["qnn", "--qnn-csv", csv], ["trace", "--qnn-csv", csv, "-o", tmp_path / "t.json"],
                 ["report", CHAIN8_ETDUMP, "--qnn-csv", csv, "-o", tmp_path / "r.html"]):
        rc, out, err, caught = run(*args)
        assert rc == 0 and not caught, (args, caught)


def test_finite_mean_matches_nanmean_below_the_edge():
    import numpy as np

    from etscope.analysis.stats import finite_mean, ratio_of_sums

    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(0, 2 ** 40, size=rng.integers(1, 40)).astype(np.float64)
        v[rng.random(v.size) < 0.2] = np.nan
        if np.isnan(v).all():
            assert finite_mean(v) is None
            continue
        assert finite_mean(v) == float(np.nanmean(v))          # bit for bit
        w = rng.integers(1, 2 ** 40, size=v.size).astype(np.float64)
        assert ratio_of_sums(v, w) == float(np.nansum(v)) / float(np.nansum(w))
    big = np.array([1.7e308, 1.6e308, np.nan, -1.7e308, 1.79e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = finite_mean(big)
    assert math.isfinite(m) and math.isclose(m, (1.7e308 / 4 + 1.6e308 / 4 - 1.7e308 / 4 + 1.79e308 / 4), rel_tol=1e-12)


def test_runs_of_qnn_files_alone_are_not_expanded(tmp_path):
    """``trace --runtrace F --runs 0:300000000`` without an ETDump expanded the range into 300
    million indices; now cut at the executes the files hold."""
    import time

    t0 = time.process_time()
    rc, out, err, caught = run("trace", "--runtrace", DATA / "sample_qnn_chain8.runtrace.json",
                               "--runs", "0:300000000", "-o", tmp_path / "all.json")
    assert rc == 0 and time.process_time() - t0 < 5, err
    rc, out, err, caught = run("trace", "--runtrace", DATA / "sample_qnn_chain8.runtrace.json",
                               "-o", tmp_path / "default.json")
    assert rc == 0
    events = lambda p: [e for e in json.loads(p.read_text())["traceEvents"] if e.get("ph") == "X"]  # noqa: E731
    assert events(tmp_path / "all.json") == events(tmp_path / "default.json")
    rc, out, err, caught = run("trace", "--runtrace", DATA / "sample_qnn_chain8.runtrace.json",
                               "--runs", "1", "-o", tmp_path / "one.json")
    assert rc == 0 and {e["args"]["execute"] for e in events(tmp_path / "one.json")} == {1}
