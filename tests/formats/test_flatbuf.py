"""formats/flatbuf.py on buffers the flatbuffers library writes: scalar, string, vector and table
fields read one at a time (Buffer) and for many tables at once (TableSet) agree; absent fields
give defaults; what points outside the buffer is a FormatError with its offset."""
from __future__ import annotations

import flatbuffers
import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats.flatbuf import Buffer, root_table
from etscope.formats.flatbuf_tables import TableSet

NAMES = ["conv", "relu", "conv", "", "linear"]


def _item(b: flatbuffers.Builder, i: int, name: str | None):
    s = b.CreateString(name) if name is not None else None
    b.StartObject(2)
    b.PrependInt64Slot(0, 1000 * i - 7, 0)
    if s is not None:
        b.PrependUOffsetTRelativeSlot(1, s, 0)
    return b.EndObject()


def _buffer(size_prefixed: bool = False) -> bytes:
    """root { 0: i32 = 42, 1: string "root", 2: [item], 3: [u32] }; item { 0: i64, 1: string };
    the last item has no name (an absent field)."""
    b = flatbuffers.Builder(0)
    items = [_item(b, i, n) for i, n in enumerate(NAMES)] + [_item(b, 9, None)]
    b.StartVector(4, len(items), 4)
    for off in reversed(items):
        b.PrependUOffsetTRelative(off)
    vec = b.EndVector()
    b.StartVector(4, 3, 4)
    for v in reversed([7, 8, 4_000_000_000]):
        b.PrependUint32(v)
    nums = b.EndVector()
    name = b.CreateString("root")
    b.StartObject(4)
    b.PrependInt32Slot(0, 42, 0)
    b.PrependUOffsetTRelativeSlot(1, name, 0)
    b.PrependUOffsetTRelativeSlot(2, vec, 0)
    b.PrependUOffsetTRelativeSlot(3, nums, 0)
    root = b.EndObject()
    (b.FinishSizePrefixed if size_prefixed else b.Finish)(root, b"TEST")
    return bytes(b.Output())


@pytest.mark.parametrize("size_prefixed", [False, True])
def test_fields_one_at_a_time(size_prefixed):
    buf, root = root_table(Buffer(_buffer(size_prefixed), "test file"), b"TEST")
    assert buf.scalar(root, 0, "i32") == 42 and buf.string(root, 1) == "root"
    assert buf.scalars(root, 3, "u32").tolist() == [7, 8, 4_000_000_000]
    items = buf.tables(root, 2)
    assert [buf.scalar(int(t), 0, "i64") for t in items] == [1000 * i - 7 for i in range(5)] + [8993]
    assert [buf.string(int(t), 1) for t in items] == NAMES + [None]
    assert buf.scalar(root, 7, "i32", default=-1) == -1 and buf.string(root, 7) is None   # beyond the vtable


def test_many_tables_at_once_agree_with_one_at_a_time():
    buf, root = root_table(Buffer(_buffer(), "test file"), b"TEST")
    items = buf.tables(root, 2)
    ts = TableSet(buf, items)
    assert ts.scalar(0, "i64").tolist() == [buf.scalar(int(t), 0, "i64") for t in items]
    codes, strings = ts.strings(1)
    assert [strings[c] if c >= 0 else None for c in codes] == NAMES + [None]
    assert len(strings) == len(set(strings))            # each distinct string decoded once
    assert np.array_equal(ts.field(1) == 0, np.array([False] * 5 + [True]))


def test_wrong_identifier_and_truncation_are_format_errors():
    data = _buffer()
    with pytest.raises(FormatError, match="test file: expected file identifier 'ED00'"):
        root_table(Buffer(data, "test file"), b"ED00")
    with pytest.raises(FormatError, match="too small"):
        root_table(Buffer(data[:6], "test file"), b"TEST")
    buf, root = root_table(Buffer(data[:40], "test file"), b"TEST")  # tables cut off
    with pytest.raises(FormatError) as e:
        buf.tables(root, 2)
    assert e.value.offset is not None
