"""The notebook API's tests use the same fixture helpers as the view tests (views_helpers.py
beside them: fixture paths, an ETDump carrying an HTML payload)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
