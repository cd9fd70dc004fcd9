"""The diff page (`etscope diff --html`) and the report's "Compared with base" section as files:
one self-contained page, nothing fetched, the data blob round-trips, names from the inputs escaped."""
import dataclasses
import json
from html import escape as html_escape
import re
import shutil
import statistics
import subprocess
import sys

import pytest
from click.testing import CliRunner

import etscope
from etscope.analysis.diff.compare import compare
from etscope.cli import main
from etscope.analysis.diff.result import Sides
from etscope.analysis.diff.view import diff_view
from etscope.render.json import to_jsonable
from etscope.api import compare_view, results
from etscope.render.html import diff_page_data, render_diff_page, render_report, report_data, write_diff_page
from views_helpers import DIFF_FIXTURES, REAL, XSS, diff_pairs, xss_etdump

BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)
PAIRS = diff_pairs()
SVG_NS = "http://www.w3.org/2000/svg"     # the only URL in a page: the SVG namespace name, never fetched


def build(base, base_kw, new, new_kw, **options):
    a, b = etscope.load(base, **base_kw), etscope.load(new, **new_kw)
    d = compare(a, b, min_effect_pct=options.get("min_effect_pct", 2.0),
                fail_on_regression_pct=options.get("fail_on_regression_pct"),
                fail_on_fallback=options.get("fail_on_fallback", False))
    data = diff_page_data(diff_view(d, a, b, options=options))
    return a, b, to_jsonable(d), data, render_diff_page(data)


def blob(html: str) -> dict:
    m = BLOB.search(html)
    assert m, "no data blob"
    return json.loads(m.group(1))


def assert_offline(html: str):
    assert html.startswith("<!DOCTYPE html>")
    assert "default-src 'none'" in html                        # a CSP forbids any network access
    assert not re.search(r"<(script|link|img|iframe|object|embed)[^>]+(src|href|data)=[\"']?(https?:)?//", html, re.I)
    for attr in re.findall(r"\b(?:src|href)=[\"']([^\"']*)", html):
        assert attr.startswith(("#", "data:")), attr             # only in-page anchors and data: URLs
    assert not re.search(r"@import|url\((?!#)", html)           # no CSS fetches (url(#pattern) is in-page)
    assert set(re.findall(r"[a-z]+://[^\s\"'<>)]+", html)) <= {SVG_NS}


@pytest.mark.parametrize("name", list(PAIRS))
def test_diff_page_is_one_offline_file_and_the_blob_round_trips(name):
    base, base_kw, new, new_kw = PAIRS[name]
    a, b, d, data, html = build(base, base_kw, new, new_kw, min_effect_pct=2.0, fail_on_regression_pct=5.0)
    assert len(html.encode("utf-8")) < 2e6
    assert_offline(html)
    page = blob(html)
    assert page == json.loads(json.dumps(data))                 # the JSON blob round-trips
    # The page carries the analysis' dict unchanged (only NaN -> null), plus the per-run series.
    assert page["diff"]["verdict"] == d["verdict"] and page["diff"]["reasons"] == d["reasons"]
    assert page["diff"]["placement_changes"] == json.loads(json.dumps(d["placement_changes"]))
    assert [o["identity"] for o in page["diff"]["ops"]] == [o["identity"] for o in d["ops"]][:5000]
    assert page["ops_total"] == len(d["ops"])
    if d.get("phases"):       # an LLM: each phase's runs, p50 and sections (issue 34)
        for e in d["phases"]:
            runs = {side: [i for s in e["runs"][side] for i in s] for side in ("base", "new")}
            _check_series(page["phase_series"][e["name"]], e, len(runs["base"]), len(runs["new"]),
                          float(b.runs["latency_ns"][runs["new"][0]]) / 1e6)
            assert f'href="#diff-verdict-{e["name"]}"' in html and f'href="#diff-ops-{e["name"]}"' in html
        assert f"Verdict: {d['headline']}" in html
    else:
        _check_series(page["series"], d, a.n_runs, b.n_runs, float(b.runs["latency_ns"][0]) / 1e6)
        for section in ("diff-runs", "diff-placement", "diff-breakdown", "diff-ops"):
            assert f'href="#{section}"' in html
        assert ('href="#diff-qnn"' in html) == bool(d["qnn"])
        # Without JavaScript the verdict and reasons are still there as text: the headline, which
        # names every axis that changed (diff_same_00 vs diff_cpu_moved: no latency change, but placement).
        assert f"Verdict: {html_escape(d['headline'])}" in html
        assert d["headline"].startswith(d["verdict"].replace("_", " ")) or d["changed_axes"]
    assert page["options"] == {"min_effect_pct": 2.0, "fail_on_regression_pct": 5.0}
    assert page["inputs"]["base"] == str(base) and page["inputs"]["new"] == str(new)
    for section in ("diff-verdict", "diff-gate"):
        assert f'href="#{section}"' in html
    for r in d["reasons"]:
        assert r in html


def _check_series(series: dict, d: dict, n_base: int, n_new: int, first_new_ms: float) -> None:
    """The page's runs of one comparison (whole runs, or one phase's) agree with its verdict."""
    assert len(series["base"]) == n_base and len(series["new"]) == n_new
    assert series["new"][0] == pytest.approx(first_new_ms, rel=1e-5)
    assert series["sessions"] == {"base": [n_base], "new": [n_new]}
    # The p50 of the runs the page does not mark as warm-up is the analysis' p50 (the page draws
    # warm-up runs, marked, and leaves them out of its statistics).
    dropped = d["latency"].get("warmup_runs_dropped")
    for side in ("base", "new"):
        warm = series["warmup"][side]
        if dropped is not None:
            assert warm == list(range(dropped[side][0]))
        steady = [v for i, v in enumerate(series[side]) if i not in set(warm) and v is not None]
        assert statistics.median(steady) == pytest.approx(d["latency"][f"{side}_p50_ms"], rel=1e-5)
        # the statistics the page shows are the analysis' own, over every steady run (p50: the verdict's)
        stats = series["stats"][side]
        assert stats["p50"] == d["latency"][f"{side}_p50_ms"]
        assert stats["steady_runs"] == d["latency"][f"{side}_runs"] == len(steady)
        assert stats["warmup_runs"] == sum(dropped[side])
        assert stats["min"] <= stats["p10"] <= stats["p50"] <= stats["p90"] <= stats["max"]
        assert sum(series["histogram"][side]) == len([v for v in steady if v == v])


CONV = REAL.parent / "diff"   # a regression far beyond re-run noise (both convolutions left XNNPACK)


def test_gate_text_is_in_the_page():
    _, _, d, _, html = build(CONV / "diff_conv_xnnpack.etdump", {}, CONV / "diff_conv_cpu.etdump", {},
                             fail_on_regression_pct=5.0)
    assert d["gate"]["fail"] and d["gate"]["why"]
    assert "gate failed: " + d["gate"]["why"][0].split("%")[0] in html


def test_hostile_op_name_and_path_are_escaped(tmp_path):
    new = xss_etdump(tmp_path)                    # an XNNPACK op named <img src=x onerror=alert(1)>####
    hostile = tmp_path / "<svg onload=alert(2)>.etdump"        # and a file name that is markup
    shutil.copy(new, hostile)
    a = etscope.load(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord")
    b = etscope.load(hostile, etrecord=tmp_path / "xss.etrecord")
    d = compare(a, b)
    assert any(XSS in o.name for o in d.ops)  # the name really is in the data
    html = render_diff_page(diff_page_data(diff_view(d, a, b)))
    assert XSS not in html and "<img src=x" not in html and "<svg onload" not in html
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html      # in the blob, escaped
    assert "&lt;svg onload=alert(2)&gt;.etdump" in html              # in the title and header, escaped
    assert any(XSS in o["name"] for o in blob(html)["diff"]["ops"])
    assert_offline(html)


def test_series_without_profiles_is_absent_not_wrong():
    a = etscope.load(REAL / "gen_cnn.etdump")
    b = etscope.load(REAL / "gen_cnn_b.etdump")
    data = diff_page_data(diff_view(compare(a, b)))
    assert data["series"] is None
    assert blob(render_diff_page(data)) == json.loads(json.dumps(data))


def test_series_of_several_sessions_are_concatenated():
    s1, s2 = etscope.load(REAL / "gen_cnn.etdump"), etscope.load(REAL / "gen_cnn_b.etdump")
    d = compare([s1, s2], s2)
    d = dataclasses.replace(d, latency=dataclasses.replace(d.latency, warmup_runs_dropped=Sides((1, 2), (0,)),
                                                           base_runs=s1.n_runs + s2.n_runs - 3, new_runs=s2.n_runs))
    view = diff_view(d, [s1, s2], s2)
    assert view.series.sessions == Sides((s1.n_runs, s2.n_runs), (s2.n_runs,))
    assert len(view.series.base) == s1.n_runs + s2.n_runs
    assert view.series.warmup == Sides((0, s1.n_runs, s1.n_runs + 1), ())
    assert view.series.stats.base.steady_runs == s1.n_runs + s2.n_runs - 3
    assert dict(view.inputs)["base sessions"] == "2"
    # the page's runs are the comparison's, or no page: one session of the two would show other statistics
    with pytest.raises(ValueError, match="pass every session"):
        diff_view(d, s1, s2)


def test_write_diff_page_is_atomic(tmp_path):
    a = etscope.load(REAL / "gen_cnn.etdump")
    b = etscope.load(REAL / "gen_cnn_b.etdump")
    out = tmp_path / "sub" / "d.html"
    out.parent.mkdir()          # folders are never created (etscope.paths)
    r = write_diff_page(str(out), diff_view(compare(a, b), a, b))
    assert out.exists() and r.bytes == out.stat().st_size
    assert [p.name for p in out.parent.iterdir()] == ["d.html"]


# ---- CLI --------------------------------------------------------------------------------------------
def test_cli_diff_html_with_json_keeps_stdout_json(tmp_path):
    out = tmp_path / "d.html"
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(REAL / "gen_cnn.etdump"),
                           str(REAL / "gen_cnn_b.etdump"), "--json", "--html", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)                    # stdout is still exactly one JSON object
    assert d["schema"] == "etscope.diff/2"
    assert "wrote" in proc.stderr and out.exists()
    assert blob(out.read_text())["diff"]["verdict"] == d["verdict"]
    assert [p.name for p in tmp_path.iterdir()] == ["d.html"]


def test_cli_diff_html_dash_writes_nothing(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(REAL / "gen_cnn.etdump"),
                           str(REAL / "gen_cnn_b.etdump"), "--html", "-"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == [] and "wrote" not in proc.stderr


def test_cli_diff_page_is_titled_by_file_names(tmp_path):
    """Issue 21 item 5: the title named the inputs as Python list reprs (['a.etdump'] → ['b.etdump'])."""
    out = tmp_path / "d.html"
    sessions = sorted(DIFF_FIXTURES.glob("diff_same_*.etdump"))[:3]
    if len(sessions) < 3:
        pytest.skip("tests/fixtures/diff sessions not present")
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(REAL / "gen_cnn.etdump"),
                           str(REAL / "gen_cnn_b.etdump"), "--html", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert "<title>etscope diff: gen_cnn.etdump → gen_cnn_b.etdump</title>" in html
    page = blob(html)
    assert page["inputs"]["base"] == str(REAL / "gen_cnn.etdump")      # a path, not "['...']"
    assert not any(v.startswith("[") for v in page["inputs"].values())
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(sessions[0]), str(sessions[1]),
                           "--base-also", str(sessions[2]), "--html", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    page = blob(out.read_text())
    assert page["title"] == f"etscope diff: {sessions[0].name} + 1 more session → {sessions[1].name}"
    assert page["inputs"]["base"] == f"{sessions[0]}, {sessions[2]}"


def test_cli_gate_failure_still_writes_the_page(tmp_path):
    out = tmp_path / "gate.html"
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(CONV / "diff_conv_xnnpack.etdump"),
                           str(CONV / "diff_conv_cpu.etdump"), "--fail-on-regression", "5%", "--html", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    page = blob(out.read_text())
    assert page["diff"]["gate"]["fail"] and page["options"]["fail_on_regression_pct"] == 5.0


# ---- report --compare -------------------------------------------------------------------------------
def test_report_compare_section():
    base = etscope.load(REAL / "gen_cnn.etdump", etrecord=REAL / "gen_cnn.etrecord")
    new = etscope.load(REAL / "gen_cnn_b.etdump", etrecord=REAL / "gen_cnn.etrecord")
    view = compare_view(base, new)
    data = report_data(results(new).view, compare=view)
    html = render_report(data)
    assert 'id="compare"' in html and 'href="#compare"' in html
    assert_offline(html)
    page = blob(html)
    assert page == json.loads(json.dumps(data))
    assert page["compare"]["diff"]["schema"] == "etscope.diff/2"
    assert len(page["compare"]["series"]["base"]) == base.n_runs
    # Without --compare there is no such section.
    html = render_report(report_data(results(new).view))
    assert 'id="compare"' not in html and blob(html)["compare"] is None


def test_cli_report_compare(tmp_path):
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(REAL / "gen_llama.etdump"), "--pte", str(REAL / "gen_llama.pte"),
                                  "--compare", str(REAL / "llama_nodebug.etdump"), "--compare-pte", str(REAL / "llama.pte"),
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = blob(out.read_text())
    assert page["compare"]["inputs"]["base"] == str(REAL / "llama_nodebug.etdump")
    assert page["compare"]["inputs"]["base pte"] == str(REAL / "llama.pte")
    assert page["compare"]["diff"]["verdict"] in ("regression", "improvement", "no_change", "inconclusive")
    r = CliRunner().invoke(main, ["report", str(REAL / "cnn.etdump"), "--compare-pte", str(REAL / "cnn.pte"),
                                  "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "--compare" in r.output
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "report", str(REAL / "cnn.etdump"), "--compare",
                           str(tmp_path / "none.etdump"), "-o", str(tmp_path / "y.html")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr and not (tmp_path / "y.html").exists()
