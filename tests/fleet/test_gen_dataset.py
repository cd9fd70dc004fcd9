"""Every shape of the hostile dataset generator (tests/fuzz/gen_dataset.py) through trend, sql
--dataset and collect: exit 0 or 2, no traceback or Python warning, one line per problem, and no
file outside the dataset (nor an input) modified. The lead's campaign runs many seeds of it."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import gen_dataset as G  # noqa: E402

SRC = Path(os.environ.get("ETSCOPE_CAMPAIGN_SRC") or ROOT / "src")


def run(args):
    env = dict(os.environ, PYTHONPATH=str(SRC), ETSCOPE_PROGRESS="0", PYTHONWARNINGS="default")
    return subprocess.run([sys.executable, "-m", "etscope.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("shape", G.SHAPES)
def test_every_shape_is_survived(tmp_path, shape):
    root = tmp_path / "g"
    G.gen_dataset(random.Random(7), root, shape)
    before = G.protected(root)
    cmds = G.commands(root, tmp_path / "out")
    for args in (cmds[0], cmds[2], cmds[4], cmds[8], cmds[5]):
        r = run(args)
        assert r.returncode in (0, 2), (args, r.stderr[-2000:])
        assert "Traceback" not in r.stderr and "Warning:" not in r.stderr, (args, r.stderr[-2000:])
        assert all(ln.startswith(("etscope: ", "rejected: ", "(")) for ln in r.stderr.splitlines() if ln.strip()), \
            (args, r.stderr[-2000:])
        assert G.protected(root) == before, args
    assert run(cmds[4]).returncode == 2          # the marker as --html: always refused
