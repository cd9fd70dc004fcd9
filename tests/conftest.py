import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "real"
SHARED = Path(os.environ.get("ETSCOPE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def real():
    return REAL


def shared_or_skip(rel: str) -> Path:
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"shared data not present: {p}")
    return p
