"""formats/export_graph.py on hand-written torch.export JSON: the FX-like node list (placeholders,
nodes, output), names an older schema does not record, debug handles in every written form, and
what cannot be followed."""
from __future__ import annotations

import pytest

from etscope.errors import FormatError
from etscope.formats.export_graph import decode_graph, parse_debug_handles, schema_version


def _t(name):
    return {"as_tensor": {"name": name}}


def _doc(nodes, inputs=("x", "w"), outputs=("out",), **top):
    specs = [{"parameter": {"arg": _t("w"), "parameter_name": "fc.weight"}}, {"user_input": {"arg": _t("x")}}]
    return {"graph_module": {"graph": {"inputs": [_t(n) for n in inputs], "outputs": [_t(n) for n in outputs],
                                       "nodes": nodes},
                             "signature": {"input_specs": specs}}, **top}


def _node(target, inputs, outputs, name=None, **meta):
    n = {"target": target, "inputs": [{"name": f"a{i}", "arg": _t(v)} for i, v in enumerate(inputs)],
         "outputs": outputs, "metadata": meta}
    if name is not None:
        n["name"] = name
    return n


def test_placeholders_nodes_and_output_as_fx_lists_them():
    doc = _doc([_node("torch.ops.aten.linear.default", ["x", "w"], [_t("lin")], name="linear",
                      debug_handle="1",
                      stack_trace='File "/usr/lib/torch/nn/x.py", line 9\nFile "/home/me/model.py", line 42'),
                _node("torch.ops.aten.relu.default", ["lin"], [_t("out")], name="relu", debug_handle=2)],
               schema_version={"major": 8, "minor": 3}, dialect="EDGE")
    g = decode_graph("edge_dialect_exported_program/forward", "forward", doc)
    assert [(n.name, n.op) for n in g.nodes] == [("x", "placeholder"), ("w", "placeholder"),
                                                 ("linear", "call_function"), ("relu", "call_function"),
                                                 ("output", "output")]
    assert g.by_name["w"].input_kind == "parameter" and g.by_name["w"].target == "fc.weight"
    assert g.by_name["x"].input_kind == "user_input"
    lin = g.by_name["linear"]
    assert lin.target == "aten.linear.default" and lin.inputs == ("x", "w") and lin.outputs == ("lin",)
    assert lin.source == "model.py:42" and lin.source_line == 42          # innermost frame outside torch
    assert g.by_name["relu"].inputs == ("linear",)                        # producing node, not value
    assert g.by_name["output"].inputs == ("relu",)
    assert g.by_debug_handle == {1: [lin], 2: [g.by_name["relu"]]}
    assert (g.schema_version, g.dialect, g.generated_names) == ("8.3", "EDGE", [])
    assert schema_version(doc) == "8.3" and schema_version({"schema_version": 1}) == "1"


def test_older_schema_names_a_node_after_its_single_output_else_as_fx_would():
    doc = _doc([_node("torch.ops.aten.relu.default", ["x"], [_t("relu_out")]),
                _node("torch.ops.aten.split.Tensor", ["relu_out"],
                      [{"as_tensors": [{"name": "s0"}, {"name": "s1"}]}]),
                _node("torch.ops.aten.split.Tensor", ["relu_out"],
                      [{"as_tensors": [{"name": "s2"}, {"name": "s3"}]}])], outputs=("s0",))
    g = decode_graph("e", "forward", doc)
    assert [n.name for n in g.call_nodes] == ["relu_out", "split_tensor", "split_tensor_1"]
    assert g.generated_names == ["split_tensor", "split_tensor_1"]
    assert g.by_name["output"].inputs == ("split_tensor",)


@pytest.mark.parametrize("raw, handles", [
    (5, [5]), ("7", [7]), ([1, "2", [3]], [1, 2, 3]), (None, []), ("[4, 5]", [4, 5]), ("(6, 7)", [6, 7]),
])
def test_debug_handles_in_every_written_form(raw, handles):
    if isinstance(raw, str) and raw[:1] in "[(":
        doc = _doc([_node("torch.ops.aten.relu.default", ["x"], [_t("out")], name="r", debug_handle=raw)])
        assert list(decode_graph("e", "m", doc).by_name["r"].debug_handles) == handles
    else:
        assert parse_debug_handles(raw, "map") == handles


def test_what_cannot_be_followed_is_a_format_error():
    with pytest.raises(FormatError, match="debug handle True is not an integer"):
        parse_debug_handles(True, "map")
    with pytest.raises(FormatError, match="graph_module: expected an object"):
        decode_graph("e", "m", {"graph_module": []})
    with pytest.raises(FormatError, match="node 0 has no name, no single output and no target"):
        decode_graph("e", "m", _doc([{"inputs": [], "outputs": []}]))
