import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "real"
from shared_data import SHARED  # noqa: E402  (tests/fixtures/shared, or ETSCOPE_SHARED_DATA)


@pytest.fixture(autouse=True, scope="session")
def _no_terminal_size_from_the_caller():
    """The text views read COLUMNS/LINES (render.screen); the tests that need a width set it
    themselves. Without this the expected outputs would depend on who runs the suite (pytest-xdist
    workers, for one, start with COLUMNS=80)."""
    saved = {k: os.environ.pop(k) for k in ("COLUMNS", "LINES") if k in os.environ}
    yield
    os.environ.update(saved)


@pytest.fixture
def real():
    return REAL


def shared_or_skip(rel: str) -> Path:
    """A file of the copied shared data. Missing is a failure, not a skip: the files are in the
    repository (tests/fixtures/shared), so a plain clone runs every test."""
    p = SHARED / rel
    if not p.exists():
        pytest.fail(f"shared data file missing: {p} (see tests/fixtures/shared/README.md)")
    return p


_FUZZ = Path(__file__).parent / "fuzz"


def pytest_collection_modifyitems(config, items):
    """Everything under tests/fuzz is marked ``fuzz`` (about half the suite's time): ``pytest -m
    'not fuzz'`` is the fast inner loop; CI and the README's command run everything."""
    mark = pytest.mark.fuzz
    for item in items:
        if _FUZZ in Path(str(item.fspath)).parents:
            item.add_marker(mark)
