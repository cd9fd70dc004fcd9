"""The diff page of an LLM pair in headless Chromium (issue 34 item 5): the headline names the phase
that changed, a table of the phases with their verdicts, each phase's own sections (runs, breakdown,
ops), TTFT and tokens/s; phase names from the input stay text and their section ids stay unique."""
from dataclasses import replace
from pathlib import Path

import pytest

import etscope
from etscope import api
from etscope.analysis.diff.compare import compare
from etscope.analysis.diff.view import diff_view
from etscope.render.html import write_diff_page
from etscope.render.json import to_jsonable
from views_helpers import open_report

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HYB = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"
PTE = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
DECODE_X4 = FIX / "diff_llm" / "synthetic_qnn_hybrid_stories_decode_x4.etdump"

pytestmark = pytest.mark.skipif(not PTE.exists(), reason="the stories260k .pte is not in tests/fixtures/shared")


def page_of(tmp_path, mutate=None):
    a, b = etscope.load(HYB, pte=PTE), etscope.load(DECODE_X4, pte=PTE)
    d = compare(a, b, fail_on_regression_pct=5.0, llm_options=api.llm_options(PTE))
    if mutate:
        d = mutate(d)
    out = tmp_path / "diff_phases.html"
    write_diff_page(str(out), diff_view(d, a, b, options={"min_effect_pct": 2.0, "fail_on_regression_pct": 5.0}))
    return out, to_jsonable(d)


def test_phase_page_renders(browser, tmp_path, artifact_dir):
    out, d = page_of(tmp_path)
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
        assert page.locator("#diff-verdict .headline").inner_text() == "regression in decode (prefill: no change)"
        rows = page.locator("#diff-verdict table.diff-phases tbody tr")
        assert rows.count() == 2
        assert [x.lower() for x in page.locator("#diff-verdict .phase-verdict").all_text_contents()] == [
            "no change", "regression"]
        assert "time to first token" in rows.nth(0).inner_text() and "tokens/s" in rows.nth(1).inner_text()
        for name in ("prefill", "decode"):
            # Each phase: its interval chart, its runs (as many as the phase has), breakdown and ops.
            assert page.locator(f"#diff-verdict-{name} svg .ci-point").count() == 1
            runs = len(d["phases"][0 if name == "prefill" else 1]["runs"]["new"][0])
            assert page.locator(f"#diff-runs-{name} svg g.runs-new circle").count() == runs
            assert page.locator(f"#diff-breakdown-{name} svg rect.bar-new").count() >= 1
            assert page.locator(f"#diff-ops-data-{name} tbody tr").count() > 0
        assert "455 → 131" in page.locator("#diff-verdict-decode .cards").inner_text()
        assert page.locator("#diff-gate .gate-fail").count() == 1
        page.screenshot(path=str(artifact_dir / "diff_phases.png"), full_page=True)
    finally:
        page.close()


@pytest.mark.parametrize("evil", [["<img src=x onerror=alert(1)>", "x y"], ["x y", "x_y"]], ids=["markup", "same-id"])
def test_injected_phase_names_show_as_text(browser, tmp_path, evil):

    def rename(d):
        return replace(d, phases=tuple(replace(e, name=n) for e, n in zip(d.phases, evil)))
    out, _ = page_of(tmp_path, rename)
    html = out.read_text()
    assert "<img src=x" not in html
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not dialogs
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
        names = page.locator("#diff-verdict table.diff-phases tbody tr td:first-child").all_text_contents()
        assert names == evil
        ids = page.eval_on_selector_all("section[id]", "els => els.map(e => e.id)")
        assert len(ids) == len(set(ids))
    finally:
        page.close()
