"""The trend page's links from a build to its stored summary (issue 37 item 4), in headless
Chromium: every drawn point and every table row links to its build's card, a click opens that
card (only it) with the figures of the file's own summary (as ``etscope summary`` gives them,
computed here from the input file), the build's row is marked; no console error; screenshots in
test-artifacts/render."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from views_helpers import open_report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fleet"))


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    from etdump_series import write_series

    from etscope.analysis.diff.trend import trend_of_sessions
    from etscope.fleet.collect import collect, counts
    from etscope.fleet.dataset import Dataset, trend_inputs
    from etscope.fleet.summaries import build_summaries
    from etscope.render.trend_html import trend_page

    d = tmp_path_factory.mktemp("trendsum")
    write_series(d / "in", seed=4, builds=6, sessions=2, runs=6, slower=(1.3, 4))
    assert counts(collect([d / "in"], d / "ds", workers=1)).added == 12
    ds = Dataset(d / "ds")
    sessions, ops = trend_inputs(ds)
    t = trend_of_sessions(sessions, ops)
    out = d / "trend.html"
    out.write_text(trend_page(t, "ds", summaries=build_summaries(ds, sessions, t), dataset_arg="ds"), encoding="utf-8")
    return out, t, ds


def live_summary(ds, build: str) -> dict:
    """The summary of the build's first file (by order key, then hash: the file its card is of),
    made now from the input file by the analysis ``etscope summary`` runs."""
    from etscope import api
    from etscope.fleet.summaries import summaries_of_build

    c, stored = summaries_of_build(ds, build)[0]
    r = api.results(api.load(stored["inputs"]["etdump"]))
    from etscope.render.json import to_jsonable

    return to_jsonable(api.summary_document(r))


def test_build_links_open_their_stored_summary(browser, page_file, artifact_dir):
    from etscope.render.trend_summary_card import runs_phrase
    from etscope.units import fmt_ms

    out, t, ds = page_file
    (s,) = t.series
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        card = page.locator("#series-0")
        points = card.locator("svg a.build-link")
        rows = card.locator("table.builds tbody tr")
        assert points.count() == rows.count() == len(s.builds)
        anchors = points.evaluate_all("ns => ns.map(n => n.getAttribute('href'))")
        assert len(set(anchors)) == len(s.builds) and all(a.startswith("#build-0-") for a in anchors)
        assert card.locator("table.builds a.build-link").evaluate_all(
            "ns => ns.map(n => n.getAttribute('href'))") == anchors          # the row and the point: one card
        assert card.locator("article.build-summary:visible").count() == 0    # none open before a click
        for i in (4, 1):
            build = s.builds[i].build
            points.nth(i).locator("circle.p50").click()
            assert page.evaluate("location.hash") == anchors[i]
            shown = card.locator("article.build-summary:visible")
            assert shown.count() == 1 and "#" + shown.get_attribute("id") == anchors[i]
            want = live_summary(ds, build)
            lat = want["runs"]["latency_ms"]
            head = shown.locator(".summary-headline").inner_text()
            over = runs_phrase(want["runs"]["count"], (want["runs"].get("warmup") or {}).get("count", 0))
            assert head == (f"Method::execute: {fmt_ms(lat['p50'])} p50 over {over} "
                            f"(mean {fmt_ms(lat['mean'])}, min {fmt_ms(lat['min'])}, max {fmt_ms(lat['max'])})")
            assert build in shown.locator("h4").inner_text()
            parts = shown.locator("table.summary-parts tbody tr").all_inner_texts()
            assert [p.split("\t")[0] for p in parts] == ["CPU kernels (fallback)", "framework overhead"]
            assert parts[0].split("\t")[-1] == f"{want['breakdown'][0]['share']:.1%}"
            ops = shown.locator("table.summary-ops tbody tr").all_inner_texts()
            kernels = sorted(want["fallback_ops"], key=lambda f: -f["share"])
            assert [o.split("\t")[2] for o in ops] == [f["kernel"] for f in kernels]
            assert [o.split("\t")[-1] for o in ops] == [f"{f['share']:.1%}" for f in kernels]
            assert card.locator("table.builds tr.is-target").inner_text().startswith(build)
            if i == 4:
                page.screenshot(path=str(artifact_dir / "trend_build_summary.png"))
        card.locator("table.builds a.build-link").nth(2).click()          # the table's link: the same card
        assert page.evaluate("location.hash") == anchors[2]
        assert card.locator("article.build-summary:visible").get_attribute("id") == anchors[2][1:]
        assert not messages and not dialogs
    finally:
        page.close()


def test_a_link_to_a_build_opens_its_card(browser, page_file):
    out, t, _ = page_file
    page = browser.new_page()
    try:
        page.goto(out.as_uri() + "#build-0-" + t.series[0].builds[-1].build)
        page.wait_for_selector("body[data-rendered=true]")
        shown = page.locator("article.build-summary:visible")
        assert shown.count() == 1 and t.series[0].builds[-1].build in shown.locator("h4").inner_text()
        assert page.locator("#series-0 svg a.is-target").count() == 1
    finally:
        page.close()
