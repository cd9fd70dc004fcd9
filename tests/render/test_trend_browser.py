"""The trend page in headless Chromium (issue 37 item 4): every build labelled or thinned by the
stated rule, a marker with its explanation per change point, one table row per build, no console
error, no request; a screenshot at 1400x900 in test-artifacts/render."""
from __future__ import annotations

import pytest

from etscope.render.trend_html import labelled_builds
from test_trend_page import two_series
from views_helpers import XSS, open_report


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    from etscope.render.trend_html import trend_page

    import dataclasses

    t = two_series()
    t = dataclasses.replace(t, series=(t.series[0], dataclasses.replace(t.series[1], model=XSS)))
    out = tmp_path_factory.mktemp("trend") / "trend.html"
    out.write_text(trend_page(t, "ds"), encoding="utf-8")
    return out, t


def test_trend_page_in_chromium(browser, page_file, artifact_dir):
    out, t = page_file
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        assert not messages and not dialogs
        for i, s in enumerate(t.series):
            card = page.locator(f"#series-{i}")
            assert card.locator("h2").inner_text() == f"{s.model} on {s.soc}"
            n = len(s.builds)
            labels = card.locator("svg text.x-label")
            shown = [int(x) for x in labels.evaluate_all("ns => ns.map(n => n.getAttribute('data-index'))")]
            changes = {s.builds.index(next(p for p in s.builds if p.build == b))
                       for b in {c.build for c in s.changes} | {o.build for o in s.op_changes}
                       | {pc.build for pc in s.placement_changes}}
            want, k = labelled_builds(n, changes)
            assert shown == want
            texts = labels.evaluate_all("ns => ns.map(n => n.firstChild.nodeValue)")
            assert texts == [s.builds[j].build for j in want]      # short names: not cut
            rule = card.locator(".label-rule").inner_text()
            assert ("every build is labelled" in rule) == (k == 1)
            # y ticks: round numbers in the series' unit
            ticks = card.locator("svg text.y-tick").all_text_contents()
            assert len(ticks) >= 2
            assert card.locator("svg .axis-label").text_content() in ("p50 latency (ms)", "p50 latency (µs)")
            # change points: a marker on the chart and its explanation below
            markers = card.locator("svg g.marker")
            assert markers.count() == len(changes) == card.locator("ol.changes > li").count()
            for c in s.changes:
                item = card.locator("ol.changes > li", has_text=c.build).first
                assert "95% interval" in item.inner_text() and c.verdict in item.inner_text()
            # whiskers inside the plot
            box = card.locator("svg").bounding_box()
            for wl in card.locator("svg line.whisker").all()[:50]:
                b = wl.bounding_box()
                assert b["y"] >= box["y"] and b["y"] + b["height"] <= box["y"] + box["height"]
            assert card.locator("table.builds tbody tr").count() == n
            assert "{'" not in card.inner_text()
        assert "whisker: 95% interval" in page.locator("#series-0 .legend").inner_text()
        assert page.locator("img").count() == 0       # the XSS model name stayed text
        assert XSS in page.locator("#series-1 h2").inner_text()
        page.screenshot(path=str(artifact_dir / "trend_page.png"))
        page.screenshot(path=str(artifact_dir / "trend_page_full.png"), full_page=True)
    finally:
        page.close()


def test_log_axis_page_in_chromium(browser, tmp_path, artifact_dir):
    from etscope.analysis.diff import trend as T
    from etscope.render.trend_html import trend_page

    xs = [T.Session("f1", "llama", "x86", "b1", "1", 1.45, 2, q1_ms=1.26, q3_ms=1.63),
          T.Session("f2", "llama", "x86", "b2", "2", 0.54, 9, q1_ms=0.49, q3_ms=1.44)]
    out = tmp_path / "log.html"
    out.write_text(trend_page(T.trend_of_sessions(xs), "d"), encoding="utf-8")
    messages = []
    page = open_report(browser, out, messages, [])
    try:
        assert not messages
        card = page.locator("#series-0")
        assert card.locator("svg .axis-label").text_content() == "p50 latency (log scale)"
        assert "1 ms" in card.locator("svg text.y-tick").all_text_contents()
        box = card.locator("svg").bounding_box()
        for wl in card.locator("svg line.whisker").all():
            b = wl.bounding_box()
            assert b["y"] >= box["y"] and b["y"] + b["height"] <= box["y"] + box["height"]
        assert card.locator("table.builds tbody tr").count() == 2
        page.screenshot(path=str(artifact_dir / "trend_page_log.png"))
    finally:
        page.close()
