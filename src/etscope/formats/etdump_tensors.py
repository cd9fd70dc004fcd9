"""The tensors of ETDump debug events: per event its first tensor's shape, element count and bytes
(event columns), and every tensor of every debug event as rows (``DebugTensors``), read from the
FlatBuffer columns-wise by ``etdump``'s reader, with the same bounds on shared or overlapping
tables."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope.formats.etdump_schema import (T_OFFSET, T_SCALAR_TYPE, T_SIZES, T_STRIDES, VAL_OUTPUT, VAL_TENSOR,
                                           VAL_TENSOR_LIST, VAL_TYPE)
from etscope.formats.flatbuf import Buffer

# Bytes per element of executorch_flatbuffer.ScalarType (scalar_type.fbs), for tensor sizes.
_SCALAR_TYPE_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1,
                      12: 1, 13: 1, 14: 4, 15: 2, 22: 1, 23: 1, 24: 1, 25: 1, 26: 1, 27: 1}

# Every tensor of every debug event (a Tensor value: one row; a TensorList: one row per element),
# in file order. ``dims``/``strides`` index into the flat ``tensor_dims`` array.
TENSOR_COLUMNS = {
    "event": np.int64,          # index into the event columns
    "item": np.int32,           # position in the event's TensorList (0 for a Tensor value)
    "scalar_type": np.int8,     # executorch_flatbuffer.ScalarType
    "offset": np.int64,         # byte offset into the debug buffer (-1: empty tensor, nothing written)
    "dims_start": np.int64,     # sizes: tensor_dims[dims_start : dims_start + ndim]
    "ndim": np.int32,
    "strides_start": np.int64,  # strides (elements): tensor_dims[strides_start : + nstrides]
    "nstrides": np.int32,
    "program_output": np.bool_,  # Value.output set: the method's output, logged after the last instruction
}


@dataclass
class DebugTensors:
    """Tensor metadata of the debug events (columns of ``TENSOR_COLUMNS``) + the flat dims array."""

    columns: dict[str, np.ndarray]
    dims: np.ndarray            # int64: sizes and strides of all tensors

    def __len__(self) -> int:
        return int(self.columns["event"].shape[0])

    def sizes(self, i: int) -> tuple[int, ...]:
        a, n = int(self.columns["dims_start"][i]), int(self.columns["ndim"][i])
        return tuple(int(v) for v in self.dims[a:a + n])

    def strides(self, i: int) -> tuple[int, ...]:
        a, n = int(self.columns["strides_start"][i]), int(self.columns["nstrides"][i])
        return tuple(int(v) for v in self.dims[a:a + n])

    def subset(self, keep_event: np.ndarray) -> "DebugTensors | None":
        """The tensors of the events where ``keep_event`` (bool per event), their ``event`` column
        renumbered to the kept events' positions (a profile cut to some runs keeps its tensors)."""
        ev = self.columns["event"]
        rows = keep_event[ev]
        if not rows.any():
            return None
        new_pos = np.cumsum(keep_event) - 1
        cols = {k: v[rows] for k, v in self.columns.items()}
        cols["event"] = new_pos[cols["event"]].astype(np.int64)
        return DebugTensors(cols, self.dims)


def read_debug_values(buf, values, is_debug, cols, table, budget=None):
    """Shape, element count and bytes of each debug event's tensor (first tensor of a list)."""
    has = values > 0
    vtype = np.full(values.shape, -1, dtype=np.int8)
    vtype[has] = buf.v_scalar(values[has], VAL_TYPE, "i8", 0)
    tensor = np.zeros(values.shape, dtype=np.int64)
    tensor[has] = buf.v_table(values[has], VAL_TENSOR)
    is_list = has & (tensor == 0)
    if is_list.any():
        lists = buf.v_table(values[is_list], VAL_TENSOR_LIST)
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
        stype = buf.v_scalar(t, T_SCALAR_TYPE, "i8", 0)
        start, count = buf.v_vector(t, T_SIZES, 8)
        # Shapes repeat: decode each distinct sizes vector once.
        keys, inv = np.unique(np.stack([start, count]), axis=1, return_inverse=True)
        # Distinct sizes vectors may overlap in a hostile file: cap the dims decoded, as for strings
        # (over all chunks: budget[1] is what is left).
        if budget is None:
            budget = [0, MAX_DECODED_FACTOR * buf.size + (1 << 20)]
        budget[1] -= 8 * int(keys[1].sum())
        if budget[1] < 0:
            buf.fail("tensor shapes larger than the file allows (overlapping sizes vectors)")
        local_shapes: list[str] = []
        local_numel = np.empty(keys.shape[1], dtype=np.int64)
        for j in range(keys.shape[1]):
            s, c = int(keys[0, j]), int(keys[1, j])
            dims = buf.u8[s:s + 8 * c].copy().view("<i8").tolist() if c else []
            local_shapes.append("x".join(map(str, dims)) if c else "scalar")
            local_numel[j] = _numel(dims) if c else 1
        inv = inv.reshape(-1)
        sc = np.arange(len(local_shapes), dtype=np.int32)[inv]
        shape_codes[has_t] = table.merge(sc, local_shapes)
        n_el = local_numel[inv]
        numel[has_t] = n_el
        eb = _ELEM_BYTES[stype.astype(np.int64) + 128]
        # bytes unknown (-1) for unknown dtypes, unknown element counts and products past int64
        ok = (eb > 0) & (n_el >= 0) & (n_el <= _MAX_NUMEL // np.maximum(eb, 1))
        nbytes[has_t] = np.where(ok, n_el * np.where(ok, eb, 0), -1)
    cols["value_type"][is_debug] = vtype
    cols["tensor_shape"][is_debug] = shape_codes
    cols["tensor_numel"][is_debug] = numel
    cols["tensor_nbytes"][is_debug] = nbytes


class TensorRows:
    """Collects every tensor of the debug events, chunk by chunk (columns, no object per tensor)."""

    def __init__(self):
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in TENSOR_COLUMNS}
        self.dims: list[np.ndarray] = []
        self.n_dims = 0
        self.n_listed = 0

    def add(self, buf: Buffer, values: np.ndarray, events: np.ndarray, budget: list[int]) -> None:
        """``values``: Value table positions (0: none) of the debug events ``events``."""
        has = values > 0
        values, events = values[has], events[has]
        if values.size == 0:
            return
        output = np.zeros(values.shape, dtype=bool)
        out_tab = buf.v_table(values, VAL_OUTPUT)
        if (out_tab > 0).any():
            output[out_tab > 0] = buf.v_scalar(out_tab[out_tab > 0], 0, "u8", 0) != 0
        single = buf.v_table(values, VAL_TENSOR)
        lists = buf.v_table(values, VAL_TENSOR_LIST)
        one = single > 0
        in_list = (~one) & (lists > 0)
        pos_l, owner = buf.v_table_vectors(lists[in_list], 0)
        # Over the whole file, as for allocators: events sharing one TensorList (FlatBuffers allow it)
        # would otherwise multiply its tensors (scalars cost no dims, so the dims budget misses them).
        self.n_listed += len(pos_l)
        if self.n_listed > buf.size // 4 + 64:
            buf.fail(f"tensor lists claim {self.n_listed} tensors, more than a {buf.size}-byte file can hold "
                     "(shared or overlapping tables)")
        # rows: the Tensor values, then the list elements; sorted back into (event, item) order
        ev = np.concatenate([events[one], events[in_list][owner]])
        first = np.cumsum(np.bincount(owner, minlength=int(in_list.sum()))) - np.bincount(owner, minlength=int(in_list.sum()))
        item = np.concatenate([np.zeros(int(one.sum()), np.int32),
                               (np.arange(len(owner)) - first[owner]).astype(np.int32)])
        pos = np.concatenate([single[one], pos_l])
        out = np.concatenate([output[one], output[in_list][owner]])
        order = np.lexsort((item, ev))
        ev, item, pos, out = ev[order], item[order], pos[order], out[order]
        if pos.size == 0:
            return
        stype = buf.v_scalar(pos, T_SCALAR_TYPE, "i8", 0)
        offset = buf.v_scalar(pos, T_OFFSET, "i64", 0)
        cols = {"event": ev, "item": item, "scalar_type": stype, "offset": offset, "program_output": out}
        for slot, start_col, n_col in ((T_SIZES, "dims_start", "ndim"), (T_STRIDES, "strides_start", "nstrides")):
            start, count = buf.v_vector(pos, slot, 8)
            total = int(count.sum())
            budget[1] -= 8 * total     # shared or overlapping vectors cannot multiply the work
            if budget[1] < 0:
                buf.fail("tensor shapes larger than the file allows (overlapping sizes vectors)")
            firsts = np.cumsum(count) - count
            idx = np.repeat(start, count) + 8 * (np.arange(total, dtype=np.int64) - np.repeat(firsts, count))
            self.dims.append(buf.v_read("i64", idx).astype(np.int64))
            cols[start_col] = self.n_dims + firsts
            cols[n_col] = count.astype(np.int32)
            self.n_dims += total
        for k, dt in TENSOR_COLUMNS.items():
            self.parts[k].append(np.asarray(cols[k], dtype=dt))

    def finish(self) -> DebugTensors | None:
        if not self.parts["event"]:
            return None
        return DebugTensors({k: np.concatenate(v) for k, v in self.parts.items()},
                            np.concatenate(self.dims) if self.dims else np.zeros(0, np.int64))


# bytes per element by ScalarType code (int8 range, offset by 128); -1: unknown dtype
_ELEM_BYTES = np.array([_SCALAR_TYPE_BYTES.get(x, -1) for x in range(-128, 128)], dtype=np.int64)
MAX_DECODED_FACTOR = 4
_MAX_NUMEL = 1 << 62


def _numel(dims) -> int:
    """Elements of a tensor of shape ``dims`` (negative dims count as 0); -1 when the product
    does not fit in an int64 (a corrupt or hostile shape)."""
    values = [int(v) for v in dims]
    if any(v <= 0 for v in values):
        return 0
    n = 1
    for v in values:        # exact integers, stopping at the limit (a float product overflows, warning)
        n *= v
        if n >= _MAX_NUMEL:
            return -1
    return n
