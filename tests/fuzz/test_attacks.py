"""Hand-made hostile inputs, one per known attack, each checked against the reader contract (a
result or FormatError, within 5 s/MB and 50x input + 50 MB): files claiming billions of items,
shared tables, zip bombs and compressible JSON, pickles, path traversal, deep nesting, huge
numbers, algorithmic-complexity (ReDoS) strings; and how input files are opened.
"""
from __future__ import annotations

import builtins
import io
import json
import mmap
import os
import pickle
import re
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

import fuzz_harness as H
from fuzz_strategies import contract, evil_pickle

from etscope.errors import FormatError

# ---- flatbuffers: every offset/length field overwritten -------------------------------------------------

SMALL_ETDUMP = H.build_etdump([
    dict(name="Default", allocators=["a"], events=[("P", "Method::init", -1, 0, None, None, None, 1, 2)]),
    dict(name="Execute", events=[("P", "Method::execute", -1, 0, None, None, None, 5, 50),
                                 ("P", None, 0, 0, None, "Convolution (NHWC, F32) IGEMM #1", b"\x01", 6, 9),
                                 ("P", "DELEGATE_CALL", 0, 0, None, None, None, 5, 40),
                                 ("A", 0, 4096),
                                 ("D", "x", 0, 1, None, None, (5, 6, [1, 8, 64]))]),
])
HUGE = (0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x3FFFFFFF, 0xFFFFFFFC)


def test_small_etdump_reads():
    from etscope.formats.etdump import parse_etdump

    d = parse_etdump(SMALL_ETDUMP)
    assert d.event_count == 6 and len(SMALL_ETDUMP) < 1000


@pytest.mark.parametrize("value", HUGE + (0, 1, 4), ids=hex)
def test_every_etdump_word_overwritten(value):
    """A few hundred bytes cannot claim 4 billion runs, events, strings or dims: each aligned word
    of a small ETDump set to ``value`` in turn (memory measured for the huge values)."""
    for pos in range(0, len(SMALL_ETDUMP) - 3, 4):
        data = bytearray(SMALL_ETDUMP)
        struct.pack_into("<I", data, pos, value)
        contract("etdump", bytes(data), memory=value in HUGE[:2])


def test_hundred_byte_file_cannot_claim_four_billion_events():
    from etscope.formats.etdump import parse_etdump

    tiny = H.build_etdump([dict(name=None, events=[("P", None, None, None, None, None, None, None, None)])])
    assert len(tiny) <= 128
    for pos in range(0, len(tiny) - 3, 4):
        if struct.unpack_from("<I", tiny, pos)[0] != 1:
            continue                      # the vector lengths of a one-run, one-event file are 1
        data = bytearray(tiny)
        struct.pack_into("<I", data, pos, 0xFFFFFFFF)
        assert contract("etdump", bytes(data), memory=True) == "error"
        with pytest.raises(FormatError, match="at byte|elements|past the end|out of bounds"):
            parse_etdump(bytes(data))


def test_every_pte_word_overwritten():
    seed = H.REAL / "gen_loop.pte"
    if not seed.exists():
        pytest.skip("gen_loop.pte missing")
    base = seed.read_bytes()
    end = H.pte_focus(base) or len(base)
    for pos in range(0, min(end, 2500) - 3, 4):
        for value in (0xFFFFFFFF, 0x7FFFFFFF):
            data = bytearray(base)
            struct.pack_into("<I", data, pos, value)
            contract("pte", bytes(data), memory=value == 0xFFFFFFFF)


def _shared_etdump(runs: int, events: int) -> bytes:
    """``runs`` RunData entries pointing at one RunData whose ``events`` entries point at one Event."""
    import flatbuffers

    b = flatbuffers.Builder(1024)
    name = b.CreateString("Method::execute")
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependUint64Slot(6, 5, 0)
    b.PrependUint64Slot(7, 9, 0)
    pe = b.EndObject()
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(0, pe, 0)
    ev = b.EndObject()
    b.StartVector(4, events, 4)
    for _ in range(events):
        b.PrependUOffsetTRelative(ev)
    evs = b.EndVector()
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(3, evs, 0)
    rd = b.EndObject()
    b.StartVector(4, runs, 4)
    for _ in range(runs):
        b.PrependUOffsetTRelative(rd)
    rds = b.EndVector()
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(1, rds, 0)
    root = b.EndObject()
    b.FinishSizePrefixed(root, file_identifier=b"ED00")
    return bytes(b.Output())


@pytest.mark.parametrize("runs, events", [(2000, 2000), (3000, 1), (1, 3000), (100, 100)])
def test_shared_tables_cannot_multiply_events(runs, events):
    from etscope.formats.etdump import parse_etdump

    data = _shared_etdump(runs, events)
    contract("etdump", data, memory=True)
    try:
        d = parse_etdump(data)
    except FormatError:
        return
    limit = len(data) // 4 + 64
    assert d.event_count <= limit and len(d.runs) <= limit


def _shared_allocators_etdump(runs: int, allocators: int) -> bytes:
    """``runs`` RunData entries pointing at one RunData whose allocators vector has ``allocators``
    entries pointing at one Allocator."""
    import flatbuffers

    b = flatbuffers.Builder(1024)
    name = b.CreateString("a")
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    al = b.EndObject()
    b.StartVector(4, allocators, 4)
    for _ in range(allocators):
        b.PrependUOffsetTRelative(al)
    als = b.EndVector()
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(2, als, 0)
    rd = b.EndObject()
    b.StartVector(4, runs, 4)
    for _ in range(runs):
        b.PrependUOffsetTRelative(rd)
    rds = b.EndVector()
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(1, rds, 0)
    root = b.EndObject()
    b.FinishSizePrefixed(root, file_identifier=b"ED00")
    return bytes(b.Output())


@pytest.mark.parametrize("runs, allocators", [(30000, 58), (2000, 2000), (5000, 1)])
def test_shared_allocators_cannot_multiply(runs, allocators):
    """Runs are read in chunks: the bound must hold over all of them (crashers/etdump_3.bin)."""
    from etscope.formats.etdump import parse_etdump

    data = _shared_allocators_etdump(runs, allocators)
    contract("etdump", data, memory=True)
    try:
        d = parse_etdump(data)
    except FormatError:
        return
    assert sum(len(r.allocators) for r in d.runs) <= len(data) // 4 + 64


# ---- ETRecord zips ----------------------------------------------------------------------------------------

def _zip(entries, compression=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            z.writestr(info, data)
    return buf.getvalue()


def _graph_json(nodes: int) -> bytes:
    node = '{"name":"n","target":"t","inputs":[],"outputs":[{"as_tensor":{"name":"v"}}],"metadata":{}}'
    return ('{"graph_module":{"graph":{"nodes":[' + ",".join([node] * nodes) + '],"inputs":[],"outputs":[]}}}').encode()


def test_compressible_json_is_bounded_by_the_file_size():
    """Per-entry ratio limits alone let a 50 kB zip expand to 10 MB of JSON (and 100 MB of objects)."""
    data = _zip([("ETRECORD_V0", b""), ("edge_dialect_exported_program/forward", _graph_json(80_000))],
                zipfile.ZIP_DEFLATED)
    assert len(data) < 200_000
    assert contract("etrecord", data, memory=True) == "error"


def test_zip_bomb_entry_rejected():
    data = _zip([("ETRECORD_V0", b""), ("debug_handle_map", b"{" + b" " * (50 << 20) + b"}")], zipfile.ZIP_DEFLATED)
    assert contract("etrecord", data, memory=True) == "error"


def test_declared_entry_counts():
    base = _zip([("ETRECORD_V0", b""), ("debug_handle_map", b"{}")])
    eocd = base.rfind(b"PK\x05\x06")
    for count in (0xFFFF, 60_000, 0):
        data = bytearray(base)
        struct.pack_into("<HH", data, eocd + 8, count, count)
        contract("etrecord", bytes(data), memory=True)


def test_encrypted_entry_is_an_error():
    data = bytearray(_zip([("ETRECORD_V0", b""), ("debug_handle_map", b"{}")]))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):      # general purpose flag bit 0
        pos = 0
        while (pos := data.find(sig, pos)) >= 0:
            data[pos + off] |= 1
            pos += 4
    assert contract("etrecord", bytes(data)) == "error"


ALL_ENTRY_NAMES = ["debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id",
                   "edge_dialect_exported_program", "edge_dialect_exported_program/forward", "exported_program",
                   "edge_after_transform/forward", "exported_program_state_dict", "exported_program_constants",
                   "exported_program_example_inputs", "reference_outputs", "representative_inputs",
                   "et_dialect_graph_module", "anything", "x/y"]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_are_never_loaded(tmp_path, monkeypatch, protocol):
    """A pickle that would create a file when loaded, under every entry name the reader knows;
    the unpickler is also made to fail loudly if anything calls it."""
    from fuzz_strategies import _Boom

    pwned = tmp_path / "pwned"
    evil = pickle.dumps(_Boom(str(pwned)), protocol=protocol)

    def refuse(*a, **k):
        raise AssertionError("the ETRecord reader called the unpickler")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    for name in ALL_ENTRY_NAMES:
        data = _zip([("ETRECORD_V0", b""), (name, evil)])
        contract("etrecord", data)
    data = _zip([("ETRECORD_V0", b"")] + [(n, evil) for n in ALL_ENTRY_NAMES])
    contract("etrecord", data)
    assert not pwned.exists()
    assert "torch" not in __import__("sys").modules


def test_traversal_names_write_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = ["../../evil", "/tmp/etscope-abs-evil", "a/../../b", "C:/x", "x\\..\\y", "./x", "a//b/../../../c"]
    data = _zip([("ETRECORD_V0", b"")] + [(n, b"{}") for n in names])
    path = tmp_path / "t.etrecord"
    path.write_bytes(data)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    from etscope.formats.etrecord import read_etrecord

    r = read_etrecord(path)
    assert {n for n, _ in r.skipped_entries} >= {"../../evil", "/tmp/etscope-abs-evil", "a/../../b", "x\\..\\y"}
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert not Path("/tmp/etscope-abs-evil").exists()


# ---- JSON readers: nesting, numbers, encodings ------------------------------------------------------------

JSON_READERS = ["qhas", "optrace", "qnn_json"]
NASTY_JSON = {
    "deep_lists": b"[" * 200_000 + b"]" * 200_000,
    "deep_objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "huge_int": b'{"header": {"artifact_type": "QHAS"}, "data": ' + b"9" * 100_000 + b"}",
    "huge_exponent": b"[1e999999999, -1e999999999]",
    "nan": b'{"traceEvents": [{"ph": "X", "ts": NaN, "dur": Infinity}], "messages": [{"profilingEvents": '
           b'[{"identifier": "x", "value": NaN}]}], "header": {"artifact_type": "QHAS"}, "data": {"t": '
           b'{"data": [{"cycles": NaN}]}}}',
    "utf16": '{"a": 1}'.encode("utf-16"),
    "bad_utf8": b'{"a": "\xff\xfe"}',
    "bom": b'\xef\xbb\xbf{"header": {}}',
    "nul": b"\x00" * 1000,
    "dup_keys": b'{"header": {"artifact_type": "QHAS"}, "header": 5}',
    "many_keys": b"{" + b",".join(b'"k%d":1' % i for i in range(100_000)) + b"}",
}


@pytest.mark.parametrize("reader", JSON_READERS)
@pytest.mark.parametrize("case", sorted(NASTY_JSON))
def test_nasty_json(reader, case):
    contract(reader, NASTY_JSON[case], memory=True)


def test_nasty_json_in_etrecord_entries():
    for case, payload in NASTY_JSON.items():
        for entry in ("debug_handle_map", "edge_dialect_exported_program/forward", "delegate_map"):
            contract("etrecord", _zip([("ETRECORD_V0", b""), (entry, payload)]), memory=True)


# ---- algorithmic complexity: long runs of one pattern in every text slot -----------------------------------

def _pumps(n: int = 60_000):
    for p in H.PUMPS:
        yield p, (p * (n // len(p)))


TEXT_TEMPLATES = {
    "qnn_text": ["Init Stats:\n    NetRun: {}\n", "Init Stats:\n    {}: 12 us\n", "Init Stats:\n    NetRun: 12 {} x\n",
                 "Execute Stat 1\n    {} : 5  cycles\n", "Execute Stat 1\nA{}x : 5 us\n", "Time Scale: {}\nExecute Stat 1\n",
                 "{}\nExecute Stat 1\nx : 1 us\n", "Execute Stat 1\n    a:OpId_1 (cycles) : {}\n"],
    "qnn_csv": ["Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
                "0,NODE,5,CYCLES,BACKEND,ROOT,{}\n",
                "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
                "0,NODE,{},CYCLES,BACKEND,ROOT,x\n",
                "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n"
                "0,NODE,5,{},BACKEND,{},x\n"],
}


def _json_templates(s: str):
    return {
        "qnn_json": {"messages": [{"method": "BACKEND_EXECUTE", "profilingEvents": [
            {"identifier": s, "value": 1, "unit": s, "type": "NODE", "sub-events": [{"identifier": s, "value": 2}]}]}]},
        "qhas": {"header": {"artifact_type": "QHAS"}, "data": {"dominant_path_htp_" + s: {"data": []},
                                                               "qnn_op_types": {"data": [{"op": s, s: 1}]}}},
        "optrace": {"header": {"artifact_type": "OP_TRACE"}, "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "Core " + s + " Overview"}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": s}},
            {"ph": "X", "name": s, "pid": 0, "tid": 1, "ts": 1, "dur": 2, "args": {s: s}},
            {"ph": "C", "name": s, "pid": 0, "ts": 1, "args": {s: 1}}]},
    }


@pytest.mark.parametrize("pattern", [p for p, _ in _pumps()], ids=[repr(p) for p, _ in _pumps()])
def test_long_repeated_patterns(pattern):
    s = dict(_pumps())[pattern]
    for reader, templates in TEXT_TEMPLATES.items():
        for t in templates:
            contract(reader, t.replace("{}", s).encode())
    for reader, doc in _json_templates(s).items():
        contract(reader, json.dumps(doc).encode())
    graph = {"graph_module": {"graph": {"nodes": [{"name": s, "target": s, "inputs": [], "outputs": [],
                                                   "metadata": {"stack_trace": s, "nn_module_stack": s,
                                                                "debug_handle": s}}]}}}
    contract("etrecord", _zip([("ETRECORD_V0", b""), ("edge_dialect_exported_program/forward", json.dumps(graph).encode()),
                               ("debug_handle_map", json.dumps({"forward": {"0": s}}).encode())]))
    # QNN names are also parsed from ETDump strings by the analysis
    from etscope.formats.qnn_names import fx_node_candidates, parse_qnn_event_name, split_token
    for name in (s, "a" + s + "x", s + ":OpId_1 (cycles)", "a" + s + "OpId_x", s + "_token_" + s):
        contract("qnn_names", name.encode(), lambda: (parse_qnn_event_name(name), fx_node_candidates(name),
                                                      split_token(name)))


def test_numbers_too_long_for_int():
    from etscope.formats.qnn_names import parse_qnn_event_name

    assert parse_qnn_event_name("x:OpId_" + "9" * 5000).op_id is None
    assert parse_qnn_event_name("x_token_" + "9" * 5000 + ":OpId_3").token is None
    assert parse_qnn_event_name("MatMul_0:OpId_18 (cycles)") == ("MatMul_0", 18, "cycles", None)


# ---- files: opened read-only, never modified, nothing big allocated to read a small file -----------------

def _readers_by_path():
    from etscope.formats.etdump import read_etdump
    from etscope.formats.etrecord import read_etrecord
    from etscope.formats.optrace import read_optrace
    from etscope.formats.pte import read_pte
    from etscope.formats.qhas import read_qhas
    from etscope.formats.qnn_csv import read_qnn_csv
    from etscope.formats.qnn_json import read_qnn_json
    from etscope.formats.qnn_text import read_qnn_text
    return {"etdump": read_etdump, "pte": read_pte, "etrecord": read_etrecord, "qhas": read_qhas,
            "optrace": read_optrace, "qnn_csv": read_qnn_csv, "qnn_text": read_qnn_text, "qnn_json": read_qnn_json}


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


@pytest.mark.parametrize("reader", list(_readers_by_path()))
def test_inputs_opened_read_only_and_unchanged(reader, tmp_path, monkeypatch):
    seeds = H.READERS[reader].seeds
    if not seeds:
        pytest.skip("no seed file")
    path = tmp_path / seeds[0].name
    path.write_bytes(seeds[0].read_bytes())
    os.utime(path, (1_000_000_000, 1_000_000_000))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    opened = []
    real_open, real_os_open, real_mmap = builtins.open, os.open, mmap.mmap

    def spy_open(file, mode="r", *a, **k):
        if os.fspath(file) == str(path) if isinstance(file, (str, os.PathLike)) else False:
            opened.append(("open", mode))
        return real_open(file, mode, *a, **k)

    def spy_os_open(file, flags, *a, **k):
        if os.fspath(file) == str(path):
            opened.append(("os.open", flags))
        return real_os_open(file, flags, *a, **k)

    class SpyMmap(real_mmap):
        def __new__(cls, *a, **k):
            opened.append(("mmap", k.get("access", a[2] if len(a) > 2 else None)))
            return real_mmap.__new__(cls, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(mmap, "mmap", SpyMmap)
    tracemalloc.start()
    try:
        _readers_by_path()[reader](path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert opened, "the reader did not open the file through open/os.open"
    for how, mode in opened:
        if how == "open":
            assert set(str(mode)) <= set("rb"), (how, mode)
        elif how == "os.open":
            assert not (mode & _WRITE_FLAGS), (how, mode)
        else:
            assert mode == mmap.ACCESS_READ, (how, mode)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    size = len(before[0])
    assert peak < H.mem_budget(size), f"reading a {size}-byte file allocated {peak / 1e6:.0f} MB"


def test_no_code_execution_primitives_in_the_package():
    """Nothing in etscope can run code from a file: no unpickling, eval/exec, marshal, shelve,
    yaml.load, subprocess or shell (a cheap guard next to the pickle tests above)."""
    import etscope

    pattern = re.compile(r"\b(?:pickle\.loads?|_pickle|cPickle|Unpickler|marshal\.loads?|shelve\.|yaml\.(?:unsafe_)?load"
                         r"|subprocess|os\.system|os\.popen|eval\(|exec\(|__import__\(|importlib\.import_module\()")
    # Two dynamic imports, both of names from fixed tables of the package: the input-kind registry's
    # lazy "module:function" references, limited to etscope's own modules
    # (test_registry_imports_only_etscope below), and analysis.qnn's lazy attributes (its _FROM table,
    # relative to the package).
    allowed = {"formats/kinds.py: return getattr(importlib.import_module(module), attr)",
               'analysis/qnn/__init__.py: value = getattr(importlib.import_module(f".{module}", __package__), attr)'}
    root = Path(etscope.__file__).resolve().parent
    hits = []
    for path in root.rglob("*.py"):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code) and not code.lstrip().startswith(('"', "'")) \
                    and f"{path.relative_to(root).as_posix()}: {line.strip()}" not in allowed:
                hits.append(f"{path.relative_to(root)}:{i}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_registry_imports_only_etscope():
    from etscope.formats.kinds import resolve

    for ref in ("os:system", "subprocess:run", "etscope_evil.x:f", "etscope.formats.kinds:a.b", "builtins:eval"):
        with pytest.raises(ValueError):
            resolve(ref)
    assert resolve("etscope.formats.kinds:resolve") is resolve
