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

Importable (``sys.path.insert(0, "tools"); import synth_qnn_etdump``):

* ``build_qnn_etdump(spec) -> bytes`` (spec format in its docstring), ``describe_qnn_etdump(spec)``
  (timestamps and expected values of what it writes), ``qnn_block(top, nodes)`` to make a call's events;
* ``write_big_etdump(path, n_events)`` (10M events ~ 816 MB in a few seconds);
* ``build_fixture(name)`` / ``write_fixtures(dir)`` for the committed fixtures, ``build_etrecord(...)``;
* ``ETDumpWriter`` (the ETDumpGen look-alike), ``read_etdump_profile``, ``replay_etdump``,
  ``spec_from_etdump``, ``parse_qnn_profile_csv``, ``build_name_map``.
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
        self._layouts: dict[tuple, tuple] = {}
        self.record: list[int] | None = None   # when a list: refs of every table emitted

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
        key = tuple((f[0], f[1]) for f in fields)
        lay = self._layouts.get(key)
        if lay is None:
            lay = self._layouts[key] = _table_layout(key)
        vt, ds, align, st, offs = lay
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
        vals = [base - vt_ref]
        for (slot, code, value), off in zip(fields, offs):
            vals.append(value - (base + 4 + off) if code == "O" else value)
        if self.record is not None:
            self.record.append(base)
        st.pack_into(self.buf, i, *vals)
        self.last_offs = offs
        return base

    def finish(self, root_ref: int, identifier: bytes, with_size: bool = True) -> memoryview:
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
        return memoryview(self.buf)[i:]


def _table_layout(key):
    """flatcc table layout for fields added in ``key`` order: (vtable, ds size, align, Struct, offsets)."""
    ds, align, id_end = 0, 4, 0
    offs = []
    fmt = "<i"
    for slot, code in key:
        sz = _FIELD_SIZE[code]
        off = (ds + sz - 1) & ~(sz - 1)
        if off > ds:
            fmt += "%dx" % (off - ds)
        fmt += "I" if code == "O" else code
        offs.append(off)
        ds = off + sz
        align = max(align, sz)
        id_end = max(id_end, slot + 1)
    vs = [0] * id_end
    for (slot, _), off in zip(key, offs):
        vs[slot] = off + 4
    vt = struct.pack("<%dH" % (id_end + 2), 2 * (id_end + 2), ds + 4, *vs)
    return vt, ds, align, struct.Struct(fmt), offs


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
        self.record_times: list[int] | None = None  # refs of framework start/end_time fields
        self.n_events = 0

    # -- EventTracer API ---------------------------------------------------------------------------
    def set_chain_debug_handle(self, chain_id: int, debug_handle: int) -> None:
        self.chain_id = chain_id
        self.debug_handle = debug_handle

    def create_event_block(self, name: str) -> None:
        if self._done is not None:
            raise RuntimeError("writer already finished")
        self.close_block()
        self.num_blocks += 1
        self._rd_fields = [(_RD_NAME, "O", self.fb.string(name.encode()))]
        if self.bundled_input_index != -1:
            self._rd_fields.append((_RD_BUNDLED_INPUT_INDEX, "i", self.bundled_input_index))
        self.state = "block"

    def close_block(self) -> None:
        """Finish the current RunData (what create_event_block/get_etdump_data do first)."""
        if self.state == "events":
            self._end_events()
        elif self.state == "allocators":
            self._rd_fields.append((_RD_ALLOCATORS, "O", self.fb.offset_vector(self._allocators)))
            self._allocators = []
        if self.state in ("events", "allocators", "block"):
            self._end_run_data()
            self.state = "closed"

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
        pe = self.fb.table(f)
        if self.record_times is not None:
            offs = self.fb.last_offs
            for k, (slot, _, _) in enumerate(f):
                if slot in (_PE_START_TIME, _PE_END_TIME):
                    self.record_times.append(pe + 4 + offs[k])
        self._push_profile_event(pe)

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
        if self.state == "init":
            return b""
        self._done = bytes(self.finish_view())
        return self._done

    def finish_view(self) -> memoryview:
        """Close everything and return a view of the finished buffer (no copy)."""
        self.close_block()
        runs_ref = self.fb.offset_vector(self._run_refs)
        root_fields = []
        if _ETDUMP_VERSION != 0:
            root_fields.append((_ETDUMP_VERSION_SLOT, "I", _ETDUMP_VERSION))
        root_fields.append((_ETDUMP_RUN_DATA_SLOT, "O", runs_ref))
        root = self.fb.table(root_fields)
        view = self.fb.finish(root, _ETDUMP_IDENTIFIER, with_size=True)
        self.state = "done"
        return view

    # -- internals ---------------------------------------------------------------------------------
    def _push_profile_event(self, pe_ref: int) -> None:
        self.n_events += 1
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


# --------------------------------------------------------------------------------------------------
# Runtime simulation: spec -> ETDump bytes
# --------------------------------------------------------------------------------------------------

DEFAULT_TIME_BASE_NS = 1_700_000_000_000   # a steady_clock-like ns value (~28 min since boot)


def _norm_instr(ins) -> dict:
    if isinstance(ins, dict):
        d = dict(ins)
    else:
        kind, iid, arg = ins[0], ins[1], ins[2]
        d = {"kind": kind, "instruction_id": iid}
        if kind == "delegate":
            d["partition"] = arg
        elif kind == "cpu_op":
            d["kernel"] = arg
        else:
            raise ValueError("unknown instruction kind %r" % (kind,))
    if d["kind"] not in ("delegate", "cpu_op"):
        raise ValueError("unknown instruction kind %r" % (d["kind"],))
    d["instruction_id"] = int(d["instruction_id"])
    return d


def _get(mapping, key, default=None):
    if mapping is None:
        return default
    if key in mapping:
        return mapping[key]
    return mapping.get(str(key), default)


class _RuntimeSim:
    """Drives an :class:`ETDumpWriter` the way Program::load_method / Method::execute and the QNN
    backend drive ETDumpGen; one call per RunData."""

    def __init__(self, spec: dict, writer: ETDumpWriter | None = None):
        self.spec = spec
        self.rng = random.Random(spec.get("seed", 0))
        self.accumulate = bool(spec.get("accumulate", False))
        self.chain = int(spec.get("chain_index", 0))
        self.t = int(spec.get("time_base_ns", DEFAULT_TIME_BASE_NS + self.rng.randrange(0, 10**9)))
        self.w = writer or ETDumpWriter(capacity=int(spec.get("capacity_hint", 1 << 20)))
        self.history: dict[int, list[list[QnnEvent]]] = {}
        self.info: dict[str, Any] = {"default_run": None, "runs": []}
        self.n_exec = 0

    def default_run(self, dflt) -> None:
        w, rng = self.w, self.rng
        dflt = dflt if isinstance(dflt, dict) else {}
        w.create_event_block("Default")
        load_start = self.t
        e_load = w.start_profiling("Program::load_method", load_start)
        init_start = load_start + dflt.get("load_to_init_ns", rng.randint(700, 1300))
        e_init = w.start_profiling("Method::init", init_start)
        init_end = init_start + int(dflt.get("init_ns", rng.randint(40_000_000, 90_000_000)))
        w.end_profiling(e_init, init_end)
        load_end = init_end + dflt.get("init_to_load_end_ns", rng.randint(1500, 4000))
        w.end_profiling(e_load, load_end)
        self.info["default_run"] = {"Program::load_method": [load_start, load_end],
                                    "Method::init": [init_start, init_end]}
        self.t = load_end

    def execute(self, run: dict, describe: bool = True) -> dict | None:
        w, rng = self.w, self.rng
        ri = self.n_exec
        self.n_exec += 1
        instrs = [_norm_instr(x) for x in run["instructions"]]
        gap = run.get("gap_before_ns")
        if gap is None:
            gap = rng.randint(1_500_000, 3_000_000) if ri == 0 else rng.randint(120_000, 400_000)
        self.t += int(gap)
        w.create_event_block("Execute")
        exec_start = self.t
        e_exec = w.start_profiling("Method::execute", exec_start)
        ovh = run.get("execute_overhead_ns")
        n = len(instrs)
        if ovh is None:
            pre = rng.randint(750, 1000)
            inter = [rng.randint(100, 170) for _ in range(max(n - 1, 0))]
            post = rng.randint(450, 800)
        else:
            ovh = int(ovh)
            inter = [120] * max(n - 1, 0)
            rest = ovh - sum(inter)
            if rest < 2:
                raise ValueError("execute_overhead_ns too small for %d instructions" % n)
            pre = rest // 2
            post = rest - pre
        t = exec_start + pre
        rinfo = {"index": ri, "label": run.get("label"), "instructions": []}
        for k, ins in enumerate(instrs):
            if k > 0:
                t += inter[k - 1]
            iid = ins["instruction_id"]
            w.set_chain_debug_handle(self.chain, iid)
            if ins["kind"] == "cpu_op":
                wall = _get(run.get("wall_ns"), iid, ins.get("wall_ns"))
                kns = _get(run.get("kernel_ns"), iid, ins.get("kernel_ns"))
                lead = rng.randint(40, 400)
                tail = rng.randint(80, 120)
                if wall is None:
                    kns = int(kns if kns is not None else rng.randint(4_000, 30_000))
                    wall = lead + kns + tail
                else:
                    wall = int(wall)
                    if kns is None:
                        kns = max(wall - lead - tail, 1)
                    kns = int(kns)
                    lead = max((wall - kns) // 2, 0)
                op_start = t
                e_op = w.start_profiling("OPERATOR_CALL", op_start)
                k_start = op_start + lead
                e_k = w.start_profiling(ins["kernel"], k_start)
                w.end_profiling(e_k, k_start + kns)
                w.end_profiling(e_op, op_start + wall)
                t = op_start + wall
                if describe:
                    rinfo["instructions"].append({"kind": "cpu_op", "instruction_id": iid,
                                                  "kernel": ins["kernel"],
                                                  "OPERATOR_CALL": [op_start, op_start + wall],
                                                  "kernel_event": [k_start, k_start + kns]})
            else:
                part = int(ins["partition"])
                block = qnn_block_from_json(_get(run.get("qnn"), iid, ins.get("qnn", [])))
                hist = self.history.setdefault(part, [])
                if self.accumulate:
                    hist.append(block)
                    logged = [ev for b in hist for ev in b]
                else:
                    hist[:] = [block]
                    logged = block
                wall = _get(run.get("wall_ns"), iid, ins.get("wall_ns"))
                if wall is None:
                    qnn_us = block_value(block, "QNN (execute) time", None)
                    if qnn_us is None:
                        qnn_us = block_value(block, "Accelerator (execute) time", 0)
                    wall = qnn_us * 1000 + rng.randint(30_000, 80_000)
                wall = int(wall)
                d_start = t
                e_d = w.start_profiling("DELEGATE_CALL", d_start)
                n_logged = 0
                for ev in logged:
                    w.log_profiling_delegate(et_delegate_name(ev.name, ev.unit), -1, 0, ev.value)
                    n_logged += 1
                    if ev.name == NODE_PARENT_EVENT:
                        for node_name, v in ev.nodes:
                            w.log_profiling_delegate(node_name, -1, 0, v)
                            n_logged += 1
                w.end_profiling(e_d, d_start + wall)
                t = d_start + wall
                if describe:
                    rinfo["instructions"].append({
                        "kind": "delegate", "instruction_id": iid, "partition": part,
                        "DELEGATE_CALL": [d_start, d_start + wall],
                        "copies_logged": len(hist) if self.accumulate else 1,
                        "events_logged": n_logged,
                        "node_cycles_sum": block_node_cycles(block),
                        "logged_node_cycles_sum": sum(v for ev in logged for _, v in ev.nodes),
                        "accelerator_cycles": block_value(block, NODE_PARENT_EVENT),
                        "top_level": {et_delegate_name(e.name, e.unit): e.value for e in block},
                        "n_nodes": sum(len(e.nodes) for e in block),
                    })
            w.set_chain_debug_handle(kUnsetChainId, kUnsetDebugHandle)
        exec_end = t + post
        w.end_profiling(e_exec, exec_end)
        self.t = exec_end
        if describe:
            rinfo["Method::execute"] = [exec_start, exec_end]
            self.info["runs"].append(rinfo)
            return rinfo
        return None


def _simulate(spec: dict):
    sim = _RuntimeSim(spec)
    dflt = spec.get("default_run", True)
    if dflt:
        sim.default_run(dflt)
    for run in spec["runs"]:
        sim.execute(run)
    return sim.w.get_etdump_data(), sim.info


def build_qnn_etdump(spec: dict) -> bytes:
    """Build the bytes of an ETDump as ExecuTorch + the QNN backend would write them.

    ``spec`` (a dict, JSON-compatible):

    ``runs``: list, one per ``Method::execute`` call, each a dict:
        ``instructions``: the instructions executed, in order; each ``("delegate", instruction_id,
            partition_index)`` or ``("cpu_op", instruction_id, kernel_name)`` (kernel_name like
            ``"native_call_index_put.out"``), or the same as a dict {"kind", "instruction_id",
            "partition"|"kernel"}.
        ``qnn``: {instruction_id: QNN events of that delegate call}: a list of top-level events in
            QNN order, each ``(name, value, unit)`` / ``(name, value, unit, nodes)`` / ``{"name",
            "value", "unit", "nodes": [[name, cycles], ...]}`` / :class:`QnnEvent`; units US, CYCLES,
            COUNT, BYTES, BACKEND, OBJECT. Per-op rows hang on the event named
            ``"Accelerator (execute) time (cycles)"`` (use :func:`qnn_block` to attach them).
        ``wall_ns``: {instruction_id: ns} optional DELEGATE_CALL / OPERATOR_CALL durations
            (default: delegate = QNN (execute) time (us) * 1000 + 30..80 µs; cpu op = lead + kernel + tail).
        ``kernel_ns``: {instruction_id: ns} optional kernel (``native_call_*``) durations.
        ``execute_overhead_ns``: optional framework time inside Method::execute outside instructions
            (default ~1.5 µs spread before, between and after instructions).
        ``gap_before_ns``: optional idle time before this execute (default 1.5-3 ms after load,
            then 120-400 µs).
    ``accumulate``: False (default): each DELEGATE_CALL logs its own execute's QNN events. True:
        QNN returns events accumulated over the executes of that partition (its profile handle), so
        execute k of a partition logs the blocks of executes 1..k, oldest first.
    ``default_run``: True (default) / False / {"init_ns", ...}: the ``Default`` RunData with
        ``Method::init`` and ``Program::load_method``.
    ``seed``: RNG seed for the unspecified timings (default 0); ``time_base_ns``: first timestamp.
    ``chain_index``: chain of the instructions (default 0).

    The same spec always gives the same bytes.
    """
    return _simulate(spec)[0]


def describe_qnn_etdump(spec: dict) -> dict:
    """What :func:`build_qnn_etdump` writes for ``spec``: timestamps and per-call expectations."""
    return _simulate(spec)[1]


# --------------------------------------------------------------------------------------------------
# Synthetic ETRecord (zip) matching the ETDump's FX names
# --------------------------------------------------------------------------------------------------

def _fake_id(s: str) -> str:
    return str(140_000_000_000_000 + int(hashlib.sha1(s.encode()).hexdigest()[:10], 16) % 900_000_000_000)


def _camel(s: str) -> str:
    s = re.sub(r"\.\d+$", "", s)
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[._]", s) if p) or "Module"


_LEAF_CLASS = {
    "aten.convolution.default": "torch.nn.modules.conv.Conv2d",
    "aten.linear.default": "torch.nn.modules.linear.Linear",
    "aten.native_layer_norm.default": "torch.nn.modules.normalization.LayerNorm",
    "aten.hardswish.default": "torch.nn.modules.activation.Hardswish",
    "aten.hardtanh.default": "torch.nn.modules.activation.ReLU6",
    "aten.relu.default": "torch.nn.modules.activation.ReLU",
    "aten.sigmoid.default": "torch.nn.modules.activation.Sigmoid",
}


def _module_class(prefix: str, leaf: bool, target: str) -> str:
    last = prefix.split(".")[-1]
    if leaf and target in _LEAF_CLASS:
        return _LEAF_CLASS[target]
    if last in ("blocks", "layers", "stages"):
        return "torch.nn.modules.container.ModuleList"
    if last.isdigit():
        return "__main__.%sBlock" % _camel(prefix.split(".")[-2]).rstrip("s")
    return "__main__.%s" % _camel(last)


def _edge_graph_json(ops: Sequence[GraphOp], model_class: str, model_file: str) -> dict:
    nodes = []
    tensor_values = {"x": _tv([1, 64], False)}
    prev = "x"
    lines: dict[str, int] = {}
    for op in ops:
        if op.inserted:
            continue
        mp = op.module_path
        key = mp + "|" + op.target
        line = lines.setdefault(key, 40 + 3 * len(lines))
        short = op.target.split(".")[1]
        code = ("x = self.%s(x)" % mp) if (mp and op.target in _LEAF_CLASS) else \
               ("x = torch.ops.aten.%s(x)" % short if op.target.startswith("aten.") else
                "x = %s(x)" % short)
        stack = ('  File "%s", line %d, in forward\n    %s\n' % (model_file, line, code))
        nms = ["L__self__,,__main__.%s" % model_class]
        parts = mp.split(".") if mp else []
        for k in range(1, len(parts) + 1):
            pre = ".".join(parts[:k])
            nms.append("%s,%s,%s" % (_fake_id(pre), pre, _module_class(pre, k == len(parts), op.target)))
        args = [{"name": "self", "arg": {"as_tensor": {"name": prev}}}]
        if op.target in ("aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.matmul.default"):
            args.append({"name": "other", "arg": {"as_tensor": {"name": prev}}})
        nodes.append({
            "name": op.fx_name,
            "target": "executorch.exir.dialects.edge.ops." + op.target,
            "inputs": args,
            "outputs": [{"as_tensor": {"name": op.fx_name}}],
            "metadata": {
                "stack_trace": stack,
                "nn_module_stack": ";".join(nms),
                "source_fn_stack": "%s,%s" % (op.fx_name, op.target),
                "torch_fn": "%s_1;builtin_function_or_method.%s" % (short, short),
                "debug_handle": str(op.debug_handle),
            },
        })
        tensor_values[op.fx_name] = _tv([1, 64], False)
        prev = op.fx_name
    return {
        "graph_module": {
            "graph": {
                "inputs": [{"as_tensor": {"name": "x"}}],
                "outputs": [{"as_tensor": {"name": prev}}],
                "nodes": nodes,
                "tensor_values": tensor_values,
                "sym_int_values": {}, "sym_bool_values": {},
                "is_single_tensor_return": False, "custom_obj_values": {},
            },
            "signature": {
                "input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": prev}}}}],
            },
            "module_call_graph": [{"fqn": ""}],
        },
        "opset_version": {"aten": 10},
        "range_constraints": {},
        "schema_version": {"major": 5, "minor": 4},
        "dialect": "",
        "verifiers": ["EDGE"],
    }


def _tv(sizes, requires_grad):
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.insert(0, acc)
        acc *= s
    return {"dtype": 7, "sizes": [{"as_int": s} for s in sizes], "requires_grad": requires_grad,
            "device": {"type": "cpu"}, "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def build_etrecord(ops: Sequence[GraphOp], instructions: Sequence, method: str = "forward",
                   model_class: str = "Model", model_file: str = "/home/dev/models/model.py",
                   backend: str = "QnnBackend") -> bytes:
    """A synthetic ETRecord zip: ETRECORD_V0 marker, the edge graph JSON, debug_handle_map,
    delegate_map, instruction_id_to_num_outs_map, export_graph_id (stored, not compressed, like the
    real files). The torch-pickled entries (state dicts, constants, example inputs) and the
    pre-edge ``exported_program`` are left out; etscope never reads them.

    debug_handle_map: delegate instruction -> debug handles of its partition's FX nodes (QNN's
    preprocess returns an empty map, so ``delegate_map`` is ``{}`` per delegate); CPU instruction ->
    its node's handle. Backend-inserted ops (layout transposes, output reshapes) have no FX node.
    """
    instrs = [_norm_instr(x) for x in instructions]
    dhm: dict[str, Any] = {}
    dmap: dict[str, Any] = {}
    nouts: dict[str, int] = {}
    cpu_ops = [op for op in ops if op.partition is None]
    ci = 0
    for ins in instrs:
        iid = str(ins["instruction_id"])
        if ins["kind"] == "delegate":
            dhm[iid] = [op.debug_handle for op in ops
                        if op.partition == ins["partition"] and not op.inserted]
            dmap[iid] = {"name": backend, "delegate_map": {}}
            nouts[iid] = 1
        else:
            op = cpu_ops[ci]
            ci += 1
            dhm[iid] = op.debug_handle
    bio = io.BytesIO()
    graph = json.dumps(_edge_graph_json(ops, model_class, model_file)).encode()
    entries = [
        ("ETRECORD_V0", b""),
        ("edge_dialect_exported_program/" + method, graph),
        ("debug_handle_map", json.dumps({method: dhm}).encode()),
        ("delegate_map", json.dumps({method: dmap}).encode()),
        ("instruction_id_to_num_outs_map", json.dumps({method: nouts}).encode()),
        ("export_graph_id", _fake_id(model_class).encode()),
    ]
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries:
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_STORED
            z.writestr(zi, data)
    return bio.getvalue()


# --------------------------------------------------------------------------------------------------
# Committed fixtures
# --------------------------------------------------------------------------------------------------

def default_data_root() -> Path:
    env = os.environ.get("ETSCOPE_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def _emulator(root: Path, dataset: str, level: str = "detailed") -> tuple[QnnCsv, str]:
    rel = "qnn-htp-emulator/%s/%s/qnn_profile.csv" % (dataset, level)
    return parse_qnn_profile_csv(root / rel), rel


def _ort_cpu_node_us(root: Path, dataset: str, node: str, level: str = "detailed") -> list[int]:
    path = root / ("qnn-htp-emulator/%s/%s/ort_profile.json" % (dataset, level))
    d = json.loads(path.read_text())
    evs = d if isinstance(d, list) else d.get("traceEvents", [])
    return [int(e["dur"]) for e in evs
            if e.get("cat") == "Node" and e.get("name") == node + "_kernel_time"]


def _nodes_of(block: Sequence[QnnEvent]) -> list[tuple[str, int]]:
    return [nv for e in block for nv in e.nodes]


def _block_json(block: Sequence[QnnEvent]) -> list[dict]:
    return [e.to_json() for e in block]


def _r100(x: float) -> int:
    return int(round(x / 100.0)) * 100


def _fixture_cnn(root: Path, accumulate: bool = False) -> dict:
    q, rel = _emulator(root, "cnn_small_fp32")
    blocks_idx = [1, 2, 3, 4, 5]                     # block 0 = the harness's warm-up run
    names = [n for n, _ in _nodes_of(q.executes[blocks_idx[0]])]
    (mapping,), ops = build_name_map([names])
    instrs = [("delegate", 0, 0)]
    runs = []
    for b in blocks_idx:
        runs.append({"instructions": instrs, "label": "execute", "csv_block": b,
                     "qnn": {0: _block_json(rename_block(q.executes[b], mapping))}})
    spec = {"seed": 1101, "time_base_ns": 1_712_345_678_901, "accumulate": accumulate,
            "default_run": {"init_ns": 61_234_567}, "runs": runs}
    return {"spec": spec, "ops": ops, "instructions": instrs, "name_map": [mapping],
            "source": {"dataset": "cnn_small_fp32", "level": "detailed", "csv": rel,
                       "csv_blocks_per_partition": [blocks_idx]},
            "model_class": "SmallCNN", "model_file": "/home/dev/models/cnn_small.py"}


def _fixture_vit(root: Path, accumulate: bool = False) -> dict:
    q, rel = _emulator(root, "vit_mixed_qdq")
    ex = [1, 2, 3, 4, 5]
    b0 = [2 * e for e in ex]          # graph 1 blocks (execute e: blocks 2e, 2e+1)
    b1 = [2 * e + 1 for e in ex]
    n0 = [n for n, _ in _nodes_of(q.executes[b0[0]])]
    n1 = [n for n, _ in _nodes_of(q.executes[b1[0]])]
    cpu = [(1, "aten.pow.Tensor_Scalar", "l2norm", "native_call_pow.Tensor_Scalar_out"),
           (1, "aten.sum.dim_IntList", "l2norm", "native_call_sum.IntList_out")]
    (m0, m1), ops = build_name_map([n0, n1], cpu)
    cpu_us = _ort_cpu_node_us(root, "vit_mixed_qdq", "/l2norm/ReduceSumSquare")
    instrs = [("delegate", 0, 0), ("cpu_op", 1, cpu[0][3]), ("cpu_op", 2, cpu[1][3]),
              ("delegate", 3, 1)]
    runs = []
    for k, e in enumerate(ex):
        rss_ns = cpu_us[e] * 1000 if e < len(cpu_us) else 31_000
        pow_ns = int(rss_ns * 0.45)
        runs.append({"instructions": instrs, "label": "execute", "csv_block": [b0[k], b1[k]],
                     "qnn": {0: _block_json(rename_block(q.executes[b0[k]], m0)),
                             3: _block_json(rename_block(q.executes[b1[k]], m1))},
                     "kernel_ns": {1: pow_ns, 2: rss_ns - pow_ns},
                     "wall_ns": {1: pow_ns + 520 + 3 * k, 2: rss_ns - pow_ns + 470 + 5 * k}})
    spec = {"seed": 2202, "time_base_ns": 1_745_012_345_678, "default_run": {"init_ns": 83_456_789},
            "runs": runs}
    if accumulate:
        spec["accumulate"] = True
    return {"spec": spec, "ops": ops, "instructions": instrs, "name_map": [m0, m1],
            "source": {"dataset": "vit_mixed_qdq", "level": "detailed", "csv": rel,
                       "csv_blocks_per_partition": [b0, b1],
                       "cpu_op_times": "ORT CPUExecutionProvider /l2norm/ReduceSumSquare kernel_time of "
                                       "the same runs (ort_profile.json), split 45/55 into pow/sum"},
            "model_class": "TinyViT", "model_file": "/home/dev/models/vit_mixed.py"}


def _split_tblock(block: Sequence[QnnEvent]):
    """Split one tblock execute block into two partitions: layers.0 | layers.1 + norm + lm_head.

    Each partition keeps the NODE rows of its ops; both get an ``Input OpId_2`` and an ``Output OpId_3``
    row (partition 0's Output and partition 1's Input copy the real rows' values). Top-level values:
    counts, VTCM-acquire and power-on copied to both; cycles = Σ of the partition's rows;
    Accelerator (execute) time (us) scaled by the partition's cycle share of the real block; QNN
    (execute) time = that + the real block's (QNN - Accelerator) overhead.
    """
    nodes = _nodes_of(block)
    inp = next(v for n, v in nodes if n.startswith("Input OpId"))
    out = next(v for n, v in nodes if n.startswith("Output OpId"))
    body = [(n, v) for n, v in nodes if not (n.startswith("Input OpId") or n.startswith("Output OpId"))]
    split = next(i for i, (n, _) in enumerate(body) if "/layers.1/" in n)
    parts = [[("Input OpId_2 (cycles)", inp)] + body[:split] + [("Output OpId_3 (cycles)", out)],
             [("Input OpId_2 (cycles)", inp)] + body[split:] + [("Output OpId_3 (cycles)", out)]]
    return parts


def _partition_block(real: Sequence[QnnEvent], nodes: list[tuple[str, int]], scale_time: float = 1.0,
                     rng: random.Random | None = None) -> list[QnnEvent]:
    cyc_real = block_value(real, NODE_PARENT_EVENT)
    acc_us_real = block_value(real, "Accelerator (execute) time")
    qnn_us_real = block_value(real, "QNN (execute) time")
    cyc = sum(v for _, v in nodes)
    acc_us = max(1, int(round(acc_us_real * cyc / cyc_real)))
    out = []
    for e in real:
        if e.name == NODE_PARENT_EVENT:
            out.append(QnnEvent(e.name, cyc, e.unit, list(nodes)))
        elif e.name == "Accelerator (execute) time":
            out.append(QnnEvent(e.name, acc_us, e.unit))
        elif e.name == "QNN (execute) time":
            out.append(QnnEvent(e.name, acc_us + (qnn_us_real - acc_us_real), e.unit))
        elif e.unit == "US" and scale_time != 1.0:
            out.append(QnnEvent(e.name, max(100, _r100(e.value * scale_time * rng.uniform(0.85, 1.15))),
                                e.unit))
        else:
            out.append(QnnEvent(e.name, e.value, e.unit))
    return out


def _fixture_llm(root: Path, n_decode: int = 20) -> dict:
    q, rel = _emulator(root, "tblock_qdq")
    rng = random.Random(3303)
    base_blocks = [1, 2, 3, 4, 5]
    p_nodes0 = _split_tblock(q.executes[1])
    names = [[n for n, _ in p] for p in p_nodes0]
    cpu = [(1, "aten.index_put.default", "layers.0.attn.k_cache", "native_call_index_put.out"),
           (1, "aten.index_put.default", "layers.0.attn.v_cache", "native_call_index_put.out")]
    (m0, m1), ops = build_name_map(names, cpu)
    instrs = [("delegate", 0, 0), ("cpu_op", 1, cpu[0][3]), ("cpu_op", 2, cpu[1][3]),
              ("delegate", 3, 1)]
    # Real x86 ExecuTorch index_put timings (llama_nodebug.etdump, layer 0 k/v cache updates,
    # instructions 54/65): run 1 = prefill(8 tokens), runs 2.. = decodes.
    llama = (root / "executorch-cpu/llama_nodebug.etdump").read_bytes()
    lruns = read_etdump_profile(llama)[1:]
    kv_times = []
    for lr in lruns:
        ops_ns = {e["instruction_id"]: e["end_time"] - e["start_time"]
                  for e in lr["events"] if e["name"] == "OPERATOR_CALL"}
        k_ns = {e["instruction_id"]: e["end_time"] - e["start_time"]
                for e in lr["events"] if e["name"] == "native_call_index_put.out"}
        kv_times.append([(ops_ns[i], k_ns[i]) for i in (54, 65)])
    runs = []
    schedule = []
    for r in range(1 + n_decode):
        b = base_blocks[0] if r == 0 else base_blocks[(r - 1) % len(base_blocks)]
        real = q.executes[b]
        parts = _split_tblock(real)
        if r == 0:
            label, tokens, scale = "prefill", 32, 1.0
            pn = parts
        else:
            label, tokens, scale = "decode", 1, 1.0 / 8.0
            pn = [[(n, 0 if v == 0 else max(100, _r100(v * scale * rng.uniform(0.85, 1.15))))
                   for n, v in p] for p in parts]
        blocks = [_partition_block(real, pn[i], scale, rng) for i in range(2)]
        blocks = [rename_block(blocks[0], m0), rename_block(blocks[1], m1)]
        kv = kv_times[min(r, len(kv_times) - 1)]
        runs.append({"instructions": instrs, "label": label, "csv_block": [b, b],
                     "qnn": {0: _block_json(blocks[0]), 3: _block_json(blocks[1])},
                     "wall_ns": {1: kv[0][0], 2: kv[1][0]}, "kernel_ns": {1: kv[0][1], 2: kv[1][1]},
                     "gap_before_ns": None if r == 0 else rng.randint(180_000, 260_000)})
        schedule.append({"run": r, "kind": label, "tokens": tokens, "csv_block": b,
                         "node_scale": scale})
    spec = {"seed": 3303, "time_base_ns": 1_801_234_567_890, "default_run": {"init_ns": 112_345_678},
            "runs": runs}
    return {"spec": spec, "ops": ops, "instructions": instrs, "name_map": [m0, m1],
            "schedule": schedule,
            "source": {"dataset": "tblock_qdq", "level": "detailed", "csv": rel,
                       "csv_blocks_per_partition": [[s["csv_block"] for s in schedule]] * 2,
                       "partition_split": "NODE rows before the first /layers.1/ row -> partition 0, "
                                          "the rest -> partition 1; both get Input OpId_2/Output OpId_3 "
                                          "rows with the real rows' values",
                       "decode": "node cycles = real x 1/8 x U(0.85,1.15), rounded to 100, 0 stays 0; "
                                 "VTCM/power-on us scaled the same way; Accelerator us follows cycles",
                       "cpu_op_times": "executorch-cpu/llama_nodebug.etdump native_call_index_put.out "
                                       "(instructions 54/65), run r+1 for run r"},
            "model_class": "TinyDecoder", "model_file": "/home/dev/models/tblock.py"}


def _fixture_resnet_device(root: Path) -> dict:
    rel = "qnn-device/resnet50_ortqnn.profile.csv"
    q = parse_qnn_profile_csv(root / rel)
    names = [n for n, _ in _nodes_of(q.executes[0])]
    (mapping,), ops = build_name_map([names])
    instrs = [("delegate", 0, 0)]
    runs = [{"instructions": instrs, "label": "execute", "csv_block": b,
             "qnn": {0: _block_json(rename_block(q.executes[b], mapping))}}
            for b in range(len(q.executes))]
    spec = {"seed": 4404, "time_base_ns": 1_856_789_012_345, "default_run": {"init_ns": 95_678_901},
            "runs": runs}
    return {"spec": spec, "ops": ops, "instructions": instrs, "name_map": [mapping],
            "source": {"dataset": "resnet50 (ORT QNN EP on a Snapdragon device)", "level": "detailed",
                       "csv": rel, "csv_blocks_per_partition": [list(range(len(q.executes)))],
                       "note": "real device values incl. RPC / QNN accelerator / excluding-wait / "
                               "'Unknown event type' (value UNKNOWN in the CSV -> 0)"},
            "model_class": "ResNet50", "model_file": "/home/dev/models/resnet50.py"}


FIXTURES = {
    "synthetic_qnn_cnn": lambda root: _fixture_cnn(root),
    "synthetic_qnn_vit_2part": _fixture_vit,
    "synthetic_qnn_llm": _fixture_llm,
    "synthetic_qnn_accumulate": lambda root: dict(_fixture_cnn(root, accumulate=True),
                                                  etrecord_from="synthetic_qnn_cnn.etrecord"),
    "synthetic_qnn_resnet50_device": _fixture_resnet_device,
    # Two partitions with CPU ops between them, each accumulating on its own (the twin of vit_2part).
    "synthetic_qnn_vit_2part_accumulate": lambda root: dict(_fixture_vit(root, accumulate=True),
                                                            etrecord_from="synthetic_qnn_vit_2part.etrecord"),
}
_WITH_ETRECORD = {"synthetic_qnn_cnn", "synthetic_qnn_vit_2part", "synthetic_qnn_llm",
                  "synthetic_qnn_resnet50_device"}


def build_fixture(name: str, data_root: str | os.PathLike | None = None) -> dict:
    """Build one committed fixture: {"etdump": bytes, "etrecord": bytes|None, "manifest": dict}."""
    root = Path(data_root) if data_root else default_data_root()
    fx = FIXTURES[name](root)
    spec = fx["spec"]
    data, info = _simulate(spec)
    etrecord = None
    if name in _WITH_ETRECORD:
        etrecord = build_etrecord(fx["ops"], fx["instructions"], model_class=fx["model_class"],
                                  model_file=fx["model_file"])
    runs_out = []
    parsed = read_etdump_profile(data)
    for k, (run, ri) in enumerate(zip(spec["runs"], info["runs"])):
        calls = []
        for c in ri["instructions"]:
            if c["kind"] == "delegate":
                calls.append({
                    "instruction_id": c["instruction_id"], "kind": "delegate", "partition": c["partition"],
                    "DELEGATE_CALL_ns": c["DELEGATE_CALL"][1] - c["DELEGATE_CALL"][0],
                    "accelerator_cycles": c["accelerator_cycles"],
                    "node_cycles_sum": c["node_cycles_sum"],
                    "logged_node_cycles_sum": c["logged_node_cycles_sum"],
                    "n_nodes": c["n_nodes"],
                    "copies_logged": c["copies_logged"],
                    "events_logged": c["events_logged"],
                    "top_level": c["top_level"],
                })
            else:
                calls.append({"instruction_id": c["instruction_id"], "kind": "cpu_op", "kernel": c["kernel"],
                              "OPERATOR_CALL_ns": c["OPERATOR_CALL"][1] - c["OPERATOR_CALL"][0],
                              "kernel_ns": c["kernel_event"][1] - c["kernel_event"][0]})
        runs_out.append({
            "run_data_index": k + (1 if info["default_run"] else 0),
            "label": run.get("label"), "csv_block": run.get("csv_block"),
            "cold": k == 0,
            "n_events": len(parsed[k + (1 if info["default_run"] else 0)]["events"]),
            "Method::execute_ns": ri["Method::execute"][1] - ri["Method::execute"][0],
            "Method::execute_start": ri["Method::execute"][0],
            "calls": calls,
        })
    flat_map = {}
    for p, m in enumerate(fx["name_map"]):
        for src, dst in m.items():
            if src != dst:
                flat_map.setdefault(src, dst)
    partitions = []
    for ins in [_norm_instr(x) for x in fx["instructions"]]:
        if ins["kind"] == "delegate":
            p = ins["partition"]
            first = spec["runs"][0]["qnn"]
            blk = qnn_block_from_json(_get(first, ins["instruction_id"]))
            partitions.append({"index": p, "instruction_id": ins["instruction_id"], "backend": "QnnBackend",
                               "node_names": [n for n, _ in _nodes_of(blk)]})
    manifest = {
        "etdump": name + ".etdump",
        "etrecord": (name + ".etrecord") if etrecord else fx.get("etrecord_from"),
        "etdump_bytes": len(data),
        "etdump_sha256": hashlib.sha256(data).hexdigest(),
        "etrecord_bytes": len(etrecord) if etrecord else None,
        "method": "forward",
        "accumulate": bool(spec.get("accumulate", False)),
        "source": fx["source"],
        "n_run_data": len(parsed),
        "n_executes": len(spec["runs"]),
        "default_run": info["default_run"],
        "instructions": [_norm_instr(x) for x in fx["instructions"]],
        "partitions": partitions,
        "schedule": fx.get("schedule"),
        "runs": runs_out,
        "name_map": flat_map,
        "graph_ops": [{"fx_name": o.fx_name, "target": o.target, "module_path": o.module_path,
                       "partition": o.partition, "debug_handle": o.debug_handle, "inserted": o.inserted,
                       "kernel": o.kernel, "source": o.source} for o in fx["ops"]],
    }
    return {"etdump": data, "etrecord": etrecord, "manifest": manifest, "spec": spec}


def write_fixtures(out_dir: str | os.PathLike, data_root=None, names: Iterable[str] | None = None) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"generator": "tools/synth_qnn_etdump.py",
                "regenerate": "python tools/synth_qnn_etdump.py --out tests/fixtures/qnn_etdump",
                "fixtures": {}}
    for name in (names or FIXTURES):
        fx = build_fixture(name, data_root)
        (out / (name + ".etdump")).write_bytes(fx["etdump"])
        if fx["etrecord"]:
            (out / (name + ".etrecord")).write_bytes(fx["etrecord"])
        manifest["fixtures"][name] = fx["manifest"]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


# --------------------------------------------------------------------------------------------------
# Spec recovered from a QNN ETDump (so big files can be made from the committed fixture alone)
# --------------------------------------------------------------------------------------------------

_SUFFIX_UNIT = [(" (us)", "US"), (" (bytes)", "BYTES"), (" (count)", "COUNT")]


def spec_from_etdump(data: bytes) -> dict:
    """Recover a :func:`build_qnn_etdump` spec (schedule, QNN values, durations) from a
    non-accumulated QNN ETDump written by this tool or by ExecuTorch. Units come back from the name
    suffix (none -> CYCLES); rows after ``Accelerator (execute) time (cycles)`` containing ``OpId_``
    are its NODE rows."""
    runs = read_etdump_profile(data)
    out = []
    for run in runs:
        if run["name"] != "Execute":
            continue
        evs = run["events"]
        instrs, qnn, wall, kns = [], {}, {}, {}
        pending: list[QnnEvent] = []
        parent = None
        for e in evs:
            if e["delegate_debug_metadata"] is not None or (e["name"] is None and e["delegate_debug_id_str"]):
                nm = e["delegate_debug_id_str"]
                if parent is not None and "OpId_" in nm:
                    parent.nodes.append((nm, e["end_time"]))
                    continue
                unit = "CYCLES"
                for suf, u in _SUFFIX_UNIT:
                    if nm.endswith(suf):
                        nm, unit = nm[:-len(suf)], u
                        break
                ev = QnnEvent(nm, e["end_time"] - e["start_time"], unit)
                parent = ev if nm == NODE_PARENT_EVENT else None
                pending.append(ev)
            elif e["name"] == "DELEGATE_CALL":
                iid = e["instruction_id"]
                instrs.append(("delegate", iid, sum(1 for x in instrs if x[0] == "delegate")))
                qnn[iid] = [x.to_json() for x in pending]
                wall[iid] = e["end_time"] - e["start_time"]
                pending, parent = [], None
            elif e["name"] == "OPERATOR_CALL":
                iid = e["instruction_id"]
                wall[iid] = e["end_time"] - e["start_time"]
            elif e["name"] == "Method::execute":
                pass
            else:  # kernel event
                iid = e["instruction_id"]
                instrs.append(("cpu_op", iid, e["name"]))
                kns[iid] = e["end_time"] - e["start_time"]
        out.append({"instructions": instrs, "qnn": qnn, "wall_ns": wall, "kernel_ns": kns})
    return {"runs": out}


# --------------------------------------------------------------------------------------------------
# Big files: a writer-made template, replicated with numpy
# --------------------------------------------------------------------------------------------------

def _big_template_spec(data_root=None) -> dict:
    """The LLM fixture's runs (1 prefill + 20 decodes, 2 QNN partitions + 2 index_put)."""
    root = Path(data_root) if data_root else default_data_root()
    try:
        return _fixture_llm(root)["spec"]
    except OSError:
        committed = Path(__file__).resolve().parents[1] / "tests/fixtures/qnn_etdump/synthetic_qnn_llm.etdump"
        return spec_from_etdump(committed.read_bytes())


def write_big_etdump(path: str | os.PathLike, n_events: int, seed: int = 0, data_root=None,
                     template: dict | None = None) -> dict:
    """Write an ETDump of about ``n_events`` events (rounded up to whole template cycles).

    The layout is exactly what :class:`ETDumpWriter` would produce: a Default run, then the template
    period (default: the LLM fixture's prefill + 20 decodes) written by the writer until the buffer's
    8-byte phase repeats; the bytes of that cycle are then copied with numpy, patching each table's
    vtable soffset (the vtables stay where they were first emitted) and shifting every framework
    timestamp by the cycle's duration. QNN values repeat per cycle (so Σ node cycles = accelerator
    cycles holds in every call). Returns {"path", "bytes", "events", "runs", "seconds"}.
    """
    import numpy as np

    t0 = time.time()
    spec = dict(template or _big_template_spec(data_root))
    if seed or "seed" not in spec:
        spec["seed"] = seed
    period = spec["runs"]
    cap = max(1 << 20, int(n_events * 90) + (4 << 20))
    w = ETDumpWriter(capacity=cap)
    sim = _RuntimeSim(spec, w)
    sim.default_run(spec.get("default_run", True))
    n_done = 2
    n_per_period = None

    def run_period(record: bool):
        nonlocal n_done
        before = len(w._run_refs)
        start_ref = w.fb.start
        start_t = sim.t
        if record:
            w.fb.record, w.record_times = [], []
        ev0 = w.n_events
        for run in period:
            sim.execute(run, describe=False)
        w.close_block()
        ev = w.n_events - ev0
        rec = (w.fb.record, w.record_times)
        w.fb.record = w.record_times = None
        n_done += ev
        return {"start_ref": start_ref, "end_ref": w.fb.start, "run_refs": w._run_refs[before:],
                "tables": rec[0], "times": rec[1], "events": ev, "t0": start_t, "t1": sim.t,
                "phase": start_ref & 7}

    warm = run_period(False)           # emits every vtable the period needs
    n_per_period = warm["events"]
    cycle = None
    periods = []
    while cycle is None and n_done < n_events:
        periods.append(run_period(True))
        phases = [p["phase"] for p in periods] + [w.fb.start & 7]
        for i in range(len(periods)):
            for j in range(i + 1, len(phases)):
                if phases[i] == phases[j]:
                    cycle = periods[i:j]
                    break
            if cycle:
                break
    copies = 0
    if cycle and n_done < n_events:
        c_start, c_end = cycle[0]["start_ref"], cycle[-1]["end_ref"]
        S = c_start - c_end
        ev_c = sum(p["events"] for p in cycle)
        gap = int(spec.get("cycle_gap_ns", 200_000))
        T = cycle[-1]["t1"] - cycle[0]["t0"] + gap
        copies = -(-(n_events - n_done) // ev_c)
        base_i = w.fb.idx(c_end)
        i0 = w.fb.alloc(copies * S)
        buf = np.frombuffer(w.fb.buf, dtype=np.uint8)
        tmpl = buf[base_i:base_i + S].copy()
        block = buf[i0:i0 + copies * S].reshape(copies, S)
        block[:] = tmpl
        j = np.arange(copies, 0, -1, dtype=np.int64)[:, None]     # row r holds copy j = copies - r
        tab = np.array([r - c_end for p in cycle for r in p["tables"]], dtype=np.int64)
        tms = np.array([r - c_end for p in cycle for r in p["times"]], dtype=np.int64)
        so = tmpl[tab[:, None] + np.arange(4)].copy().view("<i4").reshape(-1).astype(np.int64)
        tv = tmpl[tms[:, None] + np.arange(8)].copy().view("<u8").reshape(-1).astype(np.int64)
        chunk = max(1, (64 << 20) // max(1, 8 * (len(tab) + len(tms))))
        cols4 = (tab[:, None] + np.arange(4)).reshape(-1)
        cols8 = (tms[:, None] + np.arange(8)).reshape(-1)
        for a in range(0, copies, chunk):
            jj = j[a:a + chunk]
            new_so = (so[None, :] - jj * S).astype("<i4")
            block[a:a + chunk, cols4] = new_so.view(np.uint8).reshape(len(jj), -1)
            new_t = (tv[None, :] + jj * T).astype("<u8")
            block[a:a + chunk, cols8] = new_t.view(np.uint8).reshape(len(jj), -1)
        del buf, block
        run_refs = [r for p in cycle for r in p["run_refs"]]
        for k in range(1, copies + 1):
            w._run_refs.extend(r - k * S for r in run_refs)
        n_done += copies * ev_c
    view = w.finish_view()
    with open(path, "wb") as f:
        f.write(view)
    size = len(view)
    n_runs = len(w._run_refs)
    del view
    return {"path": str(path), "bytes": size, "events": n_done, "runs": n_runs,
            "template_cycle_periods": len(cycle) if cycle else 0, "copies": copies,
            "events_per_period": n_per_period, "seconds": round(time.time() - t0, 2)}


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", metavar="DIR", help="regenerate the committed fixtures into DIR")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="with --out: only these fixtures")
    ap.add_argument("--data", metavar="ROOT", help="shared data root (default: ../shared/data or "
                                                    "$ETSCOPE_SHARED_DATA)")
    ap.add_argument("--big-events", nargs=2, metavar=("N", "PATH"), help="write a ~N-event ETDump")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spec", metavar="JSON", help="build an ETDump from a JSON spec (see build_qnn_etdump)")
    ap.add_argument("--write", metavar="PATH", help="with --spec: output file")
    ap.add_argument("--replay-check", metavar="ETDUMP", nargs="+",
                    help="re-emit profile-only ETDumps through the writer and compare bytes")
    a = ap.parse_args(argv)
    did = False
    if a.out:
        m = write_fixtures(a.out, a.data, a.only or None)
        for name, fx in m["fixtures"].items():
            print("%-34s %8d bytes  %3d runs  %6d events" % (
                name + ".etdump", fx["etdump_bytes"], fx["n_run_data"],
                sum(r["n_events"] for r in fx["runs"]) + (2 if fx["default_run"] else 0)))
        did = True
    if a.big_events:
        r = write_big_etdump(a.big_events[1], int(float(a.big_events[0])), seed=a.seed, data_root=a.data)
        print(json.dumps(r))
        did = True
    if a.spec:
        spec = json.loads(Path(a.spec).read_text())
        data = build_qnn_etdump(spec)
        if not a.write:
            ap.error("--spec needs --write PATH")
        Path(a.write).write_bytes(data)
        print("%s: %d bytes" % (a.write, len(data)))
        did = True
    if a.replay_check:
        bad = 0
        for p in a.replay_check:
            d = Path(p).read_bytes()
            same = replay_etdump(d) == d
            bad += not same
            print("%s: %s" % (p, "identical" if same else "DIFFERENT"))
        did = True
        if bad:
            return 1
    if not did:
        ap.print_help()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
