"""The report in a real browser (headless Chromium): sections render, no console errors, the table
sorts and filters, the graph opens a module, injected names stay text. Screenshots are kept."""
import dataclasses

import pytest

import etscope
from etscope.analysis.diff.compare import compare
from etscope.analysis.diff.view import diff_view
from etscope.api import compare_view
from etscope.analysis.diff.result import Gate, OpMoved
from etscope.render.html import write_diff_page
from etscope.render.json import to_jsonable
from views_helpers import QNN_FILES, REAL, XSS, diff_pairs, open_report, qnn_fixture, xss_etdump

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


def test_cnn_graph_times_xnnpack_nodes_and_uses_the_page_width(browser, tmp_path, artifact_dir):
    out = make_report(tmp_path, "cnn")
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        texts = page.eval_on_selector_all("#graph-body g.unit", "gs => gs.map(g => g.textContent)")
        conv = [t for t in texts if t.startswith("convolution")]
        assert len(conv) == 2 and all("µs (matched)" in t for t in conv), texts
        assert any(t.startswith("linear") and "µs (matched)" in t for t in texts)
        assert any(t.startswith("relu") and "no own time" in t for t in texts)
        # The chain wraps into bands as wide as the page instead of one narrow column.
        svg_w = page.eval_on_selector("#graph-body svg", "s => s.getBoundingClientRect().width")
        assert svg_w > 0.7 * 1300
        page.select_option("#graph-body select", "time")
        assert page.locator("#graph-body g.unit rect.timebar").count() == 0
        page.select_option("#graph-body select", "placement")
        assert page.locator("#graph-body g.unit rect.timebar").count() >= 6
        # The module tree: the model and its four modules, each with a time.
        rows = page.eval_on_selector_all("#modules-table tbody tr", "trs => trs.map(t => t.textContent)")
        assert len(rows) == 5 and rows[1].strip().startswith("c1") and "µs" in rows[1]
        page.click("#modules-table tbody tr td.name >> nth=0")       # close the model's row
        assert page.locator("#modules-table tbody tr").count() == 1
        page.locator("#graph").screenshot(path=str(artifact_dir / "cnn_graph.png"))
        page.locator("#modules").screenshot(path=str(artifact_dir / "cnn_modules.png"))
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


# ---- the diff page (etscope diff --html) and the report's "Compared with base" section --------------
DIFF_PAIRS = diff_pairs()


def make_diff_page(tmp_path, name, mutate=None, **options):
    base, base_kw, new, new_kw = DIFF_PAIRS[name]
    a, b = etscope.load(base, **base_kw), etscope.load(new, **new_kw)
    d = compare(a, b, fail_on_regression_pct=options.get("fail_on_regression_pct"))
    if mutate:
        d = mutate(d)
    out = tmp_path / f"diff_{name}.html"
    write_diff_page(str(out), diff_view(d, a, b, options=dict(min_effect_pct=2.0, **options)))
    return out, to_jsonable(d)


def _diff_column(page, key, sfx=""):
    idx = page.eval_on_selector_all(f"#diff-ops-data{sfx} thead th", "(ths, k) => ths.findIndex(t => t.dataset.key === k)", key)
    return page.eval_on_selector_all(f"#diff-ops-data{sfx} tbody tr td:nth-child({idx + 1})", "tds => tds.map(t => t.textContent)")


def _pct(s):
    return float(s.replace("%", "").replace(",", "").replace("±", ""))


@pytest.mark.parametrize("name", list(DIFF_PAIRS))
def test_diff_page_renders_in_chromium(browser, tmp_path, artifact_dir, name):
    out, d = make_diff_page(tmp_path, name, fail_on_regression_pct=5.0)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    # An LLM pair is compared phase by phase (issue 34): the top verdict and a table of the phases,
    # then each phase's own sections (ids suffixed -<phase>); the top level's figures are the
    # leading phase's, checked in its sections.
    sfx = f"-{d['verdict_phase']}" if d.get("phases") else ""
    try:
        bad = [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert not bad, bad
        assert not dialogs
        # Never a bare "no change" while another axis changed (issue 37): "no latency change" then,
        # beside a pill per changed axis.
        moved = [a for a in d.get("changed_axes", []) if a != "latency"]
        assert page.locator("#diff-verdict > .verdict-line .verdict-pill").inner_text().lower() == \
            ("no latency change" if d["verdict"] == "no_change" and moved else d["verdict"].replace("_", " "))
        assert [x.lower() for x in page.locator("#diff-verdict > .verdict-line .axis-pill").all_text_contents()] == \
            [f"{a} changed" for a in moved]
        if sfx:
            rows = page.locator("#diff-verdict table.diff-phases tbody tr")
            assert rows.count() == len(d["phases"])
            assert [p.lower() for p in page.locator("#diff-verdict .phase-verdict").all_text_contents()] == \
                [e["verdict"].replace("_", " ") for e in d["phases"]]
            assert page.locator("svg .ci-point").count() == sum(1 for e in d["phases"] if e.get("latency"))
        # Verdict: the change and its interval on a % axis with a zero line; latency units on the top axis.
        assert page.locator(f"#diff-verdict{sfx} .verdict-pill").inner_text().lower() == (
            "no latency change" if d["verdict"] == "no_change" and moved and not sfx else d["verdict"].replace("_", " "))
        assert page.locator(f"#diff-verdict{sfx} svg .ci-point").count() == 1
        assert page.locator(f"#diff-verdict{sfx} svg .zero-line").count() == 1
        assert page.locator(f"#diff-verdict{sfx} svg .ci-bar").count() == 1
        labels = page.locator(f"#diff-verdict{sfx} svg .axis-label").all_text_contents()
        assert any("(%)" in t for t in labels) and any("p50 latency" in t and ("ms" in t or "µs" in t) for t in labels)
        # Runs: both series overlaid, both distributions.
        assert page.locator(f"#diff-runs{sfx} svg g.runs-base circle").count() > 0
        assert page.locator(f"#diff-runs{sfx} svg g.runs-new circle").count() > 0
        assert page.locator(f"#diff-runs{sfx} svg rect.hist-base").count() > 0
        assert page.locator(f"#diff-runs{sfx} svg rect.hist-new").count() > 0
        dropped = d["latency"].get("warmup_runs_dropped")
        if dropped is not None:                                   # warm-up runs drawn, ringed
            assert page.locator(f"#diff-runs{sfx} svg circle.warmup").count() == sum(dropped["base"]) + sum(dropped["new"])
        assert page.locator(f"#diff-runs{sfx} table.diff-run-stats tr").count() == 3
        # Placement, breakdown, per-op table, gate.
        n_pc = len(d["placement_changes"])
        assert page.locator(f"#diff-placement-data{sfx} tbody tr").count() == n_pc
        if n_pc:
            first = d["placement_changes"][0]["kind"]
            assert "pc-" + first in page.locator(f"#diff-placement-data{sfx} tbody tr").first.get_attribute("class")
        assert page.locator(f"#diff-breakdown{sfx} svg rect.bar-base").count() >= 1
        assert page.locator(f"#diff-breakdown{sfx} svg rect.bar-new").count() >= 1
        assert page.locator(f"#diff-ops-data{sfx} tbody tr").count() == min(len(d["ops"]), 2000)
        assert page.locator("#diff-gate .gate").count() == 1
        if d["qnn"]:
            assert page.locator(f"#diff-qnn{sfx} table").count() >= 1
        else:
            assert page.locator(f"#diff-qnn{sfx}").count() == 0
        assert page.locator("svg .axis-label").count() >= 6
        page.screenshot(path=str(artifact_dir / f"diff_{name}.png"), full_page=True)
    finally:
        page.close()


def test_diff_op_table_sorts_and_filters(browser, tmp_path, artifact_dir):
    out, d = make_diff_page(tmp_path, "llama_nodebug_vs_gen_llama")
    assert d["verdict_phase"] == "decode"       # an LLM pair: its decode phase's table (issue 34)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        page.click("#diff-ops-data-decode th[data-key=change_pct]")            # numbers sort descending first
        assert page.get_attribute("#diff-ops-data-decode th[data-key=change_pct]", "aria-sort") == "descending"
        ch = [_pct(x) for x in _diff_column(page, sfx="-decode", key="change_pct") if x]
        assert len(ch) > 10 and ch == sorted(ch, reverse=True)
        page.click("#diff-ops-data-decode th[data-key=change_pct]")
        assert page.get_attribute("#diff-ops-data-decode th[data-key=change_pct]", "aria-sort") == "ascending"
        ch = [_pct(x) for x in _diff_column(page, sfx="-decode", key="change_pct") if x]
        assert ch == sorted(ch)
        page.click("#diff-ops-data-decode th[data-key=p_value]")
        ps = [float(x) for x in _diff_column(page, sfx="-decode", key="p_value") if x]
        assert ps == sorted(ps, reverse=True)
        page.click("#diff-ops-data-decode th[data-key=name]")                   # text sorts ascending first
        names = _diff_column(page, sfx="-decode", key="name")
        assert names == sorted(names, key=lambda s: s.lower()) or names[0] <= names[-1]
        page.select_option("#diff-ops-status-decode", "faster")
        statuses = _diff_column(page, sfx="-decode", key="status")
        assert statuses and set(statuses) == {"faster"}
        assert len(statuses) == sum(o["status"] == "faster" for o in d["ops"])
        page.select_option("#diff-ops-status-decode", "")
        page.fill("#diff-ops-decode input[type=search]", "index_put")
        names = _diff_column(page, sfx="-decode", key="name")
        assert names and all("index_put" in n for n in names)
        page.locator("#diff-ops-decode").screenshot(path=str(artifact_dir / "diff_ops_table_filtered.png"))
        assert not [m for m in messages if m[0] in ("error", "pageerror")]
    finally:
        page.close()


def test_diff_page_ops_moved_to_cpu_come_first_and_stand_out(browser, tmp_path, artifact_dir):
    """A fallback the diff dict reports (schema etscope.diff/2) is the first, highlighted row."""
    def add_fallback(d):
        moved = OpMoved(kind="moved_to_cpu", op_type="aten.linear.default", source="model.py:42", count=1,
                        from_="XnnpackBackend", to="cpu", matched_by="op type")
        return dataclasses.replace(d, placement_changes=d.placement_changes + (moved,),
                                   gate=Gate(fail=True, why=("1 op(s) moved off the delegate to the CPU",)))

    out, d = make_diff_page(tmp_path, "gen_cnn_vs_b", mutate=add_fallback, fail_on_fallback=True)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        rows = page.locator("#diff-placement-data tbody tr")
        assert rows.count() == len(d["placement_changes"])
        assert "pc-moved_to_cpu" in rows.first.get_attribute("class")
        assert "aten.linear.default" in rows.first.inner_text()
        assert "aten.linear.default" in page.locator("#diff-placement .moved-callout").inner_text()
        assert page.locator("#diff-gate .gate-fail").count() == 1
        page.locator("#diff-placement").screenshot(path=str(artifact_dir / "diff_moved_to_cpu.png"))
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
    finally:
        page.close()


def test_diff_page_injected_name_shows_as_text(browser, tmp_path):
    etdump = xss_etdump(tmp_path)
    a = etscope.load(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord")
    b = etscope.load(etdump, etrecord=tmp_path / "xss.etrecord")
    out = tmp_path / "xss_diff.html"
    write_diff_page(str(out), diff_view(compare(a, b), a, b))
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not dialogs
        assert page.locator("img").count() == 0
        assert XSS in page.locator("#diff-ops-data").inner_text()
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
    finally:
        page.close()


def test_report_compare_section_renders(browser, tmp_path, artifact_dir):
    base = etscope.load(REAL / "llama_nodebug.etdump", pte=REAL / "llama.pte")
    new = etscope.load(REAL / "gen_llama.etdump", pte=REAL / "gen_llama.pte")
    out = tmp_path / "compare.html"
    from etscope import api
    from etscope.render.html import write_report

    write_report(str(out), api.results(new).view, compare=compare_view(base, new))
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        bad = [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert not bad, bad
        assert page.locator("#compare-body .diff-part").count() >= 6
        # An LLM pair: each phase compared on its own (issue 34), one interval chart per phase.
        assert page.locator("#compare-body table.diff-phases tbody tr").count() == 2
        assert page.locator("#compare-body svg .ci-point").count() == 2
        assert page.locator("#compare-body #diff-ops-data-decode tbody tr").count() > 0
        # The rest of the report is still there.
        assert page.locator("#ops-data tbody tr").count() > 0
        assert page.locator("#time-chart svg rect.box").count() >= 3
        page.locator("#compare").screenshot(path=str(artifact_dir / "report_compare.png"))
    finally:
        page.close()


def test_runs_chart_says_when_it_shows_the_first_runs_only(browser, tmp_path, artifact_dir, monkeypatch):
    """A session longer than the page keeps (MAX_LIST runs): the chart says how many it shows."""
    import etscope.render.html as H

    monkeypatch.setattr(H, "MAX_LIST", 10)
    out = make_report(tmp_path, "gen_llama")
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
        titles = page.locator("#runs-chart .chart-title").all_inner_texts()
        assert len(titles) == 2 and all("(the first 10 of 32 runs)" in t for t in titles), titles
        # gen_llama is an LLM: the page shows the decode phase's runs among those 10 (at the file's
        # own run indices), the prefill runs left to the prefill view.
        from etscope.api import results
        etdump, kw = CASES["gen_llama"]()
        ph = results(etscope.load(etdump, **{k: v for k, v in kw.items() if k not in ("qhas", "optrace")})).phases
        shown = int((ph.of_run[:10] == ph.names.index("decode")).sum())
        assert page.locator("#runs-chart svg circle").count() == shown and 0 < shown < 10
        page.screenshot(path=str(artifact_dir / "runs_first_of_many.png"), full_page=True)
    finally:
        page.close()
