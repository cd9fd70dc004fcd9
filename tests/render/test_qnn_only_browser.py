"""The report of QNN files alone (no ETDump) in headless Chromium: it renders, says what is missing,
and logs no console error. Screenshots are kept."""
import pytest
from click.testing import CliRunner

from etscope.cli import main
from views_helpers import QNN_FILES, open_page

CASES = {
    "optrace": ["--optrace", QNN_FILES / "chain8_sm8650.optrace.json"],
    "all_four": ["--qnn-csv", QNN_FILES / "chain8_sm8650.profile.txt", "--optrace",
                 QNN_FILES / "chain8_sm8650.optrace.json", "--qhas", QNN_FILES / "chain8_sm8650.qhas.json",
                 "--runtrace", QNN_FILES / "chain8_sm8650.runtrace.json"],
}


@pytest.mark.parametrize("name", list(CASES))
def test_qnn_only_report_renders(browser, tmp_path, artifact_dir, name):
    out = tmp_path / f"qnn_only_{name}.html"
    r = CliRunner().invoke(main, ["report", *map(str, CASES[name]), "-o", str(out)])
    assert r.exit_code == 0, r.output
    messages = []
    page = open_page(browser, out, messages)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror")], messages
        text = page.inner_text("body")
        assert "Only QNN files were given" in text and "no ETDump" in text
        page.screenshot(path=str(artifact_dir / f"qnn_only_{name}.png"), full_page=True)
    finally:
        page.close()
