#!/usr/bin/env python3
"""Synthetic ETDumps (and ETRecords) as ExecuTorch's runtime + Qualcomm QNN backend write them.

No ETDump from a real QNN run is public and none can be produced without a Snapdragon device, so
this tool re-creates one from first principles, fed with real QNN profile values (the HTP emulator
CSVs in ``shared/data/qnn-htp-emulator``). What it mimics, and where that comes from
(pytorch/executorch @ main, Aug 2026):

* ``ETDumpGen`` (``devtools/etdump/etdump_flatcc.cpp``) on top of flatcc's builder
  (``third-party/flatcc``, ``src/runtime/builder.c``). :class:`ETDumpWriter` follows the same calls
  (``create_event_block``, ``start_profiling``/``end_profiling``, ``log_profiling_delegate``,
  ``set_chain_debug_handle``, ``get_etdump_data``) and reproduces flatcc's byte layout: the buffer is
  built back to front, every object is emitted when it is finished (strings when created, tables at
  their end, so a parent event is stored *after* the events nested in it), fields are laid out in the
  order they were added, scalar fields equal to their schema default are not stored at all (so
  ``chain_index == 0``, ``start_time == 0`` and a 0-cycle ``end_time`` are absent), vtables are
  de-duplicated and emitted just in front of the first table using them, and the buffer is
  size-prefixed with identifier ``ED00``. Replaying the events of the real
  ``shared/data/executorch-cpu/llama_nodebug.etdump`` through this writer gives the file back
  byte for byte (see ``replay_etdump``).
* ``Method::execute``/``execute_instruction`` (``runtime/executor/method.cpp``) and
  ``Program::load_method`` (``program.cpp``): a ``Default`` RunData holding ``Method::init`` then
  ``Program::load_method`` (inner scope ends first), one ``Execute`` RunData per execute;
  ``Method::execute`` has chain_index -1 and instruction_id 0; instruction events have chain_index 0
  and instruction_id = the instruction's index; a kernel instruction is ``OPERATOR_CALL`` wrapping
  ``native_call_<op>.<overload>`` (codegen ``gen.py``), a delegate instruction is ``DELEGATE_CALL``.
* ``QnnProfile::ProfileData`` (``backends/qualcomm/runtime/backends/QnnProfiler.cpp``), called from
  ``QnnExecuTorchBackend::execute`` right after the graph execute, i.e. inside the DELEGATE_CALL
  scope: for every top-level QNN event, in QNN's order, ``event_tracer_log_profiling_delegate(name +
  unit suffix, -1, 0, value)``; right after the event whose type is the HTP node-time parent
  (``Accelerator (execute) time (cycles)``) its NODE sub-events (unit us or cycles) with their raw
  identifier. Unit suffixes: us -> " (us)", bytes -> " (bytes)", count -> " (count)", cycles and
  backend (and anything else) -> "". These delegate events have no ``name``, ``delegate_debug_id_str``
  = that text, no ``delegate_debug_id_int`` (reads back as -1), an empty ``delegate_debug_metadata``
  vector, start_time 0 and end_time = the value. They are stored before their DELEGATE_CALL event.

Usage::

    python tools/synth_qnn_etdump.py --out tests/fixtures/qnn_etdump      # regenerate fixtures
    python tools/synth_qnn_etdump.py --big-events 10000000 /tmp/big.etdump  # large file

Importable: ``build_qnn_etdump(spec) -> bytes`` (see its docstring), ``build_fixture(name)``,
``write_big_etdump(path, n_events)``, ``build_etrecord(...)``.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import random
import re
import struct
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

# --------------------------------------------------------------------------------------------------
# flatcc-compatible back-to-front builder, specialised for the ETDump schema
# --------------------------------------------------------------------------------------------------

_ETDUMP_IDENTIFIER = b"ED00"
_ETDUMP_VERSION = 0  # devtools/etdump/etdump_flatcc.h: #define ETDUMP_VERSION 0

# Field slots (devtools/etdump/etdump_schema_flatcc.fbs)
_ETDUMP_VERSION_SLOT, _ETDUMP_RUN_DATA_SLOT = 0, 1
_RD_NAME, _RD_BUNDLED_INPUT_INDEX, _RD_ALLOCATORS, _RD_EVENTS = 0, 1, 2, 3
_EV_PROFILE, _EV_ALLOCATION, _EV_DEBUG = 0, 1, 2
(_PE_NAME, _PE_CHAIN_INDEX, _PE_INSTRUCTION_ID, _PE_DELEGATE_DEBUG_ID_INT, _PE_DELEGATE_DEBUG_ID_STR,
 _PE_DELEGATE_DEBUG_METADATA, _PE_START_TIME, _PE_END_TIME) = range(8)

# (slot, struct code, default) of every scalar ProfileEvent field; offsets use code "O".
_SCALAR_DEFAULTS = {
    _PE_CHAIN_INDEX: 0, _PE_INSTRUCTION_ID: -1, _PE_DELEGATE_DEBUG_ID_INT: -1,
    _PE_START_TIME: 0, _PE_END_TIME: 0,
}
_FIELD_SIZE = {"Q": 8, "q": 8, "i": 4, "I": 4, "O": 4, "b": 1, "B": 1}

kUnsetChainId = -1
kUnsetDebugHandle = 0
kUnsetDelegateDebugIntId = -1


class _FlatccBuffer:
    """Back-to-front emitter with flatcc's padding rules.

    Positions are flatcc "refs": negative offsets from the end of the front-emitted area (the end of
    the final buffer, since vtables are not clustered at the back in ETDumps written by ExecuTorch:
    they sit right behind the first table using them, as in the real files).
    """

    def __init__(self, capacity: int = 1 << 16):
        self.buf = bytearray(capacity)
        self.cap = capacity
        self.start = 0  # emit_start: ref of the first byte emitted so far (<= 0)
        self.min_align = 1
        self.vtables: dict[bytes, int] = {}

    # -- raw space ---------------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        used = -self.start
        new_cap = max(self.cap * 2, used + need + 1024)
        nb = bytearray(new_cap)
        nb[new_cap - used:] = self.buf[self.cap - used:]
        self.buf, self.cap = nb, new_cap

    def alloc(self, n: int) -> int:
        """Reserve n bytes in front; returns the buffer index of their first byte."""
        if n + (-self.start) > self.cap:
            self._grow(n)
        self.start -= n
        return self.cap + self.start

    def idx(self, ref: int) -> int:
        return self.cap + ref

    # -- objects -----------------------------------------------------------------------------------
    def string(self, s: bytes) -> int:
        n = len(s)
        pad = ((self.start - (n + 1)) & 3) + 1
        i = self.alloc(4 + n + pad)
        struct.pack_into("<I", self.buf, i, n)
        self.buf[i + 4:i + 4 + n] = s
        # bytes after the string are already zero (fresh buffer)
        return self.start

    def ubyte_vector(self, data: bytes) -> int:
        n = len(data)
        self.min_align = max(self.min_align, 4)
        pad = (self.start - n) & 3
        i = self.alloc(4 + n + pad)
        struct.pack_into("<I", self.buf, i, n)
        if n:
            self.buf[i + 4:i + 4 + n] = data
        return self.start

    def offset_vector(self, refs: Sequence[int]) -> int:
        n = len(refs)
        self.min_align = max(self.min_align, 4)
        pad = (self.start - 4 * n) & 3
        i = self.alloc(4 + 4 * n + pad)
        base = self.start
        struct.pack_into("<I", self.buf, i, n)
        if n:
            rel = [r - (base + 4 + 4 * k) for k, r in enumerate(refs)]
            struct.pack_into("<%dI" % n, self.buf, i + 4, *rel)
        return base

    def table(self, fields: Sequence[tuple[int, str, int]]) -> int:
        """Emit a table; ``fields`` = (slot, code, value) in the order they were added.

        code "O" is a uoffset to the ref ``value``; other codes are struct scalars. Caller has
        already dropped default-valued scalars (flatcc's generated ``_add`` functions do).
        """
        ds = 0
        align = 4
        layout = []
        id_end = 0
        for slot, code, value in fields:
            sz = _FIELD_SIZE[code]
            off = (ds + sz - 1) & ~(sz - 1)
            layout.append((off, code, value))
            ds = off + sz
            if sz > align:
                align = sz
            if slot + 1 > id_end:
                id_end = slot + 1
        vs = [0] * id_end
        for (slot, _, _), (off, _, _) in zip(fields, layout):
            vs[slot] = off + 4
        vt = struct.pack("<%dH" % (id_end + 2), 2 * (id_end + 2), ds + 4, *vs)
        return self._table_with_vtable(vt, ds, align, layout)

    def _table_with_vtable(self, vt: bytes, ds: int, align: int, layout) -> int:
        vt_ref = self.vtables.get(vt)
        if vt_ref is None:
            i = self.alloc(len(vt))
            self.buf[i:i + len(vt)] = vt
            vt_ref = self.start
            self.vtables[vt] = vt_ref
        if align > self.min_align:
            self.min_align = align
        pad = (self.start - ds) & (align - 1)
        i = self.alloc(4 + ds + pad)
        base = self.start
        struct.pack_into("<i", self.buf, i, base - vt_ref)
        for off, code, value in layout:
            if code == "O":
                struct.pack_into("<I", self.buf, i + 4 + off, value - (base + 4 + off))
            else:
                struct.pack_into("<" + code, self.buf, i + 4 + off, value)
        return base

    def finish(self, root_ref: int, identifier: bytes, with_size: bool = True) -> bytes:
        align = max(self.min_align, 4)
        hdr = (8 if with_size else 4) + len(identifier)
        pad = (self.start - hdr) & (align - 1)
        i = self.alloc(hdr + pad)
        total = -self.start
        buffer_base = self.start + (4 if with_size else 0)
        j = i
        if with_size:
            struct.pack_into("<I", self.buf, j, total - 4)
            j += 4
        struct.pack_into("<I", self.buf, j, root_ref - buffer_base)
        self.buf[j + 4:j + 4 + len(identifier)] = identifier
        return bytes(self.buf[i:])


@dataclass
class _Entry:
    """EventTracerEntry: what start_profiling returns."""
    name_ref: int  # -1 when no name
    chain_id: int
    debug_handle: int
    start_time: int


class ETDumpWriter:
    """Same calls and the same bytes as ExecuTorch's ``ETDumpGen`` (dynamic-buffer mode)."""

    def __init__(self, capacity: int = 1 << 16):
        self.fb = _FlatccBuffer(capacity)
        self.chain_id = kUnsetChainId
        self.debug_handle = kUnsetDebugHandle
        self.bundled_input_index = -1
        self.state = "init"
        self.num_blocks = 0
        self._run_refs: list[int] = []
        self._rd_fields: list[tuple[int, str, int]] = []
        self._events: list[int] = []
        self._allocators: list[int] = []
        self._done: bytes | None = None

    # -- EventTracer API ---------------------------------------------------------------------------
    def set_chain_debug_handle(self, chain_id: int, debug_handle: int) -> None:
        self.chain_id = chain_id
        self.debug_handle = debug_handle

    def create_event_block(self, name: str) -> None:
        if self._done is not None:
            raise RuntimeError("writer already finished")
        if self.state == "events":
            self._end_events()
        if self.num_blocks > 0:
            self._end_run_data()
        self.num_blocks += 1
        self._rd_fields = [(_RD_NAME, "O", self.fb.string(name.encode()))]
        if self.bundled_input_index != -1:
            self._rd_fields.append((_RD_BUNDLED_INPUT_INDEX, "i", self.bundled_input_index))
        self.state = "block"

    def track_allocator(self, name: str) -> int:
        if self.state not in ("block", "allocators"):
            raise RuntimeError("allocators can only be added right after a block is created")
        self.state = "allocators"
        name_ref = self.fb.string(name.encode())
        self._allocators.append(self.fb.table([(0, "O", name_ref)]))
        return len(self._allocators)

    def _check_ready_to_add_events(self) -> None:
        if self.state != "events":
            if self.state not in ("allocators", "block"):
                raise RuntimeError("ETDumpGen in an invalid state. Cannot add new events now.")
            if self.state == "allocators":
                self._rd_fields.append((_RD_ALLOCATORS, "O", self.fb.offset_vector(self._allocators)))
                self._allocators = []
            self._events = []
            self.state = "events"

    def start_profiling(self, name: str | None, start_time: int,
                        chain_id: int = kUnsetChainId, debug_handle: int = kUnsetDebugHandle) -> _Entry:
        name_ref = self.fb.string(name.encode()) if name is not None else -1
        if chain_id == -1:
            chain_id, debug_handle = self.chain_id, self.debug_handle
        return _Entry(name_ref, chain_id, debug_handle, start_time)

    def end_profiling(self, entry: _Entry, end_time: int) -> None:
        self._check_ready_to_add_events()
        f = []
        if entry.start_time != 0:
            f.append((_PE_START_TIME, "Q", entry.start_time))
        if end_time != 0:
            f.append((_PE_END_TIME, "Q", end_time))
        if entry.chain_id != 0:
            f.append((_PE_CHAIN_INDEX, "i", entry.chain_id))
        if _i32(entry.debug_handle) != -1:
            f.append((_PE_INSTRUCTION_ID, "i", _i32(entry.debug_handle)))
        if entry.name_ref != -1:
            f.append((_PE_NAME, "O", entry.name_ref))
        self._push_profile_event(self.fb.table(f))

    def log_profiling_delegate(self, name: str | None, delegate_debug_index: int,
                               start_time: int, end_time: int, metadata: bytes = b"") -> None:
        if (name is None) == (delegate_debug_index == kUnsetDelegateDebugIntId):
            raise ValueError("Only name or delegate_debug_index can be valid")
        self._check_ready_to_add_events()
        str_ref = self.fb.string(name.encode()) if name is not None else -1
        f = []
        if start_time != 0:
            f.append((_PE_START_TIME, "Q", start_time))
        if end_time != 0:
            f.append((_PE_END_TIME, "Q", end_time))
        if self.chain_id != 0:
            f.append((_PE_CHAIN_INDEX, "i", self.chain_id))
        if _i32(self.debug_handle) != -1:
            f.append((_PE_INSTRUCTION_ID, "i", _i32(self.debug_handle)))
        if str_ref == -1:
            if delegate_debug_index != -1:
                f.append((_PE_DELEGATE_DEBUG_ID_INT, "i", delegate_debug_index))
        else:
            f.append((_PE_DELEGATE_DEBUG_ID_STR, "O", str_ref))
        f.append((_PE_DELEGATE_DEBUG_METADATA, "O", self.fb.ubyte_vector(metadata)))
        self._push_profile_event(self.fb.table(f))

    def get_etdump_data(self) -> bytes:
        if self._done is not None:
            return self._done
        if self.state == "events":
            self._end_events()
        elif self.state == "allocators":
            self._rd_fields.append((_RD_ALLOCATORS, "O", self.fb.offset_vector(self._allocators)))
        elif self.state == "init":
            return b""
        self._end_run_data()
        runs_ref = self.fb.offset_vector(self._run_refs)
        root_fields = []
        if _ETDUMP_VERSION != 0:
            root_fields.append((_ETDUMP_VERSION_SLOT, "I", _ETDUMP_VERSION))
        root_fields.append((_ETDUMP_RUN_DATA_SLOT, "O", runs_ref))
        root = self.fb.table(root_fields)
        self._done = self.fb.finish(root, _ETDUMP_IDENTIFIER, with_size=True)
        self.state = "done"
        return self._done

    # -- internals ---------------------------------------------------------------------------------
    def _push_profile_event(self, pe_ref: int) -> None:
        self._events.append(self.fb.table([(_EV_PROFILE, "O", pe_ref)]))

    def _end_events(self) -> None:
        self._rd_fields.append((_RD_EVENTS, "O", self.fb.offset_vector(self._events)))
        self._events = []

    def _end_run_data(self) -> None:
        self._run_refs.append(self.fb.table(self._rd_fields))
        self._rd_fields = []


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


# --------------------------------------------------------------------------------------------------
# Minimal reader (profile events only) and replay, used to prove the writer's byte layout
# --------------------------------------------------------------------------------------------------

def read_etdump_profile(data: bytes) -> list[dict]:
    """Parse a size-prefixed ETDump into [{name, events: [dict]}]; profile events only.

    Each event dict: name, chain_index, instruction_id, delegate_debug_id_int,
    delegate_debug_id_str, delegate_debug_metadata (None when absent), start_time, end_time;
    non-profile events come back as {"kind": "allocation"|"debug"}.
    """
    mv = memoryview(data)
    u32 = lambda p: struct.unpack_from("<I", mv, p)[0]  # noqa: E731

    def field(t, slot):
        vt = t - struct.unpack_from("<i", mv, t)[0]
        vs = struct.unpack_from("<H", mv, vt)[0]
        if 4 + 2 * slot + 2 > vs:
            return 0
        o = struct.unpack_from("<H", mv, vt + 4 + 2 * slot)[0]
        return t + o if o else 0

    def ref(p):
        return p + u32(p)

    def string(t, slot):
        p = field(t, slot)
        if not p:
            return None
        s = ref(p)
        return bytes(mv[s + 4:s + 4 + u32(s)]).decode()

    def scalar(t, slot, fmt, default):
        p = field(t, slot)
        return struct.unpack_from("<" + fmt, mv, p)[0] if p else default

    def vec(t, slot):
        p = field(t, slot)
        if not p:
            return []
        v = ref(p)
        return [ref(v + 4 + 4 * k) for k in range(u32(v))]

    if bytes(mv[8:12]) != _ETDUMP_IDENTIFIER:
        raise ValueError("not a size-prefixed ED00 buffer")
    root = 4 + u32(4)
    runs = []
    for rd in vec(root, _ETDUMP_RUN_DATA_SLOT):
        evs = []
        for ev in vec(rd, _RD_EVENTS):
            pp = field(ev, _EV_PROFILE)
            if not pp:
                evs.append({"kind": "allocation" if field(ev, _EV_ALLOCATION) else "debug"})
                continue
            pe = ref(pp)
            mp = field(pe, _PE_DELEGATE_DEBUG_METADATA)
            meta = None
            if mp:
                m = ref(mp)
                meta = bytes(mv[m + 4:m + 4 + u32(m)])
            evs.append({
                "kind": "profile",
                "name": string(pe, _PE_NAME),
                "chain_index": scalar(pe, _PE_CHAIN_INDEX, "i", 0),
                "instruction_id": scalar(pe, _PE_INSTRUCTION_ID, "i", -1),
                "delegate_debug_id_int": scalar(pe, _PE_DELEGATE_DEBUG_ID_INT, "i", -1),
                "delegate_debug_id_str": string(pe, _PE_DELEGATE_DEBUG_ID_STR),
                "delegate_debug_metadata": meta,
                "start_time": scalar(pe, _PE_START_TIME, "Q", 0),
                "end_time": scalar(pe, _PE_END_TIME, "Q", 0),
            })
        runs.append({"name": string(rd, _RD_NAME),
                     "bundled_input_index": scalar(rd, _RD_BUNDLED_INPUT_INDEX, "i", -1),
                     "events": evs})
    return runs


def replay_etdump(data: bytes) -> bytes:
    """Re-emit a profile-only ETDump through :class:`ETDumpWriter`, in the runtime's call order.

    Non-delegate events had their name string created when they started (start_profiling), so
    their starts are interleaved by timestamp; delegate events (delegate_debug_metadata present) are
    logged where they are stored, after the start of the DELEGATE_CALL that encloses them.
    """
    runs = read_etdump_profile(data)
    w = ETDumpWriter(capacity=max(1 << 16, len(data) + 1024))
    for run in runs:
        w.bundled_input_index = run["bundled_input_index"]
        w.create_event_block(run["name"])
        evs = run["events"]
        if any(e["kind"] != "profile" for e in evs):
            raise ValueError("replay supports profile events only")
        is_del = [e["delegate_debug_metadata"] is not None for e in evs]
        # order of string creation: by start_time among non-delegate events
        pending = sorted((e["start_time"], k) for k, e in enumerate(evs) if not is_del[k])
        entries: dict[int, _Entry] = {}
        pi = 0

        def start_until(t, inclusive=True):
            nonlocal pi
            while pi < len(pending) and (pending[pi][0] <= t if inclusive else pending[pi][0] < t):
                k = pending[pi][1]
                e = evs[k]
                entries[k] = w.start_profiling(e["name"], e["start_time"], e["chain_index"],
                                               e["instruction_id"] & 0xFFFFFFFF)
                if e["chain_index"] == -1:  # resolved from the writer's current state
                    entries[k].chain_id, entries[k].debug_handle = -1, e["instruction_id"]
                pi += 1

        for k, e in enumerate(evs):
            if is_del[k]:
                nxt = next((j for j in range(k + 1, len(evs)) if not is_del[j]), None)
                start_until(evs[nxt]["start_time"] if nxt is not None else 0)
                w.set_chain_debug_handle(e["chain_index"], e["instruction_id"] & 0xFFFFFFFF)
                w.log_profiling_delegate(e["delegate_debug_id_str"], e["delegate_debug_id_int"]
                                         if e["delegate_debug_id_str"] is None else -1,
                                         e["start_time"], e["end_time"], e["delegate_debug_metadata"])
            else:
                start_until(e["end_time"], inclusive=False)
                if k not in entries:
                    start_until(e["start_time"])
                w.end_profiling(entries.pop(k), e["end_time"])
    return w.get_etdump_data()


# --------------------------------------------------------------------------------------------------
# QNN profile events
# --------------------------------------------------------------------------------------------------

# QnnProfile_EventUnit_t as the CSV writers spell it -> ExecuTorch's suffix (QnnProfiler.cpp
# get_event_unit: MICROSEC " (us)", BYTES " (bytes)", COUNT " (count)", BACKEND/CYCLES/other "").
UNIT_SUFFIX = {"US": " (us)", "BYTES": " (bytes)", "COUNT": " (count)", "CYCLES": "", "BACKEND": "",
               "OBJECT": ""}
# HtpBackend::IsProfileEventTypeParentOfNodeTime: QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE
NODE_PARENT_EVENT = "Accelerator (execute) time (cycles)"


def et_delegate_name(identifier: str, unit: str) -> str:
    """The delegate_debug_id_str ExecuTorch stores for a top-level QNN event."""
    return identifier + UNIT_SUFFIX.get(unit.upper(), "")


@dataclass
class QnnEvent:
    """A top-level QNN profile event and, for the node-time parent, its NODE sub-events."""
    name: str                 # QNN identifier, e.g. "QNN (execute) time"
    value: int
    unit: str                 # US, CYCLES, COUNT, BYTES, BACKEND, OBJECT
    nodes: list[tuple[str, int]] = field(default_factory=list)  # (identifier, value), cycles

    def to_json(self) -> dict:
        d = {"name": self.name, "value": self.value, "unit": self.unit}
        if self.nodes:
            d["nodes"] = [[n, v] for n, v in self.nodes]
        return d


def qnn_block_from_json(items) -> list[QnnEvent]:
    out = []
    for it in items:
        if isinstance(it, QnnEvent):
            out.append(it)
        elif isinstance(it, dict):
            out.append(QnnEvent(it["name"], int(it["value"]), it.get("unit", "US"),
                                [(n, int(v)) for n, v in it.get("nodes", [])]))
        else:  # (name, value, unit[, nodes])
            out.append(QnnEvent(it[0], int(it[1]), it[2],
                                [(n, int(v)) for n, v in (it[3] if len(it) > 3 else [])]))
    return out


def qnn_block(top: Sequence, nodes: Sequence[tuple[str, int]] = (),
              node_parent: str = NODE_PARENT_EVENT) -> list[QnnEvent]:
    """Convenience: top-level (name, value, unit) list plus the per-op (name, cycles) list.

    The node rows are attached to the event named ``node_parent``; if the top list has no such event
    one is inserted (value = sum of node cycles) before the first microsecond event named
    "Accelerator (execute) time", or at the end.
    """
    evs = qnn_block_from_json(top)
    nodes = [(n, int(v)) for n, v in nodes]
    if nodes:
        parent = next((e for e in evs if e.name == node_parent), None)
        if parent is None:
            parent = QnnEvent(node_parent, sum(v for _, v in nodes), "CYCLES")
            k = next((i for i, e in enumerate(evs) if e.name == "Accelerator (execute) time"), len(evs))
            evs.insert(k, parent)
        parent.nodes = nodes
    return evs


@dataclass
class QnnCsv:
    finalize: list[QnnEvent]
    executes: list[list[QnnEvent]]   # one block per graph execute, in file order


def parse_qnn_profile_csv(path: str | os.PathLike) -> QnnCsv:
    """Parse a QNN profile CSV (qnn-profile-viewer / ORT QNN EP) into per-execute blocks.

    ROOT rows are top-level events; SUB-EVENT rows belong to the preceding ROOT event. An execute
    block ends with the ROOT "QNN (execute) time" row; ROOT rows before the first execute event
    that are finalize/init (Message FINALIZE/INIT...) go to ``finalize``. ``UNKNOWN`` values read as 0.
    """
    finalize: list[QnnEvent] = []
    executes: list[list[QnnEvent]] = []
    cur: list[QnnEvent] = []
    last: QnnEvent | None = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            level = (row.get("Event Level") or "").strip()
            ident = (row.get("Event Identifier") or "").strip()
            unit = (row.get("Unit of Measurement") or "").strip().upper()
            msg = (row.get("Message") or "").strip()
            raw = (row.get("Time") or "").strip()
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if level == "ROOT":
                ev = QnnEvent(ident, value, unit)
                if msg in ("FINALIZE", "INIT", "DEINIT") or "(finalize)" in ident:
                    finalize.append(ev)
                    last = ev
                    continue
                cur.append(ev)
                last = ev
                if msg == "EXECUTE" or ident == "QNN (execute) time":
                    executes.append(cur)
                    cur = []
            elif level == "SUB-EVENT" and last is not None:
                if msg == "NODE":
                    last.nodes.append((ident, value))
    if cur:
        executes.append(cur)
    return QnnCsv(finalize, executes)


def block_node_cycles(block: Sequence[QnnEvent]) -> int:
    return sum(v for e in block for _, v in e.nodes)


def block_value(block: Sequence[QnnEvent], name: str, default: int | None = None) -> int | None:
    for e in block:
        if e.name == name:
            return e.value
    return default


# --------------------------------------------------------------------------------------------------
# ONNX/ORT node names (emulator CSVs) -> edge FX node names (as ExecuTorch's QNN builders name ops)
# --------------------------------------------------------------------------------------------------

# ONNX op type -> edge dialect target (aten.<op>.<overload> or quantized_decomposed...)
ONNX_TO_EDGE_TARGET = {
    "Conv": "aten.convolution.default",
    "HardSwish": "aten.hardswish.default",
    "Clip": "aten.hardtanh.default",
    "Relu": "aten.relu.default",
    "Sigmoid": "aten.sigmoid.default",
    "Add": "aten.add.Tensor",
    "Mul": "aten.mul.Tensor",
    "Div": "aten.div.Tensor",
    "Sqrt": "aten.sqrt.default",
    "Pow": "aten.pow.Tensor_Scalar",
    "Max": "aten.clamp.default",
    "GlobalAveragePool": "aten.mean.dim",
    "ReduceMean": "aten.mean.dim",
    "MaxPool": "aten.max_pool2d.default",
    "Flatten": "aten.view_copy.default",
    "Reshape": "aten.view_copy.default",
    "OutputReshape": "aten.view_copy.default",
    "Transpose": "aten.permute_copy.default",
    "Gemm": "aten.linear.default",
    "Linear": "aten.linear.default",
    "MatMul": "aten.matmul.default",
    "Softmax": "aten._softmax.default",
    "LayerNormalization": "aten.native_layer_norm.default",
    "QuantizeLinear": "quantized_decomposed.quantize_per_tensor.default",
    "DequantizeLinear": "quantized_decomposed.dequantize_per_tensor.default",
    "ReduceSumSquare": "aten.sum.dim_IntList",
}
_LINEAR_PARENTS = re.compile(r"(_proj|fc\d*|c_fc|c_proj|lm_head|^proj|classifier)$")
_QNN_NODE_RE = re.compile(r"^(?P<name>.*):(?P<opid>OpId_\d+) \(cycles\)$")
_TOKEN_RE = re.compile(r"^(?P<base>.*?)(?P<token>_token_\d+(?:_\d+)?)$")


def fx_base_name(target: str) -> str:
    """FX's default node name for a call_function target: aten.add.Tensor -> aten_add_tensor."""
    return re.sub(r"[^0-9a-zA-Z_]+", "_", target).lower()


@dataclass
class OnnxNodeInfo:
    identifier: str          # full QNN identifier, e.g. "/blocks.0/dw/Conv_token_5:OpId_38 (cycles)"
    base: str                # ONNX node name without token suffix, e.g. "/blocks.0/dw/Conv"
    token: str               # "_token_5" or ""
    opid: str                # "OpId_38"
    op_type: str             # "Conv"
    module_path: str         # "blocks.0.dw"
    target: str              # "aten.convolution.default"
    inserted: bool           # added by the backend (layout transposes, output reshapes): not an FX node


def classify_qnn_node(identifier: str) -> OnnxNodeInfo | None:
    """Split an emulator NODE identifier; None for Input/Output/nameless OpId rows (kept as is)."""
    m = _QNN_NODE_RE.match(identifier)
    if not m or not m.group("name"):
        return None
    name = m.group("name")
    t = _TOKEN_RE.match(name)
    base, token = (t.group("base"), t.group("token")) if t else (name, "")
    parts = [p for p in base.split("/") if p]
    comp = parts[-1] if parts else base
    module_path = ".".join(parts[:-1])
    inserted = False
    if comp.endswith("_OutputReshape"):
        op = "OutputReshape"
        inserted = True
    elif re.search(r"_DequantizeLinear(_\d+)?$", comp):
        op = "DequantizeLinear"
    elif re.search(r"_QuantizeLinear(_\d+)?$", comp):
        op = "QuantizeLinear"
    else:
        op = re.sub(r"(_\d+)+$", "", comp)
        if op not in ONNX_TO_EDGE_TARGET and "_" in op:
            op = op.split("_", 1)[0]          # Add_pos, Add_mask
    if not base.startswith("/") and op == "Transpose":
        inserted = True                         # layout transform (no source path)
    target = ONNX_TO_EDGE_TARGET.get(op, "aten.%s.default" % re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower())
    if op == "MatMul" and _LINEAR_PARENTS.search(parts[-2] if len(parts) > 1 else ""):
        target = "aten.linear.default"
    return OnnxNodeInfo(identifier, base, token, m.group("opid"), op, module_path, target, inserted)


@dataclass
class GraphOp:
    """One op of the synthetic edge graph (an FX node, or a backend-inserted op)."""
    fx_name: str
    target: str
    module_path: str
    source: str                # ONNX node name it stands for ("" for CPU ops added here)
    partition: int | None      # QNN partition index, None = CPU (not delegated)
    inserted: bool = False     # backend-inserted: in QNN's names, not in the ETRecord graph
    debug_handle: int | None = None
    kernel: str | None = None  # CPU ops: native_call_* kernel name


def _op_key(info: OnnxNodeInfo) -> str:
    # QNN splits one FX node into tokens of one name; backend-inserted ops are one op per token
    return info.base + info.token if info.inserted else info.base


class FxNamer:
    """Deterministic FX-style names: first use of a base name bare, then _1, _2, ..."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def __call__(self, target: str) -> str:
        b = fx_base_name(target)
        n = self.counts.get(b, 0)
        self.counts[b] = n + 1
        return b if n == 0 else "%s_%d" % (b, n)


def build_name_map(partitions: Sequence[Sequence[str]], cpu_ops: Sequence[tuple[int, str, str, str]] = ()):
    """Map the NODE identifiers of each partition to ExecuTorch-style identifiers.

    ``partitions``: per QNN partition, its NODE identifiers in execution order.
    ``cpu_ops``: (position, target, module_path, kernel) of CPU ops, position = number of
    partitions that run before it (graph order: partition 0, cpu ops at position 1, partition 1...).
    Returns (mapping identifier->new identifier per partition, ops in graph order).
    FX names are assigned in graph order to real FX nodes first, then to backend-inserted ops.
    """
    namer = FxNamer()
    ops: list[GraphOp] = []
    infos: list[list[tuple[str, OnnxNodeInfo | None]]] = []
    for p, idents in enumerate(partitions):
        infos.append([(i, classify_qnn_node(i)) for i in idents])
    order: list[tuple[str, Any]] = []
    for p in range(len(partitions)):
        for c in cpu_ops:
            if c[0] == p:
                order.append(("cpu", c))
        seen = set()
        for ident, info in infos[p]:
            if info is None or _op_key(info) in seen:
                continue
            seen.add(_op_key(info))
            order.append(("qnn", (p, info)))
    for c in cpu_ops:
        if c[0] >= len(partitions):
            order.append(("cpu", c))
    by_base: dict[tuple[int, str], GraphOp] = {}
    for kind, item in order:           # real FX nodes first
        if kind == "cpu":
            _, target, mod, kernel = item
            ops.append(GraphOp(namer(target), target, mod, "", None, kernel=kernel))
        elif not item[1].inserted:
            p, info = item
            op = GraphOp(namer(info.target), info.target, info.module_path, info.base, p)
            ops.append(op)
            by_base[(p, _op_key(info))] = op
    handle = 0
    for op in ops:
        handle += 1
        op.debug_handle = handle
    for kind, item in order:           # then the ops the backend inserted
        if kind == "qnn" and item[1].inserted:
            p, info = item
            op = GraphOp(namer(info.target), info.target, info.module_path, info.base + info.token, p,
                         inserted=True)
            ops.append(op)
            by_base[(p, _op_key(info))] = op
    mapping: list[dict[str, str]] = []
    for p, lst in enumerate(infos):
        m = {}
        for ident, info in lst:
            if info is None:
                m[ident] = ident
            else:
                m[ident] = "%s%s:%s (cycles)" % (by_base[(p, _op_key(info))].fx_name, info.token, info.opid)
        mapping.append(m)
    return mapping, ops


def rename_block(block: Sequence[QnnEvent], mapping: dict[str, str]) -> list[QnnEvent]:
    return [QnnEvent(e.name, e.value, e.unit, [(mapping.get(n, n), v) for n, v in e.nodes]) for e in block]
