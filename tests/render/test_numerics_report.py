"""The report's numerics section (``etscope report --debug-buffer [--reference ...]``) on the real
numerics fixtures: the data the page carries equals the comparison's, and in headless Chromium the
section draws its curve and table (first divergence highlighted) and the graph view colours its
nodes by SNR, with no console error."""
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main
from views_helpers import open_report

NUM = Path(__file__).resolve().parents[1] / "fixtures" / "numerics"


def _report(tmp_path, name, *extra):
    out = tmp_path / f"{name}.html"
    args = ["report", str(NUM / "num_q8.etdump"), "--etrecord", str(NUM / "num_q8.etrecord"),
            "--pte", str(NUM / "num_q8.pte"), "--debug-buffer", str(NUM / "num_q8.debugbuf"), *extra, "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return out


def _compare_args(*thr):
    return ["--reference", str(NUM / "num_cpu.etdump"), "--reference-buffer", str(NUM / "num_cpu.debugbuf"),
            "--reference-etrecord", str(NUM / "num_cpu.etrecord"), *thr]


def _data(path):
    html = path.read_text(encoding="utf-8")
    blob = re.search(r'<script type="application/json" id="etscope-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(blob)


def _numerics_json(*thr):
    args = ["numerics", str(NUM / "num_q8.etdump"), "--etrecord", str(NUM / "num_q8.etrecord"),
            "--debug-buffer", str(NUM / "num_q8.debugbuf"), *_compare_args(*thr), "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_report_numerics_data_is_the_comparison(tmp_path):
    thr = ("--numerics-threshold", "snr=40")
    d = _data(_report(tmp_path, "q8", *_compare_args(*thr)))["numerics"]
    ref = _numerics_json("--threshold", "snr=40")
    assert d["kind"] == "compare" and d["thresholds"] == ref["thresholds"] == {"cosine_below": 0.999, "snr_db_below": 40.0}
    assert d["first_divergence"] == ref["first_divergence"] and d["first_divergence"] is not None
    for rp, rr in zip(d["runs"], ref["runs"], strict=True):
        assert [t["name"] for t in rp["tensors"]] == [t["name"] for t in rr["tensors"]]
        assert rp["first_divergence"] == rr["first_divergence"]
        for a, b in zip(rp["tensors"], rr["tensors"]):
            if b["snr_db"] is not None:
                assert a["snr_db"] == pytest.approx(b["snr_db"], rel=1e-5)
    # node colour = lowest SNR over runs of that node's tensors (brute force over the JSON)
    low = {}
    for rr in ref["runs"]:
        for t in rr["tensors"]:
            n = t["candidate"]["node"]
            if n and t["compared"]:
                low[n] = min(low.get(n, 1e9), min(t["snr_db"] if t["snr_db"] is not None else 150.0, 150.0))
    assert d["node_snr"].keys() == low.keys() and low
    for n, s in low.items():
        assert d["node_snr"][n] == pytest.approx(s, rel=1e-3)


def test_report_numerics_options_checked(tmp_path):
    r = CliRunner().invoke(main, ["report", str(NUM / "num_q8.etdump"), "--reference", str(NUM / "num_cpu.etdump"),
                                  "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "need --debug-buffer" in r.output
    r = CliRunner().invoke(main, ["report", str(NUM / "num_q8.etdump"), "--debug-buffer", str(NUM / "num_q8.debugbuf"),
                                  "--reference", str(NUM / "num_cpu.etdump"), "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "go together" in r.output


def _check_page(page, messages):
    bad = [m for m in messages if m[0] in ("error", "pageerror", "request")]
    assert not bad, bad
    assert page.locator("#numerics").count() == 1
    assert page.locator("#numerics-data tbody tr").count() > 0


def test_numerics_section_and_graph_in_chromium(browser, tmp_path, artifact_dir):
    out = _report(tmp_path, "q8", *_compare_args("--numerics-threshold", "snr=40"))
    d = _data(out)["numerics"]
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        _check_page(page, messages)
        run0 = d["runs"][0]
        assert page.locator("#numerics-data tbody tr").count() == len(run0["tensors"])
        assert page.locator("#numerics-chart svg circle.pt").count() == sum(1 for t in run0["tensors"] if t["compared"])
        first = page.locator("#numerics-data tbody tr.first-divergence")
        assert first.count() == 1 and run0["first_divergence"] in first.inner_text()
        assert page.locator("#numerics-chart svg circle.first").count() == 1
        assert page.locator("#numerics-chart svg line.largest-drop").count() == (1 if run0["largest_drop"] else 0)
        assert "SNR < 40 dB" in page.locator("#numerics-body").inner_text()
        # the graph view starts coloured by SNR: every box a colour of the SNR scale, some diverged
        assert page.locator("#graph-body select").input_value() == "snr"
        assert page.locator("#graph-body svg g.unit rect.snr").count() == page.locator("#graph-body svg g.unit").count() > 0
        page.locator("#graph-body button", has_text="expand all").click()
        assert page.locator("#graph-body svg g.unit rect.snr.diverged").count() >= 1
        page.screenshot(path=str(artifact_dir / "numerics_compare.png"), full_page=True)
    finally:
        page.close()
    assert not dialogs


def test_numerics_stats_section_in_chromium(browser, tmp_path, artifact_dir):
    out = _report(tmp_path, "q8_stats")
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        _check_page(page, messages)
        assert page.locator("#numerics-data tbody tr").count() == len(_data(out)["numerics"]["tensors"])
        assert page.locator("#graph-body select option[value=snr]").count() == 0
        page.locator("#numerics").screenshot(path=str(artifact_dir / "numerics_stats.png"))
    finally:
        page.close()


def _drift_args():
    c, r = NUM / "drift_llm_q8", NUM / "drift_llm_cpu"
    return ["--etrecord", f"{c}.etrecord", "--debug-buffer", f"{c}.debugbuf", "--reference", f"{r}.etdump",
            "--reference-buffer", f"{r}.debugbuf", "--reference-etrecord", f"{r}.etrecord"]


def test_drift_heatmap_in_chromium(browser, tmp_path, artifact_dir):
    """The real drift pair (quantized XNNPACK vs fp32 CPU LLM, prefill + 6 decode steps): the page's
    drift data is the numerics command's, and the heatmap draws one cell per (layer, step) with the
    first crossing outlined."""
    out = tmp_path / "drift.html"
    r = CliRunner().invoke(main, ["report", str(NUM / "drift_llm_q8.etdump"), *_drift_args(), "-o", str(out)])
    assert r.exit_code == 0, r.output
    d = _data(out)["numerics"]["drift"]
    r = CliRunner().invoke(main, ["numerics", str(NUM / "drift_llm_q8.etdump"), *_drift_args(), "--json"])
    ref = json.loads(r.output)["drift"]
    assert [s["label"] for s in d["steps"]] == [s["label"] for s in ref["steps"]] == [
        "prefill", "d1@3", "d2@4", "d3@5", "d4@6", "d5@7", "d6@8"]
    assert d["layers"] == ref["layers"] and d["first_divergence"]["layer"] == ref["first_divergence"]["layer"]
    for row_p, row_r in zip(d["cells"], ref["cells"], strict=True):
        for a, b in zip(row_p, row_r, strict=True):
            assert (a is None) == (b is None)
            if b is not None and b["snr_db"] is not None:
                assert a["snr_db"] == pytest.approx(b["snr_db"], rel=1e-3) and a["diverged"] == b["diverged"]
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        bad = [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert not bad, bad
        n = sum(1 for row in d["cells"] for c in row)
        assert page.locator("#numerics-drift rect.drift-cell").count() == n == len(d["layers"]) * len(d["steps"])
        assert page.locator("#numerics-drift rect.drift-cell.first").count() == 1
        assert page.locator("#numerics-drift rect.drift-cell.diverged").count() == sum(
            1 for row in d["cells"] for c in row if c and c["diverged"])
        assert "First crossing: layer " + d["first_divergence"]["layer"] in page.locator("#numerics-drift-first").inner_text()
        page.locator("#numerics-drift-box").screenshot(path=str(artifact_dir / "numerics_drift.png"))
    finally:
        page.close()
    assert not dialogs


def test_one_first_divergence_row_when_two_tensors_share_its_name(browser, tmp_path):
    """Both outputs of one kernel call diverge under one name: the page marks the first by its index
    (it matched by name and marked both rows)."""
    import numpy as np

    from tests.analysis.test_numerics_typed import _synthetic

    ref = [np.arange(6, dtype=np.float32), np.ones(4, np.float32)]
    ce, cb = _synthetic(tmp_path, "cand", [ref[0] + 1.0, ref[1] * -1.0])
    re_, rb = _synthetic(tmp_path, "ref", ref)
    out = tmp_path / "dup.html"
    r = CliRunner().invoke(main, ["report", str(ce), "--debug-buffer", str(cb), "--reference", str(re_),
                                  "--reference-buffer", str(rb), "-o", str(out)])
    assert r.exit_code == 0, r.output
    run0 = _data(out)["numerics"]["runs"][0]
    assert run0["first_divergence_index"] == 0 and [t["name"] for t in run0["tensors"]] == ["instruction 0"] * 2
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert page.locator("#numerics-data tbody tr.diverged").count() == 2
        assert page.locator("#numerics-data tbody tr.first-divergence").count() == 1
        assert page.locator("#numerics-chart svg circle.first").count() == 1
    finally:
        page.close()
    assert not dialogs
