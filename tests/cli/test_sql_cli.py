"""`etscope sql ETDUMP QUERY` (issue 31): read-only whatever the query, every result type written
in the table, CSV and JSON, one stderr line and exit 2 for what is refused."""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"

# The library test (tests/render/test_sql_guard.py) runs every hostile statement; the CLI runs one
# of each kind, as the reproducers did.
HOSTILE = [
    "COPY (SELECT 42) TO 'in.etdump'",
    "COPY (SELECT 42) TO 'made.csv'",
    "EXPORT DATABASE 'exported'",
    "ATTACH 'made.db' AS a",
    "INSTALL httpfs",
    "SELECT * FROM read_text('scratch.txt')",
    "SELECT * FROM read_csv('scratch.txt')",
    "SELECT * FROM glob('*')",
    "SELECT * FROM 'scratch.txt'",
    "SET enable_external_access = true; COPY (SELECT 42) TO 'in.etdump'",
    "PRAGMA enable_profiling",
    "SET profiling_output = 'made.json'",
    "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "EXPLAIN ANALYZE COPY (SELECT 42) TO 'in.etdump'",
]


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "etscope.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def folder(tmp_path) -> Path:
    shutil.copy(REAL / "cnn.etdump", tmp_path / "in.etdump")
    (tmp_path / "scratch.txt").write_text("secret,1\n")
    return tmp_path


def _state(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


@pytest.mark.parametrize("stmt", HOSTILE)
def test_hostile_statement_exits_2_with_one_line_and_touches_nothing(folder, stmt):
    before = _state(folder)
    proc = cli("sql", "in.etdump", stmt, cwd=folder)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("etscope: sql: "), proc.stderr
    assert "secret" not in proc.stdout + proc.stderr
    assert _state(folder) == before


def test_help_lists_the_allowed_statements():
    proc = cli("sql", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for word in ("SELECT", "WITH", "VALUES", "DESCRIBE", "SHOW", "SUMMARIZE", "EXPLAIN [ANALYZE]", "PRAGMA table_info",
                 "Read-only"):
        assert word in text, word


def _formats(query: str, folder: Path) -> dict[str, subprocess.CompletedProcess]:
    return {fmt: cli("sql", "in.etdump", "--format", fmt, query, cwd=folder) for fmt in ("table", "csv", "json")}


def _clean(procs: dict) -> None:
    for fmt, proc in procs.items():
        assert proc.returncode == 0 and proc.stderr == "", (fmt, proc.stderr)


def test_nested_results_are_written_as_json_text_in_csv(folder):
    procs = _formats("SELECT [1, 2] AS l, {'a': 1, 'b': 'x'} AS s, MAP {'k': 1.5} AS m, [[1], NULL] AS ll", folder)
    _clean(procs)
    row = next(csv.DictReader(io.StringIO(procs["csv"].stdout)))
    assert [json.loads(row[k]) for k in ("l", "s", "m", "ll")] == [[1, 2], {"a": 1, "b": "x"}, {"k": 1.5}, [[1], None]]
    assert json.loads(procs["json"].stdout) == [{"l": [1, 2], "s": {"a": 1, "b": "x"}, "m": {"k": 1.5},
                                                "ll": [[1], None]}]


def test_decimal_blob_time_interval_uuid_hugeint_in_json(folder):
    q = ("SELECT 1.25::DECIMAL(10,2) AS d, 1.123456789012345678::DECIMAL(20,18) AS exact, '\\xAA\\x00'::BLOB AS b, "
         "TIME '12:34:56.5' AS t, INTERVAL '1 year 2 months 3 days 4 hours 0.5 seconds' AS i, "
         "'00000000-0000-0000-0000-000000000001'::UUID AS u, 170141183460469231731687303715884105727::HUGEINT AS h, "
         "sum(1) AS s, '101'::BIT AS bits")
    procs = _formats(q, folder)
    _clean(procs)
    got = json.loads(procs["json"].stdout)[0]
    assert got == {"d": 1.25, "exact": "1.123456789012345678", "b": "aa00", "t": "12:34:56.500000",
                   "i": "P1Y2M3DT4H0.5S", "u": "00000000-0000-0000-0000-000000000001",
                   "h": 170141183460469231731687303715884105727, "s": 1, "bits": "101"}
    row = next(csv.DictReader(io.StringIO(procs["csv"].stdout)))
    assert row["exact"] == "1.123456789012345678" and row["b"] == "aa00" and row["h"] == str(2**127 - 1)


def test_infinite_dates_and_timestamps_in_every_format(folder):
    q = ("SELECT 'infinity'::TIMESTAMP AS t, '-infinity'::TIMESTAMP AS nt, 'infinity'::DATE AS d, "
         "'infinity'::TIMESTAMPTZ AS tz, TIMESTAMP '2024-05-01 12:00:00' AS plain, DATE '294247-01-01' AS far")
    procs = _formats(q, folder)
    _clean(procs)
    assert json.loads(procs["json"].stdout) == [{"t": "infinity", "nt": "-infinity", "d": "infinity", "tz": "infinity",
                                                "plain": "2024-05-01T12:00:00.000000", "far": "294247-01-01"}]
    row = next(csv.DictReader(io.StringIO(procs["csv"].stdout)))
    assert row["t"] == "infinity" and row["nt"] == "'-infinity" and row["far"] == "294247-01-01"
    assert "infinity" in procs["table"].stdout and "294247-01-01" in procs["table"].stdout


def test_csv_formula_after_leading_blank_is_quoted(folder):
    q = "SELECT ' =1+2' AS a, chr(10) || '@SUM(1)' AS b, chr(9) || 'x' AS c, '  -2+3' AS d, 'a=1' AS e"
    proc = cli("sql", "in.etdump", "--format", "csv", q, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    row = next(csv.DictReader(io.StringIO(proc.stdout)))
    assert row == {"a": "' =1+2", "b": "'\n@SUM(1)", "c": "'\tx", "d": "'  -2+3", "e": "a=1"}


def test_repeated_column_names_keep_their_own_values(folder):
    """The table view went through row dicts: SELECT 1 AS a, 2 AS a printed 2 2."""
    proc = cli("sql", "in.etdump", "SELECT 1 AS a, 2 AS a", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert [ln.split() for ln in proc.stdout.splitlines()[:3]] == [["a", "a"], ["-", "-"], ["1", "2"]]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fleet")
    shutil.copy(REAL / "cnn.etdump", d / "in.etdump")
    proc = cli("collect", d / "in.etdump", "--to", d / "ds", "--meta", "model=cnn", cwd=d)
    assert proc.returncode == 0, proc.stderr
    return d


def _dataset_state(d: Path) -> dict:
    return {str(p.relative_to(d)): (p.read_bytes() if p.is_file() else None) for p in d.rglob("*")
            if "tmp" not in p.name and "lock" not in p.name}


@pytest.mark.parametrize("stmt", ["COPY (SELECT 42) TO 'in.etdump'", "COPY runs TO 'ds/runs/x.parquet'",
                                  "ATTACH 'made.db' AS a", "INSTALL httpfs", "SET enable_external_access = true"])
def test_dataset_query_refuses_what_does_not_read(dataset, stmt):
    before = _dataset_state(dataset)
    proc = cli("sql", "--dataset", "ds", stmt, cwd=dataset)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert _dataset_state(dataset) == before


@pytest.mark.parametrize("stmt", ["SELECT * FROM read_blob('in.etdump')", "SELECT * FROM glob('*')",
                                  "SELECT count(*) FROM read_parquet('ds/runs/**/*.parquet')"])
def test_dataset_query_reaches_no_path(dataset, stmt):
    proc = cli("sql", "--dataset", "ds", stmt, cwd=dataset)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr


def test_ctrl_c_stops_a_long_query(folder):
    """DuckDB looked at Ctrl-C only between pipelines: a count over 10^13 rows ran on for minutes.
    Now: one line, exit 130, at once."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "etscope.cli", "sql", "in.etdump",
                             "SELECT count(*) FROM range(10000000000000::BIGINT)"], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and err.splitlines() == ["etscope: interrupted"], err


def test_json_of_repeated_column_names_is_refused_not_merged(folder):
    """JSON objects cannot hold two columns of one name: it wrote [{"a": 2}] for SELECT 1 AS a, 2 AS a."""
    proc = cli("sql", "in.etdump", "--format", "json", "SELECT 1 AS a, 2 AS a", cwd=folder)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert proc.stderr.splitlines() == ["etscope: sql: the result has several columns named 'a': name them apart "
                                        "(... AS other_name) for JSON"]
