"""Inclusive time per source module (analysis.ops.modules): the tree adds up to Method::execute minus
framework overhead, every child within its parent, and the CNN's modules hold their XNNPACK ops."""
import csv

import numpy as np
import pytest

from etscope.analysis.ops.modules import MATCHED, NO_NODE, PARTITION, module_times
from etscope.analysis.ops.per_op import op_table
from etscope.analysis.results import Results
from etscope.profile import load

QNN = "../qnn_etdump/synthetic_qnn_"


def _modules(real, name):
    pte = real / f"{name}.pte"
    p = load(real / f"{name}.etdump", real / f"{name}.etrecord", pte if pte.exists() else None)
    r = Results(p)
    return p, r.modules, r          # over the runs of r's summary and op table (the steady runs)


@pytest.mark.parametrize("name", ["cnn", "llama", "gen_llama_mixed", QNN + "cnn", QNN + "llm", QNN + "vit_2part"])
def test_module_totals_add_up_to_method_execute_minus_framework_overhead(real, name):
    p, m, r = _modules(real, name)
    s = r.summary
    lat = s.runs.latency_ms.mean
    overhead = sum(b.mean_ms for b in s.breakdown if b.kind == "framework_overhead")
    root = m.modules[0]
    assert root.path == "" and root.depth == 0
    assert root.total_us == pytest.approx((lat - overhead) * 1e3, rel=1e-9)
    assert sum(root.how_us.values()) == pytest.approx(root.total_us, rel=1e-9)
    assert sum(root.placement_us.values()) == pytest.approx(root.total_us, rel=1e-9)
    # Every module's total is its own time plus its children's.
    kids = {}
    for r in m.modules:
        kids.setdefault(r.parent, []).append(r)
    for r in m.modules:
        assert r.total_us == pytest.approx(r.self_us + sum(k.total_us for k in kids.get(r.path, [])),
                                              rel=1e-9, abs=1e-9), r.path
        assert r.self_us >= 0


def test_cnn_modules_hold_their_xnnpack_ops_and_the_rest_of_the_partition_stays_at_the_root(real):
    p, _, _ = _modules(real, "cnn")
    every = np.ones(p.n_runs, dtype=bool)       # the Inspector's averages are over every run
    m = module_times(p, op_table(p, every), None, every)
    by = {r.path: r for r in m.modules}
    avg = {r["event_name"]: float(r["avg (ms)"]) * 1e3
           for r in csv.DictReader(open(real / "cnn.inspector.tsv"), delimiter="\t")}
    assert by["c1"].total_us == pytest.approx(avg["Convolution (NHWC, F32) IGEMM #1"])
    assert by["c2"].total_us == pytest.approx(avg["Convolution (NHWC, F32) IGEMM #2"])
    assert by["pool"].total_us == pytest.approx(avg["Max Pooling (NHWC, F32) #1"] + avg["Max Pooling (NHWC, F32) #2"])
    assert by["fc"].total_us == pytest.approx(avg["Fully Connected (NC, F32) GEMM #1"])
    assert set(by["c1"].how_us) == {MATCHED}
    # The partition spans the whole model: its unmatched part (transposes, call overhead) is the root's own.
    assert PARTITION in by[""].how_us
    assert by[""].type == "__main__.SmallCNN"


def test_llama_layers_split_into_attention_and_mlp(real):
    _, m, _ = _modules(real, "llama")
    by = {r.path: r for r in m.modules}
    for layer in ("m.layers.0", "m.layers.1"):
        assert by[layer].type.endswith("TransformerBlock")
        att, mlp = by[f"{layer}.attention"], by[f"{layer}.feed_forward"]
        assert att.total_us > 0 and mlp.total_us > 0
        assert att.total_us + mlp.total_us <= by[layer].total_us + 1e-9
    assert by[NO_NODE].parent == ""
    # Depth-first order: each module right after its parent's earlier children.
    seen = set()
    for r in m.modules:
        assert r.parent is None or r.parent in seen
        seen.add(r.path)


def test_qnn_op_estimates_are_labelled_and_fit_in_their_delegate_call(real):
    _, m, r = _modules(real, QNN + "cnn")
    root = m.modules[0]
    assert root.how_us["estimated"] > 0 and set(root.placement_us) == {"QnnBackend"}
    calls = sum(b.mean_ms for b in r.summary.breakdown if b.kind == "delegate") * 1e3
    assert root.total_us <= calls * (1 + 1e-9)


def test_no_modules_without_an_etrecord(real):
    p = load(real / "cnn.etdump")
    assert module_times(p, op_table(p)) is None
