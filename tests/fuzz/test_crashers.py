"""Replay every stored crash reproducer (``tests/fuzz/crashers/<reader>_<n>.bin``).

Each once broke its reader (see crashers/README.md); now the reader must return or raise
FormatError within the time and memory budgets.
"""
from __future__ import annotations

import pytest

import fuzz_harness as H
from fuzz_strategies import contract

CRASHERS = sorted(H.CRASHERS.glob("*.bin"))


def _reader(path) -> str:
    return path.stem.rsplit("_", 1)[0]


def test_crashers_are_named_after_a_reader():
    assert CRASHERS, "no crash reproducers found"
    for p in CRASHERS:
        assert _reader(p) in H.READERS or _reader(p) == "pipeline", p.name


@pytest.mark.parametrize("path", CRASHERS, ids=[p.name for p in CRASHERS])
def test_crasher_replays_cleanly(path):
    data = path.read_bytes()
    reader = _reader(path)
    if reader == "pipeline":
        from test_fuzz_pipeline import run_pipeline

        file = H._tmp_file(".etdump", data)
        contract("pipeline", data, lambda: run_pipeline(file))
    else:
        contract(reader, data)


@pytest.mark.parametrize("path", [p for p in CRASHERS if _reader(p) == "etdump"],
                         ids=[p.name for p in CRASHERS if _reader(p) == "etdump"])
def test_etdump_crashers_through_the_pipeline(path):
    from test_fuzz_pipeline import run_pipeline

    data = path.read_bytes()
    file = H._tmp_file(".etdump", data)
    contract("pipeline", data, lambda: run_pipeline(file))
