"""Where the QNN debugger stops: LLM runs compared with their counterpart of the same phase, and
several methods of one ETDump compared method by method (analysis.numerics.runs)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis.numerics.compare import compare, compare_methods
from etscope.analysis.numerics.runs import method_pairs, pair_runs, run_phase_labels
from etscope.cli import main
from etscope.formats.debug_buffer import DebugBuffer
from etscope.profile import load

FIX = Path(__file__).resolve().parents[1] / "fixtures"
NUM, REAL = FIX / "numerics", FIX / "real"


def _schedule(name):
    return json.loads((REAL / "gen_manifest.json").read_text())["fixtures"][name]["schedule"]


def test_pair_runs_by_phase_and_in_order():
    p = pair_runs(5, 4, ["prefill", "decode", "decode", "prefill", "decode"], ["prefill", "decode", "prefill", "decode"])
    assert p.by_phase and p.ref_to_cand == {0: 0, 1: 1, 3: 2, 2: 3}
    assert p.phase == {0: "prefill", 1: "decode", 2: "decode", 3: "prefill"}
    assert any("phase decode: the candidate has 3 run(s), the reference 2" in n for n in p.notes)
    q = pair_runs(3, 2, None, ["prefill", "decode"])
    assert not q.by_phase and q.ref_to_cand == {0: 0, 1: 1} and q.phase == {0: None, 1: None}
    assert "runs paired in order, the first 2 compared" in q.notes[0]


def test_llm_phases_come_from_the_llm_analysis_on_real_llama():
    p = load(REAL / "gen_llama.etdump", pte=REAL / "gen_llama.pte")
    truth = [s["phase"] for s in _schedule("gen_llama")]
    assert run_phase_labels(p) == truth
    # a CNN's alike runs have no phases: paired in order
    assert run_phase_labels(load(NUM / "num_cpu.etdump", etrecord=NUM / "num_cpu.etrecord")) is None


def _cpu(name):
    return load(NUM / f"{name}.etdump", etrecord=NUM / "num_cpu.etrecord", pte=NUM / "num_cpu.pte")


@pytest.mark.parametrize("phases_c, phases_r", [
    (["prefill", "decode", "decode"], ["prefill", "decode", "decode"]),
    (["decode", "prefill", "decode"], ["prefill", "decode", "decode"]),
    (["decode", "decode", "prefill"], ["prefill", "decode", "decode"]),
])
def test_runs_are_compared_with_their_phase_counterpart(phases_c, phases_r):
    """num_cpu vs num_cpu_b (same program, same inputs in the same order, each run its own input):
    a pair of runs is bit-equal exactly when the pairing put run k with run k."""
    pc, pr = _cpu("num_cpu"), _cpu("num_cpu_b")
    pairing = pair_runs(3, 3, phases_c, phases_r)
    with DebugBuffer(NUM / "num_cpu.debugbuf") as bc, DebugBuffer(NUM / "num_cpu_b.debugbuf") as br:
        c = compare(pc, bc, pr, br, pairing=pairing)
    assert c.runs_by_phase and len(c.runs) == 3
    for rc in c.runs:
        want = next(r for r, k in pairing.ref_to_cand.items() if k == rc.run)
        assert rc.ref_run == want and rc.phase == phases_c[rc.run] == phases_r[want]
        assert rc.tensors and all(t.ref.run == want and t.cand.run == rc.run for t in rc.tensors)
        equal = {t.name: t.metrics.equal for t in rc.tensors if t.metrics is not None}
        # same run: every tensor equal; another run's input: its outputs differ (weights' permutes do not)
        assert equal["output[0]"] == (want == rc.run)
        assert all(equal.values()) == (want == rc.run)


def test_every_method_of_a_mixed_etdump_is_compared(tmp_path):
    """gen_llama_mixed: prefill (XNNPACK) and decode (CPU linears) runs interleaved in one ETDump;
    it holds no debug tensors, so each method's comparison is empty, but each method is there."""
    kw = dict(etrecord=REAL / "gen_llama_mixed.etrecord", pte=REAL / "gen_llama_mixed.pte")
    p = load(REAL / "gen_llama_mixed.etdump", **kw)
    sched = [s["method"] for s in _schedule("gen_llama_mixed")]
    pairs, notes = method_pairs(p, p)
    assert [m for m, _, _ in pairs] == list(dict.fromkeys(sched)) and not notes
    for m, c, r in pairs:
        assert c.n_runs == r.n_runs == sched.count(m) and c.method == m
    one = load(REAL / "gen_llama_mixed.etdump", method="decode", **kw)
    assert [m for m, _, _ in method_pairs(one, p)[0]] == ["decode"]
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with DebugBuffer(empty) as b:
        cs = compare_methods(p, b, p, b)
    assert [c.method for c in cs] == list(dict.fromkeys(sched))
    assert all(any("no debug event with a tensor" in n for n in c.notes) for c in cs)
    r = CliRunner().invoke(main, ["numerics", str(REAL / "gen_llama_mixed.etdump"), "--etrecord", str(kw["etrecord"]),
                                  "--debug-buffer", str(empty), "--reference", str(REAL / "gen_llama_mixed.etdump"),
                                  "--reference-buffer", str(empty), "--reference-etrecord", str(kw["etrecord"]), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert [m["method"] for m in d["methods"]] == list(dict.fromkeys(sched))
    r = CliRunner().invoke(main, ["numerics", str(REAL / "gen_llama_mixed.etdump"), "--etrecord", str(kw["etrecord"]),
                                  "--debug-buffer", str(empty), "--reference", str(REAL / "gen_llama_mixed.etdump"),
                                  "--reference-buffer", str(empty), "--reference-etrecord", str(kw["etrecord"])])
    assert r.exit_code == 0 and "method prefill:" in r.output and "method decode:" in r.output
