"""LLM numerics over decode steps (issue 32 item 3; analysis.numerics.drift, numerics_runs):
real two-session KV-cache runs, checked against numpy on the Inspector's decoded tensors.

``drift_llm_q8`` (2-layer transformer, linears PT2E-quantized with 4-bit-range weights and dynamic
int8 activations, XNNPACK) vs ``drift_llm_cpu`` (same fp32 weights, CPU-only), each run in its own
process, fed the same tokens: a prefill then 6 decode steps (``pairs_manifest.json``).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.numerics.compare import compare
from etscope.analysis.numerics import runs as runs_mod
from etscope.formats.debug_buffer import DebugBuffer
from etscope.profile import load

from tests.analysis.numerics_oracle import oracle_of

NUM = Path(__file__).resolve().parents[1] / "fixtures" / "numerics"
MANIFEST = json.loads((NUM / "pairs_manifest.json").read_text())["fixtures"]


def _compare(cand, ref, **kw):
    pc = load(NUM / f"{cand}.etdump", etrecord=NUM / f"{cand}.etrecord")
    pr = load(NUM / f"{ref}.etdump", etrecord=NUM / f"{ref}.etrecord")
    with DebugBuffer(NUM / f"{cand}.debugbuf") as bc, DebugBuffer(NUM / f"{ref}.debugbuf") as br:
        return pc, pr, compare(pc, bc, pr, br, **kw)


@pytest.fixture(scope="module")
def drift_pair():
    return _compare("drift_llm_q8", "drift_llm_cpu")


def _numpy_metrics(a, b):
    """SNR (dB), max abs error and cosine of candidate ``a`` against reference ``b``, float64."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    keep = np.isfinite(a) & np.isfinite(b)
    assert (a[~keep] == b[~keep]).all()        # only equal -inf (attention masks): left out, as documented
    a, b = a[keep], b[keep]
    err = a - b
    e, s = float(np.sum(err * err)), float(np.sum(b * b))
    snr = math.inf if e == 0 else (10 * math.log10(s / e) if s > 0 else -math.inf)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    cos = float(a @ b) / (na * nb) if na > 0 and nb > 0 else (1.0 if na == nb else 0.0)
    return snr, float(np.max(np.abs(err))) if err.size else 0.0, cos


def _close(x, y):
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def test_steps_pair_each_decode_run_with_the_reference_run_at_its_position(drift_pair):
    _, _, c = drift_pair
    sched = MANIFEST["drift_llm_q8"]["schedule"]
    assert sched == MANIFEST["drift_llm_cpu"]["schedule"] and len(sched) >= 7
    assert MANIFEST["drift_llm_q8"]["tokens_fed"] == MANIFEST["drift_llm_cpu"]["tokens_fed"]
    d = c.drift
    assert d is not None and [s.phase for s in d.steps] == [s["phase"] for s in sched]
    assert [s.position for s in d.steps[1:]] == [s["start_pos"] for s in sched[1:]]
    assert [s.step for s in d.steps[1:]] == list(range(1, len(sched)))
    assert all(s.ref_run == s.run for s in d.steps)      # same schedule on both sides
    assert {"m.layers.0", "m.layers.1"} <= set(d.layer_names)
    assert d.layers[d.layer_names.index("m.layers.1")].rule == "block"


def test_drift_cells_equal_numpy_on_the_decoded_tensors(drift_pair):
    """Every cell: the lowest numpy SNR and the largest numpy max abs error over the tensors of that
    layer (the module path of the reference node's transformer block) at that step, each tensor
    read from the Inspector's decode (oracle npz), never from etscope's."""
    pc, pr, c = drift_pair
    oc, orf = oracle_of(pc, "drift_llm_q8"), oracle_of(pr, "drift_llm_cpu")
    gr = pr.etrecord.graphs["forward"]
    want: dict[tuple[str, int], list] = {}
    compared = 0
    for j, rc in enumerate(r for r in c.runs if r.phase is not None):
        for t in rc.tensors:
            if t.metrics is None:
                continue
            # same dtype both sides (fp32 values, int64 positions): no dequantization in this pair
            assert t.cand.dtype == t.ref.dtype and "dequantized" not in (t.note or ""), t.name
            snr, mx, cos = _numpy_metrics(oc(t.cand), orf(t.ref))
            compared += 1
            node = gr.by_name.get(t.ref.node) if t.ref.node else None
            path = node.module_path if node is not None else None
            if path and ".layers." in f".{path}.":
                parts = path.split(".")
                layer = ".".join(parts[:parts.index("layers") + 2])
            else:
                layer = path or t.name
            assert t.layer == layer, (t.name, path)
            crosses = snr < 30.0 or cos < 0.999
            w = want.setdefault((layer, j), [math.inf, 0.0, 0, False])
            w[0], w[1], w[2], w[3] = min(w[0], snr), max(w[1], mx), w[2] + 1, w[3] or crosses
    d = c.drift
    assert compared > 300
    cells = 0
    for i, layer in enumerate(d.layer_names):
        for j in range(len(d.steps)):
            got, w = d.cells[i][j], want.get((layer, j))
            assert (got is None) == (w is None)
            if got is None:
                continue
            cells += 1
            assert _close(got.snr_db, w[0]) and _close(got.max_abs, w[1]), (layer, j, got, w)
            assert got.tensors == w[2] and got.diverged == w[3]
    assert cells == len(want) and len({k[0] for k in want}) == len(d.layers)
    # the quantized side drifts: some cells below the default 30 dB, none bit-exact in the blocks
    snrs = [d.cells[d.layer_names.index(f"m.layers.{k}")][j].snr_db for k in (0, 1) for j in range(len(d.steps))]
    assert min(snrs) < 30 and max(snrs) < 60


def test_first_crossing_agrees_with_brute_force(drift_pair):
    """The first (layer, step) crossing the thresholds, by brute force over every (layer, step):
    of the cells holding a tensor below 30 dB SNR or 0.999 cosine (numpy on the decoded tensors),
    the earliest step, then the cell whose crossing tensor comes first in graph order."""
    pc, pr, c = drift_pair
    oc, orf = oracle_of(pc, "drift_llm_q8"), oracle_of(pr, "drift_llm_cpu")
    d = c.drift
    runs = [r for r in c.runs if r.phase is not None]
    crossing = []
    for i, layer in enumerate(d.layer_names):
        for j, rc in enumerate(runs):
            for k, t in enumerate(rc.tensors):          # graph order
                if t.metrics is None or t.layer != layer:
                    continue
                snr, _, cos = _numpy_metrics(oc(t.cand), orf(t.ref))
                if snr < 30.0 or cos < 0.999:
                    crossing.append((j, k, i))
                    break
    assert crossing
    j, _, i = min(crossing)
    assert (d.first.layer_index, d.first.step_index) == (i, j) and d.steps[j].phase == "prefill"
    assert d.layer_names[i] == d.first.layer == "m.layers.0"       # the first block: the quantized q/k/v projections


def test_fp32_delegate_vs_fp32_cpu_shows_no_drift():
    """pair_llm_xnn vs pair_llm_cpu (fp32 both, separate sessions): no (layer, step) crosses."""
    _, _, c = _compare("pair_llm_xnn", "pair_llm_cpu")
    d = c.drift
    assert d is not None and d.first is None and len(d.steps) == 3
    assert [s.position for s in d.steps] == [None, 5, 6]
    for row in d.cells:
        for cell in row:
            assert cell is None or (not cell.diverged and cell.snr_db > 100)


def test_runs_in_order_have_no_drift_table():
    _, _, c = _compare("num_xnn", "num_cpu")
    assert c.drift is None and not c.runs_by_phase


def _sched(prompt, decodes, start=None):
    start = prompt if start is None else start
    return runs_mod.RunSchedule(("prefill", *["decode"] * decodes), (None, *range(1, decodes + 1)),
                       (None, *range(start, start + decodes)), (prompt, *[1] * decodes))


def test_different_prompts_pair_only_equal_positions():
    """A 5-token prompt against a 6-token one: the prefills are not compared (said), decode runs pair
    at equal positions only, the positions only one side ran are listed."""
    p = runs_mod.pair_schedules(4, 4, _sched(5, 3), _sched(6, 3))
    assert p.by_position and p.ref_to_cand == {1: 2, 2: 3}      # positions 6 and 7
    assert p.position == {2: 6, 3: 7} and p.step == {2: 2, 3: 3}
    notes = " | ".join(p.notes)
    assert "different prompts: prefill 0 takes 5 token(s) on the candidate, 6 on the reference" in notes
    assert "decode position(s) only the candidate ran, not compared: 5" in notes
    assert "decode position(s) only the reference ran, not compared: 8" in notes
    # same prompt, the reference generated fewer steps: the common positions pair
    q = runs_mod.pair_schedules(4, 3, _sched(5, 3), _sched(5, 2))
    assert q.ref_to_cand == {0: 0, 1: 1, 2: 2} and "only the candidate ran, not compared: 7" in " ".join(q.notes)


def test_decode_runs_of_a_second_generation_pair_with_the_second_generation():
    two = runs_mod.RunSchedule(("prefill", "decode", "decode", "prefill", "decode"), (None, 1, 2, None, 1),
                      (None, 4, 5, None, 4), (4, 1, 1, 4, 1))
    one = runs_mod.RunSchedule(("prefill", "decode", "prefill", "decode"), (None, 1, None, 1), (None, 4, None, 4), (4, 1, 4, 1))
    p = runs_mod.pair_schedules(5, 4, two, one)
    assert p.ref_to_cand == {0: 0, 1: 1, 2: 3, 3: 4}
    assert "only the candidate ran, not compared: 5" in " ".join(p.notes)


def test_unknown_positions_pair_decode_steps_in_order():
    s = runs_mod.RunSchedule(("prefill", "decode", "decode"), (None, 1, 2), (None, None, None), (None, None, None))
    p = runs_mod.pair_schedules(3, 3, s, s)
    assert p.ref_to_cand == {0: 0, 1: 1, 2: 2} and not p.by_position and p.step == {1: 1, 2: 2}
    assert any("paired by step" in n for n in p.notes)


def test_multi_method_llm_runs_pair_prefill_and_decode_steps():
    """gen_llama_multimethod (a prefill method and a decode method in one .pte, 2 x [prefill + 7
    decode]) holds no debug tensors (written without a debug buffer), so no drift table can be
    checked on it; its runs' schedule and pairing can: prefill with prefill, decode step k with
    decode step k (the ETDump records no token counts here: positions unknown, said)."""
    real = NUM.parent / "real"
    p = load(real / "gen_llama_multimethod.etdump", etrecord=real / "gen_llama_multimethod.etrecord",
             pte=real / "gen_llama_multimethod.pte")
    truth = json.loads((real / "gen_manifest.json").read_text())["fixtures"]["gen_llama_multimethod"]["schedule"]
    s = runs_mod.run_schedule(p)
    assert list(s.phase) == [x["phase"] for x in truth]
    pairing = runs_mod.pair_schedules(p.n_runs, p.n_runs, s, s)
    assert pairing.ref_to_cand == {k: k for k in range(16)} and not pairing.by_position
    assert [pairing.step.get(k) for k in range(16)] == list(s.step)
    assert any("paired by step" in n for n in pairing.notes)


def test_sparse_runs_make_no_quadratic_table():
    """Runs each logging another node (a crafted file) would make layers x steps grow as the square of
    the tensors: no table past the budget, said by the comparison."""
    from types import SimpleNamespace

    from etscope.analysis.numerics.drift import layer_drift, max_cells

    n = 400                           # 400 runs x 400 one-tensor layers = 160,000 cells > 8 x 400 + 100,000
    m = SimpleNamespace(nonfinite=0, snr_db=40.0, max_abs=0.1)

    def tensor(k):
        ref = SimpleNamespace(node=None, role="kernel_output", order=(k, 0, 0))
        return SimpleNamespace(name=f"node_{k}", metrics=m, diverged=False, ref=ref, cand=ref)

    runs = [SimpleNamespace(run=k, ref_run=k, phase="decode", step=k + 1, position=k, tensors=[tensor(k)],
                            first_divergence=None) for k in range(n)]
    assert n * n > max_cells(n) and layer_drift(runs, None, None) is None
    assert layer_drift(runs[:50], None, None) is not None
