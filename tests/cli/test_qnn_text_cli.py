"""`etscope qnn` text (issue 15): the ranked findings come first, and the optrace's HMX/HVX/DMA
threads are summed up per unit (busy cycles, ops, share of the span) — also from an optrace alone."""
import json
import re
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
Q, QF = FIX / "qnn_etdump", FIX / "qnn"
OPTRACE = QF / "chain8_sm8650.optrace.json"
FILES = [str(Q / "synthetic_qnn_chain8_device.etdump"), "--qhas", str(QF / "chain8_sm8650.qhas.json"),
         "--optrace", str(OPTRACE), "--runtrace", str(QF / "chain8_sm8650.runtrace.json")]


def qnn_report_of(etdump, *options):
    """The QNN report of the same inputs, analysed (``Results.qnn``)."""
    from etscope.api import qnn_from_files

    pairs = dict(zip(options[::2], options[1::2]))
    return qnn_from_files(etdump, qhas=pairs.get("--qhas", ()), optrace=pairs.get("--optrace", ()),
                          runtrace=pairs.get("--runtrace"))


def _run(*args):
    r = CliRunner().invoke(main, ["qnn", *args], env={"COLUMNS": ""})
    assert r.exit_code == 0, r.output
    return r.output


def _unit_rows(text: str, timeline: dict) -> None:
    """Every listed HTP thread has its row: unit, thread name, ops, busy cycles, share of the span."""
    tracks = timeline["tracks"]
    assert tracks
    for t in tracks:
        row = (rf"(?m)^{t['kind']}\s+{re.escape(t['name'])}\s+{t['slices_total']:,}\s+{t['busy_cycles']:,.0f}"
               rf"\s+{t['busy_share']:.1%}$")
        assert re.search(row, text), row


def test_findings_come_first_then_partitions_and_units():
    text = _run(*FILES)
    report = json.loads(_run(*FILES, "--json"))["qnn"]
    found = report["findings"]          # the findings --json carries: the text lists the same, first
    assert found and text.startswith("Findings, most important first")
    assert [f["kind"] for f in found] == [f.kind for f in qnn_report_of(*FILES).findings]
    first_partition = text.index("QNN partition:")
    flat = " ".join(text[:first_partition].split())
    at = [flat.index(" ".join(f["text"].split())) for f in found]     # each finding, in rank order
    assert at == sorted(at)
    assert all(" ".join(f["evidence"].split()) in flat for f in found)
    units = text.index("HTP units (optrace")
    assert units > first_partition
    _unit_rows(text[units:], report["htp_timeline"])
    assert f"span {report['htp_timeline']['span_cycles']:,.0f} cycles = " in text      # the runtrace's clock


def test_optrace_alone_prints_its_units():
    text = _run("--optrace", str(OPTRACE))
    assert "No QNN data found" not in text
    report = json.loads(_run("--optrace", str(OPTRACE), "--json"))["qnn"]
    _unit_rows(text, report["htp_timeline"])
    assert "(no clock:" in text
