"""The diff page of the conv-fallback pair in headless Chromium (issue 37 items 1 and 2): it leads
with the placement change, shows every axis with its own verdict, never a bare "no change" pill
while an axis changed, and draws the attribution as a waterfall from base to new."""
from dataclasses import replace
from pathlib import Path

import pytest

import etscope
from etscope.analysis.diff.compare import compare
from etscope.analysis.diff.view import diff_view
from etscope.render.html import write_diff_page
from etscope.render.json import to_jsonable
from views_helpers import open_report

D = Path(__file__).resolve().parents[1] / "fixtures" / "diff"
pytestmark = pytest.mark.skipif(not (D / "diff_conv_cpu.etdump").exists(), reason="diff fixtures not generated")


def page_of(tmp_path, mutate=None):
    a = etscope.load(D / "diff_conv_xnnpack.etdump", etrecord=D / "diff_conv_xnnpack.etrecord")
    b = etscope.load(D / "diff_conv_cpu.etdump", etrecord=D / "diff_conv_cpu.etrecord")
    d = compare(a, b)
    if mutate:
        d = mutate(d)
    out = tmp_path / "diff_axes.html"
    write_diff_page(str(out), diff_view(d, a, b, options={"min_effect_pct": 2.0}))
    return out, to_jsonable(d)


def _open(browser, out):
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
    return page


def test_conv_fallback_page_leads_with_placement_and_draws_the_waterfall(browser, tmp_path, artifact_dir):
    out, d = page_of(tmp_path)
    page = _open(browser, out)
    try:
        pills = [x.lower() for x in page.locator("#diff-verdict .verdict-line .verdict-pill, #diff-verdict .verdict-line .axis-pill").all_text_contents()]
        assert "placement changed" in pills
        assert "placement changed" in page.locator("#diff-verdict .headline").inner_text()
        rows = page.locator("#diff-axes tr.axis-row")
        assert rows.count() == 4
        assert page.locator('#diff-axes tr.axis-row[data-axis="placement"]').get_attribute("data-verdict") == "changed"
        # base, each part, unexplained, new
        assert page.locator("#diff-attribution svg.diff-waterfall g.wf-row").count() == len(d["attribution"]["parts"]) + 3
        assert page.locator("#diff-attribution svg g.wf-total").count() == 2
        assert "explained by moved ops" in page.locator("#diff-attribution .cards").inner_text()
        page.screenshot(path=str(artifact_dir / "diff_axes.png"), full_page=True)
    finally:
        page.close()


def test_no_bare_no_change_pill_while_an_axis_changed(browser, tmp_path):
    def quiet_latency(d):     # the same placement change under a latency verdict of no change
        return replace(d, verdict="no_change", axes=replace(d.axes, latency=replace(d.axes.latency, verdict="no_change")))

    out, _ = page_of(tmp_path, quiet_latency)
    page = _open(browser, out)
    try:
        pills = [x.lower() for x in page.locator("#diff-verdict .verdict-line .verdict-pill, #diff-verdict .verdict-line .axis-pill").all_text_contents()]
        assert "no change" not in pills
        assert pills[0] == "no latency change" and "placement changed" in pills
    finally:
        page.close()
