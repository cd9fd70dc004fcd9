"""Debug buffer reader: the tensors an ETDump's debug events point at, memory-mapped and lazy.

With intermediate-output logging, the runtime writes each logged tensor's bytes (``tensor.nbytes()``
of its memory, dense, in its dim order) through a data sink (``devtools/etdump/data_sinks``): the
buffer sink places each at the next 64-byte-aligned offset (relative to the buffer's address), the
file sink back to back. The ETDump's ``Tensor`` table holds ``scalar_type``, ``sizes``, ``strides``
(elements) and that byte ``offset``; an empty tensor is written nowhere (offset -1).

Nothing is read when the buffer is opened: :meth:`DebugBuffer.check` validates every tensor's
type, shape, strides, offset and size against the file at once (one line naming the first bad
tensor), and a tensor's values are a numpy view of the mapped file, read in bounded chunks by the
analyses; the pages of a chunk are dropped once it is read, so a 1 GB buffer never becomes resident.
"""
from __future__ import annotations

import mmap
import os
from typing import Iterator

import numpy as np

from etscope.errors import FormatError
from etscope.formats.etdump import close_map, page_releaser
from etscope.formats.etdump_tensors import DebugTensors
from etscope.paths import open_input

# executorch_flatbuffer.ScalarType (devtools/etdump/scalar_type.fbs) -> (name, numpy dtype or None).
# None: a valid type numpy cannot hold (quantized, 4/2-bit, float8); bfloat16 is read as its raw
# 16 bits and widened to float32 by the analyses (numpy has no bfloat16).
SCALAR_TYPES: dict[int, tuple[str, str | None]] = {
    0: ("uint8", "<u1"), 1: ("int8", "<i1"), 2: ("int16", "<i2"), 3: ("int32", "<i4"), 4: ("int64", "<i8"),
    5: ("float16", "<f2"), 6: ("float32", "<f4"), 7: ("float64", "<f8"), 11: ("bool", "|b1"),
    12: ("qint8", None), 13: ("quint8", None), 14: ("qint32", None), 15: ("bfloat16", "<u2"),
    16: ("quint4x2", None), 17: ("quint2x4", None), 22: ("bits16", "<u2"), 23: ("float8_e5m2", None),
    24: ("float8_e4m3fn", None), 25: ("float8_e5m2fnuz", None), 26: ("float8_e4m3fnuz", None),
    27: ("uint16", "<u2"), 28: ("uint32", "<u4"), 29: ("uint64", "<u8"),
}
# Bytes per element of each type (also of those numpy cannot hold, to bounds-check them).
ITEM_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 12: 1, 13: 1, 14: 4, 15: 2, 16: 1,
              17: 1, 22: 2, 23: 1, 24: 1, 25: 1, 26: 1, 27: 2, 28: 4, 29: 8}
BFLOAT16 = 15

_MAX_BYTES = 1 << 62
MAX_DIMS = 64               # numpy's limit (ExecuTorch's own is 16: kTensorDimensionLimit)
# Distinct tensor regions (offset, type, shape, strides) may hold at most this many times the
# buffer's bytes (+ 1 MiB): the runtime writes every logged tensor once, at a fresh offset, so an
# honest buffer's tensors never overlap; a crafted ETDump pointing thousands of tensors at one
# region would otherwise make the analyses read the region thousands of times. Identical regions
# are counted once (the analyses decode each once).
MAX_REGION_FACTOR = 4


def decodable(scalar_type: int) -> bool:
    """numpy can hold the type's values (bfloat16 as raw uint16)."""
    return SCALAR_TYPES.get(int(scalar_type), ("", None))[1] is not None


def dtype_name(scalar_type: int) -> str:
    return SCALAR_TYPES.get(int(scalar_type), (f"scalar_type_{int(scalar_type)}", None))[0]


class DebugBuffer:
    """A debug buffer file, memory-mapped read-only. Use as a context manager (or ``close()``)."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        try:
            with open_input(self.path, "debug buffer") as fh:
                self.size = os.fstat(fh.fileno()).st_size
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        except FormatError as err:
            raise err.with_file(self.path) from None
        except (OSError, ValueError) as err:
            raise FormatError(f"cannot read debug buffer: {err}", self.path) from None
        self._u8 = np.frombuffer(self._mm, dtype=np.uint8) if self._mm is not None else np.zeros(0, np.uint8)
        self._release = page_releaser(self._mm) if self._mm is not None else None

    def __enter__(self) -> "DebugBuffer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._mm is not None:
            self._u8 = np.zeros(0, np.uint8)
            close_map(self._mm)
            self._mm = None

    def fail(self, what: str, offset: int | None = None):
        raise FormatError(what, self.path, offset)

    # ---- validation -------------------------------------------------------------------------------
    def check(self, tensors: DebugTensors, where=None) -> np.ndarray:
        """Validate every tensor against this buffer, all at once; returns their byte sizes.

        ``where(i)`` names tensor ``i`` for the message (run, instruction). Refused: a scalar type
        that is not an ExecuTorch ScalarType, negative sizes, a size whose byte count overflows,
        strides that are not a dense layout of the sizes, a non-empty tensor whose offset is
        negative or whose bytes run past the end of the file.
        """
        c = tensors.columns
        n = len(tensors)
        where = where or (lambda i: f"tensor {i}")
        stype = c["scalar_type"].astype(np.int64)
        item = np.zeros(n, dtype=np.int64)
        for code, b in ITEM_BYTES.items():
            item[stype == code] = b
        bad = np.flatnonzero(item == 0)
        if bad.size:
            i = int(bad[0])
            self.fail(f"{where(i)}: scalar type {int(stype[i])} is not an ExecuTorch ScalarType "
                      "(wrong dtype in the ETDump)")
        nbytes = np.empty(n, dtype=np.int64)
        for i in range(n):   # per tensor, exact integers: shapes are short
            sizes = tensors.sizes(i)
            if len(sizes) > MAX_DIMS:
                self.fail(f"{where(i)}: shape with {len(sizes)} dimensions (at most {MAX_DIMS} are read; "
                          "ExecuTorch tensors have at most 16)")
            if any(s < 0 for s in sizes):
                self.fail(f"{where(i)}: negative size in shape {list(sizes)}")
            total = int(item[i])
            for s in sizes:
                total *= s
                if total > _MAX_BYTES:
                    self.fail(f"{where(i)}: shape {list(sizes)} of {dtype_name(int(stype[i]))} overflows "
                              "(more bytes than any buffer holds)")
            nbytes[i] = total
            strides = tensors.strides(i)
            if total and strides and not _dense(sizes, strides):
                self.fail(f"{where(i)}: strides {list(strides)} are not a dense layout of shape {list(sizes)}")
        off = c["offset"]
        used = nbytes > 0
        neg = np.flatnonzero(used & (off < 0))
        if neg.size:
            i = int(neg[0])
            self.fail(f"{where(i)}: negative offset {int(off[i])} for {int(nbytes[i])} bytes")
        past = np.flatnonzero(used & (off > self.size - nbytes))
        if past.size:
            i = int(past[0])
            self.fail(f"{where(i)}: {int(nbytes[i])} bytes at offset {int(off[i])} run past the end of the "
                      f"debug buffer ({self.size} bytes; truncated, or not this ETDump's buffer)")
        self._check_regions(tensors, nbytes, where)
        return nbytes

    def _check_regions(self, tensors: DebugTensors, nbytes: np.ndarray, where) -> None:
        """Distinct regions' bytes within ``MAX_REGION_FACTOR`` x the file (see there)."""
        if float(nbytes.sum(dtype=np.float64)) <= MAX_REGION_FACTOR * self.size + (1 << 20):
            return
        seen: set[tuple] = set()
        total = 0
        for i in np.flatnonzero(nbytes > 0):
            key = region_key(tensors, int(i))
            if key in seen:
                continue
            seen.add(key)
            total += int(nbytes[i])
            if total > MAX_REGION_FACTOR * self.size + (1 << 20):
                self.fail(f"{where(int(i))}: the debug tensors' distinct regions hold {total} bytes or more, over "
                          f"{MAX_REGION_FACTOR} x the {self.size}-byte buffer (overlapping tensors: the runtime "
                          "writes each logged tensor once; not a buffer ExecuTorch wrote)")

    # ---- values -----------------------------------------------------------------------------------
    def memory(self, tensors: DebugTensors, i: int) -> np.ndarray:
        """Tensor ``i``'s elements in memory order (1-D view of the map; call :meth:`check` first).
        bfloat16 comes as raw uint16; types numpy cannot hold raise FormatError."""
        st = int(tensors.columns["scalar_type"][i])
        dt = SCALAR_TYPES.get(st, ("", None))[1]
        if dt is None:
            self.fail(f"tensor {i}: {dtype_name(st)} values cannot be decoded")
        numel = int(np.prod(tensors.sizes(i), dtype=object)) if tensors.sizes(i) else 1
        if numel == 0:
            return np.zeros(0, dtype=dt)
        off = int(tensors.columns["offset"][i])
        nb = numel * ITEM_BYTES[st]
        if off < 0 or off + nb > self.size:
            self.fail(f"tensor {i}: {nb} bytes at offset {off} run past the end of the debug buffer", off)
        return self._u8[off:off + nb].view(dt)

    def array(self, tensors: DebugTensors, i: int) -> np.ndarray:
        """Tensor ``i`` with its logical shape (a strided view: its strides say its dim order)."""
        flat = self.memory(tensors, i)
        sizes, strides = tensors.sizes(i), tensors.strides(i)
        if not sizes:
            return flat.reshape(())
        if not strides or flat.size == 0:
            return flat.reshape(sizes)
        # A size-1 dimension's stride is never stepped: any value is dense (check), 2**61 included;
        # numpy needs it in bytes within an int64, so it is written as 0.
        steps = [0 if n == 1 else s * flat.itemsize for n, s in zip(sizes, strides)]
        return np.lib.stride_tricks.as_strided(flat, sizes, steps, writeable=False)

    def release(self, view: np.ndarray) -> None:
        """Drop the mapped pages under ``view`` (a slice of the map): they are re-read if touched."""
        if self._release is None or view.size == 0 or self._mm is None:
            return
        base = int(self._u8.__array_interface__["data"][0])
        lo = int(view.__array_interface__["data"][0]) - base
        if 0 <= lo < self.size:      # a copy (a non-contiguous piece) lives elsewhere: nothing to drop
            self._release(lo, lo + view.size * view.itemsize)


def region_key(tensors: DebugTensors, i: int) -> tuple:
    """What tensor ``i``'s values depend on: two tensors with one key decode to the same array."""
    return (int(tensors.columns["offset"][i]), int(tensors.columns["scalar_type"][i]), tensors.sizes(i),
            tensors.strides(i))


def _dense(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Strides (elements) describe a dense layout of ``sizes`` in some dim order."""
    if len(strides) != len(sizes) or any(s < 0 for s in strides):
        return False
    expect = 1
    for d in sorted(range(len(sizes)), key=lambda d: (strides[d], sizes[d])):
        if sizes[d] == 1:
            continue
        if strides[d] != expect:
            return False
        expect *= sizes[d]
    return True


def chunks(view: np.ndarray, max_elems: int) -> Iterator[np.ndarray]:
    """``view``'s elements in logical (C) order, in 1-D pieces of at most ``max_elems`` elements
    (each piece copied only when the view is not contiguous). The pieces depend on the shape only,
    so two tensors of one shape in different layouts are cut alike (compared piece by piece)."""
    if view.ndim == 0:
        yield view.reshape(1)
        return
    if view.size <= max_elems:
        yield view.reshape(-1)
        return
    row = view.size // view.shape[0]
    if row <= max_elems:
        step = max(1, max_elems // max(row, 1))
        for a in range(0, view.shape[0], step):
            yield view[a:a + step].reshape(-1)
    else:
        for k in range(view.shape[0]):
            yield from chunks(view[k], max_elems)
