"""Numerics on the real fixtures (tests/fixtures/numerics, tools/make_numerics_fixtures.py):
statistics and comparison metrics against plain numpy on the Inspector-decoded tensors (the
oracle npz), CPU vs CPU all equal, the quantized first divergence against a brute-force scan."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.numerics.identity import tensor_ids
from etscope.analysis.numerics.tensors import numerics
from etscope.analysis.numerics.compare import compare
from etscope.formats.debug_buffer import DebugBuffer
from tests.analysis.numerics_oracle import oracle_of
from etscope.profile import load

NUM = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "numerics"


def _load(name, program=None):
    program = program or name
    return load(NUM / f"{name}.etdump", NUM / f"{program}.etrecord", NUM / f"{program}.pte")


_oracle_of = oracle_of


def _close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


@pytest.mark.parametrize("name", ["num_cpu", "num_xnn", "num_q8"])
def test_stats_match_numpy(name):
    p = _load(name)
    oracle = _oracle_of(p, name)
    with DebugBuffer(NUM / f"{name}.debugbuf") as buf:
        r = numerics(p, buf, chunk=7)           # tiny chunks: the combination is exercised
    assert r.runs == 3 and len(r.rows) == len(p.etdump.tensors)
    for row in r.rows:
        x = oracle(row.id).astype(np.float64).reshape(-1)
        s = row.stats
        assert s.numel == x.size and s.nan == 0 and s.inf == 0
        assert _close(s.min, float(x.min())) and _close(s.max, float(x.max()))
        assert _close(s.mean, float(x.mean())) or abs(s.mean - x.mean()) < 1e-12
        assert _close(s.std, float(x.std())) or abs(s.std - x.std()) < 1e-12
        if row.id.dtype == "int8":
            assert _close(s.at_limits, float(np.mean((x == -128) | (x == 127))))


def test_roles_and_graph_nodes_of_the_delegated_program():
    p = _load("num_xnn")
    ids, notes = tensor_ids(p)
    run0 = [t for t in ids if t.run == 0]
    outs = [(t.instruction, t.role, t.node) for t in run0 if t.role != "delegate_input"]
    assert outs == [(0, "delegate_output", "aten_relu_default"), (1, "kernel_output", "aten_cumsum_default"),
                    (2, "delegate_output", "aten_tanh_default"), (3, "kernel_output", "aten_cumsum_default_1"),
                    (4, "delegate_output", "aten_linear_default_2"), (0, "program_output", None)]
    assert sum(t.role == "delegate_input" for t in run0) == 4    # x; relu+cumsum; cumsum_1 and the 0.25


def _compare(cand, ref, cand_program=None, thresholds=None, chunk=1 << 20):
    pc, pr = _load(cand, cand_program), _load(ref)
    with DebugBuffer(NUM / f"{cand}.debugbuf") as bc, DebugBuffer(NUM / f"{ref}.debugbuf") as br:
        return pc, pr, compare(pc, bc, pr, br, thresholds, chunk=chunk)


def test_cpu_vs_cpu_every_tensor_equal():
    pc, pr, c = _compare("num_cpu_b", "num_cpu", cand_program="num_cpu")
    assert len(c.runs) == 3 and not c.unmatched_cand and not c.unmatched_ref
    for rc in c.runs:
        assert len(rc.tensors) == 12
        for t in rc.tensors:
            m = t.metrics
            assert m.equal and m.cosine == 1.0 and m.snr_db == math.inf and m.mse == 0 and m.max_abs == 0
        assert rc.first_divergence is None and rc.largest_drop is None


@pytest.mark.parametrize("cand", ["num_xnn", "num_q8"])
def test_metrics_match_numpy(cand):
    pc, pr, c = _compare(cand, "num_cpu", chunk=5)
    oc, orf = _oracle_of(pc, cand), _oracle_of(pr, "num_cpu")
    n = 0
    for rc in c.runs:
        for t in rc.tensors:
            a = oc(t.cand).astype(np.float64).reshape(-1)
            b = orf(t.ref).astype(np.float64).reshape(-1)
            d = a - b
            m = t.metrics
            assert _close(m.cosine, float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b))))
            assert _close(m.snr_db, float(10 * np.log10(np.dot(b, b) / np.dot(d, d))))
            assert _close(m.mse, float(np.mean(d * d)))
            assert _close(m.max_abs, float(np.abs(d).max()))
            assert _close(m.rel_err, float(np.linalg.norm(d) / np.linalg.norm(b)))
            n += 1
    assert n >= 18


def test_delegated_vs_cpu_matched_through_source_nodes():
    """Two programs: paired by the source node each edge node comes from (from_node), never by
    edge-node name (was "node+handle": names, then handles)."""
    _, _, c = _compare("num_xnn", "num_cpu")
    assert c.match_by == "source node"
    names = [(t.cand.name, t.ref.name) for t in c.runs[0].tensors]
    assert ("aten_linear_default_2", "aten_addmm_default_2") in names   # linear == permute + addmm
    assert all(t.matched_by for rc in c.runs for t in rc.tensors)
    assert all(t.metrics.snr_db > 100 for rc in c.runs for t in rc.tensors)   # float rounding only
    assert c.first_divergence is None


@pytest.mark.parametrize("thresholds", [None, {"snr": 40.0}, {"cosine": 0.99995}, {"snr": 45.0, "cosine": 0.9},
                                        {"snr": 20.0}])
def test_quantized_first_divergence_is_the_brute_force_one(thresholds):
    pc, pr, c = _compare("num_q8", "num_cpu", thresholds=thresholds)
    oc, orf = _oracle_of(pc, "num_q8"), _oracle_of(pr, "num_cpu")
    th = thresholds or {"cosine": 0.999, "snr": 30.0}
    # brute force: every candidate tensor with a node, its reference partner by node name, graph order
    ref_ids, _ = tensor_ids(pr)
    cand_ids, _ = tensor_ids(pc)
    for run in range(3):
        ref_by_node = {t.node: t for t in ref_ids if t.run == run and t.node}
        pairs = sorted(((ref_by_node[t.node], t) for t in cand_ids if t.run == run and t.node in ref_by_node),
                       key=lambda rt: rt[0].graph_pos)
        want = None
        for r, t in pairs:
            a, b = oc(t).astype(np.float64).ravel(), orf(r).astype(np.float64).ravel()
            cos = np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b))
            snr = 10 * np.log10(np.dot(b, b) / np.dot(a - b, a - b))
            if cos < th.get("cosine", -np.inf) or snr < th.get("snr", -np.inf):
                want = r.node
                break
        rc = next(x for x in c.runs if x.run == run)
        got = rc.tensors[rc.first_divergence].name if rc.first_divergence is not None else None
        if want is None:   # no node diverges: then only the program output may
            assert got in (None, "output[0]")
        else:
            assert got == want


# ---- QNN-shaped (tools/synth_qnn_numerics.py: uint8 tensors and parameters from the real num_q8 run)
def test_qnn_tensor_names_to_fx_nodes():
    from etscope.analysis.numerics.identity import qnn_tensor_node

    assert qnn_tensor_node("aten_relu_default@0") == "aten_relu_default"
    assert qnn_tensor_node("output_aten_addmm_default_2@0") == "aten_addmm_default_2"
    assert qnn_tensor_node("input_0_x@0") == "x"
    assert qnn_tensor_node("input_1_mutbuf_0_b_k_cache@0") == "b_k_cache"
    assert qnn_tensor_node("output_mutbuf_1_aten_index_put_default@0") == "aten_index_put_default"
    assert qnn_tensor_node("aten_mul_tensor") == "aten_mul_tensor"


def test_qnn_uint8_dequantized_equals_the_real_dequantize_kernel():
    import json

    truth = json.loads((NUM / "synthetic_qnn_q8.truth.json").read_text())
    p = load(NUM / "synthetic_qnn_q8.etdump", NUM / "synthetic_qnn_q8.etrecord")
    ids, _ = tensor_ids(p)
    from etscope.analysis.numerics.quant import Quantization
    quant = Quantization(p.etrecord.graph("forward"))
    q8 = _load("num_q8")
    ids8, _ = tensor_ids(q8)
    oracle8 = _oracle_of(q8, "num_q8")
    g8 = q8.etrecord.graph("forward")
    with DebugBuffer(NUM / "synthetic_qnn_q8.debugbuf") as buf:
        buf.check(p.etdump.tensors)
        n = 0
        for t in truth["tensors"]:
            qp = quant.of(t["node"])
            assert (qp.scale, qp.zero_point, qp.node) == (t["scale"], t["zero_point"], t["quantize_node"])
            deq = next(u.name for u in g8.nodes if t["quantize_node"] in u.inputs)   # its dequantize
            for run in range(3):
                cand = next(x for x in ids if x.run == run and x.name == t["qnn_name"])
                assert cand.role == "delegate_intermediate" and cand.node == t["node"] and cand.dtype == "uint8"
                u8 = np.array(buf.array(p.etdump.tensors, cand.index)).astype(np.float64)
                want = oracle8(next(x for x in ids8 if x.run == run and x.node == deq))
                got = (u8 - qp.zero_point) * qp.scale
                assert np.allclose(got, want.astype(np.float64), rtol=1e-6, atol=1e-7)
                n += 1
    assert n == 3 * len(truth["tensors"]) >= 15


def test_qnn_vs_cpu_metrics_on_dequantized_values():
    pc = load(NUM / "synthetic_qnn_q8.etdump", NUM / "synthetic_qnn_q8.etrecord")
    pr = _load("num_cpu")
    with DebugBuffer(NUM / "synthetic_qnn_q8.debugbuf") as bc, DebugBuffer(NUM / "num_cpu.debugbuf") as br:
        c = compare(pc, bc, pr, br, {"snr": 35.0})
        orf = _oracle_of(pr, "num_cpu")
        n = 0
        for rc in c.runs:
            for t in rc.tensors:
                if t.role != "delegate_intermediate":
                    continue
                assert t.metrics is not None and "dequantized" in t.note
                from etscope.analysis.numerics.quant import Quantization
                qp = Quantization(pc.etrecord.graph("forward")).of(t.cand.node)
                a = (np.array(bc.array(pc.etdump.tensors, t.cand.index)).astype(np.float64) - qp.zero_point) * qp.scale
                a = a.ravel()
                b = orf(t.ref).astype(np.float64).ravel()
                d = a - b
                assert _close(t.metrics.cosine, float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b))))
                assert _close(t.metrics.snr_db, float(10 * np.log10(np.dot(b, b) / np.dot(d, d))))
                assert _close(t.metrics.max_abs, float(np.abs(d).max()))
                n += 1
        assert n == 18
    assert c.first_divergence.name == "aten_cumsum_default_1"      # 32.97 dB < 35 in run 0


def test_per_channel_parameters_are_reported_unavailable():
    from etscope.analysis.numerics.quant import Quantization
    from etscope.formats.etrecord import Graph, GraphNode

    g = Graph("g", "forward", [
        GraphNode("conv", "call_function", "aten.convolution.default"),
        GraphNode("q", "call_function", "quantized_decomposed.quantize_per_channel.default", inputs=("conv",)),
        GraphNode("relu", "call_function", "aten.relu.default"),
    ])
    q = Quantization(g)
    assert "per-channel" in q.of("conv") and "unavailable" in q.of("conv")
    assert "no quantize_per_tensor" in q.of("relu")


def test_instructions_sharing_a_handle_get_their_own_op_node():
    """tiny Llama (tests/fixtures/real): SDPA's decomposition shares handle 79 among 29 nodes; the
    hoisted scalar_tensor instructions 0 and 1 carry it. Each kernel output is named after a node of
    its own operator (the .pte's), never the group's last node."""
    real = NUM.parent / "real"
    p = load(real / "llama.etdump", real / "llama.etrecord", real / "llama.pte")
    ids, _ = tensor_ids(p)
    first = {t.instruction: t.node for t in ids if t.run == 0 and t.role == "kernel_output"}
    assert (first[0], first[1]) == ("scalar_tensor_1", "scalar_tensor_2")
    g = p.etrecord.graph("forward")
    checked = 0
    for t in ids:
        if t.role != "kernel_output" or t.node is None:
            continue
        op = p.instructions[t.instruction].operator              # e.g. aten::embedding.out
        target = g.by_name[t.node].target                         # e.g. aten.embedding.default
        assert target.split(".")[1] == op.split("::")[1].split(".")[0], (t.instruction, t.node, op)
        checked += 1
    assert checked > 1500


def _synthetic_profile(tmp_path, name, arrays):
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("synth_debug_buffer", root / "tools" / "synth_debug_buffer.py")
    synth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synth)
    raw, tensors = synth.pack(arrays)
    events = [("P", "Method::execute", -1, 0, 100)] + [(f"op{k}", k, [t], False) for k, t in enumerate(tensors)]
    (tmp_path / f"{name}.etdump").write_bytes(synth.build_etdump([events]))
    (tmp_path / f"{name}.bin").write_bytes(raw)
    return load(tmp_path / f"{name}.etdump"), tmp_path / f"{name}.bin"


def test_layout_permutation_nans_and_no_etrecord(tmp_path):
    rng = np.random.default_rng(3)
    nchw = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    bad = rng.standard_normal(6).astype(np.float32)
    cand_bad = bad.copy()
    cand_bad[2] = np.nan
    pc, bc = _synthetic_profile(tmp_path, "cand", [np.ascontiguousarray(nchw.transpose(0, 2, 3, 1)), cand_bad,
                                                   np.ones((2, 2), np.float32)])
    pr, br = _synthetic_profile(tmp_path, "ref", [nchw, bad, np.ones((2, 3), np.float32)])
    with DebugBuffer(bc) as b1, DebugBuffer(br) as b2:
        c = compare(pc, b1, pr, b2)
        s = numerics(pc, b1)
    assert c.match_by == "instruction" and any("same program" in n for n in c.notes)
    t0, t1, t2 = c.runs[0].tensors
    assert t0.metrics.equal and "permuted [0, 3, 1, 2]" in t0.note          # NHWC -> NCHW, said so
    assert t1.metrics.nonfinite == 1 and t1.diverged and math.isnan(t1.metrics.snr_db)
    assert t2.metrics is None and "shapes differ" in t2.note
    assert c.runs[0].first_divergence == 1
    assert s.rows[1].stats.nan == 1 and s.rows[1].flags == ("NaN x1",)
    assert _close(s.rows[1].stats.mean, float(np.nanmean(cand_bad.astype(np.float64))))


def test_a_profile_cut_to_some_runs_keeps_its_tensors():
    """select_runs / method splits subset the events: the debug tensors follow (their event index
    renumbered), so the kept run's tensors are the same bytes as before the cut."""
    from etscope.profile import select_runs

    p = _load("num_xnn")
    sub = select_runs(p, [False, True, False])
    ids, _ = tensor_ids(p)
    sub_ids, _ = tensor_ids(sub)
    assert sub.n_runs == 1 and {t.run for t in sub_ids} == {0}
    want = [t for t in ids if t.run == 1]
    assert [(t.role, t.name, t.shape) for t in sub_ids] == [(t.role, t.name, t.shape) for t in want]
    assert all(sub.etdump.events["kind"][sub.etdump.tensors.columns["event"]] == 2)
    with DebugBuffer(NUM / "num_xnn.debugbuf") as buf:
        for a, b in zip(sub_ids, want):
            assert buf.array(sub.etdump.tensors, a.index).tobytes() == buf.array(p.etdump.tensors, b.index).tobytes()
