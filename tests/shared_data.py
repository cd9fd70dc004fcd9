"""Where the tests find the real QNN files copied from ``shared/data``: ``tests/fixtures/shared``
(provenance in its README), or ``ETSCOPE_SHARED_DATA`` when set. One definition for every test."""
import os
from pathlib import Path

SHARED = Path(os.environ.get("ETSCOPE_SHARED_DATA") or Path(__file__).resolve().parent / "fixtures" / "shared")
