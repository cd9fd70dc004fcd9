"""QNN HTP DSP heap profile (htp_heap_usage.txt) reader."""
from __future__ import annotations

from pathlib import Path

import pytest

from etscope.errors import FormatError
from etscope.formats.heap import parse_heap, read_heap

QNN = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


def test_fixture_as_upstream_writes_it():
    h = read_heap(QNN / "synthetic_htp_heap_usage.txt")
    assert (h.before_bytes, h.after_bytes, h.difference_bytes) == (928212, 928212, 0)
    assert (h.before_line, h.after_line) == (1, 2)


def test_contexts_never_freed_keeps_first_line():
    h = read_heap(QNN / "synthetic_htp_heap_usage_not_freed.txt")
    assert h.before_bytes == 928212 and h.after_bytes is None and h.difference_bytes is None


@pytest.mark.parametrize("text, before, after", [
    (b"DSP:before_context_created (bytes), 1000\nDSP:after_context_freed (bytes), 5096\n", 1000, 5096),
    (b"DSP:before_context_created (bytes), 7\r\n\r\nDSP:after_context_freed (bytes), 3\r\n", 7, 3),  # CRLF, blank
    (b"DSP:before_context_created (bytes),18446744073709551615\n", 2**64 - 1, None),           # uint64 max
])
def test_variants(text, before, after):
    h = parse_heap(text, "h.txt")
    assert (h.before_bytes, h.after_bytes) == (before, after)
    assert h.difference_bytes == (None if after is None else after - before)


@pytest.mark.parametrize("text, where, what", [
    (b"", None, "empty"),
    (b"\n\n", None, "empty"),
    (b"DSP:before_context_created (bytes), 12\nhello\n", "line 2", "expected"),
    (b"DSP:before_context_created (us), 12\n", "line 1", "not bytes"),
    (b"DSP:before_context_created, 12\n", "line 1", "no unit"),
    (b"DSP:before_context_created (bytes), -12\n", "line 1", "not a byte count"),
    (b"DSP:before_context_created (bytes), 1.5\n", "line 1", "not a byte count"),
    (b"DSP:before_context_created (bytes), 18446744073709551616\n", "line 1", "64-bit"),
    (b"DSP:after_context_freed (bytes), 12\n", "line 1", "before any"),
    (b"DSP:before_context_created (bytes), 1\nDSP:before_context_created (bytes), 2\n", "line 2", "second"),
    (b"DSP:before_context_created (bytes), 1\nDSP:peak (bytes), 2\n", "line 2", "unknown heap event"),
    (b"DSP:before_context_created (bytes), 1\n\xff\n", "line 2", "non-ASCII"),
])
def test_bad_lines_named_with_file_and_line(text, where, what):
    with pytest.raises(FormatError) as e:
        parse_heap(text, "heap.txt")
    msg = str(e.value)
    assert msg.startswith("heap.txt: ") and what in msg and "\n" not in msg
    if where:
        assert f"heap.txt: {where}:" in msg


def test_oversized_and_non_regular(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"DSP:before_context_created (bytes), 1\n" + b"\n" * (70 << 10))
    with pytest.raises(FormatError, match="limit"):
        read_heap(big)
    with pytest.raises(FormatError):
        read_heap(tmp_path)
