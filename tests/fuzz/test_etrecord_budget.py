"""ETRecord inputs built to break the work and memory budget (issue 13, items 2 and 3).

Each case is generated here (no committed file), run in a child process, and held to SECURITY.md's
budget: wall time under 5 s per MB of input (2 s floor), growth of the peak resident set
(``ru_maxrss`` after the read minus before it) at most 50 x the input + 50 MB.

* Item 2: a zip entry compressed with bzip2 or LZMA used to be decompressed whole before any size
  check (1.3 kB of bzip2 = 200 MB): every method zip allows is now read by streaming under a
  running cap; methods etscope does not read are refused by name.
* Item 3: debug-handle maps where many nodes share one handle and instructions repeat it: the
  nodes behind the instructions were gathered once per repetition (H x N).
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from etscope.errors import FormatError
from etscope.formats.etrecord import read_etrecord

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
SRC = Path(__file__).resolve().parents[2] / "src"

_CHILD = r"""
import json, resource, sys, time
from etscope.errors import FormatError
from etscope import profile as P
from etscope.formats.etrecord import read_etrecord
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
try:
    if len(sys.argv) > 2:
        p = P.load(sys.argv[2], sys.argv[1])
        outcome, msg = "ok", "; ".join(p.warnings)
    else:
        r = read_etrecord(sys.argv[1])
        for m in r.graphs:
            r.nodes_by_instruction(m)
        outcome, msg = "ok", ""
except FormatError as e:
    outcome, msg = "error", str(e)
seconds = time.perf_counter() - t0
grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(json.dumps({"outcome": outcome, "message": msg, "seconds": seconds, "rss_growth": grew}))
"""


def measured(etrecord: Path, etdump: Path | None = None, timeout: float = 120) -> dict:
    """Read ``etrecord`` (and load it with ``etdump``) in a child process: outcome, time, RSS growth."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    args = [sys.executable, "-c", _CHILD, str(etrecord)] + ([str(etdump)] if etdump else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def within_budget(res: dict, input_bytes: int) -> None:
    seconds = max(2.0, 5.0 * input_bytes / 1e6)
    memory = 50 * input_bytes + (50 << 20)
    assert res["seconds"] < seconds, f"{res['seconds']:.1f} s for {input_bytes} bytes (budget {seconds:.1f} s)"
    assert res["rss_growth"] <= memory, f"peak RSS grew {res['rss_growth'] >> 20} MB (budget {memory >> 20} MB)"


# ---- item 2: compression methods -------------------------------------------------------------------

METHODS = {"stored": zipfile.ZIP_STORED, "deflate": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2,
           "lzma": zipfile.ZIP_LZMA}


def _recompressed(src: Path, dst: Path, method: int) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info), compress_type=method)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_zip_allows_reads_the_same(tmp_path, method):
    f = tmp_path / f"{method}.etrecord"
    _recompressed(REAL / "gen_cnn.etrecord", f, METHODS[method])
    a, b = read_etrecord(f), read_etrecord(REAL / "gen_cnn.etrecord")
    assert a.debug_handle_map == b.debug_handle_map and a.delegate_map == b.delegate_map
    assert [(n.name, n.target, n.debug_handles, n.source) for n in a.graph().nodes] == \
           [(n.name, n.target, n.debug_handles, n.source) for n in b.graph().nodes]


def _bomb(path: Path, method: int, entry: str, megabytes: int) -> None:
    """``entry`` = '{' + spaces + '}', ``megabytes`` MB decompressed, written by streaming (small memory)."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ETRECORD_V0", b"")
        with z.open(zipfile.ZipInfo(entry) if method == zipfile.ZIP_STORED else _info(entry, method), "w") as w:
            w.write(b"{")
            block = b" " * (1 << 20)
            for _ in range(megabytes):
                w.write(block)
            w.write(b"}")


def _info(entry: str, method: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(entry)
    info.compress_type = method
    return info


@pytest.mark.parametrize("method, entry", [("bzip2", "debug_handle_map"), ("lzma", "debug_handle_map"),
                                           ("deflate", "debug_handle_map"), ("bzip2", "edge_after_transform/forward")])
def test_compressed_bomb_is_refused_within_budget(tmp_path, method, entry):
    """80 MB of JSON in a few kB (bzip2: 0.3 kB, LZMA: 12 kB). The last entry name is one the reader
    peeks into (graph or pickle?) before deciding to read it (the peek is the same code for every
    method)."""
    f = tmp_path / f"bomb_{method}.etrecord"
    _bomb(f, METHODS[method], entry, 80)
    size = f.stat().st_size
    assert size < 200_000
    res = measured(f)
    assert res["outcome"] == "error" and ("compression ratio" in res["message"] or "decompress to more" in res["message"])
    within_budget(res, size)


@pytest.mark.parametrize("method, name", [(9, "deflate64"), (93, "Zstandard"), (95, "xz"), (98, "PPMd"), (77, "unknown")])
def test_other_methods_are_refused_by_name(tmp_path, method, name):
    f = tmp_path / "m.etrecord"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("ETRECORD_V0", b"")
        z.writestr("debug_handle_map", b"{}")
    data = bytearray(f.read_bytes())
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # compression method in both headers
        pos = 0
        while (pos := data.find(sig, pos)) >= 0:
            struct.pack_into("<H", data, pos + off, method)
            pos += 4
    f.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=rf"compression method {method} \({name}\); etscope reads stored, deflate, "
                                          r"bzip2, LZMA") as ei:
        read_etrecord(f)
    assert ei.value.file == str(f)


@pytest.mark.parametrize("method", ["bzip2", "lzma", "deflate", "stored"])
def test_damaged_compressed_data_is_a_format_error(tmp_path, method):
    f = tmp_path / "d.etrecord"
    _recompressed(REAL / "gen_cnn.etrecord", f, METHODS[method])
    data = bytearray(f.read_bytes())
    with zipfile.ZipFile(f) as z:
        info = z.getinfo("debug_handle_map")
    start = info.header_offset + 30 + len(info.filename.encode())  # no extra field: written by zipfile
    for k in range(info.compress_size // 2, info.compress_size):
        data[start + k] ^= 0x55
    f.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="damaged ETRecord zip|not valid JSON"):
        read_etrecord(f)


# ---- item 3: shared debug handles -------------------------------------------------------------------

def _shared_handle_etrecord(path: Path, nodes: int, repeats: int, instructions: int) -> None:
    """``nodes`` graph nodes all carrying handle 1; ``instructions`` map entries each naming handle 1
    ``repeats`` times. Deflated: a few kB."""
    node = {"target": "executorch.exir.dialects.edge.ops.aten.relu.default",
            "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}], "metadata": {"debug_handle": "1"}}
    g_nodes = [{**node, "name": f"n{i}", "outputs": [{"as_tensor": {"name": f"n{i}"}}]} for i in range(nodes)]
    program = {"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "nodes": g_nodes,
                                          "outputs": [{"as_tensor": {"name": "n0"}}]}}, "dialect": "EDGE"}
    hmap = {"forward": {str(i): [1] * repeats for i in range(instructions)}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ETRECORD_V0", b"")
        z.writestr("debug_handle_map", json.dumps(hmap, separators=(",", ":")))
        z.writestr("edge_dialect_exported_program/forward", json.dumps(program, separators=(",", ":")))


def test_one_handle_repeated_is_looked_up_once(tmp_path):
    """One instruction naming handle 1 a hundred thousand times, 5,000 nodes sharing it: 5 x 10^8
    node references before (each repetition gathered the 5,000 nodes again)."""
    f = tmp_path / "repeat.etrecord"
    _shared_handle_etrecord(f, nodes=5_000, repeats=100_000, instructions=1)
    size = f.stat().st_size
    r = read_etrecord(f)
    nodes, warning = r.nodes_by_instruction("forward")
    assert len(nodes[0]) == 5_000 and len({id(n) for n in nodes[0]}) == 5_000 and warning is None
    res = measured(f, REAL / "gen_cnn.etdump")  # through profile.load, instruction 0 is in that ETDump
    assert res["outcome"] == "ok", res
    within_budget(res, size + (REAL / "gen_cnn.etdump").stat().st_size)


def test_many_instructions_naming_one_shared_handle_stay_linear(tmp_path):
    """3,000 instructions x 3,000 nodes behind one handle, each instruction with a different set:
    9 x 10^6 references (quadratic in the file) are cut at the bound, with a warning."""
    f = tmp_path / "wide.etrecord"
    _shared_handle_etrecord(f, nodes=3_000, repeats=1, instructions=3_000)
    hmap = {"forward": {str(i): [1, 1000 + i] for i in range(3_000)}}  # distinct sets: no sharing
    _rewrite_entry(f, "debug_handle_map", json.dumps(hmap).encode())
    r = read_etrecord(f)
    nodes, warning = r.nodes_by_instruction("forward")
    refs = sum(len(v) for v in nodes.values())
    bound = max(100_000, 64 * (3_001 + 1 + 6_000))
    assert refs <= bound + 3_000 and warning and "left without nodes" in warning
    res = measured(f)
    assert res["outcome"] == "ok"
    within_budget(res, f.stat().st_size)


def test_many_instructions_naming_the_same_shared_handle_are_charged_each(tmp_path):
    """3,000 instructions each naming handle 1 (3,000 nodes): shared lookups, but the callers list the
    nodes per instruction, so each is charged: cut at the bound instead of 9 x 10^6 names."""
    f = tmp_path / "same.etrecord"
    _shared_handle_etrecord(f, nodes=3_000, repeats=1, instructions=3_000)
    r = read_etrecord(f)
    nodes, warning = r.nodes_by_instruction("forward")
    bound = max(100_000, 64 * (3_001 + 1 + 3_000))
    assert sum(len(v) for v in nodes.values()) <= bound
    assert all(len(v) == 3_000 for v in nodes.values())  # whole lists or none
    assert warning and f"{3_000 - len(nodes)} instruction(s) left without nodes" in warning


def _rewrite_entry(path: Path, entry: str, data: bytes) -> None:
    with zipfile.ZipFile(path) as z:
        items = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, d in items:
            z.writestr(name, data if name == entry else d)


def test_real_maps_resolve_each_node_once():
    """Real executorch maps repeat handles (llama: 24 repeats) and nodes share them: each instruction
    lists each of its nodes once (they were listed once per repetition)."""
    r = read_etrecord(REAL / "llama.etrecord")
    g = r.graph()
    nodes, warning = r.nodes_by_instruction("forward")
    assert warning is None
    for ins_id, handles in r.debug_handle_map["forward"].items():
        expected = {n.name for h in handles for n in g.by_debug_handle.get(h, [])}
        names = [n.name for n in nodes[ins_id]]
        assert len(names) == len(set(names)) and set(names) == expected
    assert sum(len(hs) - len(set(hs)) for hs in r.debug_handle_map["forward"].values()) == 24
