"""`etscope program` exit codes and outputs."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_program_text_and_json():
    pte = ROOT / "fixtures" / "qnn_pte" / "synthetic_qnn_cnn.pte"
    r = run("program", pte)
    assert r.exit_code == 0, r.output
    assert "QnnBackend" in r.output and "profile level detailed" in r.output
    j = json.loads(run("program", pte, "--json").output)
    assert j["schema"] == "etscope.program/1" and j["methods"][0]["name"] == "forward"


def test_program_bad_input_one_line_exit_2(tmp_path):
    for bad in (ROOT / "fixtures" / "real" / "cnn.etdump", tmp_path / "missing.pte", tmp_path):
        r = CliRunner().invoke(main, ["program", str(bad)])
        assert r.exit_code == 2, (bad, r.output)
        assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("etscope: "), r.output
    cut = tmp_path / "cut.pte"
    cut.write_bytes((ROOT / "fixtures" / "real" / "cnn.pte").read_bytes()[:3000])
    r = CliRunner().invoke(main, ["program", str(cut)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
