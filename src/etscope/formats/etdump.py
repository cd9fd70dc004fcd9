"""ETDump reader: every RunData and every event, as columns.

Schema: ``devtools/etdump/etdump_schema_flatcc.fbs`` (namespace ``etdump``, identifier ``ED00``).
The runtime writes a size-prefixed buffer. Nothing is merged or overwritten: events with the same
name in one run are all kept, in file order.
"""
from __future__ import annotations

import mmap
import os
from typing import Callable

import numpy as np

from etscope.arrays import TWO_THREADS_MIN, in_two_threads
from etscope.errors import FormatError
from etscope.formats import etdump_repeats
from etscope.formats.etdump_schema import (
    ETDUMP_RUN_DATA, RUN_NAME, RUN_BUNDLED_INPUT, RUN_ALLOCATORS, RUN_EVENTS, EV_PROFILE, EV_ALLOCATION,
    EV_DEBUG, PE_NAME, PE_CHAIN, PE_INSTR, PE_DID_INT, PE_DID_STR, PE_META, PE_START, PE_END, AE_ALLOCATOR,
    AE_SIZE, DE_CHAIN, DE_INSTR, DE_VALUE, DE_DID_INT, DE_DID_STR, DE_NAME)
from etscope.formats.etdump_data import EtdumpData, RunData  # noqa: F401 (the reader's records, imported from here too)
from etscope.formats.etdump_tensors import MAX_DECODED_FACTOR, TensorRows, read_debug_values
from etscope.formats.flatbuf import MAX_STRING_BYTES_FACTOR, Buffer, root_table
from etscope.formats.flatbuf_tables import TableSet
from etscope.paths import open_input

IDENTIFIER = b"ED00"

# Event kinds (column ``kind``).
PROFILE, ALLOCATION, DEBUG = 0, 1, 2


VALUE_TYPES = ("Null", "Int", "Bool", "Float", "Double", "Tensor", "TensorList", "String")

EVENT_COLUMNS = {
    "run": np.int32,            # index into EtdumpData.runs
    "kind": np.uint8,           # PROFILE / ALLOCATION / DEBUG
    "name": np.int32,           # code into strings (-1: absent)
    "delegate_id_str": np.int32,  # code into strings (-1: absent)
    "delegate_id_int": np.int32,  # -1: absent (the schema's field is an int)
    "instruction_id": np.int32,   # -1: absent
    "chain": np.int64,          # stored in the narrowest integer type holding the file's values
    "start": np.uint64,         # profile events: raw start_time (ns for framework events)
    "end": np.uint64,           # profile events: raw end_time
    "metadata_len": np.int32,   # bytes of delegate_debug_metadata
    "allocator_id": np.int32,   # allocation events
    "allocation_size": np.uint64,
    "value_type": np.int8,      # debug events: index into VALUE_TYPES (-1: none)
    "tensor_shape": np.int32,   # debug events: code into strings, e.g. "1x8x64" (-1: none)
    "tensor_numel": np.int64,   # debug events: elements of the (first) tensor, -1: none
    "tensor_nbytes": np.int64,  # debug events: bytes of the (first) tensor, -1: unknown
}

# Value of each column where the event kind does not set it. Columns that hold only this value in
# a file (no allocation or debug events, no metadata) are read-only zero-stride views: no memory.
FILL = {"run": 0, "kind": 0, "name": -1, "delegate_id_str": -1, "delegate_id_int": -1, "instruction_id": -1,
        "chain": 0, "start": 0, "end": 0, "metadata_len": 0, "allocator_id": -1, "allocation_size": 0,
        "value_type": -1, "tensor_shape": -1, "tensor_numel": -1, "tensor_nbytes": -1}
_DENSE = ("run", "kind", "name", "delegate_id_str", "instruction_id", "start", "end")
_NARROW = (np.int8, np.int16, np.int32, np.int64)   # "chain": usually -1 and 0

CHUNK_EVENTS = 1 << 16   # events read at a time: bounds the temporaries (~25 MB) and keeps them in cache
COPY_REPEATED_RUNS = True   # runs repeating an earlier one are copied (False: parse every run; tests compare)


def read_etdump(path: str | os.PathLike,
                progress: Callable[[int, int], None] | None = None) -> EtdumpData:
    """Read an ETDump file. ``progress(events_done, events_total)`` is called after each chunk.

    The file is memory-mapped and read chunk by chunk; the pages of each chunk are released once
    it is read, so a large file does not stay resident (memory stays near the size of the columns).
    """
    path = os.fspath(path)
    try:
        with open_input(path, "ETDump") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise FormatError("empty file (0 bytes), not an ETDump", path)
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                return parse_etdump(mm, path, progress=progress, release=page_releaser(mm))
            finally:
                close_map(mm)
    except FormatError as err:
        raise err.with_file(path) from None
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except IsADirectoryError:
        raise FormatError("is a directory, not an ETDump file", path) from None
    except PermissionError:
        raise FormatError("permission denied", path) from None
    except (OSError, ValueError) as err:
        raise FormatError(f"cannot read ETDump: {err}", path) from None


def page_releaser(mm: mmap.mmap):
    """A function dropping the mapped pages of a byte range (they are re-read if touched again)."""
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None or not hasattr(mm, "madvise"):
        return None
    page = mmap.PAGESIZE
    size = len(mm)

    def release(lo: int, hi: int) -> None:
        lo = max(0, (lo // page) * page)
        hi = min(size, hi)
        if hi - lo >= page:
            try:
                mm.madvise(advice, lo, ((hi - lo) // page) * page)
            except (OSError, ValueError):
                pass
    return release


def close_map(mm: mmap.mmap) -> None:
    # A traceback may still hold numpy views of the map; it is then closed when collected.
    try:
        mm.close()
    except BufferError:
        pass


def parse_etdump(data, path: str = "<etdump>", progress: Callable[[int, int], None] | None = None,
                 release: Callable[[int, int], None] | None = None) -> EtdumpData:
    """Parse ETDump bytes (bytes, mmap or uint8 array). Results never reference ``data``.

    ``progress(events_done, events_total)`` is called after each chunk of events; ``release(lo,
    hi)`` with the byte range of ``data`` a chunk was read from, once it is no longer needed.
    """
    outer = Buffer(data, "ETDump")
    buf, root = root_table(outer, IDENTIFIER)
    base = int(buf.u8.__array_interface__["data"][0] - outer.u8.__array_interface__["data"][0]) \
        if buf.size else 0
    version = int(buf.scalar(root, 0, "u32", 0))
    run_pos = buf.tables(root, ETDUMP_RUN_DATA)
    shifted = None if release is None else (lambda lo, hi: release(lo + base, hi + base))
    runs, ev_start, counts = _read_runs(buf, run_pos, shifted)
    table = _StringTable()
    tensors = TensorRows()
    events, repeats_of = _read_events(buf, ev_start, counts, table, progress, shifted, tensors)
    data = EtdumpData(path=path, version=version, size_bytes=buf.size, runs=runs,
                      strings=table.strings, events=events, tensors=tensors.finish(),
                      repeats_of=repeats_of if (repeats_of >= 0).any() else None)
    data.set_run_arrays(counts, np.cumsum(counts) - counts)     # as the RunData say: known here already
    return data


# The fewest bytes one event takes in a file: its 4-byte slot in the events vector, the Event
# table (4-byte vtable offset + the 4-byte offset of its one member) and the member table (at
# least its 4-byte vtable offset; vtables may be shared). Files where events share tables can
# claim more events than this; the reader refuses them.
MIN_EVENT_BYTES = 16
RUN_CHUNK = 4096  # RunData tables read at a time (their pages are released after each chunk; 512 was
                  # 60 ms more on 93k runs, in per-chunk calls)


def _read_runs(buf: Buffer, run_pos: np.ndarray, release=None):
    """Name, bundled input, allocators and events vector of every RunData, chunk by chunk."""
    n = len(run_pos)
    ev_start = np.zeros(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    names: list[str] = []
    runs: list[RunData] = []
    first = 0
    n_allocs = 0
    for a in range(0, max(n, 1), RUN_CHUNK):
        pos = run_pos[a:a + RUN_CHUNK]
        if pos.size == 0:
            break
        codes, strings = buf.v_strings(pos, RUN_NAME)
        bundled = buf.v_scalar(pos, RUN_BUNDLED_INPUT, "i32", -1)
        alloc_pos, alloc_owner = buf.v_table_vectors(pos, RUN_ALLOCATORS)
        # The same bound over all chunks (v_table_vectors checks one chunk): runs sharing one
        # allocators vector would otherwise list size**2 / 8192 allocator names.
        n_allocs += len(alloc_pos)
        if n_allocs > buf.size // 4 + 64:
            buf.fail(f"allocator vectors claim {n_allocs} elements, more than a {buf.size}-byte file can hold "
                     "(shared or overlapping tables)")
        alloc_codes, alloc_strings = buf.v_strings(alloc_pos, 0)
        st, cnt = buf.v_vector(pos, RUN_EVENTS, 4)
        ev_start[a:a + len(pos)] = st
        counts[a:a + len(pos)] = cnt
        # An event takes at least MIN_EVENT_BYTES of the file (see there); more events than that
        # means events share tables to make a small file claim a huge count.
        total = int(counts[:a + len(pos)].sum())
        if total > buf.size // MIN_EVENT_BYTES + 64:
            buf.fail(f"vectors claim {total} events, more than a {buf.size}-byte file can hold "
                     f"({MIN_EVENT_BYTES} bytes each at least: shared or overlapping tables)")
        allocs_of: dict[int, list[str]] = {}
        for owner, c in zip(alloc_owner.tolist(), alloc_codes.tolist()):
            allocs_of.setdefault(owner, []).append(alloc_strings[c] if c >= 0 else "")
        names = [strings[c] if c >= 0 else "" for c in codes.tolist()]
        firsts = np.cumsum(cnt) - cnt + first
        allocs = [allocs_of.get(i, []) for i in range(len(pos))]
        runs.extend(map(RunData, names, bundled.tolist(), allocs, firsts.tolist(), cnt.tolist()))  # no loop
        first += int(cnt.sum())
        if release is not None:         # the tables and the vectors' lengths read: one range over both
            lo, hi = int(pos.min()), int(pos.max()) + 64
            if st.any():
                lo, hi = min(lo, int(st[st > 0].min()) - 4), max(hi, int(st.max()) + 4)
            release(lo, hi)
    _refuse_shared_event_vectors(buf, ev_start, counts)
    return runs, ev_start, counts


def _refuse_shared_event_vectors(buf: Buffer, ev_start: np.ndarray, counts: np.ndarray) -> None:
    """Each RunData owns its events vector. FlatBuffers would let runs point at one vector (or
    overlapping ones); ExecuTorch never writes that, and reading it would multiply a file's events
    (a 24.5 MB file shared 10x: 6 million events, 4 GB). Refused, naming the two runs."""
    runs = np.flatnonzero(counts > 0)
    if runs.size < 2:
        return
    order = runs[np.argsort(ev_start[runs], kind="stable")]
    ends = ev_start[order] + 4 * counts[order]
    bad = np.flatnonzero(ends[:-1] > ev_start[order[1:]])
    if bad.size:
        i, j = sorted((int(order[bad[0]]), int(order[bad[0] + 1])))
        buf.fail(f"RunData {i} and {j} share their events vector (or the vectors overlap); each run's "
                 "events must be its own", int(ev_start[order[bad[0] + 1]]) - 4)


class _StringTable:
    """Merges per-column string codes into one table."""

    def __init__(self):
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def merge(self, codes: np.ndarray, local: list[str]) -> np.ndarray:
        if not local:
            return codes
        remap = np.array([self._add(s) for s in local], dtype=np.int32)
        out = np.full(codes.shape, -1, dtype=np.int32)
        present = codes >= 0
        out[present] = remap[codes[present]]
        return out

    def _add(self, s: str) -> int:
        code = self._index.get(s)
        if code is None:
            code = self._index[s] = len(self.strings)
            self.strings.append(s)
        return code


class _Columns:
    """The event columns being filled chunk by chunk; a sparse column is allocated on first use."""

    def __init__(self, n: int):
        self.n = n
        dense = [name for name in _DENSE if name != "run"]
        made: dict[str, np.ndarray] = {}

        def make(names) -> None:        # the first touch of each page is most of the cost
            for name in names:
                made[name] = np.full(n, FILL[name], dtype=EVENT_COLUMNS[name])

        in_two_threads(make, dense, n * 8 >= TWO_THREADS_MIN)
        self.cols: dict[str, np.ndarray] = {name: made[name] for name in dense}

    def put(self, name: str, dest, values) -> None:
        """Set ``name[dest] = values`` (dest: a slice or event positions)."""
        vals = np.asarray(values)
        col = self.cols.get(name)
        if col is None:
            if vals.size == 0 or not (vals != FILL[name]).any():
                return
            col = self.cols[name] = np.full(self.n, FILL[name],
                                            dtype=_NARROW[0] if name == "chain" else EVENT_COLUMNS[name])
        if name == "chain" and col.dtype != np.int64 and vals.size:
            lo, hi = int(vals.min()), int(vals.max())
            if lo < np.iinfo(col.dtype).min or hi > np.iinfo(col.dtype).max:
                dt = next(t for t in _NARROW if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
                col = self.cols[name] = col.astype(dt)
        col[dest] = vals

    def finish(self, run: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for name, dt in EVENT_COLUMNS.items():
            if name == "run":
                out[name] = run
            elif name in self.cols:
                out[name] = self.cols[name]
            else:
                dt = _NARROW[0] if name == "chain" else dt
                out[name] = np.broadcast_to(np.array(FILL[name], dtype=dt), (self.n,))
        return out


def _read_events(buf: Buffer, ev_start: np.ndarray, counts: np.ndarray, table: "_StringTable",
                 progress=None, release=None, tensors: "TensorRows | None" = None
                 ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The event columns, and per run the run it repeats (-1: parsed)."""
    n = int(counts.sum())
    if progress is not None:
        progress(0, n)
    run = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    firsts = np.cumsum(counts) - counts
    cols = _Columns(n)
    template = (etdump_repeats.find_copies(buf, ev_start, counts, firsts, cols.cols["start"], cols.cols["end"],
                                           release) if COPY_REPEATED_RUNS else np.full(len(counts), -1))
    parsed = template < 0
    if parsed.all():
        todo = None     # every event, in order: chunks are slices
        m = n
    else:
        todo = np.flatnonzero(np.repeat(parsed, counts))
        m = len(todo)
    # bytes left to decode over all chunks: [strings, tensor dims]
    budget = [MAX_STRING_BYTES_FACTOR * buf.size + (1 << 20), MAX_DECODED_FACTOR * buf.size + (1 << 20)]
    done = n - m
    for a in range(0, m, CHUNK_EVENTS):
        b = min(m, a + CHUNK_EVENTS)
        idx = np.arange(a, b, dtype=np.int64) if todo is None else todo[a:b]
        dest = _as_slice(idx)
        r = run[idx]
        elems = ev_start[r] + 4 * (idx - firsts[r])
        ev_pos = buf.v_indirect(elems)
        lo, hi = _read_chunk(buf, ev_pos, dest, cols, table, budget, tensors)
        if release is not None:
            release(min(lo, int(elems.min())), max(hi, int(elems.max())))
        if progress is not None:
            progress(done + b, n)
    etdump_repeats.copy_events(cols.cols, template, firsts, counts)
    if progress is not None and todo is not None:
        progress(n, n)
    return cols.finish(run), template



def _as_slice(idx: np.ndarray):
    """A slice when ``idx`` is a run of consecutive positions (cheaper to assign), else ``idx``."""
    if idx.size and int(idx[-1]) - int(idx[0]) == idx.size - 1:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def _rows(dest, rows: np.ndarray) -> np.ndarray:
    """Absolute event positions of the chunk's ``rows`` (``dest``: the chunk's slice or positions)."""
    return dest.start + rows if isinstance(dest, slice) else dest[rows]


def _read_chunk(buf: Buffer, ev_pos: np.ndarray, dest, cols: _Columns, table: "_StringTable",
                budget: list[int], tensors: "TensorRows | None" = None) -> tuple[int, int]:
    """Read the events at ``ev_pos`` into positions ``dest`` (a slice or positions); returns the
    byte range the chunk's tables lie in."""
    m = len(ev_pos)
    events = TableSet(buf, ev_pos)
    prof = events.table(EV_PROFILE)
    alloc = events.table(EV_ALLOCATION)
    debug = events.table(EV_DEBUG)
    is_prof, is_alloc, is_debug = prof > 0, alloc > 0, debug > 0
    kinds = is_prof.astype(np.int8) + is_alloc + is_debug
    if (kinds != 1).any():
        i = int(np.argmax(kinds != 1))
        buf.fail("event holds none or several of profile/allocation/debug event", int(ev_pos[i]))
    kind = np.zeros(m, dtype=np.uint8)
    kind[is_alloc] = ALLOCATION
    kind[is_debug] = DEBUG
    cols.cols["kind"][dest] = kind
    lo, hi = int(ev_pos.min()), int(ev_pos.max())
    all_prof = bool(is_prof.all())

    def put(name, mask, values):
        cols.put(name, dest if mask is None else _rows(dest, np.nonzero(mask)[0]), values)

    if is_prof.any():
        p = prof if all_prof else prof[is_prof]
        lo, hi = min(lo, int(p.min())), max(hi, int(p.max()))
        ts = TableSet(buf, p)
        mask = None if all_prof else is_prof
        put("name", mask, table.merge(*ts.strings(PE_NAME, budget)))
        put("delegate_id_str", mask, table.merge(*ts.strings(PE_DID_STR, budget)))
        put("chain", mask, ts.scalar(PE_CHAIN, "i32", 0))
        put("instruction_id", mask, ts.scalar(PE_INSTR, "i32", -1))
        put("delegate_id_int", mask, ts.scalar(PE_DID_INT, "i32", -1))
        put("metadata_len", mask, ts.vector(PE_META, 1)[1].astype(np.int32))
        put("start", mask, ts.scalar(PE_START, "u64", 0))
        put("end", mask, ts.scalar(PE_END, "u64", 0))

    if is_alloc.any():
        al = alloc[is_alloc]
        lo, hi = min(lo, int(al.min())), max(hi, int(al.max()))
        ts = TableSet(buf, al)
        put("allocator_id", is_alloc, ts.scalar(AE_ALLOCATOR, "i32", 0))
        put("allocation_size", is_alloc, ts.scalar(AE_SIZE, "u64", 0))

    if is_debug.any():
        d = debug[is_debug]
        lo, hi = min(lo, int(d.min())), max(hi, int(d.max()))
        ts = TableSet(buf, d)
        put("name", is_debug, table.merge(*ts.strings(DE_NAME, budget)))
        put("delegate_id_str", is_debug, table.merge(*ts.strings(DE_DID_STR, budget)))
        put("chain", is_debug, ts.scalar(DE_CHAIN, "u64", 0).astype(np.int64))
        put("instruction_id", is_debug, ts.scalar(DE_INSTR, "i32", -1))
        put("delegate_id_int", is_debug, ts.scalar(DE_DID_INT, "i32", -1))
        dcols = {k: np.empty(len(d), dtype=EVENT_COLUMNS[k])
                 for k in ("value_type", "tensor_shape", "tensor_numel", "tensor_nbytes")}
        values = ts.table(DE_VALUE)
        read_debug_values(buf, values, np.ones(len(d), dtype=bool), dcols, table, budget)
        for k, v in dcols.items():
            put(k, is_debug, v)
        if tensors is not None:
            tensors.add(buf, values, _rows(dest, np.flatnonzero(is_debug)), budget)
    return lo, hi + 64


def sniff(head: bytes) -> bool:
    return head[4:8] == IDENTIFIER or head[8:12] == IDENTIFIER
