"""Issue 37: a QNN pair whose programs differ only in their compile spec shows the program axis.
Two real .pte files serialised by ExecuTorch 1.5.1 (tools/make_qnn_pte.py: the same program, its
QNN delegate compiled for SM8650 / detailed vs SM8750 / optrace); the expectations come from the
fixture manifest (what each spec asked for). The same runs on both sides keep latency, placement
and environment at "no change", and the headline names the program change."""
import json
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PTE = FIX / "qnn_pte"
ETD = FIX / "qnn_etdump" / "synthetic_qnn_cnn.etdump"
LEVEL = {2: "detailed", 3: "optrace"}


def test_compile_spec_pair_shows_the_program_axis():
    manifest = json.loads((PTE / "synthetic_manifest.json").read_text())["files"]
    asked = {side: manifest[f"synthetic_compile_spec_{spec}.bin"]["asked"]
             for side, spec in (("base", "sm8650_detailed"), ("new", "sm8750_optrace"))}
    assert "sm8750_optrace" in manifest["synthetic_qnn_cnn_sm8750.pte"]["made_with"]
    res = CliRunner().invoke(main, ["diff", str(ETD), str(ETD), "--pte-base", str(PTE / "synthetic_qnn_cnn.pte"),
                                    "--pte-new", str(PTE / "synthetic_qnn_cnn_sm8750.pte"), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    axes = d["axes"]
    assert axes["program"]["verdict"] == "changed"
    assert {k: axes[k]["verdict"].replace("_", " ") for k in ("latency", "placement", "environment")} == \
        {"latency": "no change", "placement": "no change", "environment": "no change"}
    facts = {f["what"]: (f["base"], f["new"]) for f in axes["program"]["facts"]}
    assert facts["QNN soc model"] == (asked["base"]["soc_model"], asked["new"]["soc_model"])
    assert facts["QNN profile level"] == (LEVEL[asked["base"]["profile_level"]], LEVEL[asked["new"]["profile_level"]])
    assert facts["QNN shared buffer"] == (False, asked["new"]["shared_buffer"])
    assert "program changed" in d["headline"] and "no change" not in d["headline"].split(",")[0].replace(
        "no latency change", "")


def test_two_programs_told_by_their_pte_inputs_are_not_comparable():
    """A CNN and a llama with their .pte files only (no ETRecords): the executed methods take 1 and
    2 inputs. ``comparability`` took len() of that count (an int) and the command ended in a traceback."""
    real = FIX / "real"
    res = CliRunner().invoke(main, ["diff", str(real / "gen_cnn.etdump"), str(real / "gen_llama.etdump"),
                                    "--pte-base", str(real / "gen_cnn.pte"), "--pte-new", str(real / "gen_llama.pte"),
                                    "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["verdict"] == "not_comparable" and d["comparable"]["comparable"] is False
    assert d["comparable"]["basis"] == "the executed methods take different inputs (forward: 1 in base, forward: 2 in new)"
