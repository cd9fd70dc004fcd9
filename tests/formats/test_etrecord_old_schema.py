"""ETRecords written by older ExecuTorch / torch.export versions.

* The real upstream sample (``tests/fixtures/upstream/executorch_example_etrecord.bin``, 2023,
  torch.export ``schema_version`` 1: see the README there) must read, with the node named after its
  output, as upstream's reader of the time named it.
* ``to_schema1`` rewrites a real executorch 1.5.1 ETRecord into the schema-1 shape (generator, no
  committed file): nodes lose ``name`` (recorded by executorch's serializer only since
  pytorch/executorch#12877, July 2025), unions get all their fields with the unused ones null
  (torch 2.1's dataclass serialization), ``schema_version`` becomes 1. What the old schema still
  says (every node with a single output) must come out unchanged, and the profile joined with it
  must be the one joined with the original.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from etscope import profile as P
from etscope.formats.etrecord import read_etrecord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
UPSTREAM = FIXTURES / "upstream" / "executorch_example_etrecord.bin"
REAL = FIXTURES / "real"

# Argument's fields in torch 2.1 (torch/_export/serde/schema.py of that release), all written.
_ARG_FIELDS = ("as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats", "as_string",
               "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type", "as_memory_format", "as_layout",
               "as_device", "as_bool", "as_bools", "as_sym_bool", "as_sym_bools", "as_graph",
               "as_optional_tensors", "as_custom_obj")
_SPEC_FIELDS = ("user_input", "parameter", "buffer", "tensor_constant", "custom_obj", "token")


def _pad(x):
    """Every one-key union written with all its fields, the others null (as torch 2.1 did)."""
    if isinstance(x, list):
        return [_pad(v) for v in x]
    if not isinstance(x, dict):
        return x
    out = {k: _pad(v) for k, v in x.items()}
    if len(out) == 1:
        (k,) = out
        fields = _ARG_FIELDS if k in _ARG_FIELDS else _SPEC_FIELDS if k in _SPEC_FIELDS else ()
        if fields:
            out = {f: out[k] if f == k else None for f in fields}
    return out


def to_schema1(program: dict) -> dict:
    doc = json.loads(json.dumps(program))
    g = doc["graph_module"]["graph"]
    for node in g["nodes"]:
        node.pop("name", None)
        node["inputs"] = _pad(node["inputs"])
        node["outputs"] = _pad(node["outputs"])
    g["inputs"], g["outputs"] = _pad(g["inputs"]), _pad(g["outputs"])
    sig = doc["graph_module"]["signature"]
    sig["input_specs"] = _pad(sig["input_specs"])
    doc["schema_version"] = 1
    doc.pop("verifiers", None)
    return doc


def _rewrite(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.startswith(("edge_dialect_exported_program/", "exported_program")) \
                    and data[:1] == b"{":
                data = json.dumps(to_schema1(json.loads(data))).encode()
            zout.writestr(info.filename, data)


def test_upstream_2023_example_reads():
    r = read_etrecord(UPSTREAM)
    assert r.methods == ["forward"] and r.debug_handle_map == {} and r.delegate_map == {}
    g = r.graph("forward")
    assert g.schema_version == "1" and g.name == "edge_dialect_exported_program"
    assert [(n.name, n.op) for n in g.nodes] == [("arg0_1", "placeholder"), ("arg1_1", "placeholder"),
                                                 ("aten_mul_tensor", "call_function"), ("output", "output")]
    mul = g.by_name["aten_mul_tensor"]
    assert mul.target == "aten.mul.Tensor" and mul.debug_handles == (2,) and mul.inputs == ("arg0_1", "arg1_1")
    assert mul.source == "model.py:18" and "input * other" in mul.stack_trace
    assert g.nodes[-1].inputs == ("aten_mul_tensor",)
    assert g.generated_names == [] and r.warnings == []
    # the extra program is decoded only when asked for, and reads too
    assert [n.name for n in r.extra_graphs["aten_dialect_output/forward"].nodes] == ["arg0_1", "arg1_1", "mul", "output"]
    assert dict(r.skipped_entries)["aten_dialect_output/forward_state_dict"].startswith("torch pickle")


def test_schema1_rewrite_of_a_real_llama_keeps_every_fact_it_holds(tmp_path):
    old = tmp_path / "llama_schema1.etrecord"
    _rewrite(REAL / "llama.etrecord", old)
    new_g = read_etrecord(REAL / "llama.etrecord").graph()
    r = read_etrecord(old)
    old_g = r.graph()
    assert old_g.schema_version == "1"
    assert len(old_g.nodes) == len(new_g.nodes) == 314
    named = 0
    for a, b in zip(old_g.nodes, new_g.nodes):
        assert (a.op, a.target, a.debug_handles, a.source, a.nn_module_stack, a.input_kind) == \
               (b.op, b.target, b.debug_handles, b.source, b.nn_module_stack, b.input_kind)
        if a.name == b.name:
            named += 1
            assert a.inputs == b.inputs
        else:  # no single output: not in the file; named by FX's rule, flagged
            assert a.name in old_g.generated_names and b.target == "aten._assert_scalar.default"
    no_single_output = [b for b in new_g.call_nodes if len(b.outputs) != 1]
    assert len(no_single_output) == 18  # the llama's _assert_scalar nodes (no outputs)
    assert named == 314 - 18 and len(old_g.generated_names) == 18
    assert old_g.generated_names[:2] == ["_assert_scalar_default", "_assert_scalar_default_1"]
    assert any("18 node(s) without a single output" in w for w in r.warnings)
    # the profile joined with the old-schema record is the one joined with the original
    a = P.load(REAL / "llama.etdump", old, REAL / "llama.pte")
    b = P.load(REAL / "llama.etdump", REAL / "llama.etrecord", REAL / "llama.pte")
    for ia, ib in zip(a.instructions.values(), b.instructions.values()):
        assert (ia.nodes, ia.op_types, ia.sources) == (ib.nodes, ib.op_types, ib.sources)
    assert sum(len(i.nodes) for i in a.instructions.values()) > 200


def test_unused_entries_are_not_decoded(tmp_path):
    """A program in an unknown structure must not fail a read that does not need it."""
    f = tmp_path / "future_extra.etrecord"
    with zipfile.ZipFile(UPSTREAM) as zin, zipfile.ZipFile(f, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "aten_dialect_output/forward":
                data = b'{"graph_module": {"graph": {"nodes": [{"what": "a future schema"}]}}}'
            zout.writestr(info.filename, data)
    r = read_etrecord(f)
    assert r.lowering_input("forward").name == "edge_dialect_exported_program"  # the edge program suffices
    assert r.warnings == []
    assert r.extra_graphs == {} and "cannot be read" in r.warnings[0]  # asked for: left out, said why


def test_schema1_multi_output_and_symbolic_nodes(tmp_path):
    """A split with two outputs (no name in the file: FX's name from the op, lower-cased overload),
    a sym_size named by its symbolic output, and a consumer of the split's second output."""
    def t(name):
        return _pad({"as_tensor": {"name": name}})
    nodes = [
        {"target": "torch.ops.aten.sym_size.int", "inputs": [{"name": "self", "arg": t("x")}],
         "outputs": [_pad({"as_sym_int": {"as_name": "sym_size", "as_int": None}})], "metadata": {}},
        {"target": "executorch.exir.dialects.edge.ops.aten.split.Tensor", "inputs": [{"name": "self", "arg": t("x")}],
         "outputs": [_pad({"as_tensors": [{"name": "getitem"}, {"name": "getitem_1"}]})],
         "metadata": {"debug_handle": "3"}},
        {"target": "executorch.exir.dialects.edge.ops.aten.relu.default",
         "inputs": [{"name": "self", "arg": t("getitem_1")}], "outputs": [t("aten_relu_default")],
         "metadata": {"debug_handle": "4"}},
    ]
    prog = {"graph_module": {"graph": {"inputs": [t("x")], "outputs": [t("aten_relu_default")], "nodes": nodes},
                             "signature": {"input_specs": [_pad({"user_input": {"arg": t("x")}})]}},
            "schema_version": 1}
    f = tmp_path / "old.etrecord"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("ETRECORD_V0", "")
        z.writestr("edge_dialect_exported_program", json.dumps(prog))
        z.writestr("debug_handle_map", json.dumps({"forward": {"0": [3, 4]}}))
    r = read_etrecord(f)
    g = r.graph()
    assert [n.name for n in g.nodes] == ["x", "sym_size", "split_tensor", "aten_relu_default", "output"]
    assert g.by_name["split_tensor"].outputs == ("getitem", "getitem_1")
    assert g.by_name["aten_relu_default"].inputs == ("split_tensor",)
    assert g.by_name["sym_size"].inputs == ("x",) and g.by_name["x"].input_kind == "user_input"
    assert g.generated_names == ["split_tensor"]
    nodes, _ = r.nodes_by_instruction("forward")
    assert [n.name for n in nodes[0]] == ["split_tensor", "aten_relu_default"]
    assert "1 node(s) without a single output (split_tensor)" in r.warnings[0]
