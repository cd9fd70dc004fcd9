"""One list of findings per set of inputs: ``qnn`` (text and ``--json``) and the report show the same
ranked findings whether an ETDump, QNN files alone, or both were given (issue 35 item 2; the
QNN-files-alone report said "Nothing passed the findings' thresholds" while ``qnn`` listed a high
FastRPC finding on the same files)."""
import html
import json
import re

import pytest
from click.testing import CliRunner

from etscope.cli import main
from shared_data import SHARED

Q = SHARED / "qnn-device"
ETD = SHARED.parent / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
TXT, QHAS, OPT, RT = (str(Q / f"chain8_sm8650.{s}") for s in ("profile.txt", "qhas.json", "optrace.json", "runtrace.json"))

COMBOS = {
    "profile+qhas+optrace+runtrace": ["--qnn-csv", TXT, "--qhas", QHAS, "--optrace", OPT, "--runtrace", RT],
    "qhas alone": ["--qhas", QHAS],
    "optrace alone": ["--optrace", OPT],
    "profile alone": ["--qnn-csv", TXT],
    "etdump+qhas": [str(ETD), "--qhas", QHAS],
}


@pytest.mark.parametrize("name", sorted(COMBOS))
def test_report_and_qnn_list_the_same_findings(tmp_path, name):
    args = COMBOS[name]
    r = CliRunner().invoke(main, ["qnn", "--json", *args])
    assert r.exit_code == 0, r.output
    listed = json.loads(r.output)["qnn"]["findings"]
    # The optrace alone flags no layout conversion and holds no idle rows or times: nothing passes.
    assert bool(listed) == (name != "optrace alone"), listed
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", *args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert ("Nothing passed the findings' thresholds" in page) == (not listed)
    shown = [html.unescape(t).strip() for t in re.findall(r'<span class="text">(.*?)</span>', page, re.S)]
    assert shown == [f["text"] for f in listed]
    text = CliRunner().invoke(main, ["qnn", *args], terminal_width=400).output
    for f in listed:
        assert f["text"] in text
