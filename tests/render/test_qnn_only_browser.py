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
        # The sections drawn from ETDump events are hidden with their links, not shown empty.
        for sid in ("time", "placement", "ops", "runs"):
            assert not page.is_visible(f"section#{sid}"), sid
            assert not page.is_visible(f'#nav a[href="#{sid}"]'), sid
        assert "No Execute runs" not in text and "No QNN partitions found" not in text
        if name == "optrace":     # the file's per-op cycles as a table, HMX/HVX per op
            assert "What the QNN files say per op" in text
            rows = page.locator("#qnn-body table.data tr").count()
            assert rows >= 11, rows
        page.screenshot(path=str(artifact_dir / f"qnn_only_{name}.png"), full_page=True)
    finally:
        page.close()
