"""``report``'s LLM section and ``llm --json`` show the same numbers for the same inputs: the same
runs (every method), the same token sources (--prompt-tokens, --decode-tokens, the .pte's get_ar_len)."""
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HYBRID = FIX / "qnn_hybrid"
REAL = FIX / "real"
STORIES = SHARED / "qnn-device/stories260k_hybrid_llama_qnn.pte"
_BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)


def _run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def _report_llm(tmp_path, inputs) -> dict:
    out = tmp_path / "r.html"
    _run("report", *inputs, "-o", out)
    return json.loads(_BLOB.search(out.read_text()).group(1))["llm"]


CASES = {
    "4shard": [HYBRID / "synthetic_qnn_4shard.etdump", "--etrecord", HYBRID / "synthetic_qnn_4shard.etrecord"],
    "4shard_tokens": [HYBRID / "synthetic_qnn_4shard.etdump", "--prompt-tokens", "32", "--decode-tokens", "2"],
    "gen_llama": [REAL / "gen_llama.etdump", "--etrecord", REAL / "gen_llama.etrecord", "--pte", REAL / "gen_llama.pte"],
    "gen_llama_multimethod": [REAL / "gen_llama_multimethod.etdump", "--pte", REAL / "gen_llama_multimethod.pte"],
    # Two methods in one ETDump: report shows the loaded method's runs, as llm --method does.
    "gen_llama_mixed_decode": [REAL / "gen_llama_mixed.etdump", "--pte", REAL / "gen_llama_mixed.pte", "--method",
                               "decode", "--decode-tokens", "1"],
    "llama": [REAL / "llama.etdump", "--etrecord", REAL / "llama.etrecord", "--pte", REAL / "llama.pte"],
    "llama_nodebug_prompt": [REAL / "llama_nodebug.etdump", "--prompt-tokens", "8"],
    "hybrid_stories_pte": [HYBRID / "synthetic_qnn_hybrid_stories.etdump", "--pte", STORIES, "--prompt-tokens", "32"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_llm_section_equals_llm_json(tmp_path, case):
    inputs = CASES[case]
    if any(isinstance(a, Path) and not a.exists() for a in inputs):
        pytest.skip("input not present")
    want = json.loads(_run("llm", *inputs, "--json"))
    got = _report_llm(tmp_path, inputs)
    assert got is not None, "report shows no LLM section"
    for k, v in want["llm"].items():
        assert got[k] == v, k
    assert got["findings"] == want["findings"]
    if case in ("4shard_tokens", "hybrid_stories_pte", "llama_nodebug_prompt"):
        tokens = {p["name"]: p["tokens_per_run"] for p in want["llm"]["phases"]}
        assert tokens["prefill"] in (32, 8)         # the given count reached both commands


def test_notebook_llm_equals_llm_json():
    """etscope.load(..., pte=, prompt_tokens=) gives the notebook the same LLM numbers as llm --json."""
    if not STORIES.exists():
        pytest.skip("shared QNN device data not present")
    import etscope
    from etscope import api
    from etscope.render.json import dumps

    etdump = HYBRID / "synthetic_qnn_hybrid_stories.etdump"
    want = json.loads(_run("llm", etdump, "--pte", STORIES, "--prompt-tokens", "32", "--json"))
    got = api.llm(etscope.load(str(etdump), pte=str(STORIES), prompt_tokens=32))
    assert json.loads(dumps(got.llm.phases)) == want["llm"]["phases"]
    assert got.llm.decode_tokens_per_s == want["llm"]["decode_tokens_per_s"] is not None
