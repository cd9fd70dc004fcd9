"""The QNN report in headless Chromium (issue 15): built from the QNN ETDump of the real SM8650 chain8
profile with that run's QHAS, optrace and runtrace. Findings come first and link to their sections,
each partition has its nesting picture and headline, the HMX/HVX/DMA timeline shows the optrace's
45 ops on its 3 unit threads, no raw key of the analysis dict is visible, all-zero rows sit behind a
toggle, and the console stays clean. Screenshots go to the artifact folder."""
import re

from etscope import load
from etscope.api import results
from etscope.render.html import write_report
from views_helpers import QNN_FILES, open_report, qnn_fixture


def _keys(x, out):
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(x, list):
        for v in x:
            _keys(v, out)
    return out


def _build(tmp_path):
    r = results(load(qnn_fixture("synthetic_qnn_chain8_device")), qhas=QNN_FILES / "chain8_sm8650.qhas.json",
                optrace=QNN_FILES / "chain8_sm8650.optrace.json", runtrace=QNN_FILES / "chain8_sm8650.runtrace.json")
    out = tmp_path / "qnn_chain8.html"
    write_report(str(out), r.view)
    return out, r


def test_qnn_report_answers_at_a_glance(browser, tmp_path, artifact_dir):
    out, r = _build(tmp_path)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "warning", "pageerror", "request")], messages
        assert not dialogs

        # Findings first: the first section of the page, ranked, each linking to a section that exists.
        assert page.eval_on_selector("main", "m => m.querySelector('section').id") == "findings"
        items = page.locator("#findings li.finding")
        assert items.count() == len(r.view.findings) >= 4
        # Ranked as analysis ranks them (the FastRPC level is medium: QNN's levels overlap there).
        assert r.view.findings[0].text.split(":")[0] in items.nth(0).inner_text()
        assert any("FastRPC transport" in items.nth(i).inner_text() for i in range(items.count()))
        targets = page.eval_on_selector_all("#findings a[href^='#']", "as => as.map(a => a.getAttribute('href').slice(1))")
        assert targets and all(page.locator(f"[id='{t}']").count() == 1 for t in targets), targets

        # The nesting picture: 7 bands outside in, to scale, with the headline above it.
        assert page.locator("#qnn-p0 svg.nesting g.band").count() == 7
        assert page.locator("#qnn-p0 svg.nesting .axis-label").text_content().startswith("p50 per run, log scale")
        assert "2.19 ms (86%) is FastRPC transport" in page.locator("#qnn-p0 p.headline").inner_text()
        widths = page.eval_on_selector_all("#qnn-p0 svg.nesting g.band rect.box", "rs => rs.map(r => +r.getAttribute('width'))")
        assert widths == sorted(widths, reverse=True)            # each level contains the next
        assert "1,868 MHz measured (runtrace)" in page.locator("#qnn-clock-p0").inner_text()

        # The HMX/HVX/DMA timeline: 45 ops on HMX 256, HVX 512, HVX 514.
        assert page.locator("#qnn-timeline svg.htp-timeline rect.slice").count() == 45
        labels = page.eval_on_selector_all("#qnn-timeline svg.htp-timeline > text", "ts => ts.map(t => t.textContent)")
        assert [x.split(" ·")[0] for x in labels] == ["HMX (thread 256)", "HVX (thread 512)", "HVX (thread 514)"]
        assert "806 MHz, measured clock" in page.locator("#qnn-timeline .axis-label").text_content()

        # Gauges for utilisation and VTCM.
        assert page.locator("#qnn-qhas .gauge").count() == 5

        # No raw keys: no snake_case key of the QNN result, no schema id, in what the reader sees.
        shown = page.locator("#findings").inner_text() + page.locator("#qnn").inner_text() + page.locator("#guide").inner_text()
        raw = sorted(k for k in _keys(r.qnn, set()) if "_" in k and re.search(rf"\b{re.escape(k)}\b", shown))
        assert not raw, raw
        assert "etscope.qnn/1" not in shown and "schema" not in shown

        # All-zero rows behind a toggle: the two 0-cycle reshapes and the 13 empty optrace tracks.
        page.click("#qnn-ops-p0 details summary")
        zero = page.locator("#qnn-ops-p0 tr.zero-row")
        assert zero.count() == 2 and all(not zero.nth(i).is_visible() for i in range(2))
        page.check("#qnn-ops-p0 input.zero-toggle")
        assert all(zero.nth(i).is_visible() for i in range(2))
        assert page.locator("#qnn-timeline tr.zero-row").count() == 14    # 17 tracks, 3 with ops

        page.screenshot(path=str(artifact_dir / "qnn_chain8_report.png"), full_page=True)
        page.locator("#findings").screenshot(path=str(artifact_dir / "qnn_chain8_findings.png"))
        page.locator("#qnn").screenshot(path=str(artifact_dir / "qnn_chain8_qnn_section.png"))
    finally:
        page.close()
