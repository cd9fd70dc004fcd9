import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _sched(real, name):
    return json.loads((real / "gen_manifest.json").read_text())["fixtures"][name]["schedule"]


def test_llm_json(real):
    r = run("llm", real / "gen_llama.etdump", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)     # one JSON object on stdout, nothing else
    assert s["schema"] == "etscope.llm/1"
    l = s["llm"]
    sched = _sched(real, "gen_llama")
    assert l["runs"] == len(sched)
    phases = {p["name"]: p["runs"] for p in l["phases"]}
    assert phases["prefill"] == [i for i, x in enumerate(sched) if x["phase"] == "prefill"]
    assert l["decode_tokens_per_s"] is None and l["decode_runs_per_s"] > 0 and l["ttft_ms"] > 0   # no token count
    assert set(l["phases"][0]["latency_ms"]) >= {"p50", "p90", "p99", "max"}


def test_llm_text(real):
    r = run("llm", real / "llama.etdump", "--pte", real / "llama.pte")
    assert r.exit_code == 0, r.output
    for word in ("prefill", "decode", "tokens/s", "Time to first token", "CPU kernels (fallback)"):
        assert word in r.output


def test_prompt_runs(real):
    r = run("llm", real / "gen_llama.etdump", "--json", "--prompt-runs", "0,16")
    assert r.exit_code == 0, r.output
    l = json.loads(r.output)["llm"]
    assert l["phase_split"]["by"] == "--prompt-runs"
    assert [p["runs"] for p in l["phases"] if p["name"] == "prefill"] == [[0, 16]]


def test_bad_prompt_runs_exit_2(real):
    for bad in ("x", "99", ","):
        r = run("llm", real / "gen_llama.etdump", "--prompt-runs", bad)
        assert r.exit_code == 2, (bad, r.output)
    r = run("llm", real / "gen_llama.etdump", "--prompt-runs", "0", "--phases", "none")
    assert r.exit_code == 2


def test_several_etdumps(real):
    r = run("llm", real / "cnn.etdump", real / "llama_nodebug.etdump", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["llm"]["runs"] == 34 and len(s["inputs"]) == 2


def test_bad_input_one_line_exit_2(tmp_path, real):
    p = tmp_path / "bad.etdump"
    p.write_bytes(b"not an etdump")
    for args in ([str(p)], [str(real / "gen_llama.etdump"), str(tmp_path / "missing.etdump")]):
        proc = subprocess.run([sys.executable, "-m", "etscope.cli", "llm", *args], capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("etscope: ")


def test_no_progress_bar_when_redirected(real, tmp_path):
    # ETSCOPE_PROGRESS=1 lowers the size threshold; stderr is not a terminal here: nothing written.
    import os

    env = dict(os.environ, ETSCOPE_PROGRESS="1")
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "summary", str(real / "gen_llama.etdump"), "--json"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    json.loads(proc.stdout)


def test_llm_reads_every_method_of_one_etdump(real):
    sched = _sched(real, "gen_llama_mixed")
    r = run("llm", real / "gen_llama_mixed.etdump", "--pte", real / "gen_llama_mixed.pte", "--json")
    assert r.exit_code == 0, r.output
    l = json.loads(r.output)["llm"]
    assert {p["name"]: p["runs"] for p in l["phases"]} == {
        m: [i for i, s in enumerate(sched) if s["method"] == m] for m in ("prefill", "decode")}
    # --method: only that method's runs.
    r = run("llm", real / "gen_llama_mixed.etdump", "--pte", real / "gen_llama_mixed.pte", "--method", "prefill",
            "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["llm"]["runs"] == sum(s["method"] == "prefill" for s in sched)


def test_summary_of_a_mixed_etdump_shows_one_method_and_says_so(real):
    sched = _sched(real, "gen_llama_mixed")
    r = run("summary", real / "gen_llama_mixed.etdump", "--pte", real / "gen_llama_mixed.pte", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["method"] == "decode" and s["runs"]["count"] == sum(x["method"] == "decode" for x in sched)
    assert any("--method prefill" in w for w in s["warnings"])
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "ops", str(real / "gen_llama_mixed.etdump"),
                           "--pte", str(real / "gen_llama.pte")], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "does not match the ETDump" in proc.stderr


HYBRID = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_hybrid"
STORIES = SHARED / "qnn-device/stories260k_hybrid_llama_qnn.pte"


def test_llm_tokens_from_the_program_and_prompt_tokens():
    """With the real stories260k program, decode runs take its get_ar_len (1); prefill runs the
    --prompt-tokens given; the text shows the QNN shard table and where the tokens came from."""
    if not STORIES.exists():
        pytest.skip("shared QNN device data not present")
    r = run("llm", HYBRID / "synthetic_qnn_hybrid_stories.etdump", "--pte", STORIES, "--prompt-tokens", "32", "--json")
    assert r.exit_code == 0, r.output
    ph = {p["name"]: p for p in json.loads(r.output)["llm"]["phases"]}
    assert ph["decode"]["tokens_per_run"] == 1 and ph["decode"]["tokens_from"] == "the program's get_ar_len = 1"
    assert ph["prefill"]["tokens_per_run"] == 32 and ph["prefill"]["tokens_from"] == "--prompt-tokens"
    text = run("llm", HYBRID / "synthetic_qnn_hybrid_stories.etdump", "--pte", STORIES, "--prompt-tokens", "32")
    assert text.exit_code == 0 and "QNN shards" in text.output and "get_ar_len = 1" in text.output


def test_llm_prompt_tokens_must_be_positive():
    r = run("llm", HYBRID / "synthetic_qnn_4shard.etdump", "--prompt-tokens", "0")
    assert r.exit_code == 2 and "--prompt-tokens" in r.output


def test_llm_two_sessions_and_a_repeat(real):
    """Issue 34 item 3 from the command line: two sessions of one program and the first given
    again; per-run phases as the schedules say, the repeat counted once."""
    a, b = real / "gen_llama.etdump", real / "gen_llama_chunked.etdump"
    r = run("llm", a, b, a, "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    truth = [x["phase"] for x in _sched(real, "gen_llama") + _sched(real, "gen_llama_chunked")]
    assert s["llm"]["series"]["phase"] == truth
    assert s["llm"]["duplicates"] == [{"file": 2, "same_as": 0, "by": "same file"}]
    assert len(s["inputs"]) == 3
    # --prompt-runs counts the runs of the files counted: the repeat adds none.
    r = run("llm", a, a, "--prompt-runs", str(len(_sched(real, "gen_llama"))))
    assert r.exit_code == 2 and "does not exist" in r.output
