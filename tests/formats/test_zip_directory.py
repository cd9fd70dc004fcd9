"""The central-directory reader against zipfile (the oracle), and on damaged directories."""
import io
import zipfile

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.zip_directory import read_directory

FIELDS = ("filename", "orig_filename", "flag_bits", "compress_type", "CRC", "compress_size", "file_size",
          "header_offset")


def _zip(entries, method=zipfile.ZIP_DEFLATED, zip64=False, comment=b"", prefix=b"") -> bytes:
    buf = io.BytesIO()
    buf.write(prefix)
    with zipfile.ZipFile(buf, "a" if prefix else "w", compression=method) as zf:
        for name, data in entries:
            with zf.open(zipfile.ZipInfo(name), "w", force_zip64=zip64) as f:
                f.write(data)
        zf.comment = comment
    return buf.getvalue()


def _same_as_zipfile(data: bytes) -> None:
    ours = read_directory(io.BytesIO(data), len(data))
    theirs = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert [[getattr(e, k) for k in FIELDS] for e in ours] == [[getattr(i, k) for k in FIELDS] for i in theirs]


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
@pytest.mark.parametrize("zip64", [False, True])
def test_entries_as_zipfile_lists_them(method, zip64):
    entries = [("a/etrecord.json", b'{"x": 1}' * 50), ("Ünïcode name.bin", bytes(range(256)) * 3), ("empty", b"")]
    _same_as_zipfile(_zip(entries, method, zip64))
    _same_as_zipfile(_zip(entries, method, zip64, comment=b"a comment " * 100))


def test_bytes_prepended_shift_the_offsets_as_zipfile_does():
    _same_as_zipfile(_zip([("x", b"1" * 100), ("y", b"2")], prefix=b"#!/bin/sh\nexit 0\n" * 10))


def test_many_entries_and_a_zip64_directory():
    entries = [(f"e{i}", str(i).encode()) for i in range(70_000)]     # over 0xFFFF: zip64 end record
    _same_as_zipfile(_zip(entries, zipfile.ZIP_STORED))


def test_damaged_directories_are_one_format_error():
    data = _zip([("a", b"x" * 500), ("b", b"y" * 300), ("c", b"z")])
    rng = np.random.default_rng(5)
    cd = data.rfind(b"PK\x01\x02") - 60
    for _ in range(400):
        trial = bytearray(data)
        for pos in rng.integers(max(cd, 0), len(data), int(rng.integers(1, 4))):
            trial[int(pos)] = int(rng.integers(0, 256))
        cut = len(trial) if rng.random() < 0.7 else int(rng.integers(0, len(trial)))
        trial = bytes(trial[:cut])
        try:
            entries = read_directory(io.BytesIO(trial), len(trial))
        except FormatError:
            continue
        for e in entries:      # whatever it lists is within reach of the file's own numbers
            assert e.compress_size >= 0 and e.file_size >= 0 and e.header_offset >= 0
