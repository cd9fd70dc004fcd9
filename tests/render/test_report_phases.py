"""The report of an LLM shows its phases side by side, never pooled (issue 34, "report (every
section)"): the page's data holds one view per phase whose runs and Method::execute figures are
those of ``llm --json`` and ``summary --phase X --json``; in Chromium the phase switcher changes what
"Where time goes" (and every other phase section) shows; single-phase pages have no phase data."""
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import etscope
from etscope import api
from etscope.analysis.llm.run_phases import PhaseRow
from etscope.cli import main
from etscope.render.html import render_report, report_data
from views_helpers import REAL, XSS, open_report

TESTS = Path(__file__).resolve().parents[1]
HYBRID = TESTS / "fixtures" / "qnn_hybrid" / "synthetic_qnn_hybrid_stories"
HYBRID_ARGS = [HYBRID.with_suffix(".etdump"), "--etrecord", HYBRID.with_suffix(".etrecord"),
               "--pte", TESTS / "fixtures" / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"]
BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)


def _companions(etdump: Path) -> list:
    sys.path.insert(0, str(TESTS))
    try:
        from test_consistency import _companions as pair
    finally:
        sys.path.remove(str(TESTS))
    comp = pair(etdump)
    return [etdump] + [x for kind in ("etrecord", "pte") if kind in comp for x in (f"--{kind}", comp[kind])]


# The LLM fixtures whose runs form phases: look-alike QNN methods, CPU sessions (token counts).
LLM_CASES = {
    "qnn_hybrid_stories": lambda: HYBRID_ARGS,
    "gen_llama": lambda: _companions(REAL / "gen_llama.etdump"),
    "gen_llama_chunked": lambda: _companions(REAL / "gen_llama_chunked.etdump"),
    "llama": lambda: _companions(REAL / "llama.etdump"),
}


def _run(args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.stdout


def _page(tmp_path, args, *more) -> tuple[str, dict]:
    out = tmp_path / "report.html"
    _run(["report", *args, *more, "-o", out])
    html = out.read_text()
    return html, json.loads(BLOB.search(html).group(1))


def _fmt_ms(ms: float) -> str:
    """common.js fmtMs for 1 ms <= |ms| < 1000 ms."""
    assert 1 <= abs(ms) < 1000
    return f"{ms:.2f} ms"


@pytest.mark.parametrize("case", list(LLM_CASES))
def test_one_view_per_phase_with_the_runs_and_figures_of_llm_and_summary(tmp_path, case):
    args = LLM_CASES[case]()
    html, data = _page(tmp_path, args)
    llm = json.loads(_run(["llm", *args, "--json"]))["llm"]
    ph = data["phases"]
    names = [r["name"] for r in ph["rows"]]
    assert names == [p["name"] for p in llm["phases"]] and len(names) > 1
    assert ph["default"] == ("decode" if "decode" in names else names[0])
    assert len(ph["views"]) == len(names)
    n_file = len(data["runs"]["columns"]["latency_ms"])
    for row, view, lp in zip(ph["rows"], ph["views"], llm["phases"]):
        s = json.loads(_run(["summary", *args, "--phase", row["name"], "--json"]))
        assert row["runs"] == lp["runs"] and row["n_runs"] == len(lp["runs"]) == s["runs"]["count"]
        assert row["method"] == lp.get("method")
        assert view["summary"]["runs"] == s["runs"]           # count, p50, mean, ... of the phase's runs
        assert row["latency_ms"]["p50"] == s["runs"]["latency_ms"]["p50"]
        assert row["latency_ms"]["mean"] == s["runs"]["latency_ms"]["mean"]
        # Every section's data is the phase's: the icicle's root is its mean, the run chart its runs
        # (at the file's Execute indices), the op table its instructions' runs.
        assert view["hierarchy"]["ms"] == pytest.approx(s["runs"]["latency_ms"]["mean"], rel=1e-5)
        lat = view["runs"]["columns"]["latency_ms"]
        assert len(lat) == n_file and [i for i, v in enumerate(lat) if v is not None] == lp["runs"]
        # the runs column: the phase's steady runs (its warm-up runs left out, as llm leaves them)
        assert all(r[7] == lp["steady_runs"] for r in view["ops"]["rows"] if r[1] == 0)
        assert row["latency_ms"]["p50"] == lp["latency_ms"]["p50"]      # one p50 per phase: llm's
        warm = s["runs"].get("warmup", {}).get("count", 0)
        said = f"{s['runs']['count'] - warm} steady run(s)" if warm else f"{s['runs']['count']} run(s)"
        assert view["guide"][0].startswith("Method::execute") and said in view["guide"][0]
    # The page names the phases and how they were told apart; the pooled top level is not drawn.
    assert 'id="phase-bar"' in html and 'id="phases"' in html
    assert data["phases"]["how"] and data["phases"]["how"] in html.replace("&#39;", "'")


def test_a_phase_report_is_that_phase_of_the_split_report(tmp_path):
    """``report --phase decode`` (one phase, no switcher) draws what the split page shows for decode."""
    _, split = _page(tmp_path, HYBRID_ARGS)
    html, one = _page(tmp_path, HYBRID_ARGS, "--phase", "decode")
    assert "phases" not in one and 'id="phase-bar"' not in html
    decode = split["phases"]["views"][[r["name"] for r in split["phases"]["rows"]].index("decode")]
    for key in ("summary", "hierarchy", "placement", "ops", "qnn", "modules", "graph", "findings", "guide"):
        assert decode[key] == one[key], key


def test_single_phase_page_has_no_phase_switcher(tmp_path):
    html, data = _page(tmp_path, _companions(REAL / "cnn.etdump"))
    assert "phases" not in data
    markup = html.split("<body")[1].split('<script type="application/json"')[0]   # the elements, not CSS or script
    assert 'id="phase-bar"' not in markup and "data-phase" not in markup and "has-phases" not in markup


def test_phase_strings_are_escaped():
    """Phase and method names and the "how" reach the page as text only."""
    from etscope.render.html.phases import PhasePage

    r = api.results(etscope.load(HYBRID.with_suffix(".etdump"), etrecord=HYBRID.with_suffix(".etrecord"),
                                 pte=HYBRID_ARGS[-1]))
    rows = [PhaseRow(name=XSS + str(k), method=XSS, runs=row.runs, warmup_runs=row.warmup_runs, p50_ms=row.p50_ms,
                     mean_ms=row.mean_ms, min_ms=row.min_ms, max_ms=row.max_ms) for k, row in enumerate(r.phase_rows)]
    data = report_data(r.view, phases=[PhasePage(row, r.for_phase(orig.name).view) for row, orig in zip(rows, r.phase_rows)],
                       phases_how=XSS)
    assert data["phases"]["rows"][0]["name"] == XSS + "0"
    html = render_report(data)
    assert XSS not in html and "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;0" in html        # the switcher's and the table's text


def _text(page, selector) -> str:
    return page.eval_on_selector(selector, "e => e.textContent")


def test_switching_phase_changes_where_time_goes(browser, tmp_path, artifact_dir):
    out = tmp_path / "hybrid.html"
    _run(["report", *HYBRID_ARGS, "-o", out])
    data = json.loads(BLOB.search(out.read_text()).group(1))
    views = dict(zip((r["name"] for r in data["phases"]["rows"]), data["phases"]["views"]))
    rows = {r["name"]: r for r in data["phases"]["rows"]}
    pooled_mean = _fmt_ms(data["hierarchy"]["ms"])
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")], messages
        assert page.get_attribute("[data-phase-choice=decode]", "aria-pressed") == "true"
        seen = {}
        for name in ("decode", "prefill", "decode"):
            if page.get_attribute(f"[data-phase-choice={name}]", "aria-pressed") != "true":
                page.click(f"[data-phase-choice={name}]")
            assert page.get_attribute("body", "data-phase-shown") == name
            time_text = _text(page, "#time-chart")
            mean = _fmt_ms(views[name]["hierarchy"]["ms"])
            assert f"Method::execute {mean}" in time_text
            assert f"Method::execute {pooled_mean}" not in time_text        # never the pooled runs
            assert _text(page, "#time h2 .phase-tag") == name
            # The other phase sections follow: the guide's p50, the runs chart's dots, the op table.
            assert _fmt_ms(rows[name]["latency_ms"]["p50"]) in _text(page, "#guide-cards")
            assert page.locator("#runs-chart svg.runs-series circle").count() == rows[name]["n_runs"]
            assert page.locator("#guide .phase-part:not([hidden]) ol.guide li").first.text_content().startswith(
                views[name]["guide"][0].split("(")[0])
            # No section (the LLM one included) shows the mean of every run pooled.
            assert pooled_mean not in {_fmt_ms(v["hierarchy"]["ms"]) for v in views.values()}
            for section in page.eval_on_selector_all("main > section", "s => s.map(x => x.id)"):
                assert pooled_mean not in page.eval_on_selector(f"#{section}", "e => e.innerText"), (name, section)
            seen[name] = time_text
            page.screenshot(path=str(artifact_dir / f"report_phase_{name}.png"))
        assert seen["decode"] != seen["prefill"]
        # The LLM section stays whole-file: both phases side by side.
        assert page.locator("#llm-body table tr").count() >= 3
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")], messages
    finally:
        page.close()


def test_compare_is_phase_by_phase_when_the_base_has_the_same_phases(tmp_path):
    """``report --compare`` of two sessions of one LLM: prefill against prefill, decode against decode
    (the runs each side's ``llm --json`` puts in the phase); a base without those phases is compared
    as a whole file, and the page says so."""
    base = _companions(REAL / "gen_llama.etdump")
    args = _companions(REAL / "gen_llama_chunked.etdump")
    html, data = _page(tmp_path, args, "--compare", base[0], "--compare-pte", REAL / "gen_llama.pte")
    base_llm = {p["name"]: p for p in json.loads(_run(["llm", *base, "--json"]))["llm"]["phases"]}
    for row, view in zip(data["phases"]["rows"], data["phases"]["views"]):
        series = view["compare"]["series"]
        assert len(series["new"]) == row["n_runs"]
        assert len(series["base"]) == len(base_llm[row["name"]]["runs"])
    assert "compares the whole files" not in html
    html, data = _page(tmp_path, args, "--compare", REAL / "cnn.etdump")
    assert all("compare" not in v for v in data["phases"]["views"]) and data["compare"]
    assert "compares the whole files, every run of each pooled" in html


def test_a_phase_report_compares_with_the_same_phase_of_the_base(tmp_path):
    base = _companions(REAL / "gen_llama.etdump")
    args = _companions(REAL / "gen_llama_chunked.etdump")
    _, data = _page(tmp_path, args, "--phase", "decode", "--compare", base[0], "--compare-pte", REAL / "gen_llama.pte")
    base_llm = {p["name"]: p for p in json.loads(_run(["llm", *base, "--json"]))["llm"]["phases"]}
    assert len(data["compare"]["series"]["base"]) == len(base_llm["decode"]["runs"])
