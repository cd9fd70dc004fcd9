"""The report in a real browser (headless Chromium): sections render, no console errors, the table
sorts and filters, the graph opens a module, injected names stay text. Screenshots are kept."""
import pytest

import etscope
from views_helpers import QNN_FILES, REAL, XSS, qnn_fixture, xss_etdump

CASES = {
    "cnn": lambda: (REAL / "cnn.etdump", dict(etrecord=REAL / "cnn.etrecord", pte=REAL / "cnn.pte")),
    "gen_llama": lambda: (REAL / "gen_llama.etdump", dict(pte=REAL / "gen_llama.pte")),
    "qnn_llm": lambda: (qnn_fixture("synthetic_qnn_llm"),
                        dict(etrecord=qnn_fixture("synthetic_qnn_llm").with_suffix(".etrecord"))),
    "qnn_cnn_qhas": lambda: (qnn_fixture("synthetic_qnn_cnn"),
                             dict(etrecord=qnn_fixture("synthetic_qnn_cnn").with_suffix(".etrecord"),
                                  qhas=QNN_FILES / "chain8_sm8650.qhas.json",
                                  optrace=QNN_FILES / "chain8_sm8650.optrace.json")),
}


def open_report(browser, path, messages, dialogs):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.on("console", lambda m: messages.append((m.type, m.text)))
    page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: messages.append(("request", r.url)) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]", timeout=15000)
    return page


def make_report(tmp_path, name):
    etdump, kw = CASES[name]()
    qhas, optrace = kw.pop("qhas", None), kw.pop("optrace", None)
    out = tmp_path / f"{name}.html"
    etscope.load(etdump, **kw).report(out, qhas=qhas, optrace=optrace)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_report_renders_in_chromium(browser, tmp_path, artifact_dir, name):
    out = make_report(tmp_path, name)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        bad = [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert not bad, bad
        assert not dialogs
        # Sections drew something.
        assert page.locator("#time-chart svg rect.box").count() >= 3
        assert page.locator("#placement-bar svg rect").count() >= 2
        assert page.locator("#ops-data tbody tr").count() > 0
        assert page.locator("#runs-chart svg circle").count() > 0
        assert page.locator("#guide ol.guide li").count() >= 2
        if page.locator("#graph").count():
            assert page.locator("#graph-body svg g.unit").count() > 0
        if page.locator("#qnn").count():
            assert page.locator("#qnn-body svg rect.box").count() > 0
        if page.locator("#llm").count():
            assert page.locator("#llm-body table").count() > 0
        # Every chart axis has a label (units).
        assert page.locator("svg .axis-label").count() >= 3
        page.screenshot(path=str(artifact_dir / f"{name}.png"), full_page=True)
    finally:
        page.close()


def _column(page, key):
    idx = page.eval_on_selector_all("#ops-data thead th", "(ths, k) => ths.findIndex(t => t.dataset.key === k)", key)
    return page.eval_on_selector_all(f"#ops-data tbody tr td:nth-child({idx + 1})", "tds => tds.map(t => t.textContent)")


def test_op_table_sorts_and_filters(browser, tmp_path, artifact_dir):
    out = make_report(tmp_path, "gen_llama")
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        page.uncheck("#ops-inner")                      # instruction rows only: all in time units
        page.click("#ops-data th[data-key=share]")        # numbers sort descending first
        assert page.get_attribute("#ops-data th[data-key=share]", "aria-sort") == "descending"
        shares = [float(s.rstrip("%")) for s in _column(page, "share") if s]
        assert len(shares) > 10 and shares == sorted(shares, reverse=True)
        page.click("#ops-data th[data-key=share]")
        assert page.get_attribute("#ops-data th[data-key=share]", "aria-sort") == "ascending"
        shares = [float(s.rstrip("%")) for s in _column(page, "share") if s]
        assert shares == sorted(shares)
        page.click("#ops-data th[data-key=instruction_id]")
        ids = [int(x) for x in _column(page, "instruction_id")]
        assert ids == sorted(ids, reverse=True)
        page.fill("#ops-table input[type=search]", "index_put")
        names = _column(page, "name")
        assert names and all("index_put" in n for n in names)
        page.locator("#ops").screenshot(path=str(artifact_dir / "ops_table_filtered.png"))
        assert not [m for m in messages if m[0] in ("error", "pageerror")]
    finally:
        page.close()


def test_graph_modules_open_and_close(browser, tmp_path, artifact_dir):
    out = make_report(tmp_path, "qnn_llm")
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        page.click("#graph-body button:has-text('collapse all')")
        modules = page.locator("#graph-body g.unit.module")
        before = page.locator("#graph-body g.unit").count()
        assert modules.count() >= 1
        modules.first.click()
        after = page.locator("#graph-body g.unit").count()
        assert after > before
        assert page.locator("#graph-body .chip").count() == 1
        page.locator("#graph-body .chip").first.click()
        assert page.locator("#graph-body g.unit").count() == before
        page.click("#graph-body button:has-text('expand all')")
        assert page.locator("#graph-body g.unit.module").count() == 0
        page.locator("#graph").screenshot(path=str(artifact_dir / "graph_expanded.png"))
        assert not [m for m in messages if m[0] in ("error", "pageerror")]
    finally:
        page.close()


def test_injected_name_shows_as_text(browser, tmp_path, artifact_dir):
    etdump = xss_etdump(tmp_path)
    out = tmp_path / "xss.html"
    etscope.load(etdump, etrecord=tmp_path / "xss.etrecord").report(out)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not dialogs
        assert page.locator("img").count() == 0
        assert XSS in page.locator("#ops-data").inner_text()
        page.fill("#ops-table input[type=search]", "onerror")
        assert page.locator("#ops-data tbody tr").count() >= 1
        page.screenshot(path=str(artifact_dir / "xss_as_text.png"), full_page=True)
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
    finally:
        page.close()
