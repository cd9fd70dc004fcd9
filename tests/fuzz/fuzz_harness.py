"""Shared machinery of the fuzz tests (``tests/fuzz/test_*.py``) and the long runner (``fuzz.py``).

* ``READERS``: every reader as ``bytes -> result``, with its seed files (real fixtures).
* ``check(reader, data)``: run one input; the reader must return or raise :class:`FormatError`
  (anything else, a time over budget or a memory peak over budget is a :class:`FuzzFailure`).
* Mutators (plain functions of ``random.Random``, and hypothesis strategies built on the same
  operations): byte-level (truncate, bit flip, overwrite an aligned offset/length field with a
  huge, negative or boundary value, duplicate, delete, insert, splice), JSON-tree level,
  line/field level (CSV, viewer text) and zip level (ETRecord: rewrite an entry, add hostile
  entries, recompress).
* ``build_etdump``: a valid ETDump written with the ``flatbuffers`` Builder from plain data, for
  round-trip checks and as structure-aware seeds.

Budgets (from issue 7): under 5 s of CPU time per MB of input (floor ``MIN_SECONDS``; a SIGALRM
watchdog turns a hang into a failure after ``HANG_SECONDS``); tracemalloc peak growth under
``50 x input size + 50 MB``.
"""
from __future__ import annotations

import contextlib
import io
import json
import atexit
import os
import random
import signal
import struct
import sys
import tempfile
import time
import tracemalloc
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from etscope.errors import FormatError

HERE = Path(__file__).resolve().parent
CRASHERS = HERE / "crashers"
FIXTURES = HERE.parent / "fixtures"
REAL = FIXTURES / "real"
QNN = FIXTURES / "qnn"

SECONDS_PER_MB = 5.0
MIN_SECONDS = 2.0          # floor for small inputs (CI machines stall; a real blow-up is far slower)
HANG_SECONDS = 60          # SIGALRM watchdog: a hang becomes a failure instead of a stuck CI job
MEM_FACTOR = 50
MEM_SLACK = 50 << 20


class FuzzFailure(AssertionError):
    """A reader broke the contract on one input."""

    def __init__(self, reader: str, data: bytes, why: str):
        self.reader, self.data, self.why = reader, data, why
        super().__init__(f"{reader}: {why} (input {len(data)} bytes)")


# ---- readers -------------------------------------------------------------------------------------

def _etdump(data: bytes):
    from etscope.formats.etdump import parse_etdump
    return parse_etdump(data, "fuzz.etdump")


def _pte(data: bytes):
    from etscope.formats.pte import parse_pte
    return parse_pte(data, "fuzz.pte")


_TMP: dict[str, str] = {}


@atexit.register
def _remove_tmp_files() -> None:
    for path in _TMP.values():
        try:
            os.unlink(path)
        except OSError:
            pass


def _tmp_file(suffix: str, data: bytes) -> str:
    """One scratch file per suffix, rewritten for each input (readers that need a path)."""
    path = _TMP.get(suffix)
    if path is None:
        fd, path = tempfile.mkstemp(prefix="etscope-fuzz-", suffix=suffix)
        os.close(fd)
        _TMP[suffix] = path
    with open(path, "wb") as f:
        f.write(data)
    return path


def _etrecord(data: bytes):
    from etscope.formats.etrecord import read_etrecord
    r = read_etrecord(_tmp_file(".etrecord", data))
    # graphs are decoded when first used: decode them all, as the commands would
    for method in r.graphs:
        r.graphs.get(method)
        r.nodes_by_instruction(method)
    r.exported_program, r.extra_graphs  # noqa: B018
    return r


def _qnn_compile_spec(data: bytes):
    from etscope.formats.qnn_compile_spec import decode_qnn_compile_spec
    return decode_qnn_compile_spec(data, "fuzz.compile_spec")


def _qhas(data: bytes):
    from etscope.formats.qhas import parse_qhas
    return parse_qhas(data, "fuzz.qhas.json")


def _optrace(data: bytes):
    from etscope.formats.optrace import parse_optrace
    return parse_optrace(data, "fuzz.optrace.json")


def _qnn_csv(data: bytes):
    from etscope.formats.qnn_csv import parse_qnn_csv
    return parse_qnn_csv(data, "fuzz.csv")


def _qnn_text(data: bytes):
    from etscope.formats.qnn_text import parse_qnn_text
    return parse_qnn_text(data, "fuzz.txt")


def _qnn_json(data: bytes):
    from etscope.formats.qnn_json import parse_qnn_json
    return parse_qnn_json(data, "fuzz.qnn.json")


@dataclass(frozen=True)
class Reader:
    name: str
    parse: Callable[[bytes], object]
    seeds: tuple[Path, ...]
    kind: str  # "flatbuffer" | "zip" | "json" | "lines"


def _exist(*paths: Path) -> tuple[Path, ...]:
    return tuple(p for p in paths if p.exists())


QNN_ETDUMP = FIXTURES / "qnn_etdump"
QNN_PTE = FIXTURES / "qnn_pte"

READERS: dict[str, Reader] = {r.name: r for r in (
    Reader("etdump", _etdump, _exist(REAL / "cnn.etdump", REAL / "gen_cnn.etdump", REAL / "gen_loop.etdump",
                                     REAL / "gen_multipart.etdump", REAL / "llama_nodebug.etdump",
                                     QNN_ETDUMP / "synthetic_qnn_cnn.etdump",
                                     QNN_ETDUMP / "synthetic_qnn_vit_2part.etdump"), "flatbuffer"),
    Reader("pte", _pte, _exist(REAL / "gen_loop.pte", REAL / "gen_cnn.pte", REAL / "gen_multipart.pte",
                               REAL / "cnn.pte", QNN_PTE / "synthetic_qnn_cnn.pte"), "flatbuffer"),
    Reader("qnn_compile_spec", _qnn_compile_spec, tuple(sorted(QNN_PTE.glob("synthetic_compile_spec_*.bin"))),
           "flatbuffer"),
    Reader("etrecord", _etrecord, _exist(REAL / "gen_loop.etrecord", REAL / "gen_multipart.etrecord",
                                         REAL / "gen_cnn.etrecord", QNN_ETDUMP / "synthetic_qnn_cnn.etrecord"),
           "zip"),
    Reader("qhas", _qhas, _exist(QNN / "chain8_sm8650.qhas.json", QNN / "resnet50_ortqnn_trimmed.qhas.json",
                                 QNN / "synthetic_qhas_extra_fields.json"), "json"),
    Reader("optrace", _optrace, _exist(QNN / "synthetic_optrace_bare_list.json", QNN / "chain8_sm8650.optrace.json"),
           "json"),
    Reader("qnn_csv", _qnn_csv, _exist(QNN / "synthetic_qnn_profile_edge_cases.csv",
                                       QNN / "emulator_vit_mixed_qdq_basic.qnn_profile.csv",
                                       QNN / "emulator_cnn_small_qdq_detailed.qnn_profile.csv",
                                       QNN / "resnet50_ortqnn.profile.csv"), "lines"),
    Reader("qnn_text", _qnn_text, _exist(QNN / "chain8_sm8650.profile.txt", QNN / "indep8_customop_sm8650.profile.txt",
                                         QNN / "indep8_native_sm8650.profile.txt"), "lines"),
    Reader("qnn_json", _qnn_json, _exist(QNN / "tiny_sm8750.qnn_profile.json"), "json"),
)}

_SEED_CACHE: dict[Path, bytes] = {}


def seed_bytes(path: Path) -> bytes:
    data = _SEED_CACHE.get(path)
    if data is None:
        data = _SEED_CACHE[path] = path.read_bytes()
    return data


# ---- running one input ---------------------------------------------------------------------------

class _Hang(BaseException):
    pass


@contextlib.contextmanager
def _watchdog(seconds: int):
    if not hasattr(signal, "SIGALRM") or seconds <= 0:
        yield
        return

    def fire(signum, frame):
        raise _Hang()

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def time_budget(n_bytes: int) -> float:
    return max(MIN_SECONDS, SECONDS_PER_MB * n_bytes / 1e6)


def mem_budget(n_bytes: int) -> int:
    return MEM_FACTOR * n_bytes + MEM_SLACK


def check(reader: str | Reader, data: bytes, *, measure_memory: bool = True) -> str:
    """Run one input through a reader. Returns ``"ok"`` or ``"error"`` (a clean FormatError).

    Raises :class:`FuzzFailure` for any other exception, a hang, or a time/memory overrun.
    """
    r = READERS[reader] if isinstance(reader, str) else reader
    return run_contract(r.name, lambda: r.parse(data), data, measure_memory=measure_memory)


def run_contract(name: str, fn: Callable[[], object], data: bytes, *, measure_memory: bool = True,
                 size: int | None = None) -> str:
    n = len(data) if size is None else size
    started_tm = False
    if measure_memory and not tracemalloc.is_tracing():
        tracemalloc.start()
        started_tm = True
    if measure_memory:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
    t0 = time.process_time()      # CPU time: other processes' load on a CI box does not count
    outcome = "ok"
    try:
        with _watchdog(HANG_SECONDS):
            result = fn()
        del result
    except FormatError as e:
        msg = str(e)
        if "\n" in msg or "\r" in msg:
            raise FuzzFailure(name, data, f"FormatError message spans lines: {msg[:200]!r}") from e
        outcome = "error"
    except _Hang:
        raise FuzzFailure(name, data, f"no result after {HANG_SECONDS} s (hang)") from None
    except RecursionError as e:  # listed separately: it is the classic one
        raise FuzzFailure(name, data, f"RecursionError: {e}") from e
    except Exception as e:  # noqa: BLE001 - that is the point
        raise FuzzFailure(name, data, f"{type(e).__name__}: {str(e)[:300]}") from e
    finally:
        elapsed = time.process_time() - t0
        if measure_memory:
            peak = tracemalloc.get_traced_memory()[1] - base
            if started_tm:
                tracemalloc.stop()
    if elapsed > time_budget(n):
        raise FuzzFailure(name, data, f"took {elapsed:.2f} s (budget {time_budget(n):.2f} s)")
    if measure_memory and peak > mem_budget(n):
        raise FuzzFailure(name, data, f"peak memory +{peak / 1e6:.1f} MB (budget {mem_budget(n) / 1e6:.1f} MB)")
    return outcome


# ---- byte-level mutation -------------------------------------------------------------------------

def interesting_u32(size: int, rng: random.Random) -> int:
    """Values that break offset/length fields: boundaries, huge, negative, near the file size."""
    choices = [0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFC, 0xFFFFFF00, size, size - 1, size - 4, size + 4, size // 2,
               (-size) & 0xFFFFFFFF, (-4) & 0xFFFFFFFF, rng.randrange(1 << 32), rng.randrange(size + 1)]
    return rng.choice(choices) & 0xFFFFFFFF


OPS = ("truncate", "flip", "byte", "u32", "u16", "u64", "dup", "delete", "insert", "zero", "splice", "extend",
       "pump")
# Repeated patterns that make backtracking regexes and per-item loops go quadratic or worse.
PUMPS = (" ", "\t", "1", ":", ": ", " : ", "(NC", "(us", "OpId_", "a ", "_token_1", "File \"", ",", "\"", "{", "[",
         "\\", "#1", "e1", "0.", "-", "x")


def pump(rng: random.Random) -> str:
    """A pattern repeated to 2-40 kB, between two ordinary words (quadratic blow-ups need length)."""
    return rng.choice(["a", "x:", "QNN ", "native_call_", ""]) + rng.choice(PUMPS) * rng.randint(1000, 20000) + \
        rng.choice(["x", "OpId_x", " x y", "(us", "", "1 us"])


def mutate_bytes(data: bytes, rng: random.Random, n_ops: int | None = None, *,
                 focus: int | None = None, donors: tuple[bytes, ...] = ()) -> bytes:
    """Apply 1..8 random byte-level mutations. ``focus``: bias positions below this offset."""
    buf = bytearray(data)
    for _ in range(n_ops if n_ops is not None else rng.randint(1, 8)):
        apply_op(buf, rng.choice(OPS), rng, focus=focus, donors=donors)
    return bytes(buf)


def _pos(buf: bytearray, rng: random.Random, focus: int | None, align: int = 1) -> int:
    n = len(buf)
    if n == 0:
        return 0
    hi = n if focus is None or rng.random() < 0.2 else max(1, min(n, focus))
    p = rng.randrange(hi)
    return p - p % align


def apply_op(buf: bytearray, op: str, rng: random.Random, *, focus: int | None = None,
             donors: tuple[bytes, ...] = ()) -> None:
    n = len(buf)
    if op == "truncate":
        del buf[rng.randrange(n + 1) if n else 0:]
    elif n == 0:
        buf.extend(rng.randbytes(rng.randint(1, 16)))
    elif op == "flip":
        p = _pos(buf, rng, focus)
        buf[p] ^= 1 << rng.randrange(8)
    elif op == "byte":
        buf[_pos(buf, rng, focus)] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif op in ("u32", "u16", "u64"):
        width = {"u16": 2, "u32": 4, "u64": 8}[op]
        p = _pos(buf, rng, focus, align=width if rng.random() < 0.85 else 1)
        if p + width > n:
            return
        if op == "u16":
            v = rng.choice([0, 1, 2, 4, 0x7FFF, 0x8000, 0xFFFF, 0xFFFE, rng.randrange(1 << 16)])
            struct.pack_into("<H", buf, p, v)
        elif op == "u32":
            struct.pack_into("<I", buf, p, interesting_u32(n, rng))
        else:
            v = rng.choice([0, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 1 << 32, n, rng.randrange(1 << 64)])
            struct.pack_into("<Q", buf, p, v)
    elif op == "dup":
        a = _pos(buf, rng, focus)
        b = min(n, a + rng.randint(1, 256))
        buf[_pos(buf, rng, focus):0] = buf[a:b]
    elif op == "delete":
        a = _pos(buf, rng, focus)
        del buf[a:a + rng.randint(1, 64)]
    elif op == "insert":
        p = _pos(buf, rng, focus)
        buf[p:p] = rng.choice([rng.randbytes(rng.randint(1, 16)), b"\x00" * 4, b"\xff" * 4, b"\x1b[31m",
                               b'"', b",", b"\n", b"{", b"[", b"\xef\xbb\xbf", b"\xc3"])
    elif op == "zero":
        a = _pos(buf, rng, focus)
        b = min(n, a + rng.randint(1, 128))
        buf[a:b] = bytes(b - a)
    elif op == "splice":
        donor = rng.choice(donors) if donors else bytes(buf)
        if donor:
            a = rng.randrange(len(donor))
            chunk = donor[a:a + rng.randint(1, 512)]
            p = _pos(buf, rng, focus)
            buf[p:p + len(chunk)] = chunk
    elif op == "pump":
        p = _pos(buf, rng, focus)
        buf[p:p] = pump(rng).encode()
    elif op == "extend":
        buf.extend(rng.choice([bytes(buf[-rng.randint(1, min(n, 4096)):]), b"\x00" * rng.randint(1, 4096),
                               rng.randbytes(rng.randint(1, 64))]))


# ---- JSON-tree mutation ---------------------------------------------------------------------------

def hostile_scalar(rng: random.Random):
    return rng.choice([
        None, True, False, 0, -1, 1, 2 ** 63, -(2 ** 63) - 1, 2 ** 64, 10 ** 400, 1e308, -1e308, 0.5, -0.0,
        "", "UNKNOWN", "nan", "NaN", "inf", "-inf", "1e999", "0x10", "9" * 500, "\x1b[31mred\x1b[0m", "\x00",
        "=HYPERLINK(\"http://x\")", "<script>alert(1)</script>", "\ud7ff\ue000", "é" * 3, "a:OpId_1 (cycles)",
        "QNN (execute) time", "Core 0 Overview", "QNN::x", "Type: HMX", "OP_TRACE", "QHAS", "QNN_PROFILE",
        "X", "M", "C", "ROOT", "SUB-EVENT", [], {}, [1, 2], {"data": []}, {"data": None}, {"data": {}},
    ]) if rng.random() < 0.95 else pump(rng)


def hostile_value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth > 3 or r < 0.6:
        return hostile_scalar(rng)
    if r < 0.8:
        return [hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["data", "name", "ph", "args", "value", "unit", "type", "identifier", "sub-events",
                        "pid", "tid", "ts", "dur", "header", "artifact_type", "x"]): hostile_value(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def _nodes(doc, limit: int = 20000):
    """(container, key) of every value in a JSON tree, breadth first, at most ``limit``."""
    out = []
    queue = [doc]
    while queue and len(out) < limit:
        c = queue.pop(0)
        items = c.items() if isinstance(c, dict) else enumerate(c) if isinstance(c, list) else ()
        for k, v in items:
            out.append((c, k))
            if isinstance(v, (dict, list)):
                queue.append(v)
    return out


def mutate_json_doc(doc, rng: random.Random, n_ops: int | None = None):
    """Mutate a parsed JSON document in place (returns it; the root may be replaced)."""
    for _ in range(n_ops if n_ops is not None else rng.randint(1, 6)):
        nodes = _nodes(doc)
        if not nodes or rng.random() < 0.03:
            doc = hostile_value(rng)
            continue
        c, k = rng.choice(nodes)
        op = rng.random()
        if op < 0.45:
            c[k] = hostile_value(rng)
        elif op < 0.6:
            if isinstance(c, dict):
                del c[k]
            else:
                del c[k]
        elif op < 0.75 and isinstance(c, list):
            c.extend([c[k]] * rng.randint(1, 8))           # duplicate rows
        elif op < 0.85:
            v = c[k]
            for _ in range(rng.randint(1, 200)):             # deep nesting
                v = [v] if rng.random() < 0.5 else {"data": v}
            c[k] = v
        elif isinstance(c[k], (int, float)) and not isinstance(c[k], bool):
            c[k] = rng.choice([-c[k], c[k] * 10 ** 20, str(c[k]), float("nan"), float("inf")])
        else:
            c[k] = json.loads(json.dumps(c[k])) if c[k] is not None else rng.choice([0, "x"])
    return doc


def mutate_json_bytes(data: bytes, rng: random.Random) -> bytes:
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except ValueError:
        return mutate_bytes(data, rng)
    doc = mutate_json_doc(doc, rng)
    text = json.dumps(doc, allow_nan=True, ensure_ascii=rng.random() < 0.5)
    out = text.encode("utf-8")
    if rng.random() < 0.2:
        out = mutate_bytes(out, rng, rng.randint(1, 3))
    if rng.random() < 0.05:
        out = text.encode("utf-16")
    return out


# ---- line / field mutation (CSV, viewer text) ------------------------------------------------------

_FIELD_VALUES = ["", "UNKNOWN", "nan", "inf", "-inf", "1e309", "-1", "9" * 400, "0x10", "1,2", '"a,b"', '"',
                 '""', "ROOT", "SUB-EVENT", "SUBEVENT", "NODE", "CYCLES", "US", "OBJECT", "BYTES",
                 "QNN (execute) time", "QNN (finalize) time", "Accelerator (execute) time (cycles)",
                 "x:OpId_1 (cycles)", "=cmd|' /C calc'!A0", "\x1b[2J", "\x00", "\t", "Time", "Event Identifier",
                 "Execute Stat 1", "Printing All Data Received From Back End", " : ", " :", ": 5 us"]


def mutate_lines(data: bytes, rng: random.Random) -> bytes:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return mutate_bytes(data, rng)
    lines = text.split("\n")
    for _ in range(rng.randint(1, 6)):
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.15:
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif op < 0.25:
            del lines[i]
        elif op < 0.35:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op < 0.75:
            sep = "," if "," in lines[i] else " : " if " : " in lines[i] else " "
            parts = lines[i].split(sep)
            k = rng.randrange(len(parts))
            r = rng.random()
            if r < 0.6:
                parts[k] = rng.choice(_FIELD_VALUES)
            elif r < 0.8:
                parts.insert(k, rng.choice(_FIELD_VALUES))
            elif len(parts) > 1:
                del parts[k]
            lines[i] = sep.join(parts)
        elif op < 0.85:
            lines[i] = rng.choice(["  ", "\t", ""]) + lines[i].lstrip() if rng.random() < 0.5 else lines[i].lstrip()
        elif op < 0.92:
            lines[i:i] = [lines[i]] * rng.randint(10, 500)
        elif op < 0.96:
            lines[i] = rng.choice(_FIELD_VALUES)
        else:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + pump(rng) + lines[i][cut:]
    nl = rng.choice(["\n", "\n", "\r\n", "\r"])
    out = nl.join(lines).encode("utf-8")
    if rng.random() < 0.15:
        out = mutate_bytes(out, rng, rng.randint(1, 3))
    return out


# ---- zip (ETRecord) mutation -----------------------------------------------------------------------

def _zip_entries(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


_ZIP_CACHE: dict[int, list[tuple[str, bytes]]] = {}   # entries of seed zips, by content hash


def write_zip(entries: list[tuple[str, bytes]], rng: random.Random | None = None) -> bytes:
    buf = io.BytesIO()
    deflate = rng is not None and rng.random() < 0.3
    with zipfile.ZipFile(buf, "w") as z:
        with _quiet():
            for name, payload in entries:
                info = zipfile.ZipInfo(name)     # a ZipInfo keeps any name as given (no normalising)
                info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
                z.writestr(info, payload)
    return buf.getvalue()


@contextlib.contextmanager
def _quiet():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # "Duplicate name" warnings from zipfile
        yield


def mutate_zip(data: bytes, rng: random.Random) -> bytes:
    """Rewrite one JSON entry (tree mutation), add hostile entries, or mutate the zip bytes."""
    key = hash(data)
    entries = _ZIP_CACHE.get(key)
    if entries is None:
        try:
            entries = _zip_entries(data)
        except Exception:  # noqa: BLE001 - not a zip (already mutated): bytes only
            return mutate_bytes(data, rng)
        _ZIP_CACHE[key] = entries
    entries = list(entries)
    r = rng.random()
    if r < 0.25:
        return mutate_bytes(data, rng)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        if op < 0.6:
            json_idx = [i for i, (n, p) in enumerate(entries) if p[:1] in (b"{", b"[")]
            if json_idx:
                i = rng.choice(json_idx)
                name, payload = entries[i]
                entries[i] = (name, mutate_json_bytes(payload, rng))
        elif op < 0.7:
            entries.append((rng.choice(["../../evil", "/abs", "a/../../b", "C:/x", "x\\..\\y", "ETRECORD_V9",
                                        "edge_dialect_exported_program/", "edge_dialect_exported_program/a/b",
                                        "debug_handle_map", "x" * 2000, "e\x00x"]),
                            rng.choice([b"{}", b"[]", b"\x80\x04K\x01.", b"", b"{" * 10000])))
        elif op < 0.8 and entries:
            i = rng.randrange(len(entries))
            name, payload = entries[i]
            entries[i] = (name, mutate_bytes(payload, rng, rng.randint(1, 4)))
        elif op < 0.9 and entries:
            del entries[rng.randrange(len(entries))]
        else:
            entries.append(rng.choice(entries) if entries else ("ETRECORD_V0", b""))
    out = write_zip(entries, rng)
    if rng.random() < 0.1:
        out = mutate_bytes(out, rng, rng.randint(1, 2))
    return out


# ---- choosing a mutator per reader -----------------------------------------------------------------

def pte_focus(data: bytes) -> int | None:
    """Bytes of the flatbuffer in a .pte (mutating segment data is mostly pointless)."""
    if len(data) >= 24 and data[8:12] == b"eh00":
        return struct.unpack_from("<Q", data, 16)[0]
    return None


def mutate(reader: str, data: bytes, rng: random.Random) -> bytes:
    r = READERS[reader]
    if r.kind == "flatbuffer":
        focus = pte_focus(data) if reader == "pte" else None
        return mutate_bytes(data, rng, focus=focus)
    if r.kind == "zip":
        return mutate_zip(data, rng)
    if r.kind == "json":
        return mutate_json_bytes(data, rng) if rng.random() < 0.8 else mutate_bytes(data, rng)
    return mutate_lines(data, rng) if rng.random() < 0.8 else mutate_bytes(data, rng)


# ---- a valid ETDump from plain data (flatbuffers Builder) --------------------------------------------

_PREPEND_SLOT = {"u8": "PrependUint8Slot", "i8": "PrependInt8Slot", "i32": "PrependInt32Slot",
                 "u32": "PrependUint32Slot", "u64": "PrependUint64Slot", "i64": "PrependInt64Slot",
                 "off": "PrependUOffsetTRelativeSlot"}


def fb_offsets(b, offs) -> int:
    """A vector of table/string offsets (flatbuffers Builder ``b``)."""
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def fb_table(b, fields, n_slots: int = 8) -> int:
    """A table from ``[(slot, kind, value)]`` (kind: a key of ``_PREPEND_SLOT``); ``None`` values are
    left out (the reader's default)."""
    b.StartObject(n_slots)
    for slot, kind, val in fields:
        if val is not None:
            getattr(b, _PREPEND_SLOT[kind])(slot, val, 0)
    return b.EndObject()

def build_etdump(runs, *, version: int = 0, size_prefixed: bool = True) -> bytes:
    """ETDump bytes from ``runs = [dict(name, bundled=-1, allocators=[str], events=[event])]``.

    ``event``: ``("P", name, chain, instr, did_int, did_str, metadata_bytes, start, end)``,
    ``("A", allocator_id, size)`` or ``("D", name, chain, instr, did_int, did_str, value)`` where
    value is None or ``(value_type, scalar_type, sizes)`` (sizes None: no tensor) or
    ``("list", scalar_type, sizes)``. ``None`` fields are left out (reader default).
    """
    import flatbuffers

    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)   # write every field given, even when it equals the schema default

    def string(s):
        return b.CreateString(s) if s is not None else None

    def vec_offsets(offs):
        return fb_offsets(b, offs)

    def table(fields):
        return fb_table(b, fields)

    def tensor(stype, sizes):
        sv = None
        if sizes is not None:
            b.StartVector(8, len(sizes), 8)
            for x in reversed(sizes):
                b.PrependInt64(x)
            sv = b.EndVector()
        return table([(0, "i8", stype), (1, "off", sv)])

    run_offs = []
    for run in runs:
        ev_offs = []
        for ev in run["events"]:
            if ev[0] == "P":
                _, name, chain, instr, did_int, did_str, meta, start, end = ev
                n, ds = string(name), string(did_str)
                mv = b.CreateByteVector(meta) if meta is not None else None
                pe = table([(0, "off", n), (1, "i32", chain), (2, "i32", instr), (3, "i32", did_int),
                            (4, "off", ds), (5, "off", mv), (6, "u64", start), (7, "u64", end)])
                ev_offs.append(table([(0, "off", pe)]))
            elif ev[0] == "A":
                ae = table([(0, "i32", ev[1]), (1, "u64", ev[2])])
                ev_offs.append(table([(1, "off", ae)]))
            else:
                _, name, chain, instr, did_int, did_str, value = ev
                n, ds = string(name), string(did_str)
                vo = None
                if value is not None:
                    vtype, stype, sizes = value
                    if vtype == "list":
                        t = tensor(stype, sizes)
                        tl = table([(0, "off", vec_offsets([t]))])
                        vo = table([(0, "i8", 6), (2, "off", tl)])
                    else:
                        t = tensor(stype, sizes) if sizes is not None else None
                        vo = table([(0, "i8", vtype), (1, "off", t)])
                de = table([(0, "u64", chain), (1, "i32", instr), (2, "off", vo), (3, "i32", did_int),
                            (4, "off", ds), (5, "off", n)])
                ev_offs.append(table([(2, "off", de)]))
        events = vec_offsets(ev_offs)
        allocs = vec_offsets([table([(0, "off", b.CreateString(a))]) for a in run.get("allocators", [])])
        name = string(run.get("name"))
        run_offs.append(table([(0, "off", name), (1, "i32", run.get("bundled")), (2, "off", allocs),
                               (3, "off", events)]))
    root = table([(0, "u32", version), (1, "off", vec_offsets(run_offs))])
    if size_prefixed:
        b.FinishSizePrefixed(root, file_identifier=b"ED00")
    else:
        b.Finish(root, file_identifier=b"ED00")
    return bytes(b.Output())


def save_crasher(reader: str, data: bytes, directory: Path = CRASHERS) -> Path:
    """Store a failing input as ``<reader>_<n>.bin`` (next free n); returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 1
    while (directory / f"{reader}_{n}.bin").exists():
        if (directory / f"{reader}_{n}.bin").read_bytes() == data:
            return directory / f"{reader}_{n}.bin"
        n += 1
    path = directory / f"{reader}_{n}.bin"
    path.write_bytes(data)
    return path


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
