"""'Inside the HTP' in the report, in headless Chromium: the headline answers the question, the
whole-graph bar and one stacked bar per QNN op are drawn with the analysis' numbers, the axis is
labelled, the bound and bandwidth are stated; the LLM memory wall appears in the LLM section."""
import json
import re
from pathlib import Path

import etscope
from etscope.api import results
from etscope.render.html import write_report
from views_helpers import QNN_FILES, open_report
from qnn_typed import plain

FIX = Path(__file__).parents[1] / "fixtures"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"


def _report(tmp_path, **kw):
    r = results(etscope.load(ETD), qhas=QNN_FILES / "chain8_sm8650.qhas.json",
                optrace=QNN_FILES / "chain8_sm8650.optrace.json", runtrace=QNN_FILES / "chain8_sm8650.runtrace.json")
    r.dram_gbps = kw.get("dram_gbps")
    out = tmp_path / "htp.html"
    write_report(str(out), r.view)
    return out, plain(r.qnn.htp_ops[0])


def test_htp_section_in_chromium(browser, tmp_path, artifact_dir):
    out, h = _report(tmp_path, dram_gbps=76.8)
    b = h["breakdown"]
    messages = []
    page = open_report(browser, out, messages, [])
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")], messages
        sec = page.locator("#qnn-htp")
        assert sec.count() == 1
        text = sec.inner_text()
        assert b["headline"] in text and "43.5%" in b["headline"]
        assert "layout conversion 43.5%" in text                      # the whole-graph bar's label
        assert "76.8 GB/s (--dram-gbps)" in text and "806 MHz" in text
        # One stacked bar per QNN op with cycles: a rect per (op, category).
        ops = [o for o in b["ops"] if o["cycles"] or o["idle_cycles"]]
        rects = sec.locator("svg").nth(1).locator("rect.box")
        assert rects.count() == sum(len(o["by_category"]) for o in ops)
        assert "HTP cycles per QNN op (one inference)" in sec.locator("svg .axis-label").all_text_contents()
        first = sec.locator("svg").nth(1).locator("g").first.text_content()
        assert "MatMul_0" in first and "32,707" in first and "layout conversion" in first
        # The findings link to this section.
        link = page.locator('#findings a[href="#qnn-htp"]')
        assert link.count() >= 1
        sec.screenshot(path=str(artifact_dir / "qnn_htp.png"))
    finally:
        page.close()


def test_htp_section_without_bandwidth_says_unknown(browser, tmp_path):
    out, _ = _report(tmp_path)
    page = open_report(browser, out, [], [])
    try:
        assert "bandwidth unknown" in page.locator("#qnn-htp").inner_text()
    finally:
        page.close()


def test_four_shards_each_get_their_section(browser, tmp_path):
    """Several QHAS/optrace files (one per partition): one section per file, each from its own file."""
    from etscope.api import read_view_qnn_files, view_results

    hyb = FIX / "qnn_hybrid"
    files = read_view_qnn_files([str(hyb / f"synthetic_qnn_4shard.shard{k}.qhas.json") for k in range(4)])
    r = view_results(etscope.load(hyb / "synthetic_qnn_4shard.etdump",
                                  etrecord=hyb / "synthetic_qnn_4shard.etrecord").profile, files)
    out = tmp_path / "shards.html"
    write_report(str(out), r.view)
    messages = []
    page = open_report(browser, out, messages, [])
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")], messages
        heads = page.locator("#qnn-body h3", has_text="Inside the HTP").all_inner_texts()
        assert len(heads) == 4
        for i, h in enumerate(plain(r.qnn.htp_ops)):
            sec = page.locator("#qnn-htp" if i == 0 else f"#qnn-htp-{i}")
            assert h["breakdown"]["headline"] in sec.inner_text()
            assert h["breakdown"]["partition"] in heads[i]
    finally:
        page.close()
