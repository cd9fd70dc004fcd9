"""formats/zip_entries.py: a zip read without trusting it (entry count before the central
directory, names that could escape skipped, duplicates refused when read, bounded entries)."""
from __future__ import annotations

import zipfile

import pytest

from etscope.errors import FormatError
from etscope.formats.zip_entries import ZipLimits, open_zip


def _zip(path, entries, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return path


def test_safe_entries_are_read_and_unsafe_names_skipped(tmp_path):
    f = _zip(tmp_path / "a.zip", [("a", b"alpha"), ("dir/b", b"{beta}"), ("../up", b"x"), ("/abs", b"x"),
                                  ("C:/drive", b"x"), ("back\\slash", b"x"), ("./dot", b"x")],
             zipfile.ZIP_DEFLATED)
    with open_zip(str(f), ZipLimits(), "ETRecord") as z:
        assert z.names == ["a", "dir/b"] and "a" in z and "../up" not in z
        assert z.read("dir/b") == b"{beta}" and z.peek("a", 3) == b"alp"
        assert dict(z.skipped) == {"../up": "path traversal", "/abs": "absolute path", "C:/drive": "absolute path",
                                   "back\\slash": "NUL or backslash in name", "./dot": "path traversal"}
        assert z.reader.total == len(b"{beta}")          # peeks are not counted, reads are


def test_a_duplicate_name_is_refused_when_read(tmp_path):
    f = tmp_path / "d.zip"
    with pytest.warns(UserWarning, match="Duplicate name"):
        _zip(f, [("a", b"1"), ("a", b"2"), ("b", b"3")])
    with open_zip(str(f), ZipLimits(), "ETRecord") as z:
        assert z.read("b") == b"3"
        with pytest.raises(FormatError, match="zip holds entry 'a' more than once"):
            z.read("a")


def test_entry_count_is_checked_on_the_end_record_first(tmp_path):
    f = _zip(tmp_path / "n.zip", [(f"e{i}", b"") for i in range(5)])
    with pytest.raises(FormatError, match=r"zip declares 5 entries \(limit 4\)"):
        with open_zip(str(f), ZipLimits(max_entries=4), "ETRecord"):
            pass
    with open_zip(str(f), ZipLimits(max_entries=5), "ETRecord") as z:
        assert len(z.names) == 5


@pytest.mark.parametrize("content, words", [(b"", "empty file (0 bytes), not an ETRecord"),
                                            (b"not a zip at all", "not an ETRecord (not a zip file")])
def test_what_is_not_a_zip_says_so(tmp_path, content, words):
    f = tmp_path / "x.etrecord"
    f.write_bytes(content)
    with pytest.raises(FormatError) as e:
        with open_zip(str(f), ZipLimits(), "ETRecord"):
            pass
    assert words in str(e.value)


def test_an_entry_larger_than_allowed_is_refused(tmp_path):
    f = _zip(tmp_path / "big.zip", [("big", b"0" * 5000)], zipfile.ZIP_DEFLATED)
    with open_zip(str(f), ZipLimits(max_entry_bytes=4096), "ETRecord") as z:
        with pytest.raises(FormatError, match=r"entry 'big' decompresses to more than 4096 bytes"):
            z.read("big")
        assert z.peek("big", 10) == b"0" * 10
