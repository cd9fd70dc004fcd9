"""`render.sql`: the connection reads the tables etscope registers and nothing else (issue 31).

Each hostile statement is run through the library's ``query()`` in a scratch folder holding an
input and a scratch file: it must raise SqlError (one line) and leave both files as they were and
the folder without new files.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from etscope.sql import engine as S
from etscope.sql.engine import SqlError, connect, query, run

TABLES = {"events": pa.table({"name": ["conv", "relu"], "dur_us": [3.0, 1.5]})}

# Statements that write, read files, reach the network or change settings. {input} / {scratch} are
# names in the scratch folder (the working directory while they run).
HOSTILE = [
    "COPY (SELECT 42) TO '{input}'",
    "COPY (SELECT 42) TO '{input}' (FORMAT csv, HEADER false)",
    "COPY events TO 'new.parquet' (FORMAT parquet)",
    "COPY (SELECT 1) TO 'new.csv'",
    "SELECT 1; COPY (SELECT 42) TO '{input}'",
    "EXPORT DATABASE 'exported'",
    "ATTACH 'attached.db' AS a",
    "ATTACH ':memory:' AS m",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('{scratch}')",
    "SELECT * FROM read_text('{scratch}')",
    "SELECT * FROM read_blob('{input}')",
    "SELECT * FROM read_json('{scratch}')",
    "SELECT * FROM read_parquet('*.parquet')",
    "SELECT * FROM glob('*')",
    "SELECT * FROM '{scratch}'",
    "WITH t AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM t",
    "SELECT (SELECT content FROM read_text('{scratch}'))",
    "SELECT * FROM sniff_csv('{scratch}')",
    "SET enable_external_access = true",
    "SET enable_external_access = true; SELECT * FROM read_text('{scratch}')",
    "RESET enable_external_access",
    "SET lock_configuration = false",
    "SET python_scan_all_frames = true",
    "SET profiling_output = 'profile.json'",
    "PRAGMA enable_profiling = 'json'",
    "PRAGMA enable_profiling",
    "PRAGMA profiling_output = 'profile.json'",
    "PRAGMA import_database('exported')",
    "CALL enable_logging()",
    "SET log_query_path = 'queries.log'",
    "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "CREATE TABLE t AS SELECT 1",
    "CREATE VIEW v AS SELECT 1",
    "INSERT INTO events VALUES ('x', 1)",
    "DROP VIEW events",
    "CHECKPOINT",
    "EXPLAIN ANALYZE COPY (SELECT 42) TO '{input}'",
    "EXPLAIN COPY (SELECT 42) TO '{input}'",
    "/* SELECT */ COPY (SELECT 42) TO '{input}'",
    "-- SELECT\nCOPY (SELECT 42) TO '{input}'",
    "select 1 ; ; copy (select 42) to '{input}'",
    "UPDATE EXTENSIONS",
    "PIVOT events ON name",
]


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    (tmp_path / "in.etdump").write_bytes(b"ETDUMP BYTES")
    (tmp_path / "scratch.txt").write_text("secret,1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _state(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} | {
        p.name + "/": None for p in folder.iterdir() if p.is_dir()}


@pytest.mark.parametrize("stmt", HOSTILE)
def test_hostile_statement_refused_and_nothing_touched(scratch, stmt):
    before = _state(scratch)
    sql = stmt.format(input="in.etdump", scratch="scratch.txt")
    with pytest.raises(SqlError) as err:
        query(TABLES, sql)
    assert "\n" not in str(err.value) and str(err.value)
    assert _state(scratch) == before


def test_absolute_paths_refused_too(scratch):
    for sql in (f"COPY (SELECT 42) TO '{scratch / 'in.etdump'}'", f"SELECT * FROM read_text('{scratch / 'scratch.txt'}')",
                "SELECT * FROM read_text('/etc/hostname')", "SELECT * FROM glob('/*')"):
        with pytest.raises(SqlError):
            query(TABLES, sql)
    assert (scratch / "in.etdump").read_bytes() == b"ETDUMP BYTES"


def test_reading_statements_still_run():
    assert query(TABLES, "SELECT name FROM events ORDER BY dur_us").column("name").to_pylist() == ["relu", "conv"]
    assert query(TABLES, "WITH t AS (SELECT * FROM events) SELECT count(*) AS n FROM t").to_pylist() == [{"n": 2}]
    assert query(TABLES, "VALUES (1), (2)").num_rows == 2
    assert query(TABLES, "FROM events").num_rows == 2
    assert query(TABLES, "DESCRIBE events").column("column_name").to_pylist() == ["name", "dur_us"]
    assert query(TABLES, "SHOW TABLES").column("name").to_pylist() == ["events"]
    assert query(TABLES, "SUMMARIZE events").num_rows == 2
    assert query(TABLES, "EXPLAIN SELECT * FROM events").num_rows >= 1
    assert query(TABLES, "EXPLAIN ANALYZE SELECT * FROM events").num_rows >= 1
    assert query(TABLES, "PRAGMA table_info('events')").num_rows == 2
    assert query(TABLES, "PRAGMA show_tables").num_rows == 1
    assert query(TABLES, "PRAGMA version").num_rows == 1
    assert query(TABLES, "PIVOT events ON name IN ('conv', 'relu') USING sum(dur_us)").num_rows == 1
    assert query(TABLES, "SELECT 1 AS a; SELECT 2 AS b").to_pylist() == [{"b": 2}]


def test_settings_are_locked_and_closed():
    con = connect(TABLES)
    try:
        got = dict(con.sql("SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', "
                           "'lock_configuration', 'autoinstall_known_extensions', 'autoload_known_extensions', "
                           "'python_enable_replacements', 'python_scan_all_frames', 'temp_directory', "
                           "'allow_community_extensions')").fetchall())
    finally:
        con.close()
    assert got == {"enable_external_access": "false", "lock_configuration": "true",
                   "autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                   "python_enable_replacements": "false", "python_scan_all_frames": "false", "temp_directory": "",
                   "allow_community_extensions": "false"}


def test_python_variables_are_not_tables(monkeypatch):
    """DuckDB's Python client scans a DataFrame / Arrow table named in the query from the calling
    frame's variables (render.sql's module globals here): only registered tables are visible."""
    monkeypatch.setattr(S, "leaked", pa.table({"secret": [42]}), raising=False)
    with pytest.raises(SqlError):
        query(TABLES, "SELECT * FROM leaked")
    leaked_local = pa.table({"secret": [42]})    # noqa: F841 - named by the query
    with pytest.raises(SqlError):
        query(TABLES, "SELECT * FROM leaked_local")


def test_a_refused_query_runs_none_of_its_statements(scratch):
    """The check comes before anything runs: the allowed first statement does not run either."""
    con = connect(TABLES)
    try:
        with pytest.raises(SqlError, match="CREATE"):
            run(con, "SELECT 1; CREATE TABLE made AS SELECT 1")
        assert con.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'made'").fetchall() == [(0,)]
    finally:
        con.close()


def test_refusal_names_the_statement_and_what_is_allowed(scratch):
    with pytest.raises(SqlError) as err:
        query(TABLES, "COPY (SELECT 1) TO 'x.csv'")
    msg = str(err.value)
    assert msg.startswith("COPY is not allowed") and "SELECT" in msg and "DESCRIBE" in msg


def test_pyarrow_dataset_tables_work_without_file_access(tmp_path, monkeypatch):
    """``sql --dataset`` registers the dataset's parts as pyarrow Datasets: pyarrow reads them, the
    query still cannot name a file."""
    for model, xs in (("a", [1, 2]), ("b", [3])):
        (tmp_path / "runs" / f"model={model}").mkdir(parents=True)
        pq.write_table(pa.table({"x": xs}), tmp_path / "runs" / f"model={model}" / "part.parquet")
    ds = pads.dataset(tmp_path / "runs", format="parquet", partitioning="hive")
    monkeypatch.chdir(tmp_path)
    got = query({"runs": ds}, "SELECT model, sum(x) AS s FROM runs GROUP BY 1 ORDER BY 1")
    assert [(r["model"], int(r["s"])) for r in got.to_pylist()] == [("a", 3), ("b", 3)]
    before = _state(tmp_path)
    for sql in ("SELECT * FROM read_parquet('runs/*/*.parquet')", "COPY runs TO 'out.parquet'",
                "SELECT * FROM 'runs/model=a/part.parquet'"):
        with pytest.raises(SqlError):
            query({"runs": ds}, sql)
    assert _state(tmp_path) == before


def test_nothing_spills_to_a_temp_folder(scratch):
    """DuckDB's default temp folder is ./.tmp next to where etscope runs; spilling is off."""
    with pytest.raises(SqlError):
        query({}, "SELECT current_setting('temp_directory') AS t; SET temp_directory = 'spill'")
    assert query({}, "SELECT current_setting('temp_directory') AS t").to_pylist() == [{"t": ""}]
    assert not (scratch / ".tmp").exists() and not (scratch / "spill").exists()


def test_nesting_past_the_limit_is_refused_before_parsing():
    """DuckDB refuses an expression deeper than 1000 only after parsing it (~1.4 KB of memory per
    query byte), and a 500-deep list literal took 2.9 s of planning before Arrow refused its type
    (campaign seed sql-2114): nesting past MAX_NESTING (64) is refused from DuckDB's tokens first.
    Everything up to it still runs."""
    from etscope.sql.guard import MAX_NESTING

    assert MAX_NESTING == 64
    assert query({}, "SELECT " + "(" * 64 + "1" + ")" * 64 + " AS x").to_pylist() == [{"x": 1}]
    for deep in ("SELECT " + "abs(" * 40_000 + "1" + ")" * 40_000, "SELECT " + "[" * 65 + "1" + "]" * 65,
                 "SELECT " + "[" * 500 + "1" + "]" * 500,
                 "SELECT " + "CASE WHEN true THEN " * 65 + "1" + " END" * 65,
                 "SELECT * FROM " + "(SELECT * FROM " * 1001 + "range(1)" + ")" * 1001):
        with pytest.raises(SqlError, match="deeper than 64"):
            query({}, deep)
    # brackets in strings and comments are not nesting
    assert query({}, "SELECT '" + "(" * 2000 + "' AS s -- " + "[" * 2000).num_rows == 1


def test_a_result_arrow_cannot_carry_is_one_line():
    """A result type Arrow cannot import is a SqlError (one line), not a pyarrow traceback."""
    import pyarrow as pa

    from etscope.sql import engine as S

    class Rel:
        types = []

        def to_arrow_table(self):
            raise pa.ArrowInvalid("Recursion level in ArrowSchema struct exceeded")

    class Con:
        def sql(self, q):
            return Rel()

    with pytest.raises(SqlError, match="cannot be converted to Arrow"):
        S.run(Con(), "SELECT 1")


def test_memory_limit_ends_a_query_in_one_line_without_spilling(scratch, monkeypatch):
    """DuckDB's buffers stop at memory_limit (a quarter of RAM; 64 MB here) with one line, and
    nothing spills into a temp folder."""
    from etscope.sql import guard as sql_guard

    monkeypatch.setattr(sql_guard, "_memory_limit", lambda: "64MB")
    with pytest.raises(SqlError, match="Out of Memory"):
        query({}, "SELECT count(DISTINCT range) FROM range(20000000)")
    assert not any(p.name.startswith(".tmp") for p in scratch.iterdir())
