"""The command line on hostile files, in a subprocess: exit code 0 or 2, and on error exactly one
stderr line ``etscope: <file>: <what is wrong> [at byte N]``, never a traceback.

A handful of inputs (each run starts a Python process): mutated files of every kind the CLI takes,
the stored crash reproducers, and files of the wrong kind.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import fuzz_harness as H

MODEL = "gen_cnn" if (H.REAL / "gen_cnn.etdump").exists() else "cnn"
SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               COLUMNS="120", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "etscope.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, errors="replace")


def _check(result: subprocess.CompletedProcess, label: str) -> None:
    where = f"{label}: exit {result.returncode}\nstderr: {result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, where
    assert result.returncode in (0, 2), where
    if result.returncode == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("etscope: "), where


def _mutated(kind: str, seed: int) -> bytes:
    path = {"etdump": H.REAL / f"{MODEL}.etdump", "pte": H.REAL / f"{MODEL}.pte",
            "etrecord": H.REAL / f"{MODEL}.etrecord", "qhas": H.QNN / "chain8_sm8650.qhas.json",
            "optrace": H.QNN / "chain8_sm8650.optrace.json"}[kind]
    return H.mutate(kind, path.read_bytes(), random.Random(seed))


CASES = [("etdump", s) for s in range(6)] + [("pte", s) for s in range(3)] + [("etrecord", s) for s in range(3)]


@pytest.mark.parametrize("kind, seed", CASES, ids=[f"{k}-{s}" for k, s in CASES])
def test_summary_on_mutated_files(tmp_path, kind, seed):
    f = tmp_path / f"x.{kind}"
    f.write_bytes(_mutated(kind, seed))
    args = {"etdump": [str(f)], "pte": [str(H.REAL / f"{MODEL}.etdump"), "--pte", str(f)],
            "etrecord": [str(H.REAL / f"{MODEL}.etdump"), "--etrecord", str(f)]}[kind]
    _check(_cli("summary", *args), f"summary {kind} seed {seed}")


def test_ops_and_json_on_mutated_etdump(tmp_path):
    f = tmp_path / "x.etdump"
    f.write_bytes(_mutated("etdump", 100))
    _check(_cli("ops", str(f), "--limit", "0"), "ops")
    r = _cli("summary", str(f), "--json")
    _check(r, "summary --json")
    if r.returncode == 0:
        import json
        json.loads(r.stdout)


@pytest.mark.parametrize("kind", ["qhas", "optrace"])
def test_qnn_command_on_mutated_qnn_files(tmp_path, kind):
    etdump = H.QNN_ETDUMP / "synthetic_qnn_cnn.etdump"
    if not etdump.exists():
        pytest.skip("QNN ETDump fixture missing")
    for seed in range(2):
        f = tmp_path / f"x.{kind}.json"
        f.write_bytes(_mutated(kind, seed))
        _check(_cli("qnn", str(etdump), f"--{kind}", str(f)), f"qnn --{kind} seed {seed}")


@pytest.mark.parametrize("path", sorted(H.CRASHERS.glob("etdump_*.bin")), ids=lambda p: p.name)
def test_summary_on_crashers(tmp_path, path):
    _check(_cli("summary", str(path)), path.name)


@pytest.mark.parametrize("content", [b"", b"\x00" * 7, b"ED00", b"PK\x03\x04", b"\x80\x04K\x01.", b"{}",
                                     b"Msg Timestamp,Message\n"], ids=repr)
def test_wrong_kinds(tmp_path, content):
    f = tmp_path / "x.etdump"
    f.write_bytes(content)
    r = _cli("summary", str(f))
    _check(r, repr(content))
    assert r.returncode == 2


def test_report_and_export_on_mutated_etdump(tmp_path):
    f = tmp_path / "x.etdump"
    f.write_bytes(_mutated("etdump", 7))
    _check(_cli("report", str(f), "-o", str(tmp_path / "r.html")), "report")
    _check(_cli("export", str(f), "-o", str(tmp_path / "out")), "export")
