"""render.sql_cells: one written form for every Arrow type a DuckDB result can have (issue 31:
lists to CSV, DECIMAL / BLOB / TIME to JSON and infinite timestamps gave tracebacks)."""
from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest

from etscope.render.json import dumps
from etscope.render.sql import csv_text, json_text, sql_table
from etscope.sql.engine import query
from etscope.render.sql_cells import UnwritableError, column_values, json_rows, text_table

I64 = (1 << 63) - 1


def test_decimals_exact():
    ints = pa.array([Decimal(2**120), None], pa.decimal128(38, 0))
    assert column_values(ints) == [2**120, None]
    short = pa.array([Decimal("1.25"), Decimal("0.1")], pa.decimal128(5, 2))
    assert column_values(short) == [1.25, 0.1]
    # one value a double cannot hold: the whole column as exact strings
    mixed = pa.chunked_array([pa.array([Decimal("0.5")], pa.decimal128(38, 20)),
                              pa.array([Decimal("0.12345678901234567891")], pa.decimal128(38, 20))])
    assert column_values(mixed) == ["0.50000000000000000000", "0.12345678901234567891"]


def test_temporal_values_with_duckdb_infinities():
    ts = pa.array([I64, -I64, 0, None], pa.timestamp("us"))
    assert column_values(ts) == ["infinity", "-infinity", "1970-01-01T00:00:00.000000", None]
    assert column_values(pa.array([0], pa.timestamp("s", tz="Europe/Paris"))) == ["1970-01-01T00:00:00Z"]
    days = pa.array([(1 << 31) - 1, -((1 << 31) - 1), 19844], pa.date32())
    assert column_values(days) == ["infinity", "-infinity", "2024-05-01"]
    assert column_values(pa.array([dt.date(2024, 5, 1)], pa.date64())) == ["2024-05-01"]
    assert column_values(pa.array([86_400_000_000, 1_500_000], pa.time64("us"))) == ["24:00:00.000000",
                                                                                      "00:00:01.500000"]
    assert column_values(pa.array([61], pa.time32("s"))) == ["00:01:01"]
    assert column_values(pa.array([-90_000 * 10**9, 90 * 10**9], pa.duration("ns"))) == ["PT-25H", "PT1M30S"]


def test_intervals_iso_8601():
    iv = pa.array([pa.MonthDayNano([14, 3, 4 * 3600 * 10**9 + 5 * 10**8]), pa.MonthDayNano([0, 0, 0]),
                   pa.MonthDayNano([-1, -2, -10**9]), None], pa.month_day_nano_interval())
    assert column_values(iv) == ["P1Y2M3DT4H0.5S", "PT0S", "P-1M-2DT-1S", None]


def test_bytes_uuid_and_nested():
    assert column_values(pa.array([b"\x00\xff", None], pa.binary())) == ["00ff", None]
    assert column_values(pa.array([b"\x01" * 16], pa.uuid())) == ["01010101-0101-0101-0101-010101010101"]
    nested = pa.array([[{"t": I64}], None, []], pa.list_(pa.struct([("t", pa.timestamp("us"))])))
    assert column_values(nested.slice(0)) == [[{"t": "infinity"}], None, []]
    assert column_values(nested.slice(1)) == [None, []]
    m = pa.array([[(1, "a"), (2, None)]], pa.map_(pa.int32(), pa.string()))
    assert column_values(m) == [{"1": "a", "2": None}]
    fixed = pa.array([[1, 2], None], pa.list_(pa.int64(), 2))
    assert column_values(fixed) == [[1, 2], None]
    assert column_values(pa.array([[1]], pa.large_list(pa.int8()))) == [[1]]
    dense = pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                                     [pa.array([1, 2]), pa.array(["x"])])
    assert column_values(dense) == [1, "x", 2] and column_values(dense.slice(1)) == ["x", 2]
    sparse = pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1], pa.int8()),
                                       [pa.array([1, 2, 3, 4]), pa.array(["a", "b", "c", "d"])])
    assert column_values(sparse.slice(1, 2)) == ["b", 3]


def test_slices_keep_their_offset():
    """Results can come in slices (a table's chunks): every form reads from the slice's offset."""
    ts = pa.array([0, None, 86_400 * 10**6], pa.timestamp("us"))
    assert column_values(ts.slice(1)) == [None, "1970-01-02T00:00:00.000000"]
    assert column_values(pa.array([0, 1, None], pa.date32()).slice(1)) == ["1970-01-02", None]
    assert column_values(pa.array([0, 10**6, None], pa.time64("us")).slice(1)) == ["00:00:01.000000", None]
    m = pa.array([[(1, "a")], [(2, "b"), (3, "c")], None, [(4, "d")]], pa.map_(pa.int32(), pa.string()))
    assert column_values(m.slice(1)) == [{"2": "b", "3": "c"}, None, {"4": "d"}]
    st = pa.array([{"a": 1, "b": [1]}, None, {"a": 3, "b": None}])
    assert column_values(st.slice(1)) == [None, {"a": 3, "b": None}]


def test_csv_and_json_of_every_kind_from_duckdb():
    q = ("SELECT [1.5, 'nan'::DOUBLE] AS l, {'d': 1.5::DECIMAL(4,2), 'b': '\\x01'::BLOB} AS s, "
         "'infinity'::TIMESTAMP AS t, INTERVAL 1 DAY AS i, NULL AS n, 'a'::ENUM('a') AS e")
    got = query({}, q)
    rows = json.loads(json_text(got))
    assert rows == [{"l": [1.5, None], "s": {"d": 1.5, "b": "01"}, "t": "infinity", "i": "P1D", "n": None, "e": "a"}]
    assert csv_text(got).splitlines() == ['"l","s","t","i","n","e"',
                                          '"[1.5, null]","{""d"": 1.5, ""b"": ""01""}","infinity","P1D",,"a"']
    t = sql_table(got, None)
    assert t.rows[0][2:5] == ["infinity", "P1D", "NULL"]


def test_text_table_keeps_flat_columns_typed():
    t = pa.table({"n": [1], "f": [0.5], "s": ["x"], "ts": pa.array([0], pa.timestamp("ms"))})
    out = text_table(t)
    assert out.schema.types[:3] == t.schema.types[:3] and out.column("ts").to_pylist() == ["1970-01-01T00:00:00.000"]


def test_a_type_without_a_form_is_refused_in_one_line():
    class Odd(pa.ExtensionType):
        def __init__(self):
            super().__init__(pa.month_day_nano_interval(), "odd")

        def __arrow_ext_serialize__(self):
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):
            return cls()

    assert column_values(pa.ExtensionArray.from_storage(Odd(), pa.array([pa.MonthDayNano([0, 1, 0])],
                                                                         pa.month_day_nano_interval()))) == ["P1D"]
    with pytest.raises(UnwritableError, match="cannot be written; cast it in the query"):
        column_values(pa.array([[1]], pa.list_view(pa.int32())))     # DuckDB's list_view output is off


def test_json_rows_go_through_the_one_json_writer():
    rows = json_rows(pa.table({"f": [float("inf")], "s": ["\x9b31m"]}))
    assert dumps(rows, indent=None) == '[{"f": null, "s": "\\u009b31m"}]'
