"""Issue 35 item 1: for QNN inputs the report opens with the QNN answers. At 1400×900 the first
screen shows the findings (the same list `etscope qnn --json` prints) and the nesting picture of
the first partition; the QNN section comes right after the findings; a log-scale picture says so;
the four questions are open and link to the sections that answer them. Checked for an ETDump
with the SM8650 QHAS/optrace/runtrace, and for QNN files alone."""
import json

import pytest
from click.testing import CliRunner

from etscope.cli import main
from views_helpers import QNN_FILES, qnn_fixture

ETD = str(qnn_fixture("synthetic_qnn_chain8_device"))
FILES = ["--qhas", str(QNN_FILES / "chain8_sm8650.qhas.json"), "--optrace", str(QNN_FILES / "chain8_sm8650.optrace.json"),
         "--runtrace", str(QNN_FILES / "chain8_sm8650.runtrace.json")]
CASES = {"etdump+files": [ETD, *FILES], "files alone": ["--qnn-csv", str(QNN_FILES / "chain8_sm8650.profile.txt"), *FILES]}


@pytest.mark.parametrize("case", CASES)
def test_first_screen_has_findings_and_the_first_nesting(browser, tmp_path, artifact_dir, case):
    args = CASES[case]
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    q = CliRunner().invoke(main, ["qnn", *args, "--json"])
    want = [f["text"] for f in json.loads(q.output)["qnn"]["findings"]]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(out.as_uri())
        page.wait_for_selector("body[data-rendered=true]", timeout=15000)
        assert not errors, errors
        order = page.eval_on_selector_all("main > section", "ss => ss.map(s => s.id)")
        assert order[:2] == ["findings", "qnn"], order
        got = page.eval_on_selector_all("#findings li.finding .text", "ts => ts.map(t => t.textContent.trim())")
        assert got == want and len(want) >= 4
        first = page.locator("#qnn-nesting-p0 .chart-title").bounding_box()
        assert first is not None and first["y"] + first["height"] < 900, first    # on the first screen
        assert page.locator("#findings li.finding").first.bounding_box()["y"] < 900
        title = page.locator("#qnn-nesting-p0 .chart-title").inner_text()
        scale = page.eval_on_selector("#qnn-nesting-p0 svg.nesting", "s => s.getAttribute('aria-label')")
        assert ("log scale" in title) == ("log scale" in scale) and ("to scale" not in title or "linear" in title)
        assert page.eval_on_selector("#guide details.explain", "d => d.open")
        assert page.locator("#guide details.explain a[href='#qnn']").count() >= 2
        page.screenshot(path=str(artifact_dir / f"qnn_first_screen_{case.replace(' ', '_').replace('+', '_')}.png"))
    finally:
        page.close()
