import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from etscope.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_summary_json_schema(real):
    r = run("summary", real / "cnn.etdump", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)  # stdout holds one JSON object and nothing else
    assert s["runs"]["count"] == 10
    assert set(s["runs"]["latency_ms"]) >= {"p50", "p90", "mean", "min", "max"}
    kinds = [b["kind"] for b in s["breakdown"]]
    assert kinds == ["delegate", "cpu_ops", "framework_overhead"]
    assert sum(b["mean_ms"] for b in s["breakdown"]) == pytest.approx(s["runs"]["latency_ms"]["mean"], rel=0.01)
    (fb,) = s["fallback_ops"]
    assert fb["kernel"] == "native_call_cumsum.out" and fb["instruction_id"] == 1
    assert set(fb) >= {"op_type", "kernel", "instruction_id", "mean_ms", "share", "source"}


def test_ops_json_has_rows(real):
    r = run("ops", real / "cnn.etdump", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    names = [o["name"] for o in s["ops"]]
    assert "Convolution (NHWC, F32) IGEMM #1" in names
    assert any(o["placement"] == "cpu" for o in s["ops"])


def test_text_outputs(real):
    r = run("summary", real / "cnn.etdump")
    assert r.exit_code == 0
    assert "Method::execute" in r.output and "XnnpackBackend" in r.output
    r = run("ops", real / "llama_nodebug.etdump", "--limit", "0")
    assert r.exit_code == 0 and "native_call_index_put.out" in r.output


def test_demo_runs_offline_and_says_what_it_is():
    r = run("demo")
    assert r.exit_code == 0, r.output
    assert "etscope demo" in r.output and "XNNPACK" in r.output and "cumsum" in r.output


@pytest.mark.parametrize("content", [b"", b"\x00" * 7, b"not an etdump at all, just text"])
def test_bad_input_exits_2_with_one_line(tmp_path, content):
    p = tmp_path / "bad.etdump"
    p.write_bytes(content)
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "summary", str(p)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("etscope: ") and str(p) in lines[0]


def test_missing_file_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "summary", str(tmp_path / "none.etdump")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr


def test_help_does_not_import_heavy_modules():
    code = ("import sys, etscope.cli; "
            "print(sorted(m for m in ('numpy','rich','torch','executorch','pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("extra", [["--pte", "llama.pte"], ["--etrecord", "llama.etrecord"]])
def test_inputs_that_do_not_match_the_etdump_exit_2(real, extra):
    flag, name = extra
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "summary", str(real / "cnn.etdump"), flag,
                           str(real / name)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "does not match the ETDump" in proc.stderr and name in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_with_pte_and_etrecord_ops_get_types_and_sources(real):
    r = run("summary", real / "llama_nodebug.etdump", "--pte", real / "llama.pte", "--etrecord",
            real / "llama.etrecord", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    idx = [f for f in s["fallback_ops"] if f["kernel"] == "native_call_index_put.out"]
    assert len(idx) == 4
    assert all(f["op_type"] == "aten.index_put.default" and f["op_type_from"] == "etrecord" for f in idx)
    assert all(f["source"] and f["source"].startswith("attention.py:") for f in idx)
    assert s["memory"]["planned_bytes"] > 0
    assert {d["backend_from"] for d in s["delegate_calls"]} == {"ETRecord"}


@pytest.mark.parametrize("args, code", [
    (("ops", "{real}/llama_nodebug.etdump", "--json"), 0),           # large output through a pipe
    (("summary", "{real}/none.etdump"), 2),                          # bad input
    (("diff", "{diff}/diff_same_00.etdump", "{diff}/diff_conv_cpu.etdump", "--fail-on-regression", "5%", "--json"), 1),
])
def test_the_command_ends_at_once_with_its_output_and_exit_code(real, args, code):
    """`etscope` (cli.run) skips the interpreter's teardown after a command: everything written
    must still arrive and the exit code must be the command's, as `main` gives them in-process."""
    diff = real.parent / "diff"
    argv = [a.format(real=real, diff=diff) for a in args]
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", *argv], capture_output=True, text=True)
    inproc = CliRunner().invoke(main, argv)
    assert proc.returncode == inproc.exit_code == code
    if code != 2:
        assert proc.stdout == inproc.stdout and len(proc.stdout) > 1000
    else:
        assert proc.stderr.strip().startswith("etscope: ") and proc.stdout == ""


def test_the_command_process_is_tuned_and_a_library_process_is_not():
    """``etscope`` (run) sets its own process up (cycle collection after 100,000 new objects, not
    700; numpy without huge pages); importing etscope as a library changes neither."""
    code = ("import gc, os, etscope.cli, etscope.api; before = gc.get_threshold()[0]; "
            "from etscope.cli import process; process.tune(); "
            "print(before, gc.get_threshold()[0], os.environ['NUMPY_MADVISE_HUGEPAGE'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}).stdout.split()
    assert out == ["700", "100000", "0"]
