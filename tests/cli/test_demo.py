"""`etscope demo` (issue 15 item 6): the QNN sample first (real SM8650 values, with its QHAS, optrace
and runtrace), the CPU/XNNPACK sample second, then "try next" commands that work; fast."""
import json
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main
from etscope.demo import qnn_sample_paths, sample_paths

DATA = Path(__file__).resolve().parents[2] / "src" / "etscope" / "data"


def test_qnn_case_first_then_cpu_then_try_next():
    r = CliRunner().invoke(main, ["demo", "--no-report"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    qnn, cpu, nxt = out.index("etscope demo 1/2"), out.index("etscope demo 2/2"), out.index("Try next:")
    assert qnn < cpu < nxt
    first = out[qnn:cpu]
    # The device's numbers: the partition's nesting, the runtrace's measured clock, QHAS's HMX.
    assert "QnnBackend" in first and "46.0 µs" in first and "47,827 cycles" in first
    assert "HTP clock 1,868 MHz measured (runtrace)" in first
    assert "QHAS: HMX (tid 256) busy 38,764 cycles, 59.8% of its timeline." in first
    assert "XNNPACK" in out[cpu:nxt] and "cumsum" in out[cpu:nxt]


def test_try_next_commands_work(tmp_path):
    r = CliRunner().invoke(main, ["demo", "--no-report"])
    lines = r.stdout[r.stdout.index("Try next:"):].splitlines()[1:]
    commands = [shlex.split(ln.split("   #")[0]) for ln in lines if ln.strip().startswith("etscope ")]
    assert len(commands) >= 5
    for argv in commands:
        argv = [str(tmp_path / a) if a.endswith((".html", ".json")) and "sample_" not in a else a for a in argv[1:]]
        res = CliRunner().invoke(main, argv)
        assert res.exit_code == 0, (argv, res.output)


def test_json_has_both_cases(tmp_path):
    r = CliRunner().invoke(main, ["demo", "--json", "--no-report"])
    d = json.loads(r.stdout)
    assert d["schema"] == "etscope.demo/1" and [c["name"] for c in d["cases"]] == ["qnn", "cpu"]
    assert d["cases"][0]["summary"]["qnn"][0]["clock_source"] == "runtrace"


def test_demo_is_fast_and_the_package_small(tmp_path):
    """< 2 s of CPU (user + system, so a busy machine does not fail it) for the whole command, report
    included; the shipped samples stay under 600 kB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "demo"], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 2.0, cpu
    assert (tmp_path / "demo-report.html").stat().st_size > 10_000
    assert sum(p.stat().st_size for p in DATA.iterdir()) < 600_000
    assert all(Path(p).is_file() for p in qnn_sample_paths().files() + sample_paths().files())


def test_demo_says_what_is_measured_and_what_is_simulated(tmp_path):
    """Issue 35 item 4: the banner, the report and the package's file name say which values the
    device measured and which the fixture script made up (a user would calibrate on them)."""
    r = CliRunner().invoke(main, ["demo", "--no-report"], terminal_width=300)
    banner = " ".join(r.output[:r.output.index("etdump:")].split())
    assert "Measured on the device" in banner and "Simulated by etscope's fixture script" in banner
    for made_up in ("DELEGATE_CALL = QNN execute + 30-80 µs", "framework overhead", "Method::init"):
        assert made_up in banner
    assert "a real Snapdragon" not in banner
    assert Path(qnn_sample_paths().etdump).name.startswith("synthetic_")
    out = tmp_path / "d.html"
    r = CliRunner().invoke(main, ["demo", "--report", str(out)])
    assert r.exit_code == 0
    assert "Simulated by etscope" in out.read_text()
