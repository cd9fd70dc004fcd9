"""Reading a zip's entries without trusting it: the archive (entry count checked before the
central directory is parsed, names that could escape a directory skipped, duplicates refused) and
each entry, decompressed by streaming under a running cap.

``zipfile``'s own reader inflates deflate in bounded steps, but hands a bzip2 or LZMA decompressor
a whole megabyte of compressed input at once with no bound on the output: 1.3 kB of bzip2 is
200 MB of zeros, 30 kB of LZMA is 200 MB, all in memory before any size check can run. Here the
entry's compressed bytes are read from the file directly (the central directory comes from
``zip_directory``) and every decompressor call is given ``max_length``, so no call produces more than the
remaining allowance plus one byte: work and memory follow the bytes allowed, not the bytes claimed.

Methods read: stored (0), deflate (8), bzip2 (12), LZMA (14), the ones ``zipfile`` writes. Any
other method, and encrypted entries, are refused with a message naming the method.
Integrity: the decompressed size must equal the central directory's and the CRC-32 must match.
"""
from __future__ import annotations

import os
import re
import struct
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from etscope.errors import FormatError
from etscope.formats.zip_directory import NotAZip, ZipEntry, declared_entry_count, read_directory
from etscope.paths import open_input

_IN_CHUNK = 64 << 10     # compressed bytes read per step
_OUT_CHUNK = 1 << 20     # decompressed bytes asked for per step
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")   # APPNOTE 4.3.7, as zipfile's structFileHeader

_STORED, _DEFLATED, _BZIP2, _LZMA = 0, 8, 12, 14     # zip compression methods (APPNOTE 4.4.5)
READ_METHODS = {_STORED: "stored", _DEFLATED: "deflate", _BZIP2: "bzip2", _LZMA: "LZMA"}
_OTHER_METHODS = {1: "shrink", 2: "reduce", 3: "reduce", 4: "reduce", 5: "reduce", 6: "implode", 9: "deflate64",
                  10: "PKWARE implode", 18: "IBM TERSE", 19: "IBM LZ77", 20: "Zstandard (old id)",
                  93: "Zstandard", 94: "MP3", 95: "xz", 96: "JPEG", 97: "WavPack", 98: "PPMd",
                  99: "AES encryption"}


@dataclass(frozen=True)
class ZipLimits:
    max_entries: int = 10_000
    max_entry_bytes: int = 512 << 20   # decompressed bytes of one entry we read
    max_total_bytes: int = 2 << 30     # decompressed bytes over all entries we read
    max_ratio: float = 200.0           # decompressed / compressed, once past ratio_grace bytes
    ratio_grace: int = 1 << 20
    # Decompressed bytes over all entries we read may not exceed read_grace + max_read_factor x
    # the file size. Parsed JSON takes ~10-20x its text in memory and ~0.2 s per MB, so without
    # this a 1 MB zip of highly compressible JSON (ratio 200) costs tens of seconds and gigabytes.
    # executorch writes ETRecords stored (ratio 1); a deflated one whose JSON is more than twice
    # the file size (plus 2 MB) is refused: pass a larger limit to read it.
    max_read_factor: float = 2.0
    read_grace: int = 2 << 20


class _Inflate:
    """zlib's decompressobj with the bz2/lzma decompressor interface (``needs_input``)."""

    def __init__(self):
        self._d = zlib.decompressobj(-15)

    @property
    def needs_input(self) -> bool:
        return not self._d.unconsumed_tail

    @property
    def eof(self) -> bool:
        return self._d.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        return self._d.decompress(self._d.unconsumed_tail or data, max_length)


class _Stored:
    needs_input = True
    eof = False

    @staticmethod
    def decompress(data: bytes, max_length: int) -> bytes:
        return data  # at most _IN_CHUNK bytes per step


class EntryReader:
    """Reads entries of an open zip; counts decompressed bytes over all entries read."""

    def __init__(self, f, limits: ZipLimits, file_size: int):
        self.f = f
        self.limits = limits
        self.file_size = file_size
        self.total = 0
        self.read_limit = min(limits.max_total_bytes, int(limits.read_grace + limits.max_read_factor * file_size))

    def read(self, info: ZipEntry) -> bytes:
        data = self._read(info, None)
        self.total += len(data)
        return data

    def peek(self, info: ZipEntry, n: int) -> bytes:
        """The first ``n`` decompressed bytes (not counted, not checked against the CRC)."""
        return self._read(info, n)[:n]

    # ---- internals ----

    def _read(self, info: ZipEntry, peek: int | None) -> bytes:
        name = info.filename
        if info.flag_bits & 0x1 or info.compress_type == 99:
            raise FormatError(f"entry {name!r} is encrypted")
        method = info.compress_type
        if method not in READ_METHODS:
            what = _OTHER_METHODS.get(method, "unknown")
            raise FormatError(f"entry {name!r} uses zip compression method {method} ({what}); etscope reads "
                              f"{', '.join(READ_METHODS.values())}")
        comp_left = self._seek_data(info)
        lim = self.limits
        caps = [  # (bytes allowed, message when passed), the smallest one applies
            (lim.max_entry_bytes, f"entry {name!r} decompresses to more than {lim.max_entry_bytes} bytes (limit)"),
            (max(lim.ratio_grace, int(lim.max_ratio * max(info.compress_size, 1))),
             f"entry {name!r} has compression ratio over {lim.max_ratio:g}x ({info.compress_size} bytes "
             "compressed; zip bomb?)"),
            (self.read_limit - self.total, self._total_message()),
            (info.file_size, f"damaged ETRecord zip (entry {name!r} holds more than the {info.file_size} bytes "
                             "its header says)"),
        ]
        if peek is not None:
            caps.append((peek, ""))
        allowed = min(c for c, _ in caps)

        dec, comp_left = self._decompressor(info, comp_left)
        chunks: list[bytes] = []
        got = 0
        crc = 0
        stalled = 0
        try:
            while not dec.eof:
                if dec.needs_input:
                    if comp_left <= 0:
                        break
                    data = self.f.read(min(_IN_CHUNK, comp_left))
                    if not data:
                        raise FormatError(f"damaged ETRecord zip (entry {name!r} is cut short)")
                    comp_left -= len(data)
                else:
                    data = b""
                out = dec.decompress(data, min(_OUT_CHUNK, allowed - got + 1))
                stalled = 0 if (out or data) else stalled + 1
                if stalled > 2:
                    raise FormatError(f"damaged ETRecord zip (entry {name!r}: decompressor makes no progress)")
                got += len(out)
                if got > allowed:
                    if peek is not None and got > peek:
                        chunks.append(out)
                        return b"".join(chunks)
                    raise FormatError(next(msg for cap, msg in caps if got > cap))
                crc = zlib.crc32(out, crc)
                chunks.append(out)
        except (zlib.error, OSError, EOFError, ValueError, _lzma_error()) as e:
            raise FormatError(f"damaged ETRecord zip (entry {name!r}: {e})") from None
        if peek is None and (got != info.file_size or crc != info.CRC):
            raise FormatError(f"damaged ETRecord zip (entry {name!r}: "
                              + (f"{got} bytes, header says {info.file_size})" if got != info.file_size
                                 else "CRC-32 mismatch)"))
        return b"".join(chunks)

    def _total_message(self) -> str:
        lim = self.limits
        if self.read_limit >= lim.max_total_bytes:
            return f"ETRecord entries decompress to more than {lim.max_total_bytes} bytes (limit)"
        return (f"ETRecord entries decompress to more than {self.read_limit} bytes from a {self.file_size}-byte "
                "file (overall compression ratio limit; zip bomb?)")

    def _seek_data(self, info: ZipEntry) -> int:
        """Position the file at the entry's data (after its local header); returns its compressed size."""
        name = info.filename
        self.f.seek(info.header_offset)
        head = self.f.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise FormatError(f"damaged ETRecord zip (no local header for entry {name!r} at byte {info.header_offset})")
        fields = _LOCAL_HEADER.unpack(head)
        name_len, extra_len = fields[10], fields[11]
        raw = self.f.read(name_len)
        enc = "utf-8" if fields[3] & 0x800 else "cp437"
        if raw.decode(enc, errors="replace") != info.orig_filename:
            raise FormatError(f"damaged ETRecord zip (entry {name!r}: local header names another file)")
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if start + info.compress_size > self.file_size:
            raise FormatError(f"damaged ETRecord zip (entry {name!r} runs past the end of the file)")
        self.f.seek(start)
        return info.compress_size

    def _decompressor(self, info: ZipEntry, comp_left: int):
        method = info.compress_type
        if method == _STORED:
            return _Stored(), comp_left
        if method == _DEFLATED:
            return _Inflate(), comp_left
        if method == _BZIP2:
            import bz2

            return bz2.BZ2Decompressor(), comp_left
        import lzma

        # LZMA in zip (APPNOTE 5.8.8): version (2 bytes), properties size (2), properties (5 for LZMA1:
        # lc/lp/pb byte, dictionary size), then a raw LZMA1 stream.
        head = self.f.read(4) if comp_left >= 4 else b""
        if len(head) < 4:
            raise FormatError(f"damaged ETRecord zip (entry {info.filename!r}: LZMA header cut short)")
        psize = struct.unpack_from("<H", head, 2)[0]
        props = self.f.read(psize) if 5 <= psize <= comp_left - 4 else b""
        if len(props) < 5:
            raise FormatError(f"damaged ETRecord zip (entry {info.filename!r}: bad LZMA properties)")
        d = props[0]
        lc, lp, pb = d % 9, (d // 9) % 5, d // 45
        dict_size = struct.unpack_from("<I", props, 1)[0]
        # The dictionary never needs to be larger than the output we allow (and liblzma allocates it).
        dict_size = max(4096, min(dict_size, self.limits.max_entry_bytes, max(info.file_size, 0) + 1))
        try:
            dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
                {"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": lp, "pb": pb}])
        except (lzma.LZMAError, ValueError) as e:
            raise FormatError(f"damaged ETRecord zip (entry {info.filename!r}: LZMA properties: {e})") from None
        return dec, comp_left - 4 - psize


# ---- the archive ------------------------------------------------------------------------------------

@contextmanager
def open_zip(name: str, limits: ZipLimits, kind: str) -> Iterator["ZipArchive"]:
    """The zip file ``name`` (a ``kind`` file, e.g. "ETRecord", as messages name it), opened
    read-only; its entry count is checked on the end-of-central-directory record first."""
    with open_input(name, kind) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise FormatError(f"empty file (0 bytes), not an {kind}")
        try:
            declared = declared_entry_count(f, size)
            if declared is not None and declared > limits.max_entries:
                raise FormatError(f"zip declares {declared} entries (limit {limits.max_entries})")
            infos = read_directory(f, size)
        except NotAZip as e:
            raise FormatError(f"not an {kind} (not a zip file: {e.what})") from None
        yield ZipArchive(infos, EntryReader(f, limits, size), limits)


class ZipArchive:
    """The entries of an open zip whose names are safe (in central-directory order), read through
    one EntryReader (so its running caps cover all entries read). Nothing is extracted to disk."""

    def __init__(self, infos: list[ZipEntry], reader: EntryReader, limits: ZipLimits):
        if len(infos) > limits.max_entries:
            raise FormatError(f"zip has {len(infos)} entries (limit {limits.max_entries})")
        self.reader = reader
        self.skipped: list[tuple[str, str]] = []      # (name, why) for unsafe names
        self._by_name: dict[str, ZipEntry] = {}
        self._dupes: set[str] = set()
        for info in infos:
            why = _unsafe_name(info.filename)
            if why:
                self.skipped.append((info.filename, why))
                continue
            if info.filename in self._by_name:
                self._dupes.add(info.filename)
            self._by_name[info.filename] = info

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def read(self, name: str) -> bytes:
        """The entry's decompressed bytes (size, ratio and CRC checked)."""
        return self.reader.read(self._info(name))

    def peek(self, name: str, n: int) -> bytes:
        """The entry's first ``n`` decompressed bytes (not counted, not checked against the CRC)."""
        return self.reader.peek(self._info(name), n)

    def _info(self, name: str) -> ZipEntry:
        if name in self._dupes:
            raise FormatError(f"zip holds entry {name!r} more than once")
        return self._by_name[name]


def _unsafe_name(n: str) -> str | None:
    if not n or len(n) > 1024:
        return "bad name length"
    if "\x00" in n or "\\" in n:
        return "NUL or backslash in name"
    if n.startswith("/") or re.match(r"[A-Za-z]:", n):
        return "absolute path"
    if any(part in ("..", ".") for part in n.split("/")):
        return "path traversal"
    return None


class _NoLzmaYet(Exception):
    """Stands for lzma.LZMAError before lzma is imported (nothing can raise it then)."""


def _lzma_error() -> type[Exception]:
    """lzma's error class once lzma is in use (it is imported only for LZMA entries)."""
    lzma = sys.modules.get("lzma")
    return lzma.LZMAError if lzma is not None else _NoLzmaYet
