"""One name per quantity (issue 33 item 2): the LLM views label levels and statistics with the
glossary's words (``analysis.glossary``), in the terminal and on the report page, and keep no copy
of those words of their own; ``llm`` calls the accelerator what ``qnn`` calls it, by construction."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.console import Console

import etscope

from etscope.analysis import glossary
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis.llm import llm_report
from etscope.profile import load
from etscope.render.llm_text import render_llm

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(etscope.__file__).resolve().parent      # the package under test
REAL = ROOT / "tests" / "fixtures" / "real"
HYBRID = ROOT / "tests" / "fixtures" / "qnn_hybrid"
WORDS = (glossary.P50.label, glossary.MEAN_PER_RUN.label, glossary.SHARE_OF_MEAN.label,
         glossary.ACCELERATOR.label, glossary.DELEGATE_CALL.label)


def _text(r) -> str:
    buf = io.StringIO()
    render_llm(r, Console(file=buf, width=240))
    return buf.getvalue()


def test_llm_text_headers_are_the_glossary_labels():
    text = _text(llm_report(load(REAL / "gen_llama.etdump")))
    for label in (glossary.P50.label, glossary.MEAN_PER_RUN.label, glossary.SHARE_OF_MEAN.label):
        assert label in text


def test_qnn_partitions_table_says_accelerator_and_delegate_call_as_the_glossary():
    r = llm_report([load(str(HYBRID / "synthetic_qnn_4shard.etdump"),
                         etrecord=str(HYBRID / "synthetic_qnn_4shard.etrecord"))], all_methods=True)
    assert all(p.qnn is not None for p in r.llm.phases)
    text = _text(r)
    assert glossary.DELEGATE_CALL.label in text and glossary.ACCELERATOR.label in text
    # the accelerator time llm reads is the level qnn calls the accelerator
    assert qnn_analysis.ACCEL_US == (glossary.ACCELERATOR.event, glossary.ACCELERATOR.unit)


def test_llm_renderers_keep_no_copy_of_the_labels():
    for path in ("render/llm_text.py", "render/phases_text.py", "analysis/llm/partitions.py"):
        src = (SRC / path).read_text()
        literals = re.findall(r'"([^"\n]*)"', src) + re.findall(r"'([^'\n]*)'", src)
        for word in (glossary.MEAN_PER_RUN.label, glossary.SHARE_OF_MEAN.label):
            assert not [x for x in literals if word in x], (path, word)
        # "p50" is also a plain word in sentences ("p50 per position"): no literal is the label itself
        assert glossary.P50.label not in literals, path
    js = (SRC / "render/html/assets/report.js").read_text()
    llm_js = js[js.index("function renderLlm()"):]
    llm_js = llm_js[:llm_js.index("\n  function ", 1)]
    assert "WORDS.p50" in llm_js and "WORDS.mean_per_run" in llm_js
    assert not re.search(r"'[^']*(latency p50|mean per run|\(mean\))[^']*'", llm_js)


def test_report_page_carries_the_glossary_words(tmp_path):
    from click.testing import CliRunner

    from etscope.cli import main

    out = CliRunner().invoke(main, ["report", str(REAL / "gen_llama.etdump"), "-o", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    html = (tmp_path / "r.html").read_text()
    blob = re.search(r'<script type="application/json" id="etscope-words">(.*?)</script>', html, re.S).group(1)
    words = json.loads(blob)
    assert words["p50"] == glossary.P50.label and words["accelerator"] == glossary.ACCELERATOR.label
    assert words["delegate_call"] == glossary.DELEGATE_CALL.label and words["mean_per_run"] == glossary.MEAN_PER_RUN.label
    # the phases side by side (the steady runs of each phase): p50 and mean per run, as the text view says them
    head = re.search(r'<table class="data phase-table".*?</tr>', html, re.S).group(0)
    assert f"<th>{glossary.P50.label}</th><th>{glossary.MEAN_PER_RUN.label}</th>" in head
