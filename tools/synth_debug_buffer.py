#!/usr/bin/env python3
"""Synthetic ETDump + debug buffer pairs (flatbuffers package, no torch): for hostile-input tests
and the 1 GB numerics benchmark. Files made with it are named ``synthetic_*``.

``build_etdump(runs)`` writes the ETDump schema's debug events with full Tensor tables (scalar type,
sizes, strides, offset) exactly as ``devtools/etdump/etdump_flatcc.cpp`` lays them out; each run is
a list of debug events ``(name, instruction_id, [tensor, ...], program_output[, delegate_debug_id_str])``
with ``tensor = (scalar_type, sizes, strides, offset)`` (one tensor is logged as a ``Tensor`` value,
several as a ``TensorList``) and profile events ``("P", name, instruction_id, start, end)``.
``pack(arrays)`` places numpy arrays 64-byte aligned (as the runtime's buffer data sink does) and
returns (buffer bytes, tensor tuples).

    python tools/synth_debug_buffer.py --big OUT_DIR [--gb 1]   # the benchmark's pair (not committed)
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

_SCALAR = {np.dtype("uint8"): 0, np.dtype("int8"): 1, np.dtype("int16"): 2, np.dtype("int32"): 3,
           np.dtype("int64"): 4, np.dtype("float16"): 5, np.dtype("float32"): 6, np.dtype("float64"): 7,
           np.dtype("bool"): 11, np.dtype("uint16"): 27}


def _table(b, fields, n_slots: int = 8) -> int:
    b.StartObject(n_slots)
    for slot, kind, val in fields:
        if val is None:
            continue
        {"i8": b.PrependInt8Slot, "u8": b.PrependUint8Slot, "i32": b.PrependInt32Slot,
         "u64": b.PrependUint64Slot, "i64": b.PrependInt64Slot, "u32": b.PrependUint32Slot,
         "off": b.PrependUOffsetTRelativeSlot}[kind](slot, val, 0)
    return b.EndObject()


def _offsets(b, offs) -> int:
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _longs(b, xs) -> int:
    b.StartVector(8, len(xs), 8)
    for x in reversed(xs):
        b.PrependInt64(int(x))
    return b.EndVector()


def build_etdump(runs) -> bytes:
    import flatbuffers

    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)
    run_offs = []
    for events in runs:
        ev_offs = []
        for event in events:
            if event[0] == "P":
                _, name, instr, start, end = event
                n = b.CreateString(name)
                pe = _table(b, [(0, "off", n), (1, "i32", 0), (2, "i32", instr), (3, "i32", -1),
                                (6, "u64", start), (7, "u64", end)])
                ev_offs.append(_table(b, [(0, "off", pe)]))
                continue
            name, instr, tensors, program_output = event[:4]
            did = b.CreateString(event[4]) if len(event) > 4 and event[4] is not None else None
            touts = []
            for stype, sizes, strides, offset in tensors:
                sv, tv = _longs(b, sizes), _longs(b, strides)
                touts.append(_table(b, [(0, "i8", stype), (1, "off", sv), (2, "off", tv), (3, "i64", offset)]))
            out = _table(b, [(0, "u8", 1)]) if program_output else None
            if len(touts) == 1:
                vo = _table(b, [(0, "i8", 5), (1, "off", touts[0]), (7, "off", out)])
            else:
                tl = _table(b, [(0, "off", _offsets(b, touts))])
                vo = _table(b, [(0, "i8", 6), (2, "off", tl), (7, "off", out)])
            n = b.CreateString(name) if name is not None else None
            de = _table(b, [(0, "u64", 0), (1, "i32", instr), (2, "off", vo), (3, "i32", -1), (4, "off", did),
                            (5, "off", n)])
            ev_offs.append(_table(b, [(2, "off", de)]))
        events_v = _offsets(b, ev_offs)
        rn = b.CreateString("Execute")
        run_offs.append(_table(b, [(0, "off", rn), (1, "i32", -1), (3, "off", events_v)]))
    root = _table(b, [(0, "u32", 0), (1, "off", _offsets(b, run_offs))])
    b.FinishSizePrefixed(root, file_identifier=b"ED00")
    return bytes(b.Output())


def contiguous_strides(sizes) -> list[int]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= s
    return out[::-1]


def pack(arrays, align: int = 64) -> tuple[bytes, list[tuple]]:
    """numpy arrays -> (buffer bytes, [(scalar_type, sizes, strides, offset)]), 64-byte aligned."""
    parts, tensors, pos = [], [], 0
    for a in arrays:
        a = np.ascontiguousarray(a)
        pad = (-pos) % align
        parts.append(b"\0" * pad)
        pos += pad
        tensors.append((_SCALAR[a.dtype], list(a.shape), contiguous_strides(a.shape), pos))
        parts.append(a.tobytes())
        pos += a.nbytes
    return b"".join(parts), tensors


def write_big(out: Path, gb: float = 1.0, seed: int = 7) -> tuple[Path, Path, Path, Path]:
    """A candidate/reference pair whose buffers hold ``gb`` GB each: 8 float32 tensors (1 run, 8
    instructions), the candidate = reference + growing noise. Written chunk by chunk (never whole in
    memory). Returns (cand.etdump, cand.bin, ref.etdump, ref.bin)."""
    out.mkdir(parents=True, exist_ok=True)
    n_t = 8
    numel = int(gb * (1 << 30)) // 4 // n_t
    numel -= numel % 1024
    rows = numel // 1024
    tensors = [(6, [rows, 1024], [1024, 1], k * numel * 4) for k in range(n_t)]
    events = [[(f"op_{k}", k, [tensors[k]], False) for k in range(n_t)]]
    rng = np.random.default_rng(seed)
    paths = []
    for which in ("cand", "ref"):
        et, bin_ = out / f"synthetic_big_{which}.etdump", out / f"synthetic_big_{which}.bin"
        et.write_bytes(build_etdump(events))
        with open(bin_, "wb") as fh:
            for k in range(n_t):
                step = 1 << 22
                for a in range(0, numel, step):
                    m = min(step, numel - a)
                    base = np.sin(np.arange(a, a + m, dtype=np.float64) * 1e-3 + k).astype(np.float32)
                    if which == "cand":
                        base = base + rng.standard_normal(m).astype(np.float32) * np.float32(1e-4 * 4 ** k)
                    fh.write(base.tobytes())
        paths += [et, bin_]
    return tuple(paths)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--big", type=Path, required=True, help="output folder")
    ap.add_argument("--gb", type=float, default=1.0)
    args = ap.parse_args(argv)
    for p in write_big(args.big, args.gb):
        print(f"{os.path.getsize(p):>12}  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
