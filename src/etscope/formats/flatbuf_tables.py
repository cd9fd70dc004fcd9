"""Many FlatBuffer tables of one type read at once, grouped by vtable (columnar, numpy): how the
ETDump reader reads millions of events without a Python object per event. Bounds-checked through
:class:`etscope.formats.flatbuf.Buffer`."""
from __future__ import annotations

import numpy as np

from etscope.formats.flatbuf import NUMPY_TYPES, SCALAR_FORMATS, Buffer

class TableSet:
    """Many tables of one type read at once, grouped by vtable.

    Tables that share a vtable have every field at the same offset, so reading a field of all of
    them is one gather: the vtable of each group is read once (writers de-duplicate vtables: an
    ETDump has a handful for millions of events). Falls back to per-table vtable reads when a
    file has too many distinct vtables.
    """

    MAX_GROUPS = 64

    def __init__(self, buf: Buffer, tables: np.ndarray):
        self.buf = buf
        self.tables = np.asarray(tables, dtype=np.int64)
        self.groups: np.ndarray | None = None
        if self.tables.size == 0:
            self.vts = np.zeros(0, dtype=np.int64)
            self.inv = np.zeros(0, dtype=np.int64)
            return
        vt = self.tables - buf.v_read("i32", self.tables).astype(np.int64)
        if int(vt.min()) < 0 or int(vt.max()) + 4 > buf.size:
            bad = int(self.tables[np.argmax((vt < 0) | (vt + 4 > buf.size))])
            buf.fail("vtable out of bounds", bad)
        found = _factorize_small(vt, self.MAX_GROUPS)
        self._last = None
        if found is None:
            self.vts = None
            self.inv = None
            return
        self.vts, self.inv = found
        self.vt_size = [buf.read("u16", int(v)) for v in self.vts]
        self.t_size = [buf.read("u16", int(v) + 2) for v in self.vts]
        self.lo, self.hi = int(self.tables.min()), int(self.tables.max())

    def field(self, slot: int) -> np.ndarray:
        """Absolute position of field ``slot`` for every table (0 where absent)."""
        if self.tables.size == 0:
            return np.zeros(0, dtype=np.int64)
        if self.vts is None:
            return self.buf.v_field(self.tables, slot)
        entry = 4 + 2 * slot
        offs = np.zeros(len(self.vts), dtype=np.int64)
        for g, v in enumerate(self.vts):
            if self.vt_size[g] >= entry + 2:
                off = self.buf.read("u16", int(v) + entry)
                if off and off >= self.t_size[g]:
                    self.buf.fail(f"field {slot} outside its table", int(self.tables[np.argmax(self.inv == g)]))
                offs[g] = off
        self._last = offs
        if (offs == offs[0]).all():
            o = int(offs[0])
            return self.tables + o if o else np.zeros(self.tables.shape, dtype=np.int64)
        o = offs[self.inv]
        pos = self.tables + o
        if not (offs > 0).all():
            pos[o == 0] = 0
        return pos

    def scalar(self, slot: int, kind: str, default=0) -> np.ndarray:
        pos = self.field(slot)
        if self.vts is not None and (self._last > 0).all():
            # Every table has the field: bounds from the tables' range, one typed gather.
            n = SCALAR_FORMATS[kind][1]
            if self.lo + int(self._last.min()) >= 0 and self.hi + int(self._last.max()) + n <= self.buf.size:
                r = pos & (n - 1)
                r0 = int(r[0])
                if n == 1 or (r == r0).all():
                    shift = n.bit_length() - 1
                    return self.buf.typed(kind, r0)[(pos - r0) >> shift] if n > 1 else \
                        self.buf.u8[pos].view(NUMPY_TYPES[kind])
            return self.buf.v_read(kind, pos)
        out = np.full(pos.shape, default, dtype=NUMPY_TYPES[kind])
        present = pos > 0
        if present.all():
            return self.buf.v_read(kind, pos)
        if present.any():
            out[present] = self.buf.v_read(kind, pos[present])
        return out

    def table(self, slot: int) -> np.ndarray:
        pos = self.field(slot)
        out = np.zeros(pos.shape, dtype=np.int64)
        present = pos > 0
        if present.any():
            out[present] = self.buf.v_indirect(pos[present])
        return out

    def vector(self, slot: int, elem_size: int) -> tuple[np.ndarray, np.ndarray]:
        pos = self.field(slot)
        start = np.zeros(pos.shape, dtype=np.int64)
        count = np.zeros(pos.shape, dtype=np.int64)
        present = pos > 0
        if present.any():
            vec = self.buf.v_indirect(pos[present])
            cnt = self.buf.v_read("u32", vec).astype(np.int64)
            st = vec + 4
            over = st + cnt * elem_size > self.buf.size
            if over.any():
                i = int(np.argmax(over))
                self.buf.fail(f"vector of {int(cnt[i])} elements runs past the end", int(vec[i]))
            start[present] = st
            count[present] = cnt
        return start, count

    def strings(self, slot: int, budget: list[int] | None = None) -> tuple[np.ndarray, list[str]]:
        start, count = self.vector(slot, 1)
        return self.buf.decode_strings(start, count, budget)


def _factorize_small(a: np.ndarray, limit: int):
    """(distinct values, inverse) of an int array with few distinct values, or None if > limit."""
    inv = np.zeros(a.shape, dtype=np.int64)
    vals = [a[0]]
    todo = a != a[0]
    g = 0
    while todo.any():
        g += 1
        if g >= limit:
            return None
        i = int(np.argmax(todo))
        v = a[i]
        m = a == v
        inv[m] = g
        todo &= ~m
        vals.append(v)
    return np.array(vals, dtype=np.int64), inv
