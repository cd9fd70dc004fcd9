"""One findings engine (issue 33 item 2): for the same inputs, ``qnn --json``, ``summary --json`` and
the data the report embeds carry the same ranked findings (``analysis.findings`` over
``Results.summary`` and ``Results.qnn``), for an ETDump alone (with and without QNN partitions, with a
runtrace), an ETDump with QHAS/optrace, and QNN files alone. ``summary`` reads an ETDump (and a
runtrace) only, so it is compared where it takes the inputs; the text views print the same list."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parent / "fixtures"
QE, QF = FIX / "qnn_etdump", FIX / "qnn"
DEVICE = FIX / "shared" / "qnn-device"
BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)
FIELDS = ("kind", "severity", "text", "evidence", "section", "us_per_run")


def _json(*args) -> dict:
    res = CliRunner().invoke(main, [*map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _report_findings(tmp_path: Path, *args) -> list[dict]:
    out = tmp_path / "report.html"
    res = CliRunner().invoke(main, ["report", *map(str, args), "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(BLOB.search(out.read_text(encoding="utf-8")).group(1))
    # The page adds how much time is at stake, formatted; the finding itself is the same.
    return [{k: f[k] for k in FIELDS} for f in data["findings"]]


ETDUMP_ALONE = [
    [QE / "synthetic_qnn_chain8_device.etdump"],
    [QE / "synthetic_qnn_chain8_device.etdump", "--runtrace", QF / "chain8_sm8650.runtrace.json"],
    [QE / "synthetic_qnn_cnn.etdump", "--etrecord", QE / "synthetic_qnn_cnn.etrecord"],
    [QE / "synthetic_qnn_vit_2part.etdump", "--etrecord", QE / "synthetic_qnn_vit_2part.etrecord"],
    [FIX / "real" / "gen_cnn.etdump"],         # no QNN partition: the CPU fallbacks are the findings
]


@pytest.mark.parametrize("inputs", ETDUMP_ALONE, ids=lambda a: "+".join(Path(str(x)).name for x in a[::2]))
def test_qnn_summary_and_report_list_the_same_findings_of_an_etdump(inputs, tmp_path):
    qnn = _json("qnn", *inputs)["qnn"]["findings"]
    summary = _json("summary", *inputs)["findings"]
    report = _report_findings(tmp_path, *inputs)
    assert qnn, "each fixture has at least one finding"
    assert qnn == summary == report


WITH_FILES = [
    # an ETDump with the QNN files of its partition (summary does not read QHAS/optrace)
    [QE / "synthetic_qnn_chain8_device.etdump", "--qhas", QF / "chain8_sm8650.qhas.json",
     "--optrace", QF / "chain8_sm8650.optrace.json", "--runtrace", QF / "chain8_sm8650.runtrace.json"],
    # QNN files alone (no ETDump: no summary)
    ["--qhas", DEVICE / "chain8_sm8650.qhas.json", "--optrace", DEVICE / "chain8_sm8650.optrace.json"],
    ["--qnn-csv", DEVICE / "chain8_sm8650.profile.txt", "--runtrace", DEVICE / "chain8_sm8650.runtrace.json"],
]


@pytest.mark.parametrize("inputs", WITH_FILES, ids=["etdump+qhas+optrace+runtrace", "qhas+optrace", "qnn_csv+runtrace"])
def test_qnn_and_report_list_the_same_findings_with_qnn_files(inputs, tmp_path):
    qnn = _json("qnn", *inputs)["qnn"]["findings"]
    assert qnn and qnn == _report_findings(tmp_path, *inputs)


def test_the_text_views_print_the_json_findings():
    inputs = [str(QE / "synthetic_qnn_chain8_device.etdump")]
    found = _json("summary", *inputs)["findings"]
    for command in ("summary", "qnn"):
        text = " ".join(CliRunner().invoke(main, [command, *inputs], env={"COLUMNS": "400"}).stdout.split())
        assert "Findings, most important first" in text
        assert all(" ".join(f["text"].split()) in text for f in found), command
