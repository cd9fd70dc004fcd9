"""Issue 34: --method of a look-alike method and --phase select real runs, in every command that
reads an ETDump. On the QNN hybrid fixture (the real stories260k program: prefill_forward and
kv_forward execute the same instructions) the two methods give different runs and numbers (they
printed the same pooled ones), equal to `llm --json`'s phases; a prefill is not a cold decode; a
wrong --phase is one line and exit 2; numerics reads one phase's runs."""
import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HYBRID = [str(FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"),
          "--pte", str(FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte")]
TRUTH = json.loads((FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.truth.json").read_text())["runs"]


def _run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def _llm_phases():
    d = json.loads(_run("llm", *HYBRID, "--json"))
    return {p["method"]: p for p in d["llm"]["phases"]}, d["llm"]["series"]["latency_ms"]


@pytest.mark.parametrize("method", ["prefill_forward", "kv_forward"])
def test_lookalike_method_selects_its_phase_runs(method):
    phases, lat = _llm_phases()
    want = phases[method]["runs"]
    assert want == [r["run"] for r in TRUTH if r["method"] == method]          # by construction
    s = json.loads(_run("summary", *HYBRID, "--method", method, "--json"))
    assert s["method"] == method and s["phase"]["runs"] == want and s["runs"]["count"] == len(want)
    assert s["runs"]["latency_ms"]["p50"] == pytest.approx(statistics.median(lat[r] for r in want), rel=1e-9)
    q = json.loads(_run("qnn", *HYBRID, "--method", method, "--json"))["qnn"]
    assert q["partitions"][0]["runs"] == len(want) and q["phase"]["runs"] == want


def test_the_two_methods_print_different_numbers():
    a = _run("summary", *HYBRID, "--method", "prefill_forward").splitlines()[1]
    b = _run("summary", *HYBRID, "--method", "kv_forward").splitlines()[1]
    assert a != b and "prefill_forward" in a and "kv_forward" in b


def test_a_prefill_is_not_a_cold_decode():
    """Pooled, the 3 prefills look like HTP power-up outliers; phase by phase nothing is cold."""
    default = _run("summary", *HYBRID)
    assert "cold (HTP power-up)" not in default and "━━ prefill" in default and "━━ decode" in default
    pooled = _run("summary", *HYBRID, "--phase", "all")
    assert "━━" not in pooled


@pytest.mark.parametrize("cmd", ["summary", "ops", "qnn", "trace", "export", "report"])
def test_a_wrong_phase_is_one_line_and_exit_2(cmd, tmp_path):
    extra = {"trace": ["-o", tmp_path / "t.json"], "export": ["-o", tmp_path / "x"], "report": ["-o", tmp_path / "r.html"]}
    res = CliRunner().invoke(main, [cmd, *HYBRID, "--phase", "warmup", *map(str, extra.get(cmd, []))])
    assert res.exit_code == 2 and "--phase warmup: the runs have phases prefill, decode" in res.output


def test_numerics_reads_one_phase():
    n = FIX / "numerics"
    args = [n / "pair_llm_xnn.etdump", "--debug-buffer", n / "pair_llm_xnn.debugbuf", "--etrecord",
            n / "pair_llm_xnn.etrecord"]
    llm = json.loads(_run("llm", n / "pair_llm_xnn.etdump", "--etrecord", n / "pair_llm_xnn.etrecord", "--json"))
    decode = next(p["runs"] for p in llm["llm"]["phases"] if p["name"] == "decode")
    d = json.loads(_run("numerics", *args, "--phase", "decode", "--json"))
    assert d["runs"] == len(decode) and d["phase"]["runs"] == decode
    assert {t["run"] for t in d["tensors"]} == set(range(len(decode)))
