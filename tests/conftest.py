import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "real"
SHARED = Path(os.environ.get("ETSCOPE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


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
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"shared data not present: {p}")
    return p
