"""XNNPACK per-op events matched to the partition's graph nodes by kind and order (analysis.ops.delegate_ops)."""
import csv

import numpy as np
import pytest

from etscope.analysis.ops.delegate_ops import MATCHED_HOW, match_call, match_delegate_ops
from etscope.analysis.ops.nodes import graph_for_views, node_table
from etscope.analysis.ops.kinds import kind_of_delegate_event, kind_of_op_type
from etscope.analysis.ops.per_op import op_table
from etscope.analysis.stats import runs_counted
from etscope.formats.etrecord import GraphNode
from etscope.profile import load


# The CNN's XNNPACK events and the graph nodes they stand for (the Inspector's table of the file).
CNN_MATCHES = {"aten_convolution_default": "Convolution (NHWC, F32) IGEMM #1",
               "aten_convolution_default_1": "Convolution (NHWC, F32) IGEMM #2",
               "aten_max_pool2d_default": "Max Pooling (NHWC, F32) #1",
               "aten_max_pool2d_default_1": "Max Pooling (NHWC, F32) #2",
               "aten_linear_default": "Fully Connected (NC, F32) GEMM #1"}


def _load(real, name):
    p = load(real / f"{name}.etdump", real / f"{name}.etrecord", real / f"{name}.pte")
    return p, op_table(p)


def test_cnn_conv_pool_linear_nodes_get_the_inspector_times_of_their_xnnpack_events(real):
    p, _ = _load(real, "cnn")
    every = np.ones(p.n_runs, dtype=bool)        # the Inspector's means are over every run
    nodes = {n.name: n for n in node_table(p, op_table(p, every), None, every).nodes}
    # Oracle: the Inspector's mean of each XNNPACK event (ms), from its table of the same file.
    avg = {r["event_name"]: float(r["avg (ms)"]) * 1e3
           for r in csv.DictReader(open(real / "cnn.inspector.tsv"), delimiter="\t")}
    for node, event in CNN_MATCHES.items():
        assert nodes[node].placement == "XnnpackBackend"
        assert nodes[node].time_us == pytest.approx(avg[event], rel=1e-6), node
        assert nodes[node].time_how == MATCHED_HOW
        assert not nodes[node].estimated
    # relu is fused into the convolution (no Clamp operator logged): left untimed, with the reason.
    for relu in ("aten_relu_default", "aten_relu_default_1"):
        assert nodes[relu].time_us is None
        assert "2 clamp node(s)" in nodes[relu].untimed_why and "0 clamp event(s)" in nodes[relu].untimed_why
    assert nodes["aten_cumsum_default"].time_how == "measured"


def test_cnn_unmatched_events_and_call_time_stay_with_the_partition(real):
    p, ops = _load(real, "cnn")
    part = match_delegate_ops(p, ops, graph_for_views(p))[0]
    assert set(part.unmatched_events) == {"Transpose (ND, X32) #1", "Transpose (ND, X32) #2"}   # XNNPACK's own layout ops
    assert part.matched_us + sum(part.unmatched_events.values()) == pytest.approx(part.events_us)
    assert part.events_us < part.call_us


def test_llama_matches_only_same_kind_and_never_a_node_twice(real):
    p, ops = _load(real, "llama")
    g = graph_for_views(p)
    parts = match_delegate_ops(p, ops, g)
    assert sum(len(x.node_us) for x in parts.values()) > 50
    for part in parts.values():
        assert not set(part.node_us) & set(part.untimed)
        for node, events in part.node_events.items():
            for e in events:
                assert kind_of_delegate_event(e, in_partition=True) == kind_of_op_type(g.by_name[node].target, in_partition=True)
        assert part.matched_us <= part.events_us + 1e-9


def _n(name, target, *inputs):
    return GraphNode(name=name, op="call_function", target=target, inputs=tuple(inputs))


def test_count_mismatch_leaves_the_kind_untimed_and_the_rest_matched():
    nodes = [_n("c", "aten.convolution.default"), _n("r", "aten.relu.default", "c"),
             _n("l", "aten.linear.default", "r"), _n("l2", "aten.linear.default", "l")]
    events = [("Convolution (NHWC, F32) IGEMM #1", 5.0), ("Fully Connected (NC, F32) GEMM #1", 1.0)]
    pairs, why = match_call(nodes, events)
    assert pairs == {"c": 0}
    assert "2 fully_connected node(s)" in why["l"] and "1 fully_connected event(s)" in why["l"]
    assert set(why) == {"r", "l", "l2"}


def test_events_against_the_data_dependencies_match_nothing():
    nodes = [_n("a", "aten.add.Tensor"), _n("m", "aten.mul.Tensor", "a")]
    pairs, why = match_call(nodes, [("Multiply (ND) #1", 1.0), ("Add (ND) #1", 1.0)])
    assert pairs == {}
    assert set(why) == {"a", "m"}
    assert match_call(nodes, [("Add (ND) #1", 1.0), ("Multiply (ND) #1", 1.0)])[0] == {"a": 0, "m": 1}


def test_same_kind_nodes_the_graph_leaves_unordered_are_ambiguous():
    # m1 depends on a chain, m2 on nothing inside the partition: a backend may run m2 first.
    nodes = [_n("s", "aten.sub.Tensor"), _n("m1", "aten.mul.Tensor", "s"), _n("m2", "aten.mul.Tensor")]
    pairs, why = match_call(nodes, [("Subtract (ND) #1", 1.0), ("Multiply (ND) #1", 1.0), ("Multiply (ND) #2", 1.0)])
    assert "m1" not in pairs and "m2" not in pairs
    assert "order" in why["m1"]
    assert pairs == {"s": 0}


def _icicle_events(tree):
    """The delegate-internal boxes of the report's icicle (``report_view.hierarchy``)."""
    out = []
    for backend in tree.children:
        for call in backend.children or ():
            if call.kind == "delegate_call":
                out += [(call, c) for c in call.children]
    return out


def test_icicle_names_matched_xnnpack_events_by_their_node(real):
    """The report's "Where time goes" names an XNNPACK event by the graph node it was matched to
    (the event's own name kept for the tooltip); unmatched events (layout transposes) keep theirs."""
    from etscope.analysis.results import Results

    p = load(real / "cnn.etdump", real / "cnn.etrecord", real / "cnn.pte")
    boxes = {c.name: c for _, c in _icicle_events(Results(p).view.hierarchy)}
    for node, event in CNN_MATCHES.items():
        assert boxes[node].event == event and boxes[node].node == node and boxes[node].how == MATCHED_HOW
    transposes = [b for name, b in boxes.items() if name.startswith("Transpose")]      # those with time
    assert transposes and all(b.event is None and b.node is None for b in transposes)


@pytest.mark.parametrize("name, at_least", [("llama", 20), ("gen_llama_mixed", 1)])
def test_icicle_node_labels_are_the_matches_and_keep_every_event(real, name, at_least):
    """Every relabelled box is one the matcher paired (same kind, a node that keeps its time), on
    models with many calls; the boxes and their times are the events', relabelled only."""
    from etscope.analysis.results import Results
    from etscope.analysis.views.report import hierarchy

    p = load(real / f"{name}.etdump", real / f"{name}.etrecord", real / f"{name}.pte")
    r = Results(p)
    g = graph_for_views(p)
    parts = match_delegate_ops(p, r.ops, g, r.steady)
    labelled = _icicle_events(r.view.hierarchy)
    plain = _icicle_events(hierarchy(r.summary, r.ops, r.qnn, runs_counted(p, r.steady)))
    assert [(c.ms, c.event or c.name) for _, c in labelled] == [(c.ms, c.name) for _, c in plain]
    named = [(call, c) for call, c in labelled if c.event is not None]
    assert len(named) >= at_least        # (events of 0 ns have no box)
    for call, c in named:
        part = parts[int(call.name.split("#")[1])]
        assert c.name == c.node and c.node in part.node_us and c.event in part.node_events[c.node]
        assert kind_of_delegate_event(c.event, in_partition=True) == kind_of_op_type(g.by_name[c.node].target,
                                                                                       in_partition=True)
