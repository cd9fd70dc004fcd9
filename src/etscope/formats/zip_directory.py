"""A zip's central directory (APPNOTE.TXT 4.3.12-4.3.16, zip64 4.3.14/4.5.3), read without
``zipfile``: importing it pulls in shutil, pathlib, bz2 and lzma (~6 ms of every ETRecord command),
and only the entry list is needed here; the entries themselves are read by ``zip_entries``.

Every offset and length is checked against the file before it is used; a directory that does not
fit its file is one :class:`FormatError`. Archives with bytes prepended (self-extracting) are read
as zipfile reads them: offsets shifted by what precedes the directory.
"""
from __future__ import annotations

import struct
from etscope.errors import FormatError

_EOCD = struct.Struct("<4s4H2LH")             # end of central directory record (22 bytes + comment)
_ZIP64_LOCATOR = struct.Struct("<4sLQL")       # 20 bytes, just before the EOCD
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")      # 56 bytes
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")       # central directory file header (46 bytes)
_MAX_COMMENT = 0xFFFF


class ZipEntry:
    """What the readers need of a central-directory entry (``zipfile.ZipInfo``'s names)."""

    __slots__ = ("filename", "orig_filename", "flag_bits", "compress_type", "CRC", "compress_size",
                 "file_size", "header_offset")

    def __init__(self, filename: str, orig_filename: str, flag_bits: int, compress_type: int, CRC: int,
                 compress_size: int, file_size: int, header_offset: int):
        self.filename = filename            # orig_filename cut at a NUL byte (as zipfile does)
        self.orig_filename = orig_filename
        self.flag_bits, self.compress_type, self.CRC = flag_bits, compress_type, CRC
        self.compress_size, self.file_size, self.header_offset = compress_size, file_size, header_offset


class NotAZip(FormatError):
    pass


def declared_entry_count(f, size: int) -> int | None:
    """Entry count of the end-of-central-directory record (None: no record found), read before
    the directory itself so a huge count is refused first."""
    found = _end_record(f, size)
    return None if found is None else found[1]


def read_directory(f, size: int) -> list[ZipEntry]:
    """The central directory's entries, in order."""
    found = _end_record(f, size)
    if found is None:
        raise NotAZip("File is not a zip file")
    eocd_at, _, cd_size, cd_offset = found
    if cd_size > eocd_at:
        raise NotAZip("central directory larger than the file before its end record")
    cd_at = eocd_at - cd_size
    concat = cd_at - cd_offset          # bytes prepended to the archive (0 for a plain zip)
    if concat < 0:
        raise NotAZip("central directory offset points past its end record")
    f.seek(cd_at)
    data = f.read(cd_size)
    if len(data) != cd_size:
        raise NotAZip("truncated central directory")
    entries: list[ZipEntry] = []
    pos = 0
    while pos < cd_size:
        if pos + _ENTRY.size > cd_size:
            raise NotAZip("truncated central directory")
        fields = _ENTRY.unpack_from(data, pos)
        if fields[0] != b"PK\x01\x02":
            raise NotAZip("bad magic number for central directory")
        flags, method, crc, comp, raw_size = fields[5], fields[6], fields[9], fields[10], fields[11]
        name_len, extra_len, comment_len, offset = fields[12], fields[13], fields[14], fields[18]
        start = pos + _ENTRY.size
        end = start + name_len + extra_len + comment_len
        if end > cd_size:
            raise NotAZip("truncated central directory")
        raw_name = data[start:start + name_len]
        name = raw_name.decode("utf-8" if flags & 0x800 else "cp437", errors="replace" if flags & 0x800 else "strict")
        raw_size, comp, offset = _zip64_extra(data[start + name_len:start + name_len + extra_len],
                                              raw_size, comp, offset)
        entries.append(ZipEntry(filename=name.split("\x00", 1)[0], orig_filename=name, flag_bits=flags,
                                compress_type=method, CRC=crc, compress_size=comp, file_size=raw_size,
                                header_offset=offset + concat))
        pos = end
    return entries


def _zip64_extra(extra: bytes, file_size: int, comp: int, offset: int) -> tuple[int, int, int]:
    """Sizes and offset from the zip64 extended information (id 1) where the header holds 0xFFFFFFFF."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, pos)
        body = extra[pos + 4:pos + 4 + length]
        if len(body) < length:
            raise NotAZip("corrupt extra field")
        if tag == 1:
            values = list(struct.unpack_from(f"<{length // 8}Q", body)) if length >= 8 else []
            out = []
            for v in (file_size, comp, offset):
                if v == 0xFFFFFFFF:
                    if not values:
                        raise NotAZip("corrupt zip64 extra field")
                    v = values.pop(0)
                out.append(v)
            return out[0], out[1], out[2]
        pos += 4 + length
    return file_size, comp, offset


def _end_record(f, size: int) -> tuple[int, int, int, int] | None:
    """(position, entry count, directory size, directory offset) of the end record (zip64 values
    when the classic fields are full), or None when there is none."""
    tail_len = min(size, _EOCD.size + _MAX_COMMENT)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or pos + _EOCD.size > len(tail):
        return None
    count, cd_size, cd_offset = _EOCD.unpack_from(tail, pos)[4:7]
    eocd_at = size - tail_len + pos
    if count != 0xFFFF and cd_size != 0xFFFFFFFF and cd_offset != 0xFFFFFFFF:
        return eocd_at, count, cd_size, cd_offset
    # zip64: the locator sits just before the EOCD, the zip64 end record just before the locator
    # (read there, as zipfile does, rather than where the locator points: prepended bytes shift it)
    loc = pos - _ZIP64_LOCATOR.size
    if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
        return eocd_at, count, cd_size, cd_offset
    _, disk, _, disks = _ZIP64_LOCATOR.unpack_from(tail, loc)
    if disk != 0 or disks > 1:
        raise NotAZip("zip files that span multiple disks are not supported")
    rec = size - tail_len + loc - _ZIP64_EOCD.size
    if rec < 0:
        raise NotAZip("corrupt zip64 end of central directory record")
    f.seek(rec)
    head = f.read(_ZIP64_EOCD.size)
    if len(head) < _ZIP64_EOCD.size or head[:4] != b"PK\x06\x06":
        raise NotAZip("corrupt zip64 end of central directory record")
    fields = _ZIP64_EOCD.unpack(head)
    return rec, fields[7], fields[8], fields[9]     # the directory ends where the zip64 record starts
