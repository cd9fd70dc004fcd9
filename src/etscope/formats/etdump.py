"""ETDump reader: every RunData and every event, as columns.

Schema: ``devtools/etdump/etdump_schema_flatcc.fbs`` (namespace ``etdump``, identifier ``ED00``).
The runtime writes a size-prefixed buffer. Nothing is merged or overwritten: events with the same
name in one run are all kept, in file order.
"""
from __future__ import annotations

import math
import mmap
import os
from dataclasses import dataclass, field

import numpy as np

from etscope.errors import FormatError
from etscope.formats.flatbuf import Buffer, root_table

IDENTIFIER = b"ED00"

# Event kinds (column ``kind``).
PROFILE, ALLOCATION, DEBUG = 0, 1, 2

# Field slots, in schema order.
_ETDUMP_RUN_DATA = 1
_RUN_NAME, _RUN_BUNDLED_INPUT, _RUN_ALLOCATORS, _RUN_EVENTS = 0, 1, 2, 3
_EV_PROFILE, _EV_ALLOCATION, _EV_DEBUG = 0, 1, 2
_PE_NAME, _PE_CHAIN, _PE_INSTR, _PE_DID_INT, _PE_DID_STR, _PE_META, _PE_START, _PE_END = range(8)
_AE_ALLOCATOR, _AE_SIZE = 0, 1
_DE_CHAIN, _DE_INSTR, _DE_VALUE, _DE_DID_INT, _DE_DID_STR, _DE_NAME = range(6)
_VAL_TYPE, _VAL_TENSOR, _VAL_TENSOR_LIST = 0, 1, 2
_T_SCALAR_TYPE, _T_SIZES, _T_STRIDES, _T_OFFSET = 0, 1, 2, 3

VALUE_TYPES = ("Null", "Int", "Bool", "Float", "Double", "Tensor", "TensorList", "String")

# Bytes per element of executorch_flatbuffer.ScalarType (scalar_type.fbs), for tensor sizes.
_SCALAR_TYPE_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1,
                      12: 1, 13: 1, 14: 4, 15: 2, 22: 1, 23: 1, 24: 1, 25: 1, 26: 1, 27: 1}

EVENT_COLUMNS = {
    "run": np.int32,            # index into EtdumpData.runs
    "kind": np.uint8,           # PROFILE / ALLOCATION / DEBUG
    "name": np.int32,           # code into strings (-1: absent)
    "delegate_id_str": np.int32,  # code into strings (-1: absent)
    "delegate_id_int": np.int64,  # -1: absent
    "instruction_id": np.int32,   # -1: absent
    "chain": np.int64,
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


@dataclass
class RunData:
    name: str
    bundled_input_index: int
    allocators: list[str]
    first_event: int
    event_count: int


@dataclass
class EtdumpData:
    """Plain data read from one ETDump file. ``events`` columns are aligned numpy arrays."""

    path: str
    version: int
    size_bytes: int
    runs: list[RunData]
    strings: list[str]
    events: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def event_count(self) -> int:
        return int(self.events["run"].shape[0])


def read_etdump(path: str | os.PathLike) -> EtdumpData:
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise FormatError("empty file (0 bytes), not an ETDump", path)
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                return parse_etdump(mm, path)
            finally:
                _close_quietly(mm)
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


def _close_quietly(mm: mmap.mmap) -> None:
    # A traceback may still hold numpy views of the map; it is then closed when collected.
    try:
        mm.close()
    except BufferError:
        pass


def parse_etdump(data, path: str = "<etdump>") -> EtdumpData:
    """Parse ETDump bytes (bytes, mmap or uint8 array). Results never reference ``data``."""
    buf, root = root_table(Buffer(data, "ETDump"), IDENTIFIER)
    version = int(buf.scalar(root, 0, "u32", 0))
    run_pos = buf.tables(root, _ETDUMP_RUN_DATA)
    run_names, strings = buf.v_strings(run_pos, _RUN_NAME)
    bundled = buf.v_scalar(run_pos, _RUN_BUNDLED_INPUT, "i32", -1)

    alloc_pos, alloc_owner = buf.v_table_vectors(run_pos, _RUN_ALLOCATORS)
    alloc_codes, alloc_strings = buf.v_strings(alloc_pos, 0)

    ev_pos, ev_owner = buf.v_table_vectors(run_pos, _RUN_EVENTS)
    counts = np.bincount(ev_owner, minlength=len(run_pos)) if len(run_pos) else np.zeros(0, np.int64)
    firsts = np.cumsum(counts) - counts

    # alloc_owner is sorted (one block per run): slice it instead of masking once per run, which
    # would be quadratic in a file of many runs.
    alloc_names = [alloc_strings[c] if c >= 0 else "" for c in alloc_codes.tolist()]
    alloc_counts = np.bincount(alloc_owner, minlength=len(run_pos)).tolist() if len(run_pos) else []
    runs = []
    a = 0
    for i, (code, bi, first, count) in enumerate(zip(run_names.tolist(), bundled.tolist(), firsts.tolist(),
                                                     counts.tolist())):
        allocs = alloc_names[a:a + alloc_counts[i]]
        a += alloc_counts[i]
        runs.append(RunData(strings[code] if code >= 0 else "", int(bi), allocs, int(first), int(count)))

    table = _StringTable()
    events = _read_events(buf, ev_pos, ev_owner, table)
    return EtdumpData(path=path, version=version, size_bytes=buf.size, runs=runs,
                      strings=table.strings, events=events)


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


def _read_events(buf: Buffer, ev_pos: np.ndarray, ev_owner: np.ndarray, table: _StringTable):
    n = len(ev_pos)
    cols = {name: np.empty(n, dtype=dt) for name, dt in EVENT_COLUMNS.items()}
    cols["run"][:] = ev_owner
    for name in ("name", "delegate_id_str", "tensor_shape", "allocator_id"):
        cols[name][:] = -1
    for name in ("delegate_id_int", "instruction_id", "tensor_numel", "tensor_nbytes"):
        cols[name][:] = -1
    cols["value_type"][:] = -1
    for name in ("chain", "start", "end", "metadata_len", "allocation_size"):
        cols[name][:] = 0

    prof = buf.v_table(ev_pos, _EV_PROFILE)
    alloc = buf.v_table(ev_pos, _EV_ALLOCATION)
    debug = buf.v_table(ev_pos, _EV_DEBUG)
    is_prof, is_alloc, is_debug = prof > 0, alloc > 0, debug > 0
    if (is_prof.astype(np.int8) + is_alloc + is_debug != 1).any():
        i = int(np.argmax(is_prof.astype(np.int8) + is_alloc + is_debug != 1))
        buf.fail("event holds none or several of profile/allocation/debug event", int(ev_pos[i]))
    cols["kind"][is_prof] = PROFILE
    cols["kind"][is_alloc] = ALLOCATION
    cols["kind"][is_debug] = DEBUG

    if is_prof.any():
        p = prof[is_prof]
        cols["name"][is_prof] = table.merge(*buf.v_strings(p, _PE_NAME))
        cols["delegate_id_str"][is_prof] = table.merge(*buf.v_strings(p, _PE_DID_STR))
        cols["chain"][is_prof] = buf.v_scalar(p, _PE_CHAIN, "i32", 0)
        cols["instruction_id"][is_prof] = buf.v_scalar(p, _PE_INSTR, "i32", -1)
        cols["delegate_id_int"][is_prof] = buf.v_scalar(p, _PE_DID_INT, "i32", -1)
        cols["metadata_len"][is_prof] = buf.v_vector(p, _PE_META, 1)[1]
        cols["start"][is_prof] = buf.v_scalar(p, _PE_START, "u64", 0)
        cols["end"][is_prof] = buf.v_scalar(p, _PE_END, "u64", 0)

    if is_alloc.any():
        a = alloc[is_alloc]
        cols["allocator_id"][is_alloc] = buf.v_scalar(a, _AE_ALLOCATOR, "i32", 0)
        cols["allocation_size"][is_alloc] = buf.v_scalar(a, _AE_SIZE, "u64", 0)

    if is_debug.any():
        d = debug[is_debug]
        cols["name"][is_debug] = table.merge(*buf.v_strings(d, _DE_NAME))
        cols["delegate_id_str"][is_debug] = table.merge(*buf.v_strings(d, _DE_DID_STR))
        cols["chain"][is_debug] = buf.v_scalar(d, _DE_CHAIN, "u64", 0).astype(np.int64)
        cols["instruction_id"][is_debug] = buf.v_scalar(d, _DE_INSTR, "i32", -1)
        cols["delegate_id_int"][is_debug] = buf.v_scalar(d, _DE_DID_INT, "i32", -1)
        _read_debug_values(buf, buf.v_table(d, _DE_VALUE), is_debug, cols, table)
    return cols


def _read_debug_values(buf, values, is_debug, cols, table):
    """Shape, element count and bytes of each debug event's tensor (first tensor of a list)."""
    has = values > 0
    vtype = np.full(values.shape, -1, dtype=np.int8)
    vtype[has] = buf.v_scalar(values[has], _VAL_TYPE, "i8", 0)
    tensor = np.zeros(values.shape, dtype=np.int64)
    tensor[has] = buf.v_table(values[has], _VAL_TENSOR)
    is_list = has & (tensor == 0)
    if is_list.any():
        lists = buf.v_table(values[is_list], _VAL_TENSOR_LIST)
        first = np.zeros(lists.shape, dtype=np.int64)
        nonempty = lists > 0
        if nonempty.any():
            start, count = buf.v_vector(lists[nonempty], 0, 4)
            first_nonempty = np.zeros(start.shape, dtype=np.int64)
            ok = count > 0
            first_nonempty[ok] = buf.v_indirect(start[ok])
            first[nonempty] = first_nonempty
        tensor[is_list] = first
    shape_codes = np.full(values.shape, -1, dtype=np.int32)
    numel = np.full(values.shape, -1, dtype=np.int64)
    nbytes = np.full(values.shape, -1, dtype=np.int64)
    has_t = tensor > 0
    if has_t.any():
        t = tensor[has_t]
        stype = buf.v_scalar(t, _T_SCALAR_TYPE, "i8", 0)
        start, count = buf.v_vector(t, _T_SIZES, 8)
        # Shapes repeat: decode each distinct sizes vector once.
        keys, inv = np.unique(np.stack([start, count]), axis=1, return_inverse=True)
        # Distinct sizes vectors may overlap in a hostile file: cap the dims decoded, as for strings.
        if 8 * int(keys[1].sum()) > _MAX_DECODED_FACTOR * buf.size + (1 << 20):
            buf.fail("tensor shapes larger than the file allows (overlapping sizes vectors)")
        local_shapes: list[str] = []
        local_numel = np.empty(keys.shape[1], dtype=np.int64)
        for j in range(keys.shape[1]):
            s, c = int(keys[0, j]), int(keys[1, j])
            dims = buf.u8[s:s + 8 * c].copy().view("<i8") if c else np.zeros(0, np.int64)
            local_shapes.append("x".join(str(int(v)) for v in dims) if c else "scalar")
            local_numel[j] = _numel(dims) if c else 1
        inv = inv.reshape(-1)
        sc = np.arange(len(local_shapes), dtype=np.int32)[inv]
        shape_codes[has_t] = table.merge(sc, local_shapes)
        n_el = local_numel[inv]
        numel[has_t] = n_el
        elem = np.array([_SCALAR_TYPE_BYTES.get(int(x), -1) for x in range(-128, 128)], dtype=np.int64)
        eb = elem[stype.astype(np.int64) + 128]
        # bytes unknown (-1) for unknown dtypes, unknown element counts and products past int64
        ok = (eb > 0) & (n_el >= 0) & (n_el <= _MAX_NUMEL // np.maximum(eb, 1))
        nbytes[has_t] = np.where(ok, n_el * np.where(ok, eb, 0), -1)
    cols["value_type"][is_debug] = vtype
    cols["tensor_shape"][is_debug] = shape_codes
    cols["tensor_numel"][is_debug] = numel
    cols["tensor_nbytes"][is_debug] = nbytes


_MAX_DECODED_FACTOR = 4
_MAX_NUMEL = 1 << 62


def _numel(dims: np.ndarray) -> int:
    """Elements of a tensor of shape ``dims`` (negative dims count as 0); -1 when the product
    does not fit in an int64 (a corrupt or hostile shape)."""
    clipped = np.clip(dims, 0, None)
    if float(np.prod(clipped, dtype=np.float64)) >= _MAX_NUMEL:
        return -1
    return int(math.prod(int(v) for v in clipped))


def sniff(head: bytes) -> bool:
    return head[4:8] == IDENTIFIER or head[8:12] == IDENTIFIER
