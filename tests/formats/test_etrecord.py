"""ETRecord reader: real records (checked against executorch) and hostile zips.

The expectations on the real files were checked once against executorch 1.5.1's own reader
(``executorch.devtools.etrecord.parse_etrecord``, not needed here): for the edge program and the
ATen ``exported_program`` of both files, node names and order, op kinds, targets, debug handles,
input nodes (through ``getitem``), stack traces, ``nn_module_stack`` and ``debug_handle_map``
matched the FX graphs it deserializes.
"""
from __future__ import annotations

import io
import json
import pickle
import re
import struct
import zipfile
from pathlib import Path

import pytest

from etscope.errors import FormatError
from etscope.formats.etrecord import (
    ZipLimits, normalise_target, parse_nn_module_stack, read_etrecord, source_of,
)
from etscope.formats.pte import read_pte

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CNN = REAL / "cnn.etrecord"
LLAMA = REAL / "llama.etrecord"


# ---- real files ---------------------------------------------------------------------------------

def test_cnn_entries_and_maps():
    r = read_etrecord(CNN)
    assert r.marker == "ETRECORD_V0"
    assert r.methods == ["forward"]
    assert set(r.entries) >= {"ETRECORD_V0", "debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map",
                              "export_graph_id", "exported_program", "edge_dialect_exported_program/forward"}
    skipped = dict(r.skipped_entries)
    assert skipped["edge_dialect_exported_program/forward_state_dict"].startswith("torch pickle")
    assert skipped["representative_inputs"].startswith("torch pickle")
    assert r.debug_handle_map == {"forward": {0: [1, 2, 3, 4, 5, 6, 7, 8], 1: [9]}}
    assert r.num_outs_map == {"forward": {0: 1}}
    info = r.delegate_map["forward"][0]
    assert info.name == "XnnpackBackend" and info.delegate_map == {}
    assert r.export_graph_id == 140387486089744


def test_cnn_graph():
    r = read_etrecord(CNN)
    g = r.graph("forward")
    assert g.name == "edge_dialect_exported_program/forward" and g.dialect == "EDGE"
    ops = [n.op for n in g.nodes]
    assert ops == ["placeholder"] * 7 + ["call_function"] * 9 + ["output"]
    cumsum = g.by_name["aten_cumsum_default"]
    assert cumsum.target == "aten.cumsum.default"
    assert cumsum.raw_target == "executorch.exir.dialects.edge.ops.aten.cumsum.default"
    assert cumsum.debug_handle == 9 and cumsum.debug_handles == (9,)
    assert cumsum.debug_handle in r.debug_handle_map["forward"][1]  # the cumsum kernel instruction
    assert g.by_debug_handle[9] == [cumsum]
    assert cumsum.source == "make_artifacts.py:49"  # innermost user frame, torch frames skipped
    assert cumsum.source_file.endswith("/models/make_artifacts.py") and cumsum.source_line == 49
    assert "torch.cumsum" in cumsum.stack_trace
    assert cumsum.inputs == ("aten_linear_default",)
    assert not cumsum.is_delegate_call
    conv = g.by_name["aten_convolution_default"]
    assert conv.inputs == ("x", "p_c1_weight", "p_c1_bias")
    assert conv.nn_module_stack == (("L__self__", ("", "__main__.SmallCNN")),
                                    ("140387503747408", ("c1", "torch.nn.modules.conv.Conv2d")))
    assert conv.module_path == "c1" and conv.module_type == "torch.nn.modules.conv.Conv2d"
    w = g.by_name["p_c1_weight"]
    assert (w.op, w.input_kind, w.target) == ("placeholder", "parameter", "c1.weight")
    assert g.by_name["x"].input_kind == "user_input"
    assert g.nodes[-1].inputs == ("aten_cumsum_default",)
    # the delegate instruction covers the 8 nodes before cumsum
    covered = [g.by_debug_handle[h][0].name for h in r.debug_handle_map["forward"][0]]
    assert covered[0] == "aten_convolution_default" and covered[-1] == "aten_linear_default"
    assert r.debug_handle_match("forward") == (9, 9)
    # executorch 1.x records the edge program before lowering: it is the backends' input
    assert r.lowering_input("forward") is g and g.delegate_calls == []


def test_cnn_aten_program():
    r = read_etrecord(CNN)
    ep = r.exported_program
    assert ep is not None and ep.name == "exported_program"
    n = ep.by_name["cumsum"]
    assert n.target == "aten.cumsum.default" and n.raw_target == "torch.ops.aten.cumsum.default"
    assert n.debug_handles == ()
    assert n.source == "make_artifacts.py:49"


def test_cnn_pte_and_etrecord_agree():
    """Instruction ids in the ETRecord maps are those of the .pte's chain 0."""
    r = read_etrecord(CNN)
    m = read_pte(REAL / "cnn.pte").method("forward")
    g = r.graph("forward")
    for ins in m.instructions:
        nodes = [g.by_debug_handle[h][0] for h in r.debug_handle_map["forward"][ins.index]]
        if ins.kind == "kernel":
            assert ins.operator == "aten::cumsum.out" and [n.target for n in nodes] == ["aten.cumsum.default"]
        else:
            assert r.delegate_map["forward"][ins.index].name == ins.backend_id == "XnnpackBackend"


def test_llama():
    r = read_etrecord(LLAMA)
    g = r.graph()
    assert len(g.nodes) == 314 and len(g.call_nodes) == 277
    assert r.debug_handle_match() == (127, 127)
    pte = read_pte(REAL / "llama.pte").method("forward")
    assert sorted(r.delegate_map["forward"]) == [i.index for i in pte.delegate_calls]
    assert {d.name for d in r.delegate_map["forward"].values()} == {"XnnpackBackend"}
    assert r.debug_handle_map["forward"][13] == [16] and r.debug_handle_map["forward"][4] == [1]
    puts = [n for n in g.call_nodes if n.target == "aten.index_put.default"]
    assert len(puts) == 4
    assert puts[0].source == "attention.py:135"  # inside executorch/examples: user code, kept
    assert puts[0].module_path == "m.layers.0.attention"
    # debug handles may be shared by several nodes
    assert len(g.by_debug_handle[29]) == 4
    # sym ints are inputs too
    assert "sym_size" in g.by_name["aten_view_copy_default_4"].inputs
    # a trace with only torch frames falls back to the innermost one
    assert g.by_name["sym_size"].source == "runtime_assert.py:24"
    assert g.by_name["ge"].target == "operator.ge"
    buffers = [p.target for p in g.nodes if p.input_kind == "buffer"]
    assert "m.layers.0.attention.kv_cache.k_cache" in buffers
    assert g.nodes[-1].inputs[-1] == "aten_linear_default_14"


def test_file_not_modified():
    before = CNN.read_bytes()
    read_etrecord(CNN)
    assert CNN.read_bytes() == before


# ---- helpers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, norm", [
    ("torch.ops.aten.cumsum.default", "aten.cumsum.default"),
    ("executorch.exir.dialects.edge.ops.aten.cumsum.default", "aten.cumsum.default"),
    ("executorch.exir.dialects.edge.ops.dim_order_ops._clone_dim_order.default", "dim_order_ops._clone_dim_order.default"),
    ("torch.ops.higher_order.executorch_call_delegate", "higher_order.executorch_call_delegate"),
    ("_operator.getitem", "operator.getitem"),
    ("", ""), (None, None),
])
def test_normalise_target(raw, norm):
    assert normalise_target(raw) == norm


def test_source_of():
    trace = ('  File "/x/site-packages/torch/nn/modules/module.py", line 1, in _call_impl\n'
             '  File "/home/u/model.py", line 7, in forward\n'
             '  File "/x/site-packages/torch/_ops.py", line 9, in __call__\n')
    assert source_of(trace) == ("model.py:7", "/home/u/model.py", 7)
    assert source_of(None) == (None, None, None) and source_of("garbage") == (None, None, None)


def test_nn_module_stack_with_brackets():
    s = "L__self__,,M;L['self'].layers[0],layers.0,Block"
    assert parse_nn_module_stack(s) == (("L__self__", ("", "M")), ("L['self'].layers[0]", ("layers.0", "Block")))
    assert parse_nn_module_stack(None) == ()


# ---- synthetic ETRecords ------------------------------------------------------------------------

def _node(name, target, inputs, outputs, **meta):
    return {"name": name, "target": target, "inputs": inputs, "outputs": outputs,
            "metadata": {k: v for k, v in meta.items()}}


def _t(name):
    return {"as_tensor": {"name": name}}


def _program(nodes, inputs=("x",), outputs=("out",)):
    return {"graph_module": {"graph": {"inputs": [_t(n) for n in inputs], "outputs": [_t(n) for n in outputs],
                                       "nodes": nodes},
                             "signature": {"input_specs": [{"user_input": {"arg": _t(n)}} for n in inputs]}},
            "dialect": "EDGE"}


def _zip(path, entries, marker=True, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as z:
        if marker:
            z.writestr("ETRECORD_V0", "")
        for name, data in entries.items():
            z.writestr(name, data if isinstance(data, (bytes, str)) else json.dumps(data))
    return path


def test_post_lowering_graph_with_delegate_call(tmp_path):
    """Shape of an executorch_call_delegate node as exir/serde/serialize.py writes it."""
    sub = _program([_node("aten_linear_default", "executorch.exir.dialects.edge.ops.aten.linear.default",
                          [{"name": "input", "arg": _t("x")}], [_t("aten_linear_default")], debug_handle="1"),
                    _node("aten_relu_default_3", "executorch.exir.dialects.edge.ops.aten.relu.default",
                          [{"name": "self", "arg": _t("aten_linear_default")}], [_t("aten_relu_default_3")],
                          debug_handle="2")],
                   outputs=("aten_relu_default_3",))
    lowered = {"backend_id": "QnnBackend", "processed_bytes": "QUJDRA==",
               "compile_specs": [{"key": "qnn_compile_spec", "value": "AAEC"}],
               "original_module": sub, "original_state_dict": "", "original_constants": "",
               "named_data_store": None}
    top = _program([
        _node("executorch_call_delegate", "torch.ops.higher_order.executorch_call_delegate",
              [{"name": "lowered_module_0", "arg": {"as_string": json.dumps(lowered)}},
               {"name": "delegate_arg_0", "arg": _t("x")}],
              [{"as_tensors": [{"name": "getitem"}]}], debug_handle="4"),
        _node("aten_cumsum_default", "executorch.exir.dialects.edge.ops.aten.cumsum.default",
              [{"name": "self", "arg": _t("getitem")}, {"name": "dim", "arg": {"as_int": 1}}],
              [_t("aten_cumsum_default")], debug_handle="3"),
    ], outputs=("aten_cumsum_default",))
    f = _zip(tmp_path / "post.etrecord", {
        "edge_dialect_exported_program/forward": top,
        "debug_handle_map": {"forward": {"0": [1, 2], "1": 3}},
        "delegate_map": {"forward": {"0": {"name": "QnnBackend", "delegate_map": {"7": [1], "conv": [2]}}}},
    })
    r = read_etrecord(f)
    g = r.graph()
    call = g.by_name["executorch_call_delegate"]
    assert call.is_delegate_call and call.inputs == ("x",) and call.outputs == ("getitem",)
    assert call.lowered.backend_id == "QnnBackend" and call.lowered.name == "lowered_module_0"
    assert call.lowered.processed_size == 4 and call.lowered.compile_specs == {"qnn_compile_spec": b"\x00\x01\x02"}
    assert [n.name for n in call.lowered.graph.call_nodes] == ["aten_linear_default", "aten_relu_default_3"]
    assert g.by_name["aten_cumsum_default"].inputs == ("executorch_call_delegate",)
    assert g.delegate_calls == [call]
    assert r.lowering_input() is None  # no pre-lowering program recorded
    assert r.delegate_map["forward"][0].delegate_map == {7: [1], "conv": [2]}
    assert r.debug_handle_map["forward"] == {0: [1, 2], 1: [3]}

    # with a recorded extra program without delegate calls, that one is the backends' input
    f2 = _zip(tmp_path / "post2.etrecord", {
        "edge_dialect_exported_program/forward": top,
        "edge_after_transform/forward": sub,
        "debug_handle_map": {"forward": {"0": [1, 2]}},
    })
    r2 = read_etrecord(f2)
    assert r2.lowering_input("forward").name == "edge_after_transform/forward"
    assert "aten_relu_default_3" in r2.lowering_input().by_name


def test_old_single_program_format_and_list_handles(tmp_path):
    prog = _program([_node("a", "torch.ops.aten.relu.default", [{"name": "self", "arg": _t("x")}], [_t("out")],
                           debug_handle="[5, 6]")])
    f = _zip(tmp_path / "old.etrecord", {"edge_dialect_exported_program": prog,
                                         "debug_handle_map": {"main": {"0": [5, 6]}}})
    r = read_etrecord(f)
    assert list(r.graphs) == ["main"]
    n = r.graph("main").by_name["a"]
    assert n.debug_handles == (5, 6) and n.debug_handle == 5
    assert r.graph("main").by_debug_handle[6] == [n]
    with pytest.raises(FormatError, match="no edge program for method 'forward'"):
        r.graph("forward")


# ---- hostile and broken inputs ---------------------------------------------------------------------

class _Evil:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_pickles_are_never_loaded(tmp_path):
    pwned = tmp_path / "pwned"
    evil = pickle.dumps(_Evil(str(pwned)))
    assert not pwned.exists()
    prog = _program([_node("a", "torch.ops.aten.relu.default", [{"name": "self", "arg": _t("x")}], [_t("out")],
                           debug_handle="1")])
    f = _zip(tmp_path / "evil.etrecord", {
        "edge_dialect_exported_program/forward": prog,
        "edge_dialect_exported_program/forward_state_dict": evil,
        "edge_dialect_exported_program/forward_constants": evil,
        "exported_program_example_inputs": evil,
        "reference_outputs": evil,
        "representative_inputs": evil,
        "extra/forward": evil,           # unknown graph_map-like entry holding a pickle
        "some_other_entry": evil,
        "debug_handle_map": {"forward": {"0": 1}},
    })
    r = read_etrecord(f)
    assert not pwned.exists()
    skipped = dict(r.skipped_entries)
    assert "reference_outputs" in skipped and "extra/forward" in skipped and "some_other_entry" in skipped
    assert r.extra_graphs == {}
    # a pickle where JSON is expected is a format error, still never executed
    f2 = _zip(tmp_path / "evil2.etrecord", {"debug_handle_map": evil})
    with pytest.raises(FormatError, match="not valid JSON"):
        read_etrecord(f2)
    assert not pwned.exists()


def test_path_traversal_names_ignored(tmp_path):
    prog = _program([])
    f = _zip(tmp_path / "trav.etrecord", {
        "../../evil": "{}",
        "/abs/evil": "{}",
        "edge_dialect_exported_program/../../../x": prog,
        "edge_dialect_exported_program/forward": prog,
        "a\\..\\b": "{}",
    })
    cwd_before = set(Path(".").iterdir())
    r = read_etrecord(f)
    assert list(r.graphs) == ["forward"]
    reasons = dict(r.skipped_entries)
    assert reasons["../../evil"] == "path traversal" and reasons["/abs/evil"] == "absolute path"
    assert reasons["edge_dialect_exported_program/../../../x"] == "path traversal"
    assert "a\\..\\b" in reasons
    assert set(Path(".").iterdir()) == cwd_before and sorted(p.name for p in tmp_path.iterdir()) == ["trav.etrecord"]


def test_zip_bomb_rejected(tmp_path):
    bomb = b"{" + b" " * (20 << 20) + b"}"  # 20 MB that deflates to ~20 KB
    f = _zip(tmp_path / "bomb.etrecord", {"edge_dialect_exported_program/forward": bomb},
             compression=zipfile.ZIP_DEFLATED)
    with pytest.raises(FormatError, match="compression ratio") as ei:
        read_etrecord(f)
    assert str(ei.value).startswith(str(f))
    # a size cap applies even to stored (uncompressed) entries
    f2 = _zip(tmp_path / "big.etrecord", {"debug_handle_map": b"{" + b" " * 5000 + b"}"})
    with pytest.raises(FormatError, match="more than 1000 bytes"):
        read_etrecord(f2, ZipLimits(max_entry_bytes=1000))


def test_lying_header_sizes(tmp_path):
    """Central directory and local header claim 10 bytes; the data inflates to 2 MB."""
    payload = b"{" + b" " * (2 << 20) + b"}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ETRECORD_V0", "")
        z.writestr("debug_handle_map", payload)
    data = bytearray(buf.getvalue())
    size = struct.pack("<I", len(payload))
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header, central directory
        pos = 0
        while (pos := data.find(sig, pos)) >= 0:
            if data[pos + off:pos + off + 4] == size:
                data[pos + off:pos + off + 4] = struct.pack("<I", 10)
            pos += 4
    f = tmp_path / "liar.etrecord"
    f.write_bytes(bytes(data))
    with pytest.raises(FormatError):
        read_etrecord(f)


def test_too_many_entries(tmp_path):
    f = tmp_path / "many.etrecord"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("ETRECORD_V0", "")
        for i in range(10_000):
            z.writestr(f"e{i}", b"")
    with pytest.raises(FormatError, match="10001 entries"):
        read_etrecord(f)
    with pytest.raises(FormatError, match="entries"):
        read_etrecord(_zip(tmp_path / "few.etrecord", {f"e{i}": "" for i in range(20)}), ZipLimits(max_entries=10))


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"this is not a zip at all", "not a zip"),
    ("cnn.pte", "not a zip"),
], ids=["empty", "text", "pte"])
def test_not_a_zip(tmp_path, content, words):
    f = tmp_path / "x.etrecord"
    f.write_bytes(content if isinstance(content, bytes) else (REAL / content).read_bytes())
    with pytest.raises(FormatError, match=words) as ei:
        read_etrecord(f)
    assert ei.value.file == str(f) and "\n" not in str(ei.value)


def test_missing_file_and_marker(tmp_path):
    with pytest.raises(FormatError, match="nope.etrecord"):
        read_etrecord(tmp_path / "nope.etrecord")
    with pytest.raises(FormatError, match="ETRECORD_V0"):
        read_etrecord(_zip(tmp_path / "nomarker.etrecord", {"debug_handle_map": "{}"}, marker=False))


@pytest.mark.parametrize("entries, words", [
    ({"debug_handle_map": "{not json"}, "not valid JSON"),
    ({"debug_handle_map": "[" * 100_000 + "]" * 100_000}, "not valid JSON"),
    ({"debug_handle_map": '{"forward": {"zero": 1}}'}, "not an instruction id"),
    ({"debug_handle_map": '{"forward": {"0": "x"}}'}, "not an integer"),
    ({"debug_handle_map": '{"forward": [1]}'}, "expected an object"),
    ({"instruction_id_to_num_outs_map": '{"forward": {"0": "1"}}'}, "not an integer"),
    ({"delegate_map": '{"forward": {"0": 5}}'}, "not an object"),
])
def test_malformed_content(tmp_path, entries, words):
    f = _zip(tmp_path / "m.etrecord", entries)
    with pytest.raises(FormatError, match=words) as ei:
        read_etrecord(f)
    assert ei.value.file == str(f) and "\n" not in str(ei.value)


@pytest.mark.parametrize("program, words", [
    ('{"graph_module": 3}', "expected an object"),
    ('{"graph_module": {"graph": {"nodes": [{"inputs": []}]}}}', "has no name"),
    ('{"graph_module": {"graph": {"nodes": 5}}, "schema_version": {"major": 9, "minor": 1}}',
     r"schema 9\.1\) cannot be read \(entry .*: nodes: expected a list"),
])
def test_unreadable_graph_is_left_out_with_a_warning(tmp_path, program, words):
    """Valid JSON in a structure the reader cannot follow (another torch.export schema): the maps
    still count, the graph is absent and the warning says why; asking for it explicitly is an error."""
    f = _zip(tmp_path / "m.etrecord", {"edge_dialect_exported_program/forward": program,
                                        "debug_handle_map": {"forward": {"0": [1]}}})
    r = read_etrecord(f)
    assert r.debug_handle_map == {"forward": {0: [1]}} and r.methods == ["forward"]
    assert r.warnings == []                      # nothing decoded yet
    assert r.graphs.get("forward") is None and "forward" not in r.graphs
    assert len(r.warnings) == 1 and re.search(words, r.warnings[0])
    with pytest.raises(FormatError, match=words) as ei:
        r.graph("forward")
    assert ei.value.file == str(f) and "\n" not in str(ei.value)


def test_damaged_graph_json_is_an_error_when_used(tmp_path):
    f = _zip(tmp_path / "m.etrecord", {"edge_dialect_exported_program/forward": b'{"a": "\xff\xfe"}',
                                        "exported_program": b"{not json"})
    r = read_etrecord(f)  # neither entry decoded yet
    with pytest.raises(FormatError, match="not valid JSON") as ei:
        r.graphs.get("forward")
    assert ei.value.file == str(f)


def test_damaged_zip_data(tmp_path):
    data = bytearray(CNN.read_bytes())
    pos = data.find(b'{"graph_module"')  # stored entry: flip a byte inside the JSON
    data[pos + 100] ^= 0xFF
    f = tmp_path / "crc.etrecord"
    f.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="crc.etrecord"):
        read_etrecord(f)
    # truncated: the real central directory is gone; zipfile may then find the end record of a
    # torch.save archive stored inside (state dicts are zips) and list its entries instead
    f.write_bytes(CNN.read_bytes()[:150_000])
    with pytest.raises(FormatError, match="not a zip|ETRECORD_V0"):
        read_etrecord(f)
