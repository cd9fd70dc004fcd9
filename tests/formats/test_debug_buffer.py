"""Debug buffer reader: bit-for-bit against executorch's Inspector decoding (real fixtures,
tests/fixtures/numerics), and one FormatError line for truncated or lying inputs (synthetic pairs
from tools/synth_debug_buffer.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.debug_buffer import DebugBuffer, chunks
from etscope.formats.etdump import parse_etdump, read_etdump

ROOT = Path(__file__).resolve().parents[2]
NUM = ROOT / "tests" / "fixtures" / "numerics"
_spec = importlib.util.spec_from_file_location("synth_debug_buffer", ROOT / "tools" / "synth_debug_buffer.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


@pytest.mark.parametrize("name", ["num_cpu", "num_cpu_b", "num_xnn", "num_q8", "pair_cnn_xnn", "pair_cnn_cpu",
                                  "pair_q8_xnn", "pair_q8_cpu", "pair_llm_xnn", "pair_llm_cpu"])
def test_every_tensor_equals_the_inspectors(name):
    data = read_etdump(NUM / f"{name}.etdump")
    oracle = np.load(NUM / f"{name}.oracle.npz")
    t, ev = data.tensors, data.events
    firsts = [r.first_event for r in data.runs]
    seen = set()
    with DebugBuffer(NUM / f"{name}.debugbuf") as buf:
        buf.check(t)
        for i in range(len(t)):
            e = int(t.columns["event"][i])
            r = int(ev["run"][e])
            key = f"r{r}_e{e - firsts[r]}_t{int(t.columns['item'][i])}"
            got, want = buf.array(t, i), oracle[key]
            assert got.dtype == want.dtype and got.shape == want.shape, key
            assert np.ascontiguousarray(got).tobytes() == want.tobytes(), key
            seen.add(key)
    assert seen == set(oracle.files)      # nothing the Inspector decodes is missed


def test_program_output_flag_and_delegate_arguments():
    data = read_etdump(NUM / "num_xnn.etdump")
    t = data.tensors
    runs = len(data.runs) - 1
    assert int(t.columns["program_output"].sum()) == runs   # one output per execute
    # the last delegate call (instruction 4) logs its 3 arguments: input, the 0-dim 0.25, output
    ev = data.events
    last = [i for i in range(len(t)) if ev["instruction_id"][t.columns["event"][i]] == 4
            and ev["run"][t.columns["event"][i]] == 1]
    assert [t.sizes(i) for i in last] == [(4, 32), (), (4, 8)]


def _pair(tmp_path, arrays, mutate=None, buf_cut=None):
    raw, tensors = synth.pack(arrays)
    if mutate:
        tensors = mutate(tensors)
    et = tmp_path / "synthetic.etdump"
    et.write_bytes(synth.build_etdump([[("op", k, [tt], False) for k, tt in enumerate(tensors)]]))
    b = tmp_path / "synthetic.bin"
    b.write_bytes(raw if buf_cut is None else raw[:buf_cut])
    return et, b


def _check(et, b):
    data = read_etdump(et)
    with DebugBuffer(b) as buf:
        buf.check(data.tensors)
        return [np.array(buf.array(data.tensors, i)) for i in range(len(data.tensors))]


def test_synthetic_roundtrip_with_strides(tmp_path):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    nhwc = np.ascontiguousarray(a.transpose(0, 2, 1))       # memory in (0, 2, 1) order
    def channels_last(ts):
        st, sizes, strides, off = ts[1]
        return [ts[0], (st, [2, 3, 4], [12, 1, 3], off)]
    et, b = _pair(tmp_path, [np.int8([-128, 0, 127]), nhwc], mutate=channels_last)
    got = _check(et, b)
    assert got[0].tolist() == [-128, 0, 127]
    assert np.array_equal(got[1], a)                         # logical values through the strides


@pytest.mark.parametrize("how, message", [
    ("truncated", "run past the end of the debug buffer"),
    ("offset_past_end", "run past the end of the debug buffer"),
    ("negative_offset", "negative offset"),
    ("size_overflow", "overflows"),
    ("wrong_dtype", "is not an ExecuTorch ScalarType"),
    ("lying_strides", "not a dense layout"),
])
def test_lying_buffer_is_one_line(tmp_path, how, message):
    arrays = [np.ones((4, 8), np.float32), np.ones(16, np.float32)]
    edits = {
        "offset_past_end": lambda ts: [ts[0], (6, [16], [1], 1 << 20)],
        "negative_offset": lambda ts: [ts[0], (6, [16], [1], -64)],
        "size_overflow": lambda ts: [ts[0], (6, [1 << 40, 1 << 40], [1 << 40, 1], 0)],
        "wrong_dtype": lambda ts: [ts[0], (99, [16], [1], ts[1][3])],
        "lying_strides": lambda ts: [(6, [4, 8], [8, 8], 0), ts[1]],
    }
    et, b = _pair(tmp_path, arrays, mutate=edits.get(how), buf_cut=100 if how == "truncated" else None)
    with pytest.raises(FormatError) as ei:
        _check(et, b)
    line = str(ei.value)
    assert message in line and "\n" not in line and "synthetic.bin" in line


def test_chunks_cover_logical_order():
    a = np.arange(5 * 7 * 3, dtype=np.float64).reshape(5, 7, 3)
    view = a.transpose(2, 0, 1)                              # not contiguous
    for m in (1, 4, 7, 20, 1000):
        parts = list(chunks(view, m))
        assert all(p.size <= m for p in parts)
        assert np.array_equal(np.concatenate(parts), view.reshape(-1))


def test_reading_the_etdump_without_debug_events_has_no_tensors():
    data = read_etdump(ROOT / "tests" / "fixtures" / "real" / "llama_nodebug.etdump")
    assert data.tensors is None


def test_shared_tensor_list_cannot_multiply_tensors(monkeypatch):
    """Many debug events pointing at one TensorList of scalar tensors (no dims to charge): refused
    instead of listing events x list tensors rows, counted over the whole file (small chunks here:
    each one alone stays under the per-chunk bound)."""
    import flatbuffers

    from etscope.formats import etdump

    monkeypatch.setattr(etdump, "CHUNK_EVENTS", 100)
    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)
    scal = [synth._table(b, [(0, "i8", 6), (3, "i64", 0)]) for _ in range(20)]
    tl = synth._table(b, [(0, "off", synth._offsets(b, scal))])
    evs = []
    for k in range(3000):
        vo = synth._table(b, [(0, "i8", 6), (2, "off", tl)])
        de = synth._table(b, [(1, "i32", k), (2, "off", vo)])
        evs.append(synth._table(b, [(2, "off", de)]))
    run = synth._table(b, [(3, "off", synth._offsets(b, evs))])
    root = synth._table(b, [(1, "off", synth._offsets(b, [run]))])
    b.FinishSizePrefixed(root, file_identifier=b"ED00")
    data = bytes(b.Output())
    with pytest.raises(FormatError, match="tensor lists claim"):
        parse_etdump(data)


def test_mutated_inputs_give_a_result_or_one_format_error(tmp_path):
    """Random byte changes in a real ETDump (tensor tables included) and random buffer lengths: the
    statistics either come out or the error is a FormatError, never another exception."""
    import random

    from etscope.analysis.numerics.tensors import numerics
    from etscope.profile import load

    rng = random.Random(17)
    etd = (NUM / "num_xnn.etdump").read_bytes()
    buf = (NUM / "num_xnn.debugbuf").read_bytes()
    outcomes = {"ok": 0, "error": 0}
    for k in range(150):
        data = bytearray(etd)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(8, len(data))] = rng.randrange(256)
        e, b = tmp_path / f"m{k}.etdump", tmp_path / f"m{k}.bin"
        e.write_bytes(bytes(data))
        b.write_bytes(buf[:rng.choice([len(buf), rng.randrange(len(buf) + 1)])])
        try:
            p = load(e)
            with DebugBuffer(b) as db:
                numerics(p, db, chunk=64)
            outcomes["ok"] += 1
        except FormatError as err:
            assert "\n" not in str(err)
            outcomes["error"] += 1
    assert outcomes["ok"] and outcomes["error"]
