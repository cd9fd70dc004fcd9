"""Snapshots of the text renderers (as memray tests its reporters): `summary` and `ops` text at a
fixed width (120 columns, no colour) on a CPU + XNNPACK program and on a QNN program. Text output
is for people and may change: when it changes on purpose, re-save with
`ETSCOPE_UPDATE_SNAPSHOTS=1 pytest tests/render/test_text_snapshots.py` and review the diff."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from etscope.analysis.ops.per_op import op_table
from etscope.analysis.views.summary import summarize
from etscope.profile import load
from etscope.render.text import render_ops, render_summary

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
WIDTH = 120
# (name, ETDump, ETRecord, .pte), relative to the repository: the summary prints the input paths.
CASES = [
    ("real_cnn", "tests/fixtures/real/cnn.etdump", "tests/fixtures/real/cnn.etrecord", "tests/fixtures/real/cnn.pte"),
    ("synthetic_qnn_cnn", "tests/fixtures/qnn_etdump/synthetic_qnn_cnn.etdump",
     "tests/fixtures/qnn_etdump/synthetic_qnn_cnn.etrecord", None),
]


def _console(buf: io.StringIO) -> Console:
    return Console(file=buf, width=WIDTH, color_system=None, highlight=False, force_terminal=False,
                   legacy_windows=False, emoji=False)


def _rendered(case, view: str) -> str:
    _, etdump, etrecord, pte = case
    profile = load(etdump, etrecord, pte)
    buf = io.StringIO()
    if view == "summary":
        render_summary(summarize(profile), console=_console(buf))
    else:
        render_ops(op_table(profile), console=_console(buf), limit=25)
    return buf.getvalue()


@pytest.mark.parametrize("view", ["summary", "ops"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_text_matches_snapshot(case, view, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = _rendered(case, view)
    path = SNAPSHOTS / f"{case[0]}.{view}.txt"
    if os.environ.get("ETSCOPE_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with ETSCOPE_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tables_fit_the_width(case):
    """Every line, tables and prose, is laid out to the console's width (render.screen)."""
    for view in ("summary", "ops"):
        lines = (SNAPSHOTS / f"{case[0]}.{view}.txt").read_text(encoding="utf-8").splitlines()
        rules = [x for x in lines if x.startswith("-----")]          # under each table's header
        assert rules and max(len(x) for x in lines) <= WIDTH
