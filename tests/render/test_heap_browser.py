"""--qnn-heap in the HTML report, in headless Chromium: the DSP heap card shows before → after and
the difference, with no console errors."""
from click.testing import CliRunner

from etscope.cli import main
from views_helpers import REAL


def test_heap_card_renders(browser, tmp_path, artifact_dir):
    heap = tmp_path / "htp_heap_usage.txt"
    heap.write_bytes(b"DSP:before_context_created (bytes), 928212\nDSP:after_context_freed (bytes), 932308\n")
    out = tmp_path / "heap.html"
    r = CliRunner().invoke(main, ["report", str(REAL / "cnn.etdump"), "--pte", str(REAL / "cnn.pte"),
                                  "--qnn-heap", str(heap), "-o", str(out)])
    assert r.exit_code == 0, r.output
    messages = []
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.on("console", lambda m: messages.append((m.type, m.text)))
    page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
    try:
        page.goto(out.as_uri())
        page.wait_for_selector("body[data-rendered=true]", timeout=15000)
        assert not [m for m in messages if m[0] in ("error", "pageerror")], messages
        card = page.locator("#guide-cards .stat", has_text="DSP heap (QNN)")
        assert card.count() == 1
        text = card.inner_text()
        # 928212 B = 906.5 KiB, 932308 B = 910.5 KiB (fmtBytes: 1024-based, one decimal)
        assert "906.5 KiB → 910.5 KiB" in text and "difference +4096 B" in text, text
        page.screenshot(path=str(artifact_dir / "heap_card.png"), full_page=False)
    finally:
        page.close()
