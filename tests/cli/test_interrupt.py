"""Ctrl-C while an output is being written: exit code 130, no output and no temp file left, a
previous output untouched. A real SIGINT, delivered by the process to itself just before the
finished temp file would be moved into place."""
import subprocess
import sys
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"

# SIGINT gets Python's own handler first: a runner started with SIGINT ignored (nohup, some CI
# shells) passes SIG_IGN down, and the child would then never see its Ctrl-C.
_RUN = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
real_replace = os.replace

def replace_after_ctrl_c(src, dst):
    os.kill(os.getpid(), signal.SIGINT)
    real_replace(src, dst)

os.replace = replace_after_ctrl_c
from etscope.cli import main
sys.argv = ["etscope"] + sys.argv[1:]
main()
"""


@pytest.mark.parametrize("cmd, out", [("report", "r.html"), ("trace", "t.json"), ("export", "e.parquet")])
def test_ctrl_c_leaves_no_partial_output(tmp_path, cmd, out):
    target = tmp_path / out
    args = [str(REAL / "gen_llama.etdump"), "-o", str(target)]
    if cmd == "export":
        args += ["--format", "parquet"]
    r = subprocess.run([sys.executable, "-c", _RUN, cmd, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 130, r.stderr
    assert "interrupted" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_ctrl_c_keeps_the_previous_output(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("previous report")
    r = subprocess.run([sys.executable, "-c", _RUN, "report", str(REAL / "gen_llama.etdump"), "-o", str(target)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 130, r.stderr
    assert target.read_text() == "previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
