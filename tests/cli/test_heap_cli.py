"""--qnn-heap on summary / qnn / report: before, after, difference beside planned memory and VTCM."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HEAP = FIX / "qnn" / "synthetic_htp_heap_usage.txt"
QNN_PTE = FIX / "qnn_pte" / "synthetic_qnn_cnn.pte"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _kept(tmp_path):
    p = tmp_path / "htp_heap_usage.txt"
    p.write_bytes(b"DSP:before_context_created (bytes), 928212\nDSP:after_context_freed (bytes), 932308\n")
    return p


def test_summary_json_and_text(tmp_path):
    heap = _kept(tmp_path)
    r = run("summary", FIX / "real" / "cnn.etdump", "--pte", FIX / "real" / "cnn.pte", "--qnn-heap", heap, "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    h = s["qnn_heap"]
    assert (h["before_bytes"], h["after_bytes"], h["difference_bytes"]) == (928212, 932308, 4096)
    # planned CPU memory is the .pte's, the same figure summary reports
    assert h["planned_cpu_bytes"] == {"forward": s["memory"]["planned_bytes"]} and h["method"] == "forward"
    assert any("4,096 bytes" in n for n in h["notes"])
    r = run("summary", FIX / "real" / "cnn.etdump", "--qnn-heap", heap)
    assert r.exit_code == 0 and "DSP heap" in r.output and "+4,096 B" in r.output


def test_qnn_heap_alone_with_pte_gives_vtcm():
    r = run("qnn", "--pte", QNN_PTE, "--qnn-heap", HEAP, "--json")
    assert r.exit_code == 0, r.output
    j = json.loads(r.output)
    assert j["qnn"] is None and j["qnn_heap"]["vtcm_bytes"] == 8 << 20 and j["qnn_heap"]["soc_model"] == "SM8650"
    assert j["qnn_heap"]["difference_bytes"] == 0
    r = run("qnn", "--pte", QNN_PTE, "--qnn-heap", FIX / "qnn" / "synthetic_htp_heap_usage_not_freed.txt")
    assert r.exit_code == 0 and "not freed" in r.output and "VTCM of SM8650" in r.output


def test_qnn_with_qhas_and_heap():
    r = run("qnn", "--qhas", FIX / "qnn" / "chain8_sm8650.qhas.json", "--qnn-heap", HEAP, "--json")
    assert r.exit_code == 0, r.output
    j = json.loads(r.output)
    assert j["qnn"] is not None and j["qnn_heap"]["before_bytes"] == 928212 and "qnn_heap" in j["inputs"]


def test_report_carries_heap(tmp_path):
    out = tmp_path / "r.html"
    r = run("report", FIX / "real" / "cnn.etdump", "--qnn-heap", _kept(tmp_path), "-o", out)
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert '"qnn_heap":{' in page.replace(" ", "") and "932308" in page


def test_bad_heap_one_line_exit_2(tmp_path):
    bad = tmp_path / "h.txt"
    bad.write_text("DSP:before_context_created (bytes), 12\nDSP:after_context_freed (bytes), x\n")
    for args in (("summary", FIX / "real" / "cnn.etdump"), ("qnn",), ("report", FIX / "real" / "cnn.etdump", "-o",
                                                                      tmp_path / "r.html")):
        r = run(*args, "--qnn-heap", bad)
        assert r.exit_code == 2, (args, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "h.txt: line 2:" in lines[0], r.output
    assert not (tmp_path / "r.html").exists()


def test_heap_view_is_a_frozen_result_with_the_schema_keys():
    """The view is typed (issue 33 item 1): frozen, written by render.json with the keys of the schema."""
    import dataclasses

    from etscope.analysis.qnn.heap import heap_view
    from etscope.formats.heap import read_heap
    from etscope.formats.pte import read_pte
    from etscope.render.json import to_jsonable

    v = heap_view(read_heap(str(HEAP)), read_pte(str(QNN_PTE)))
    assert type(v).__dataclass_params__.frozen and isinstance(v.notes, tuple)
    assert list(to_jsonable(v)) == ["path", "before_bytes", "after_bytes", "difference_bytes", "contexts_freed",
                                    "planned_cpu_bytes", "method", "vtcm_bytes", "vtcm_source", "soc_model", "notes",
                                    "about"]
    assert (v.vtcm_bytes, v.soc_model, v.difference_bytes) == (8 << 20, "SM8650", 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.notes = ()
