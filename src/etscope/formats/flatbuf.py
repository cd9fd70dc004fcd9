"""Bounds-checked FlatBuffer access, scalar and vectorised (numpy), shared by the ETDump and .pte readers.

FlatBuffer references (uoffset) are unsigned and always point forward, so following them cannot
loop; vtable offsets (soffset) may point anywhere and are range-checked. Every read is checked
against the buffer size and raises :class:`FormatError` with the byte offset.

The vectorised functions take numpy arrays of table positions and read one field of all of them
at once: gather the vtable positions, the field slots, then the field values. Position 0 is never
a valid table or field position (the root offset lives there), so 0 means "absent".
"""
from __future__ import annotations

import struct

import numpy as np

from etscope.arrays import HASH_MULTIPLIERS, distinct_rows, unique
from etscope.errors import FormatError

SCALAR_FORMATS = {
    "u8": ("<B", 1), "i8": ("<b", 1), "u16": ("<H", 2), "i16": ("<h", 2),
    "u32": ("<I", 4), "i32": ("<i", 4), "u64": ("<Q", 8), "i64": ("<q", 8),
    "f32": ("<f", 4), "f64": ("<d", 8),
}
NUMPY_TYPES = {"u8": "<u1", "i8": "<i1", "u16": "<u2", "i16": "<i2", "u32": "<u4", "i32": "<i4",
       "u64": "<u8", "i64": "<i8", "f32": "<f4", "f64": "<f8"}

# Strings gathered for decoding may not exceed this multiple of the buffer size: hostile files can
# point many distinct string offsets at overlapping bytes.
MAX_STRING_BYTES_FACTOR = 4


class Buffer:
    """A read-only FlatBuffer held as a numpy uint8 view (bytes, mmap or array)."""

    def __init__(self, data, what: str = "flatbuffer"):
        self.u8 = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
        self.size = int(self.u8.shape[0])
        self.what = what
        self._mv = memoryview(self.u8)
        self._views: dict[tuple[str, int], np.ndarray] = {}
        self._vt_cache: tuple | None = None

    # ---- scalar access -------------------------------------------------------------------------
    def fail(self, what: str, offset: int | None = None):
        raise FormatError(f"{self.what}: {what}", offset=offset)

    def read(self, kind: str, pos: int):
        fmt, n = SCALAR_FORMATS[kind]
        if pos < 0 or pos + n > self.size:
            self.fail(f"{kind} read out of bounds (size {self.size})", pos)
        return struct.unpack_from(fmt, self._mv, pos)[0]

    def indirect(self, pos: int) -> int:
        """Follow the uoffset stored at ``pos``."""
        target = pos + self.read("u32", pos)
        if target >= self.size:
            self.fail("offset points past the end", pos)
        return target

    def field(self, table: int, slot: int) -> int:
        """Absolute position of field ``slot`` of the table at ``table``, or 0 when absent."""
        vt = table - self.read("i32", table)
        if vt < 0 or vt + 4 > self.size:
            self.fail("vtable out of bounds", table)
        vt_size = self.read("u16", vt)
        entry = 4 + 2 * slot
        if entry + 2 > vt_size:
            return 0
        off = self.read("u16", vt + entry)
        if off == 0:
            return 0
        if off >= self.read("u16", vt + 2):
            self.fail(f"field {slot} outside its table", table)
        return table + off

    def scalar(self, table: int, slot: int, kind: str, default=0):
        pos = self.field(table, slot)
        return self.read(kind, pos) if pos else default

    def table(self, table: int, slot: int) -> int:
        pos = self.field(table, slot)
        return self.indirect(pos) if pos else 0

    def vector(self, table: int, slot: int, elem_size: int) -> tuple[int, int]:
        """(start of the elements, element count) of a vector field; (0, 0) when absent."""
        pos = self.field(table, slot)
        if not pos:
            return 0, 0
        vec = self.indirect(pos)
        count = self.read("u32", vec)
        start = vec + 4
        if start + count * elem_size > self.size:
            self.fail(f"vector of {count} elements runs past the end", vec)
        return start, count

    def string(self, table: int, slot: int) -> str | None:
        start, count = self.vector(table, slot, 1)
        if not start:
            return None
        return bytes(self.u8[start:start + count]).decode("utf-8", "replace")

    def tables(self, table: int, slot: int) -> np.ndarray:
        """Positions of the tables in a vector-of-tables field (int64 array)."""
        start, count = self.vector(table, slot, 4)
        if not start:
            return np.zeros(0, dtype=np.int64)
        elems = start + 4 * np.arange(count, dtype=np.int64)
        return self.v_indirect(elems)

    def scalars(self, table: int, slot: int, kind: str) -> np.ndarray:
        """A vector-of-scalars field as a numpy array (copied)."""
        n = SCALAR_FORMATS[kind][1]
        start, count = self.vector(table, slot, n)
        if not start:
            return np.zeros(0, dtype=NUMPY_TYPES[kind])
        return self.u8[start:start + count * n].copy().view(NUMPY_TYPES[kind])

    # ---- vectorised access -----------------------------------------------------------------------
    def v_read(self, kind: str, pos: np.ndarray) -> np.ndarray:
        """Read one scalar at each position (all must be in bounds)."""
        n = SCALAR_FORMATS[kind][1]
        pos = np.asarray(pos, dtype=np.int64)
        if pos.size == 0:
            return np.zeros(0, dtype=NUMPY_TYPES[kind])
        lo, hi = int(pos.min()), int(pos.max())
        if lo < 0 or hi + n > self.size:
            bad = lo if lo < 0 else hi
            self.fail(f"{kind} read out of bounds (size {self.size})", bad)
        if n == 1:
            return self.u8[pos].view(NUMPY_TYPES[kind])
        # FlatBuffers aligns scalars, so positions share a residue modulo the size: index a typed
        # view of the buffer at that residue instead of gathering bytes one by one.
        shift = n.bit_length() - 1
        residue = pos & (n - 1)
        first = int(residue[0])
        if first == 0 and not residue.any():
            return self.typed(kind, 0)[pos >> shift]
        if (residue == first).all():
            return self.typed(kind, first)[(pos - first) >> shift]
        out = np.empty(pos.shape, dtype=NUMPY_TYPES[kind])
        for r in unique(residue):
            m = residue == r
            out[m] = self.typed(kind, int(r))[(pos[m] - r) >> shift]
        return out

    def typed(self, kind: str, residue: int = 0) -> np.ndarray:
        """The buffer from byte ``residue`` on as an array of ``kind`` (cached; the tail that does
        not fill one element is left out)."""
        key = (kind, residue)
        view = self._views.get(key)
        if view is None:
            n = SCALAR_FORMATS[kind][1]
            count = (self.size - residue) // n
            view = self._views[key] = self.u8[residue:residue + count * n].view(NUMPY_TYPES[kind])
        return view

    def v_indirect(self, pos: np.ndarray) -> np.ndarray:
        target = pos + self.v_read("u32", pos).astype(np.int64)
        if target.size and int(target.max()) >= self.size:
            bad = int(pos[np.argmax(target >= self.size)])
            self.fail("offset points past the end", bad)
        return target

    def v_field(self, tables: np.ndarray, slot: int) -> np.ndarray:
        """Field positions for many tables at once (0 where absent)."""
        tables = np.asarray(tables, dtype=np.int64)
        out = np.zeros(tables.shape, dtype=np.int64)
        if tables.size == 0:
            return out
        vt, vt_size = self._vtables(tables)
        entry = 4 + 2 * slot
        has = vt_size >= entry + 2
        if not has.any():
            return out
        off = np.zeros(tables.shape, dtype=np.int64)
        off[has] = self.v_read("u16", vt[has] + entry)
        present = off > 0
        if present.any():
            tsize = self.v_read("u16", vt[present] + 2)
            if (off[present] >= tsize).any():
                bad = int(tables[present][np.argmax(off[present] >= tsize)])
                self.fail(f"field {slot} outside its table", bad)
        out[present] = tables[present] + off[present]
        return out

    def _vtables(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """vtable positions and sizes of many tables; remembered for the last array asked about,
        since readers fetch several fields of the same tables in a row."""
        cached = self._vt_cache
        if cached is not None and cached[0] is tables:
            return cached[1], cached[2]
        vt = tables - self.v_read("i32", tables).astype(np.int64)
        if int(vt.min()) < 0 or int(vt.max()) + 4 > self.size:
            bad = int(tables[np.argmax((vt < 0) | (vt + 4 > self.size))])
            self.fail("vtable out of bounds", bad)
        vt_size = self.v_read("u16", vt)
        self._vt_cache = (tables, vt, vt_size)
        return vt, vt_size

    def v_scalar(self, tables: np.ndarray, slot: int, kind: str, default=0) -> np.ndarray:
        pos = self.v_field(tables, slot)
        out = np.full(pos.shape, default, dtype=NUMPY_TYPES[kind])
        present = pos > 0
        if present.any():
            out[present] = self.v_read(kind, pos[present])
        return out

    def v_table(self, tables: np.ndarray, slot: int) -> np.ndarray:
        """Sub-table positions (0 where absent)."""
        pos = self.v_field(tables, slot)
        present = pos > 0
        out = np.zeros(pos.shape, dtype=np.int64)
        if present.any():
            out[present] = self.v_indirect(pos[present])
        return out

    def v_vector(self, tables: np.ndarray, slot: int, elem_size: int) -> tuple[np.ndarray, np.ndarray]:
        """(element start, count) of a vector field for many tables; (0, 0) where absent."""
        pos = self.v_field(tables, slot)
        present = pos > 0
        start = np.zeros(pos.shape, dtype=np.int64)
        count = np.zeros(pos.shape, dtype=np.int64)
        if present.any():
            vec = self.v_indirect(pos[present])
            cnt = self.v_read("u32", vec).astype(np.int64)
            st = vec + 4
            over = st + cnt * elem_size > self.size
            if over.any():
                i = int(np.argmax(over))
                self.fail(f"vector of {int(cnt[i])} elements runs past the end", int(vec[i]))
            start[present] = st
            count[present] = cnt
        return start, count

    def v_table_vectors(self, tables: np.ndarray, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """Flatten a vector-of-tables field over many tables.

        Returns (positions of all element tables, index of the owning table for each).
        """
        start, count = self.v_vector(tables, slot, 4)
        total = int(count.sum())
        # Each element is a 4-byte offset in its own slot, so a file holds at most size / 4 of
        # them; more means tables or vectors are shared to make a small file claim a huge one.
        if total > self.size // 4 + 64:
            self.fail(f"vectors claim {total} elements, more than a {self.size}-byte file can hold "
                      "(shared or overlapping tables)")
        owner = np.repeat(np.arange(len(tables), dtype=np.int64), count)
        if total == 0:
            return np.zeros(0, dtype=np.int64), owner
        first = np.cumsum(count) - count
        within = np.arange(total, dtype=np.int64) - np.repeat(first, count)
        elems = np.repeat(start, count) + 4 * within
        return self.v_indirect(elems), owner

    def v_strings(self, tables: np.ndarray, slot: int) -> tuple[np.ndarray, list[str]]:
        """String field of many tables as (codes, distinct strings); code -1 where absent.

        Each distinct string is decoded once: strings are grouped by length and deduplicated as
        fixed-width byte rows.
        """
        start, count = self.v_vector(tables, slot, 1)
        return self.decode_strings(start, count)

    def decode_strings(self, start: np.ndarray, length: np.ndarray,
                       budget: list[int] | None = None) -> tuple[np.ndarray, list[str]]:
        """Strings at ``start`` (0: absent) of ``length`` bytes as (codes, distinct strings).

        Each distinct string is decoded once. Strings are grouped by length, read 4 bytes at a
        time (they are 4-aligned after their length prefix), hashed and deduplicated; every string
        is then compared with its group's representative, so a hash collision costs time, never a
        wrong answer. ``budget`` (a one-element list, bytes left) bounds the work over several
        calls; by default one call may read at most 4x the buffer size (+1 MiB): hostile files can
        point many distinct string offsets at overlapping bytes.
        """
        codes = np.full(start.shape, -1, dtype=np.int32)
        present = start > 0
        if not present.any():
            return codes, []
        s_pos = start[present]
        s_len = length[present]
        if s_pos.size > 1 and (bool((s_pos[1:] < s_pos[:-1]).all()) or bool((s_pos[1:] > s_pos[:-1]).all())):
            # Strictly monotonic positions (flatcc writes one string per event): all distinct.
            pos_u, pos_inv, len_u = s_pos, None, s_len
        else:
            pos_u, pos_inv = np.unique(s_pos, return_inverse=True)
            pos_inv = pos_inv.reshape(-1)
            len_u = np.zeros(pos_u.shape, dtype=np.int64)
            len_u[pos_inv] = s_len
        total = int(len_u.sum())
        if budget is None:
            budget = [MAX_STRING_BYTES_FACTOR * self.size + (1 << 20)]
        if total > budget[0]:
            self.fail("string table larger than the file allows (overlapping strings)")
        budget[0] -= total
        strings: list[str] = []
        seen: dict[str, int] = {}
        code_u = np.empty(pos_u.shape, dtype=np.int32)
        if len_u.size and int(len_u.max()) < (1 << 16):
            order = np.argsort(len_u.astype(np.uint16), kind="stable")   # radix sort
        else:
            order = np.argsort(len_u, kind="stable")
        sorted_len = len_u[order]
        cuts = np.nonzero(np.diff(sorted_len))[0] + 1
        bounds = np.concatenate([[0], cuts, [len(order)]])
        for a, b in zip(bounds[:-1], bounds[1:]):
            sel = order[a:b]
            n = int(sorted_len[a])
            if n == 0:
                code = seen.get("")
                if code is None:
                    code = seen[""] = len(strings)
                    strings.append("")
                code_u[sel] = code
                continue
            pos = pos_u[sel]
            rows, reps, inv = self._distinct_strings(pos, n)
            local = np.empty(len(reps), dtype=np.int32)
            for i, rep in enumerate(reps):
                p = int(pos[rep])
                text = bytes(self.u8[p:p + n]).decode("utf-8", "replace")
                code = seen.get(text)
                if code is None:
                    code = seen[text] = len(strings)
                    strings.append(text)
                local[i] = code
            code_u[sel] = local[inv]
        codes[present] = code_u if pos_inv is None else code_u[pos_inv]
        return codes, strings

    def _distinct_strings(self, pos: np.ndarray, n: int):
        """Distinct byte strings of length ``n`` at ``pos``: (word matrix, representative index
        per distinct string, inverse)."""
        words = (n + 3) // 4
        r = pos & 3
        r0 = int(r[0])
        if (r == r0).all() and int(pos.max()) + 4 * words <= self.size and words <= len(HASH_MULTIPLIERS):
            view = self.typed("u32", r0)
            base = (pos - r0) >> 2
            W = np.empty((pos.size, words), dtype=np.uint32)
            h = np.zeros(pos.size, dtype=np.uint64)
            tail = n - 4 * (words - 1)
            with np.errstate(over="ignore"):
                for j in range(words):
                    W[:, j] = view[base + j]
                    if j == words - 1 and tail < 4:
                        W[:, j] &= np.uint32((1 << (8 * tail)) - 1)
                    h += W[:, j].astype(np.uint64) * HASH_MULTIPLIERS[j]
            # Group by hash (few distinct strings per length, the usual case: compare with
            # representatives), then check every row against its representative's bytes.
            inv = np.full(pos.size, -1, dtype=np.int64)
            reps: list[int] = []
            todo = np.ones(pos.size, dtype=bool)
            i = 0
            while len(reps) < 8:
                eq = (h == h[i]) & todo
                inv[eq] = len(reps)
                reps.append(i)
                todo &= ~eq
                if not todo.any():
                    break
                i = int(np.argmax(todo))
            reps_a = np.array(reps, dtype=np.int64)
            if todo.any():
                rest = np.nonzero(todo)[0]
                _, first, inv_r = np.unique(h[rest], return_index=True, return_inverse=True)
                inv[rest] = len(reps) + inv_r.reshape(-1)
                reps_a = np.concatenate([reps_a, rest[first]])
            if (W == W[reps_a[inv]]).all():
                return W, reps_a, inv
            _, first, inv = np.unique(W.view(np.dtype((np.void, 4 * words))).reshape(-1),
                                      return_index=True, return_inverse=True)
            return W, first, inv.reshape(-1)
        raw = np.ascontiguousarray(self.u8[pos[:, None] + np.arange(n, dtype=np.int64)])
        first, inv = distinct_rows(raw)
        return raw, first, inv


def root_table(buf: Buffer, identifier: bytes | None) -> tuple[Buffer, int]:
    """Find the root table, accepting size-prefixed or plain buffers; check the file identifier.

    Returns the buffer to read (a view without the size prefix when present) and the root position.
    """
    if buf.size < 8:
        buf.fail(f"file too small ({buf.size} bytes) to be a {buf.what}")
    if identifier is not None:
        head = bytes(buf.u8[:12])
        if head[4:8] == identifier:
            pass
        elif head[8:12] == identifier:
            size = buf.read("u32", 0)
            if size + 4 > buf.size:
                buf.fail(f"size prefix says {size} bytes but only {buf.size - 4} follow (truncated?)", 0)
            buf = Buffer(buf.u8[4:4 + size], buf.what)
        else:
            from etscope.formats.sniff import HEAD_BYTES, describe

            buf.fail(f"expected file identifier {identifier.decode()!r}; this is "
                     f"{describe(bytes(buf.u8[:HEAD_BYTES]))}", 4)
    root = buf.indirect(0)
    return buf, root
