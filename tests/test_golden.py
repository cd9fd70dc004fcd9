"""Golden guard (issue 14): every command's output on every ETDump fixture is identical to the one
saved in tests/golden/ by tools/golden.py before the refactor. Only absolute paths and the report's
creation time are normalised (see tools/golden.py). An intended change of output is re-saved with
`PYTHONPATH=src python tools/golden.py` and shows up in review as a changed golden file."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("golden", Path(__file__).resolve().parents[1] / "tools" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_every_fixture_has_its_golden_file():
    assert len(golden.fixtures()) >= 30
    assert sorted(p.name for p in golden.GOLDEN.glob("*.json.gz")) == sorted(
        golden.golden_path(p).name for p in golden.fixtures())


@pytest.mark.parametrize("etdump", golden.fixtures(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_outputs_identical_to_golden(etdump):
    assert golden.first_difference(golden.load(etdump), golden.collect(etdump)) is None


def test_first_difference_finds_a_change():
    a = {"x": [1, 2.5, {"y": "z"}]}
    assert golden.first_difference(a, {"x": [1, 2.5, {"y": "z"}]}) is None
    assert golden.first_difference(a, {"x": [1, 2.5000001, {"y": "z"}]}) == ".x[1]: 2.5 != 2.5000001"
    assert golden.first_difference(a, {"x": [1, 2.5, {"y": "z", "w": 1}]}).startswith(".x[2]: keys")
    assert golden.first_difference({"n": 1}, {"n": 1.0}).startswith(".n: int")
