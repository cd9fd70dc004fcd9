""".pte reader: real programs (checked against executorch) and hand-built / damaged ones.

Expected values for the real files were obtained once with executorch 1.5.1 (not needed here):
``_flatbuffer_to_program(data[:eh.program_size])`` from ``executorch.exir._serialize`` plus
``_get_extended_header(data)``; every instruction kind, op index, delegate index, args, operator
name/overload, delegate id/data reference, segment and non-const buffer size matched this reader.
"""
from __future__ import annotations

import random
import struct
from pathlib import Path

import flatbuffers
import pytest

from etscope.errors import FormatError
from etscope.formats.pte import parse_pte, read_pte, spec_value_text

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CNN = REAL / "cnn.pte"
LLAMA = REAL / "llama.pte"

# delegate-call instruction ids of llama.pte (also the keys of llama.etrecord's delegate_map)
LLAMA_DELEGATE_IDS = [13, 39, 45, 52, 57, 64, 69, 79, 81, 83, 85, 87, 93, 100, 105, 112, 117, 127,
                      129, 131, 133, 135, 137]


# ---- real files ---------------------------------------------------------------------------------

def test_cnn_program():
    p = read_pte(CNN)
    assert p.version == 0
    assert p.extended_header and p.program_size == 1888 and p.segment_base_offset == 1920
    assert p.file_size == CNN.stat().st_size
    assert [m.name for m in p.methods] == ["forward"]
    m = p.method("forward")
    assert m.chains == 1
    assert m.operators == ["aten::cumsum.out"]
    assert m.non_const_buffer_sizes == [0, 12400] and m.planned_memory_bytes == 12400
    assert (m.inputs, m.outputs, m.num_values) == (1, 1, 5)
    d, k = m.instructions
    assert (d.index, d.kind, d.delegate_index, d.backend_id, d.args) == (0, "delegate", 0, "XnnpackBackend", (0, 1))
    assert (k.index, k.kind, k.op_index, k.operator, k.args) == (1, "kernel", 0, "aten::cumsum.out", (1, 3, 4, 2, 2))
    (dl,) = m.delegates
    assert (dl.backend_id, dl.location, dl.data_index, dl.blob_size, dl.compile_specs) == \
        ("XnnpackBackend", "segment", 1, 2432, {})
    blob = CNN.read_bytes()[dl.blob_offset:dl.blob_offset + dl.blob_size]
    assert blob[4:8] == b"XH00"  # XNNPACK's flatbuffer header magic: the offset is right
    assert m.delegate_calls == [d] and m.kernel_calls == [k]


def test_llama_program():
    p = read_pte(LLAMA)
    m = p.method("forward")
    assert len(m.instructions) == 142 and [i.index for i in m.instructions] == list(range(142))
    assert [i.index for i in m.delegate_calls] == LLAMA_DELEGATE_IDS
    assert {i.backend_id for i in m.delegate_calls} == {"XnnpackBackend"}
    assert len(m.delegates) == 23
    assert [d.data_index for d in m.delegates] == list(range(1, 24))  # segment 0: constants
    assert all(d.location == "segment" for d in m.delegates)
    kernels = [i.operator for i in m.kernel_calls]
    assert kernels.count("aten::index_put.out") == 4
    assert kernels[-4:] == ["aten::copy_"] * 4  # empty overload: no trailing dot
    assert {"aten::embedding.out", "aten::mean.out", "aten::where.self_out",
            "executorch_prim::et_view.default", "dim_order_ops::_to_dim_order_copy.out"} <= set(kernels)
    assert m.non_const_buffer_sizes == [0, 336640]
    assert (m.inputs, m.outputs, m.num_values) == (2, 1, 480)
    assert len(p.segments) == 39 and p.constant_segment == 0 and p.constant_bytes == 73988
    assert len(p.named_data) == 15
    data = LLAMA.read_bytes()
    assert {data[d.blob_offset + 4:d.blob_offset + 8] for d in m.delegates} == {b"XH00"}


def test_parse_from_memory_matches_file():
    data = CNN.read_bytes()
    assert parse_pte(data, "x.pte").methods == read_pte(CNN).methods
    assert parse_pte(memoryview(data), "x.pte").program_size == 1888


def test_file_not_modified(tmp_path):
    before = CNN.read_bytes()
    read_pte(CNN)
    assert CNN.read_bytes() == before


# ---- damaged files --------------------------------------------------------------------------------

def _raises(path_or_data, *words):
    with pytest.raises(FormatError) as ei:
        if isinstance(path_or_data, (bytes, bytearray)):
            parse_pte(path_or_data, "bad.pte")
        else:
            read_pte(path_or_data)
    msg = str(ei.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    return ei.value


def test_zero_length(tmp_path):
    f = tmp_path / "empty.pte"
    f.write_bytes(b"")
    e = _raises(f, str(f), "empty")
    assert e.file == str(f)
    _raises(b"", "bad.pte")


def test_missing_and_directory(tmp_path):
    _raises(tmp_path / "nope.pte", "nope.pte")
    _raises(tmp_path, str(tmp_path))


def test_wrong_identifier(tmp_path):
    f = tmp_path / "x.pte"
    f.write_bytes((REAL / "cnn.etdump").read_bytes())  # a size-prefixed ED00 flatbuffer
    _raises(f, str(f), "identifier")
    data = bytearray(CNN.read_bytes())
    data[4:8] = b"ET11"
    _raises(bytes(data), "bad.pte", "ET11")


@pytest.mark.parametrize("cut", [3, 7, 12, 30, 500, 1887, 1888, 1921, 50000, 106791])
def test_truncated(tmp_path, cut):
    f = tmp_path / "cut.pte"
    f.write_bytes(CNN.read_bytes()[:cut])
    _raises(f, str(f))


def test_header_inconsistent():
    data = bytearray(CNN.read_bytes())
    data[24:32] = struct.pack("<Q", 100)  # segment base inside the program
    _raises(bytes(data), "segment base")
    data = bytearray(CNN.read_bytes())
    data[12:16] = struct.pack("<I", 8)  # header length too small
    _raises(bytes(data), "extended header")


def test_random_corruption_only_raises_format_error():
    rng = random.Random(1234)
    base = CNN.read_bytes()
    for _ in range(400):
        data = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(0, 1888)  # inside the flatbuffer
            data[pos] = rng.randrange(256)
        try:
            parse_pte(bytes(data), "fuzz.pte")
        except FormatError as e:
            assert str(e).startswith("fuzz.pte: ")


# ---- hand-built programs (flatbuffers.Builder, schema/program.fbs) -----------------------------------

def _vec_offsets(b, offs):
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _vec_i32(b, xs):
    b.StartVector(4, len(xs), 4)
    for x in reversed(xs):
        b.PrependInt32(x)
    return b.EndVector()


def _vec_i64(b, xs):
    b.StartVector(8, len(xs), 8)
    for x in reversed(xs):
        b.PrependInt64(x)
    return b.EndVector()


def _table(b, fields):
    """fields: list of (slot, kind, value); kind in u8/i8/i32/u32/u64/off."""
    b.StartObject(max(s for s, _, _ in fields) + 1 if fields else 0)
    for slot, kind, val in fields:
        {"u8": b.PrependUint8Slot, "i8": b.PrependInt8Slot, "i32": b.PrependInt32Slot,
         "u32": b.PrependUint32Slot, "u64": b.PrependUint64Slot,
         "off": b.PrependUOffsetTRelativeSlot}[kind](slot, val, 0 if kind != "off" else 0)
    return b.EndObject()


def build_program(*, methods=None, inline=(), segments=(), instr_override=None, plans_repeat=1):
    """A small ExecuTorch program. Each method: dict(name, instrs, ops, delegates, frames)."""
    b = flatbuffers.Builder(1024)
    if methods is None:
        methods = [dict(
            name="forward",
            ops=[("aten::add", "out"), ("aten::copy_", "")],
            delegates=[("QnnBackend", 0, 0, [("qnn_compile_spec", b"\x10\x00\x00\x00QNNB\x01\xff"),
                                             ("soc_model", b"SM8650")])],
            instrs=[(1, [0, 1, 2]), (2, [0, 2]), (3, (4, 5)), (4, (6, 0)), (5, (7,)), (1, [1, 3])],
            frames=[[("model.py", 12, "forward")], [], [("a.py", 1, "f"), ("b.py", 2, "g")]],
        )]
    inline_offs = []
    for data in inline:
        b.StartVector(1, len(data), 16)
        for x in reversed(data):
            b.PrependUint8(x)
        inline_offs.append(_table(b, [(0, "off", b.EndVector())]))
    seg_offs = [_table(b, [(0, "u64", off), (1, "u64", size)]) for off, size in segments]
    plan_offs = []
    for m in methods:
        ops = [_table(b, [(0, "off", b.CreateString(n)), (1, "off", b.CreateString(o))]) for n, o in m["ops"]]
        dels = []
        for backend, loc, idx, specs in m["delegates"]:
            spec_offs = []
            for k, v in specs:
                key = b.CreateString(k)
                val = b.CreateByteVector(v)
                spec_offs.append(_table(b, [(0, "off", key), (1, "off", val)]))
            ref = _table(b, [(0, "i8", loc), (1, "u32", idx)])
            dels.append(_table(b, [(0, "off", b.CreateString(backend)), (1, "off", ref),
                                   (2, "off", _vec_offsets(b, spec_offs))]))
        instrs = []
        for kind, args in m["instrs"]:
            if kind in (1, 2):
                first = args[0] if kind == 1 else args[0]
                call = _table(b, [(0, "i32", first), (1, "off", _vec_i32(b, list(args[1:]) or [9]))])
            elif kind in (3, 4):
                call = _table(b, [(0, "i32", args[0]), (1, "i32", args[1])])
            else:
                call = _table(b, [(0, "i32", args[0])])
            instrs.append(_table(b, [(0, "u8", kind), (1, "off", call)]))
        if instr_override is not None:
            instrs = instr_override(b, instrs)
        framelists = []
        for frs in m.get("frames", []):
            fr_offs = [_table(b, [(0, "off", b.CreateString(fn)), (1, "i32", ln), (2, "off", b.CreateString(nm))])
                       for fn, ln, nm in frs]
            framelists.append(_table(b, [(0, "off", _vec_offsets(b, fr_offs))]))
        chain_fields = [(2, "off", _vec_offsets(b, instrs))]
        if framelists:
            chain_fields.append((3, "off", _vec_offsets(b, framelists)))
        chain = _table(b, chain_fields)
        name = b.CreateString(m["name"])
        plan_offs.append(_table(b, [
            (0, "off", name), (2, "off", _vec_offsets(b, [])), (3, "off", _vec_i32(b, [0])),
            (4, "off", _vec_i32(b, [3])), (5, "off", _vec_offsets(b, [chain])),
            (6, "off", _vec_offsets(b, ops)), (7, "off", _vec_offsets(b, dels)),
            (8, "off", _vec_i64(b, [0, 4096])),
        ]))
    fields = [(0, "u32", 7), (1, "off", _vec_offsets(b, plan_offs * plans_repeat))]
    if inline_offs:
        fields.append((3, "off", _vec_offsets(b, inline_offs)))
    if seg_offs:
        fields.append((4, "off", _vec_offsets(b, seg_offs)))
    b.Finish(_table(b, fields), file_identifier=b"ET12")
    return bytes(b.Output())


def with_extended_header(fb: bytes, segment_data: bytes, pad_to=16) -> bytes:
    """Splice an "eh00" header after the identifier, as exir/_serialize/_program.py does."""
    header_len = 32
    program_size = len(fb) + header_len
    base = (program_size + pad_to - 1) // pad_to * pad_to
    header = b"eh00" + struct.pack("<IQQQ", header_len, program_size, base, len(segment_data))
    root = struct.unpack_from("<I", fb, 0)[0] + header_len
    out = struct.pack("<I", root) + fb[4:8] + header + fb[8:]
    return out + b"\0" * (base - len(out)) + segment_data


def test_built_program_inline_delegate_and_all_instruction_kinds():
    data = build_program(inline=[b"QNNBLOB!" * 5])
    p = parse_pte(data, "built.pte")
    assert not p.extended_header and p.segments == [] and p.version == 7
    m = p.methods[0]
    assert m.operators == ["aten::add.out", "aten::copy_"]
    assert [i.kind for i in m.instructions] == ["kernel", "delegate", "move", "jump", "free", "kernel"]
    k, d, mv, j, fr, k2 = m.instructions
    assert (k.operator, k.args) == ("aten::add.out", (1, 2))
    assert (d.backend_id, d.delegate_index, d.args) == ("QnnBackend", 0, (2,))
    assert mv.args == (4, 5) and j.args == (6, 0) and fr.args == (7,)
    assert k2.operator == "aten::copy_"
    (dl,) = m.delegates
    assert (dl.location, dl.data_index, dl.blob_size) == ("inline", 0, 40)
    assert data[dl.blob_offset:dl.blob_offset + dl.blob_size] == b"QNNBLOB!" * 5
    assert dl.compile_specs["soc_model"] == b"SM8650"
    text = dl.compile_specs_text
    assert text["soc_model"] == "SM8650"
    assert text["qnn_compile_spec"].startswith("0x10000000")
    assert k.frames[0].filename == "model.py" and k.frames[0].lineno == 12
    assert d.frames == () and [f.name for f in mv.frames] == ["f", "g"] and j.frames == ()
    assert m.non_const_buffer_sizes == [0, 4096] and (m.inputs, m.outputs) == (1, 1)


def test_built_program_with_segments():
    blob = b"S" * 100
    fb = build_program(methods=[dict(name="forward", ops=[("aten::mul", "out")],
                                     delegates=[("XnnpackBackend", 1, 1, [])],
                                     instrs=[(2, [0, 0]), (1, [0, 0, 1])])],
                       segments=[(0, 0), (0, 100)])
    data = with_extended_header(fb, blob)
    p = parse_pte(data, "seg.pte")
    assert p.extended_header and len(p.segments) == 2
    dl = p.methods[0].delegates[0]
    assert dl.location == "segment" and dl.blob_size == 100
    assert data[dl.blob_offset:dl.blob_offset + 100] == blob
    with pytest.raises(FormatError, match="seg.pte: .*truncated"):
        parse_pte(data[:-1], "seg.pte")


def test_segments_without_header_rejected():
    fb = build_program(methods=[dict(name="f", ops=[], delegates=[], instrs=[])], segments=[(0, 4)])
    with pytest.raises(FormatError, match="extended header"):
        parse_pte(fb, "x.pte")


def test_bad_indices_rejected():
    bad_op = build_program(methods=[dict(name="f", ops=[("a", "")], delegates=[], instrs=[(1, [3, 0])])])
    with pytest.raises(FormatError, match="operator 3"):
        parse_pte(bad_op, "x.pte")
    bad_del = build_program(methods=[dict(name="f", ops=[], delegates=[], instrs=[(2, [0, 0])])])
    with pytest.raises(FormatError, match="delegate 0"):
        parse_pte(bad_del, "x.pte")
    bad_ref = build_program(methods=[dict(name="f", ops=[], delegates=[("B", 0, 5, [])], instrs=[])])
    with pytest.raises(FormatError, match="inline data 5"):
        parse_pte(bad_ref, "x.pte")


def test_unknown_instruction_kind_kept():
    """A union type from a newer schema is kept as "unknown_<n>", not an error."""
    fb = build_program(methods=[dict(name="f", ops=[], delegates=[], instrs=[(9, (1,))])])
    assert parse_pte(fb, "x.pte").methods[0].instructions[0].kind == "unknown_9"


def test_shared_tables_cannot_blow_up():
    """Many offsets to one table: a small file must not decode into millions of objects."""
    def repeat(b, instrs):
        return instrs * 3000
    data = build_program(methods=[dict(name="f", ops=[("a", "")], delegates=[], instrs=[(1, [0, 1])])],
                         instr_override=repeat, plans_repeat=300)
    assert len(data) < 40000
    with pytest.raises(FormatError, match="too many|share one execution plan"):
        parse_pte(data, "bomb.pte")


def test_methods_sharing_a_plan_table_are_refused_before_any_is_read():
    """The same plan listed 300 times (no instructions: nothing else charged the budget)."""
    data = build_program(methods=[dict(name="f", ops=[], delegates=[], instrs=[])], plans_repeat=300)
    with pytest.raises(FormatError, match="methods 0 and 1 share one execution plan"):
        parse_pte(data, "bomb.pte")


def test_spec_value_text():
    assert spec_value_text(b"hello") == "hello"
    assert spec_value_text(b"\x00\x01") == "0x0001"
    assert spec_value_text(bytes(100)).endswith("(100 bytes)")


def test_name_only_plans_count_as_methods_an_honest_file_could_hold():
    """80,000 plans of 12 bytes each (a name, nothing else) in 960 kB: each was read, and
    ``program --json`` wrote 25 MB at its CPU budget. A method is charged 8 items (an ExecutionPlan
    ExecuTorch writes takes well over 32 bytes): refused as too many."""
    import flatbuffers

    b = flatbuffers.Builder(1 << 20)
    name = b.CreateString("m")
    plans = []
    for _ in range(80_000):
        b.StartObject(9)
        b.PrependUOffsetTRelativeSlot(0, name, 0)
        plans.append(b.EndObject())
    b.StartVector(4, len(plans), 4)
    for p in reversed(plans):
        b.PrependUOffsetTRelative(p)
    vec = b.EndVector()
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(1, vec, 0)
    b.Finish(b.EndObject(), file_identifier=b"ET12")
    data = bytes(b.Output())
    with pytest.raises(FormatError, match="too many methods"):
        parse_pte(data, "plans.pte")
    # an honest program of many small methods is still read
    assert len(parse_pte(build_program(methods=[dict(name=f"m{i}", ops=[("a", "")], delegates=[], instrs=[(1, [0])])
                                                for i in range(300)]), "ok.pte").methods) == 300
