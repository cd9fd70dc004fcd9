"""formats/qnn_context.py: the QNN SDK build a context binary records, read from the real
stories260k hybrid program's two QNN delegates; etscope's synthetic placeholder blobs record none;
and diff's program axis names an SDK change (a copy of the real program with its build id patched,
made in a temp dir: synthetic)."""
import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main
from etscope.formats.qnn_context import qnn_sdk_builds, qnn_sdk_versions

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REAL = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
HYBRID = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"


def test_real_context_binaries_record_their_sdk_build():
    raw = REAL.read_bytes()
    want = {m.group(0)[1:].decode() for m in re.finditer(rb"v\d+\.\d+\.\d+\.\d{6,14}_\d+", raw)}
    got = qnn_sdk_builds(REAL)
    assert set(got) == {("prefill_forward", 0), ("kv_forward", 0)}
    assert set(got.values()) == want == {"2.37.0.250724175447_124859"}
    assert qnn_sdk_versions(FIX / "qnn_pte" / "synthetic_qnn_cnn.pte") == []      # a placeholder blob


def test_diff_names_a_qnn_sdk_change(tmp_path):
    patched = tmp_path / "synthetic_stories260k_sdk238.pte"
    shutil.copy(REAL, patched)
    data = patched.read_bytes().replace(b"v2.37.0.250724175447_124859", b"v2.38.0.250901120000_130000")
    patched.write_bytes(data)
    res = CliRunner().invoke(main, ["diff", str(HYBRID), str(HYBRID), "--pte-base", str(REAL), "--pte-new",
                                    str(patched), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    program = (d.get("phases") or [d])[0]["axes"]["program"]
    fact = next(f for f in program["facts"] if f["what"] == "QNN SDK build (context binary)")
    assert fact == {"what": "QNN SDK build (context binary)", "base": ["2.37.0.250724175447_124859"],
                    "new": ["2.38.0.250901120000_130000"]}
    assert program["verdict"] == "changed"


def test_program_shows_each_context_binarys_sdk_build():
    res = CliRunner().invoke(main, ["program", str(REAL), "--json"])
    assert res.exit_code == 0, res.output
    builds = [(m["name"], d["qnn_sdk_build"]) for m in json.loads(res.output)["methods"] for d in m["delegates"]]
    assert sorted(builds) == [("kv_forward", "2.37.0.250724175447_124859"),
                              ("prefill_forward", "2.37.0.250724175447_124859")]
    text = CliRunner().invoke(main, ["program", str(REAL)], env={"COLUMNS": "100"}).output
    assert text.count("QNN SDK build 2.37.0.250724175447_124859 (recorded in its context binary)") == 2
