"""`etscope diff` of LLM sessions on the command line: a verdict per phase in --json, the text's
headline names the changed phase and fits 80 columns, --phase compares one phase (issue 34 item 5).
Pairs with known changes: tests/fixtures/diff_llm/README.md."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HYB = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"
PTE = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
DECODE_X4 = FIX / "diff_llm" / "synthetic_qnn_hybrid_stories_decode_x4.etdump"
PREFILL_X4 = FIX / "diff_llm" / "synthetic_qnn_hybrid_stories_prefill_x4.etdump"

pytestmark = pytest.mark.skipif(not PTE.exists(), reason="the stories260k .pte is not in tests/fixtures/shared")


def run(*args, columns=None):
    env = {"COLUMNS": str(columns)} if columns else {"COLUMNS": None}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def pair(new, *more):
    return ("diff", HYB, new, "--pte-base", PTE, "--pte-new", PTE, *more)


def test_json_has_a_verdict_per_phase():
    r = run(*pair(DECODE_X4, "--json"))
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [(e["name"], e["method"], e["verdict"]) for e in d["phases"]] == [
        ("prefill", "prefill_forward", "no_change"), ("decode", "kv_forward", "regression")]
    assert d["verdict"] == "regression" and d["verdict_phase"] == "decode"
    dec = d["phases"][1]
    assert dec["llm"]["tokens_per_s"]["new"] < dec["llm"]["tokens_per_s"]["base"]
    assert d["phases"][0]["llm"]["ttft_ms"]["change_pct"] == 0.0


def test_text_headline_names_the_phase_and_fits_80_columns():
    r = run(*pair(PREFILL_X4), columns=80)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "Verdict: regression in prefill (decode: no change)"
    assert max(len(x) for x in lines) <= 80
    assert any(x.startswith("━━ prefill (prefill_forward): regression") for x in lines)
    assert any(x.startswith("━━ decode (kv_forward): no change") for x in lines)
    assert "TTFT" in r.stdout


def test_identical_files_say_no_change_in_every_phase():
    r = run(*pair(HYB))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "Verdict: no change in any phase (prefill, decode)"


def test_phase_option_compares_one_phase():
    r = run(*pair(DECODE_X4, "--phase", "prefill", "--json"))
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert [e["name"] for e in d["phases"]] == ["prefill"] and d["verdict"] == "no_change"
    r = run(*pair(DECODE_X4, "--phase", "all", "--json"))
    assert r.exit_code == 0, r.output
    assert "phases" not in json.loads(r.stdout) and "phases_pooled" in json.loads(r.stdout)


def test_unknown_phase_is_a_usage_error():
    r = run(*pair(DECODE_X4, "--phase", "warmup"))
    assert r.exit_code == 2
    assert "--phase warmup: the base runs have no warmup phase" in r.output
    assert "Traceback" not in r.output


def test_gate_fails_on_a_phase_regression():
    r = run(*pair(PREFILL_X4, "--fail-on-regression", "5%"))
    assert r.exit_code == 1, r.output
    assert "GATE FAILED: prefill: p50 latency got worse" in r.stdout.replace("\n", " ")


def test_html_page_is_written_per_phase(tmp_path):
    out = tmp_path / "d.html"
    r = run(*pair(DECODE_X4, "--html", out))
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert 'href="#diff-verdict-decode"' in html and 'href="#diff-ops-prefill"' in html
    assert "Verdict: regression in decode (prefill: no change)" in html     # the page without JavaScript
