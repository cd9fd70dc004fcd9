"""The HTML report as a file: one self-contained page, escaped data, the sections' data present."""
import json
import os
import re
import sys
from pathlib import Path

import pytest

import etscope
from etscope import api
from etscope.render.html import json_for_script, render_report, report_data
from views_helpers import QNN_FILES, REAL, XSS, qnn_fixture, xss_etdump

BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)


def build(etdump, **kw):
    qhas, optrace = kw.pop("qhas", None), kw.pop("optrace", None)
    p = etscope.load(etdump, **kw)
    data = report_data(api.results(p, qhas, optrace).view)
    return p, data, render_report(data)


def blob(html: str) -> dict:
    m = BLOB.search(html)
    assert m, "no data blob"
    return json.loads(m.group(1))


def test_cnn_report_is_one_offline_file():
    _, data, html = build(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord", pte=REAL / "cnn.pte")
    assert html.startswith("<!DOCTYPE html>")
    # Nothing is fetched: no external scripts, styles, images or fonts; a CSP forbids network use.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=[\"']?(https?:)?//", html)
    assert "default-src 'none'" in html
    assert blob(html) == json.loads(json.dumps(data))
    d = blob(html)
    assert d["hierarchy"]["name"] == "Method::execute"
    kinds = [c["kind"] for c in d["hierarchy"]["children"]]
    assert kinds == ["delegate", "cpu", "overhead"]
    assert {r["category"] for r in d["placement"]} >= {"CPU", "other delegate (XnnpackBackend)"}
    assert d["ops"]["rows"] and d["ops"]["columns"][0] == "instruction_id"
    assert d["graph"] and any(n[5] == "cpu" for n in d["graph"]["nodes"])
    assert len(d["runs"]["columns"]["latency_ms"]) == 10
    for section in ("guide", "time", "placement", "ops", "runs", "graph", "warnings"):
        assert f'id="{section}"' in html


def test_hierarchy_children_add_up_to_parents():
    _, data, _ = build(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord")
    root = data["hierarchy"]
    assert sum(c["ms"] for c in root["children"]) == pytest.approx(root["ms"], rel=1e-3)


def test_guide_text_is_in_the_page_without_javascript():
    _, data, html = build(REAL / "cnn.etdump")
    for line in data["guide"][:2]:
        assert line.split(":")[0] in html


def test_injected_op_name_is_escaped(tmp_path):
    path = xss_etdump(tmp_path)
    _, data, html = build(path, etrecord=tmp_path / "xss.etrecord")
    assert any(XSS in (r[3] or "") for r in data["ops"]["rows"])      # the name really is in the data
    assert XSS not in html and "<img src=x" not in html                 # escaped everywhere
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html


def test_json_for_script_cannot_close_the_script():
    s = json_for_script({"a": "</script><script>alert(1)</script>", "b": "<!-- x -->", "c": "a&b\u2028"})
    assert "<" not in s and ">" not in s and "&" not in s and "\u2028" not in s
    assert json.loads(s) == {"a": "</script><script>alert(1)</script>", "b": "<!-- x -->", "c": "a&b\u2028"}


def test_qnn_and_llm_sections_when_present():
    path = qnn_fixture("synthetic_qnn_vit_2part")
    _, data, html = build(path, etrecord=path.with_suffix(".etrecord"),
                          qhas=QNN_FILES / "chain8_sm8650.qhas.json")
    assert data["qnn"]["partitions"] and 'id="qnn"' in html
    assert data["qnn"]["qhas"] is not None
    est = [c for c in _walk(data["hierarchy"]) if c.get("estimated")]
    assert est, "QNN ops in the icicle are marked as estimates"
    assert any("estimate" in w for w in data["warnings"])
    _, data, html = build(REAL / "gen_llama.etdump", pte=REAL / "gen_llama.pte")
    assert data["llm"] and 'id="llm"' in html
    assert {p["name"] for p in data["llm"]["phases"]} == {"prefill", "decode"}
    assert data["runs"]["phase"] and len(data["runs"]["phase"]) == 32


def test_no_llm_or_qnn_section_for_a_cnn():
    _, data, html = build(REAL / "cnn.etdump")
    assert data["llm"] is None and data["qnn"] is None
    assert 'id="llm"' not in html and 'id="qnn"' not in html


def _walk(node):
    yield node
    for c in node.get("children") or []:
        yield from _walk(c)


def test_big_llama_report_size(tmp_path):
    """A 1000-execute tiny-Llama ETDump (345k events: the real gen_llama runs replicated by
    benchmarks/replicate_etdump.py, or ETSCOPE_BIG_ETDUMP) gives a report under 5 MB. Its time is
    measured by benchmarks/bench.py, not here."""
    big = os.environ.get("ETSCOPE_BIG_ETDUMP")
    if not big:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
        from replicate_etdump import replicate

        big = str(tmp_path / "big1000.etdump")
        replicate(str(REAL / "gen_llama.etdump"), 345_000, big)
    out = tmp_path / "big.html"
    etscope.load(big, pte=REAL / "gen_llama.pte").report(out)
    size = out.stat().st_size
    print(f"big report: {size / 1e6:.2f} MB")
    assert 0.2e6 < size < 5e6


def test_the_template_prepared_in_the_background_renders_the_same_page():
    """report prepares jinja2 and its template on a thread while the inputs are read; the page is
    the one rendered without it (the template is compiled once per process either way)."""
    import etscope.render.html as H

    H._templates.clear()
    H.prepare_in_background()
    _, data, html = build(REAL / "cnn.etdump")
    H._templates.clear()
    data2 = dict(data)
    assert H.render_report(data2) == html
