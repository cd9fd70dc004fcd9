"""Fuzz test settings.

CI (default): a fixed budget, derandomized (the same inputs on every run), about two minutes for
all of ``tests/fuzz``. ``ETSCOPE_FUZZ_LONG=1``: 25x the examples, fresh random inputs each run
(``ETSCOPE_FUZZ_SCALE=N`` sets the multiplier). For a time-budgeted run that saves crashers, use
``python tests/fuzz/fuzz.py --minutes 30``.

A failing example is stored under ``tests/fuzz/crashers/new/`` when ``ETSCOPE_FUZZ_SAVE=1`` (rename
it ``<reader>_<n>.bin`` next to the others to make it a regression fixture).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

def pytest_terminal_summary(terminalreporter):
    """How many inputs each reader saw in this run (SECURITY.md keeps a table of these)."""
    mod = sys.modules.get("fuzz_strategies")
    counts = getattr(mod, "COUNTS", None)
    if counts:
        terminalreporter.write_line("fuzz inputs per reader: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
