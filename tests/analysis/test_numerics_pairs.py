"""Pairing across graphs (issue 32 items 1-2) on real ExecuTorch 1.5.1 runs made in SEPARATE
sessions (tools/make_numerics_pairs.py): fp32 XNNPACK vs fp32 CPU for a CNN and for a KV-cache
transformer (prefill + decode steps fed by the previous output), int8 XNNPACK (atan and erf on the
CPU between partitions) vs fp32 CPU. Every metric is checked against numpy on the tensors
executorch's Inspector code decoded (``NAME.oracle.npz``), both sides read from the fixture files.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.numerics.compare import compare
from etscope.formats.debug_buffer import DebugBuffer
from tests.analysis.numerics_oracle import oracle_of
from etscope.profile import load, select_runs

NUM = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "numerics"


def _load(name):
    return load(NUM / f"{name}.etdump", NUM / f"{name}.etrecord", NUM / f"{name}.pte")


_oracle_of = oracle_of


def _compare(cand, ref, **kw):
    pc, pr = _load(cand), _load(ref)
    with DebugBuffer(NUM / f"{cand}.debugbuf") as bc, DebugBuffer(NUM / f"{ref}.debugbuf") as br:
        return pc, pr, compare(pc, bc, pr, br, **kw)


def _close(a, b, rel=1e-9, abs_=0.0):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def _check_against_numpy(pc, pr, c, cand, ref) -> int:
    """Every compared pair's metrics equal numpy's on the Inspector-decoded arrays."""
    oc, orf = _oracle_of(pc, cand), _oracle_of(pr, ref)
    n = 0
    for rc in c.runs:
        for t in rc.tensors:
            if t.metrics is None:
                continue
            a = oc(t.cand).astype(np.float64)
            b = orf(t.ref).astype(np.float64)
            assert a.shape == b.shape, (t.name, a.shape, b.shape)        # never two shapes
            a, b = a.ravel(), b.ravel()
            fin = np.isfinite(a) & np.isfinite(b)          # equal -inf (masks) are left out, as documented
            assert np.array_equal(a[~fin], b[~fin])
            a, b = a[fin], b[fin]
            d = a - b
            m = t.metrics
            if np.dot(d, d) == 0:
                assert m.snr_db == math.inf and m.equal
            else:
                assert _close(m.snr_db, float(10 * np.log10(np.dot(b, b) / np.dot(d, d))), 1e-9), t.name
            if np.dot(a, a) and np.dot(b, b):
                assert _close(m.cosine, float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b))), 1e-12)
            assert _close(m.max_abs, float(np.abs(d).max()) if d.size else 0.0)
            n += 1
    return n


@pytest.mark.parametrize("model", ["cnn", "llm"])
def test_fp32_delegate_vs_fp32_cpu_no_divergence_and_covered(model):
    cand, ref = f"pair_{model}_xnn", f"pair_{model}_cpu"
    pc, pr, c = _compare(cand, ref)
    assert c.match_by == "source node"
    assert c.first_divergence is None
    assert all(not t.diverged for rc in c.runs for t in rc.tensors)
    cv = c.coverage
    assert cv.share >= 0.9 and cv.refused == 0, cv
    assert not any("low coverage" in n for n in c.notes)
    n = _check_against_numpy(pc, pr, c, cand, ref)
    assert n >= (6 if model == "cnn" else 100)
    assert all(t.matched_by for rc in c.runs for t in rc.tensors)
    if model == "llm":
        assert c.runs_by_phase and [rc.phase for rc in c.runs] == ["prefill", "decode", "decode"]


def test_int8_partition_outputs_pair_with_their_fp32_nodes():
    pc, pr, c = _compare("pair_q8_xnn", "pair_q8_cpu")
    got = {t.ref.node: t for t in c.runs[0].tensors}
    relu, pool = got["aten_relu_default"], got["aten_max_pool2d_with_indices_default"]
    for t in (relu, pool):
        assert t.cand.role == "delegate_output" and "delegate output" in t.matched_by
        assert 30 < t.metrics.snr_db < 60         # int8 error, real (~40.8 and ~43.8 dB here)
    assert "q/dq looked through" in relu.matched_by          # the partition ends with q -> dq
    assert {"aten_atan_default", "aten_erf_default"} <= set(got)
    assert _check_against_numpy(pc, pr, c, "pair_q8_xnn", "pair_q8_cpu") == 3 * 6


def test_no_false_divergence_from_edge_names_across_programs():
    """Issue 32: paired by edge-node name, the KV-cache transformer's XNNPACK and CPU graphs gave a
    first divergence at a permute_copy at -3 dB (the two names are different nodes; in the issue
    aten_permute_copy_default_1, [1, 4, 6, 16] vs [1, 6, 4, 16]). Now every pair stands for one
    source node: same shapes, every SNR of float rounding only."""
    _, _, c = _compare("pair_llm_xnn", "pair_llm_cpu")
    pg = c.runs[0].tensors
    for rc in c.runs:
        for t in rc.tensors:
            assert t.cand.shape == t.ref.shape, t.name
            assert t.metrics is not None and t.metrics.snr_db > 100, (t.name, t.metrics)
    # the names differ across the two graphs for the same node: pairs are not by name
    assert any(t.cand.node and t.ref.node and t.cand.node != t.ref.node for t in pg)


def test_permutations_other_than_a_layout_are_refused():
    from etscope.analysis.numerics.metrics import _permutation

    assert _permutation((1, 4, 6, 16), (1, 6, 4, 16)) is None          # not a layout: a different tensor
    assert _permutation((1, 5, 7, 3), (1, 3, 5, 7)) == (0, 3, 1, 2)     # NHWC -> NCHW


def test_different_run_counts_list_only_tensors_unpaired_in_a_compared_run():
    """Item 2: 3 candidate runs against a 1-run reference: the candidate's runs 1 and 2 are not
    compared, so their tensors are not 'without a partner' (they were all listed before)."""
    pc = load(NUM / "num_cpu_b.etdump", NUM / "num_cpu.etrecord", NUM / "num_cpu.pte")
    pr = select_runs(load(NUM / "num_cpu.etdump", NUM / "num_cpu.etrecord", NUM / "num_cpu.pte"),
                     [True, False, False])
    with DebugBuffer(NUM / "num_cpu_b.debugbuf") as bc, DebugBuffer(NUM / "num_cpu.debugbuf") as br:
        c = compare(pc, bc, pr, br)
    assert len(c.runs) == 1 and c.unmatched_cand == () and c.unmatched_ref == ()
    assert all(t.metrics.equal for t in c.runs[0].tensors)


def _graph_pair(tmp_path, cand_nodes, ref_nodes, arrays_c, arrays_r, names):
    """Two synthetic programs (ETDump + debug buffer + ETRecord each), one kernel instruction per
    tensor, instruction k's debug handle k+1."""
    import sys

    sys.path.insert(0, str(NUM.parents[1] / "fuzz"))
    from gen_numerics import etrecord_bytes, write_pair

    out = []
    for side, nodes, arrays in (("c", cand_nodes, arrays_c), ("r", ref_nodes, arrays_r)):
        (tmp_path / f"{side}.etrecord").write_bytes(etrecord_bytes(nodes, {str(k): [k + 1] for k in range(len(arrays))}))
        et, buf = write_pair(tmp_path, side, arrays, names=names)
        out.append((load(et, tmp_path / f"{side}.etrecord"), buf))
    return out


def _n(name, source, handle, inputs=("x",)):
    import json
    import sys

    sys.path.insert(0, str(NUM.parents[1] / "fuzz"))
    from gen_numerics import node

    prov = json.dumps([{"name": source, "target": "aten.x", "from_node": []}]) if source else None
    return node(name, "executorch.exir.dialects.edge.ops.aten.permute_copy.default", inputs, handle=handle,
                meta={"from_node": prov} if prov else None)


def test_edge_names_alone_never_pair_two_programs(tmp_path):
    """Same edge-node names, different source nodes: nothing is paired by the names; the low
    coverage is a finding. The same names AND sources pair."""
    a = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    (pc, bc), (pr, br) = _graph_pair(
        tmp_path, [_n("aten_permute_copy_default", "k", 1), _n("aten_permute_copy_default_1", "q", 2)],
        [_n("aten_permute_copy_default", "q", 1), _n("aten_permute_copy_default_1", "v", 2)],
        [a, a + 1], [a + 1, a], ["aten_permute_copy_default", "aten_permute_copy_default_1"])
    with DebugBuffer(bc) as b1, DebugBuffer(br) as b2:
        c = compare(pc, b1, pr, b2)
    pairs = [(t.cand.node, t.ref.node, t.matched_by) for t in c.runs[0].tensors]
    # q (candidate's _1) with q (reference's plain name): names differ, source agrees: equal values
    assert pairs == [("aten_permute_copy_default_1", "aten_permute_copy_default", "source node (from_node)")]
    assert c.runs[0].tensors[0].metrics.equal
    assert c.coverage.paired == 1 and c.coverage.ref_nodes == 2 and c.coverage.share == 0.5
    assert any(n.startswith("low coverage") for n in c.notes)
    assert c.unmatched_cand == ("aten_permute_copy_default",) and c.unmatched_ref == ("aten_permute_copy_default_1",)
