#!/usr/bin/env python3
"""Write a large ETDump by replicating the Execute runs of a real one (benchmark input, not a fixture).

    python benchmarks/replicate_etdump.py SRC.etdump N_EVENTS OUT.etdump

The source's profile events (names, instruction ids, chains, delegate ids, timestamps) are read with
etscope and written again as a valid, size-prefixed ``ED00`` flatbuffer: the source's first RunData
(``Default``: load and init) once, then its Execute runs over and over until about ``N_EVENTS``
events, each copy shifted in time so the runs stay in sequence. Debug and allocation events are
left out. Like ExecuTorch's flatcc writer, every event gets its own copy of its strings and events
share a handful of vtables; unlike it, the buffer is laid out front to back.

One copy of all source runs (the "cycle") is built once in Python; the copies are numpy byte
copies with two patches: each table's vtable offset (vtables stay at the start of the file) and
every start/end timestamp. 10M events from the 1000-run tiny-Llama ETDump: ~700 MB, ~20 s.
"""
from __future__ import annotations

import argparse
import os
import struct
import sys
import time

import numpy as np

_STR = struct.Struct("<I")


def _pad(buf: bytearray, align: int) -> None:
    buf.extend(b"\0" * (-len(buf) % align))


def _string(buf: bytearray, s: bytes) -> int:
    _pad(buf, 4)
    pos = len(buf)
    buf.extend(_STR.pack(len(s)) + s + b"\0")
    return pos


class _Vtables:
    """Vtables at the start of the file: ETDump, RunData, Event, ProfileEvent (by present fields)."""

    def __init__(self):
        self.buf = bytearray()
        self.pos: dict[tuple, int] = {}

    def get(self, key: tuple, table_size: int, offsets: list[int]) -> int:
        k = (key, table_size, tuple(offsets))
        if k not in self.pos:
            _pad(self.buf, 2)
            self.pos[k] = len(self.buf)
            self.buf.extend(struct.pack(f"<HH{len(offsets)}H", 4 + 2 * len(offsets), table_size, *offsets))
        return self.pos[k]


def _run_block(buf: bytearray, vt: _Vtables, name: bytes, events, patches) -> int:
    """Append one RunData (table, name, events vector, events) to ``buf``; returns its table position.

    Positions in ``buf`` are relative to the block; vtable offsets are filled in later, from
    ``patches['soffset']`` (table position, vtable position); ``patches['time']`` lists timestamps.
    """
    _pad(buf, 8)
    run_t = len(buf)
    buf.extend(b"\0" * 12)                       # soffset, name, events
    patches["soffset"].append((run_t, vt.get(("run",), 12, [4, 0, 0, 8])))
    name_pos = _string(buf, name)
    struct.pack_into("<I", buf, run_t + 4, name_pos - (run_t + 4))
    _pad(buf, 4)
    vec = len(buf)
    buf.extend(_STR.pack(len(events)) + b"\0" * (4 * len(events)))
    struct.pack_into("<I", buf, run_t + 8, vec - (run_t + 8))
    for i, (nm, did_str, chain, instr, did_int, start, end) in enumerate(events):
        _pad(buf, 8)
        ev_t = len(buf)
        struct.pack_into("<I", buf, vec + 4 + 4 * i, ev_t - (vec + 4 + 4 * i))
        buf.extend(b"\0" * 8)                    # Event: soffset, profile_event
        patches["soffset"].append((ev_t, vt.get(("event",), 8, [4])))
        _pad(buf, 8)
        p_t = len(buf)
        struct.pack_into("<I", buf, ev_t + 4, p_t - (ev_t + 4))
        # ProfileEvent: soffset | name | chain | instr | did_int | did_str | start u64 | end u64
        buf.extend(b"\0" * 40)
        offs = [4 if nm is not None else 0, 8, 12, 16, 20 if did_str is not None else 0, 0, 24, 32]
        patches["soffset"].append((p_t, vt.get(("profile",), 40, offs)))
        struct.pack_into("<iiiQQ", buf, p_t + 8, chain, instr, did_int, 0, 0)
        struct.pack_into("<QQ", buf, p_t + 24, start, end)
        patches["time"].extend((p_t + 24, p_t + 32))
        for slot, s in ((4, nm), (20, did_str)):
            if s is not None:
                sp = _string(buf, s)
                struct.pack_into("<I", buf, p_t + slot, sp - (p_t + slot))
    return run_t


def replicate(src: str, n_events: int, out: str, progress=None) -> dict:
    from etscope.formats.etdump import PROFILE, read_etdump

    t0 = time.time()
    d = read_etdump(src)
    ev = d.events
    enc = [s.encode("utf-8") for s in d.strings]

    def events_of(r):
        a, n = d.runs[r].first_event, d.runs[r].event_count
        sel = np.arange(a, a + n)
        sel = sel[ev["kind"][sel] == PROFILE]
        return [(enc[int(ev["name"][i])] if ev["name"][i] >= 0 else None,
                 enc[int(ev["delegate_id_str"][i])] if ev["delegate_id_str"][i] >= 0 else None,
                 int(ev["chain"][i]), int(ev["instruction_id"][i]), int(ev["delegate_id_int"][i]),
                 int(ev["start"][i]), int(ev["end"][i])) for i in sel]

    execute = [i for i, r in enumerate(d.runs) if r.name != "Default" and r.event_count]
    default = next((i for i, r in enumerate(d.runs) if r.name == "Default"), None)
    if not execute:
        raise SystemExit(f"{src}: no Execute runs to replicate")
    vt = _Vtables()
    vt.get(("root",), 12, [0, 8])                       # ETDump: version (absent), run_data
    head = {"soffset": [], "time": []}
    head_buf = bytearray()
    head_runs = []
    if default is not None:
        head_runs.append(_run_block(head_buf, vt, b"Default", events_of(default), head))
    cyc = {"soffset": [], "time": []}
    cyc_buf = bytearray()
    cyc_runs = []
    per_cycle_events = 0
    for r in execute:
        evs = events_of(r)
        per_cycle_events += len(evs)
        cyc_runs.append(_run_block(cyc_buf, vt, b"Execute", evs, cyc))
    _pad(cyc_buf, 8)
    starts = [e[5] for r in execute for e in events_of(r)[:1]]
    ends = [max((e[6] for e in events_of(r)), default=0) for r in execute[-1:]]
    period = (ends[0] - starts[0]) + 200_000 if starts and ends else 1_000_000
    copies = max(1, -(-max(0, n_events - len(head["time"]) // 2) // per_cycle_events))
    n_runs = len(head_runs) + copies * len(cyc_runs)

    # File: prefix | root offset | "ED00" | vtables | root table | run_data vector | head | cycles.
    prefix = 4
    vt_start = 8
    vt_bytes = bytes(vt.buf)
    root_t = vt_start + len(vt_bytes)
    root_t += -root_t % 8
    vec = root_t + 12
    head_base = vec + 4 + 4 * n_runs
    head_base += -head_base % 8
    cyc_base = head_base + len(head_buf)
    cyc_base += -cyc_base % 8
    stride = len(cyc_buf)
    total = cyc_base + copies * stride
    if total >= 2 ** 31:
        raise SystemExit(f"{total} bytes: over the 2 GB a flatbuffer can address; ask for fewer events")
    root_vt = vt_start + vt.pos[(("root",), 12, (0, 8))]

    front = bytearray(head_base)
    struct.pack_into("<I", front, 0, root_t)
    front[4:8] = b"ED00"
    front[vt_start:vt_start + len(vt_bytes)] = vt_bytes
    struct.pack_into("<iII", front, root_t, root_t - root_vt, 0, vec - (root_t + 8))
    struct.pack_into("<I", front, vec, n_runs)
    targets = [head_base + p for p in head_runs]
    slots = vec + 4 + 4 * np.arange(n_runs, dtype=np.int64)
    run_abs = np.concatenate([np.array(targets, dtype=np.int64),
                              (cyc_base + np.arange(copies, dtype=np.int64)[:, None] * stride
                               + np.array(cyc_runs, dtype=np.int64)[None, :]).reshape(-1)])
    np.frombuffer(front, dtype=np.uint8)[vec + 4:vec + 4 + 4 * n_runs] = \
        (run_abs - slots).astype("<u4").view(np.uint8)

    def patched(block: bytearray, base: int, patches) -> np.ndarray:
        arr = np.frombuffer(bytes(block), dtype=np.uint8).copy()
        for pos, vpos in patches["soffset"]:
            struct.pack_into("<i", arr, pos, base + pos - (vt_start + vpos))
        return arr

    head_arr = patched(head_buf, head_base, head)
    cyc_arr = patched(cyc_buf, cyc_base, cyc)
    soff = np.array([p for p, _ in cyc["soffset"]], dtype=np.int64)
    tpos = np.array(cyc["time"], dtype=np.int64)
    assert (soff % 4 == 0).all() and (tpos % 8 == 0).all() and stride % 8 == 0 and cyc_base % 8 == 0
    base_soff = cyc_arr.view("<i4")[soff // 4].copy()
    base_time = cyc_arr.view("<u8")[tpos // 8].copy()
    with open(out + ".tmp", "wb") as f:
        f.write(struct.pack("<I", total))
        f.write(front)
        f.write(head_arr.tobytes())
        f.write(b"\0" * (cyc_base - head_base - len(head_buf)))
        batch = max(1, (64 << 20) // max(stride, 1))
        for c0 in range(0, copies, batch):
            c1 = min(copies, c0 + batch)
            blk = np.tile(cyc_arr, c1 - c0).reshape(c1 - c0, stride)
            c = np.arange(c0, c1, dtype=np.int64)[:, None]
            s32 = blk.view("<i4")
            s32[:, soff // 4] = (base_soff[None, :] + c * stride).astype("<i4")
            t64 = blk.view("<u8")
            t64[:, tpos // 8] = base_time[None, :] + (c * period).astype(np.uint64)
            f.write(blk.tobytes())
            if progress:
                progress(c1, copies)
    os.replace(out + ".tmp", out)
    return {"path": out, "bytes": total + prefix, "events": len(head["time"]) // 2 + copies * per_cycle_events,
            "runs": n_runs, "source": src, "copies": copies, "seconds": round(time.time() - t0, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("n_events", type=float)
    ap.add_argument("out")
    a = ap.parse_args(argv)
    r = replicate(a.src, int(a.n_events), a.out)
    print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
