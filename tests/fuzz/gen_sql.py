"""Structure-aware generator of hostile queries for ``etscope sql ETDUMP QUERY`` (and ``sql
--dataset``): statements that would write, read files, reach the network or change DuckDB's
settings, hidden in the ways a filter on the query's text would miss, and queries whose results
are hard to write.

``gen_sql(rng, shape=None, paths=PATHS) -> str`` (at most ``MAX_QUERY`` bytes, no NUL: it must fit in one
command-line argument; give it after ``--``, as a query may start with ``-``). Every query must end with exit 0 or 2, at most
one stderr line (``etscope: sql: ...``), no traceback, and no file created or modified anywhere
(the campaign checks its scratch folder, the input and a canary outside it). ``paths`` are the
file names the statements aim at (relative names are meant to resolve in the campaign's working
folder: put the input and a scratch file there under these names).

Shapes:

* ``write``: COPY ... TO (the input, a new file, an absolute path, /dev/stdout, a glob), with
  FORMAT / PARTITION_BY / OVERWRITE options; EXPORT DATABASE;
* ``attach``: ATTACH a file or ':memory:', DETACH, USE, CREATE / DROP / INSERT on an attached db;
* ``extension``: INSTALL / FORCE INSTALL / LOAD / UPDATE EXTENSIONS, from a URL repository;
* ``settings``: SET / RESET / SET GLOBAL / PRAGMA of the settings that keep DuckDB closed
  (external access, lock, replacement scans, temp folder, profiling and log output paths);
* ``read_file``: file-reading table functions and scalar functions on paths, globs, URLs, /proc;
* ``replacement``: ``FROM 'path'`` scans, and names of Python variables in etscope's frames;
* ``ddl``: CREATE / INSERT / UPDATE / DELETE / DROP / ALTER / MACRO / SECRET / CHECKPOINT /
  VACUUM / transactions / PREPARE-EXECUTE / CALL;
* ``wrapped``: one of the above inside a CTE, subquery, UNION, EXISTS, LATERAL, EXPLAIN
  [ANALYZE], or a multi-statement query after an allowed statement;
* ``comments``: comment, quoting and case tricks around a writing statement;
* ``huge``: huge string / number literals, IN lists, identifiers;
* ``deep``: deeply nested parentheses, function calls, lists, subqueries, CTEs;
* ``hard_types``: results in types that are hard to write (DECIMAL, BLOB, TIME, INTERVAL, UUID,
  HUGEINT, BIT, BIGNUM, TIMETZ, infinities, NaN, nested LIST / STRUCT / MAP / UNION / ARRAY,
  ENUM, NULL, strings with controls and formula characters, odd column names);
* ``allowed``: queries that only read (the common path; must exit 0 or 2 like the rest).
"""
from __future__ import annotations

import random

PATHS = ("in.etdump", "scratch.txt", "new.csv", "*", "*.etdump", "../*", "/etc/passwd", "/proc/self/environ",
         "/tmp/etscope-sql-canary", "~/.ssh/id_rsa", "http://127.0.0.1:9/x.csv", "s3://bucket/x.parquet",
         "/dev/stdout", "ds/runs/**/*.parquet")

SHAPES = ("write", "attach", "extension", "settings", "read_file", "replacement", "ddl", "wrapped", "comments",
          "huge", "deep", "hard_types", "allowed")

TABLES = ("events", "ops", "runs")
_SETTINGS = ("enable_external_access", "lock_configuration", "python_enable_replacements", "python_scan_all_frames",
             "autoinstall_known_extensions", "autoload_known_extensions", "allow_community_extensions",
             "allow_unsigned_extensions", "temp_directory", "max_temp_directory_size", "memory_limit", "threads",
             "profiling_output", "enable_profiling", "log_query_path", "home_directory", "extension_directory",
             "custom_extension_repository", "allowed_paths", "allowed_directories", "secret_directory",
             "enable_logging", "logging_storage", "arrow_output_list_view")
_READERS = ("read_csv", "read_csv_auto", "read_text", "read_blob", "read_json", "read_json_auto", "read_ndjson",
            "read_json_objects", "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
            "parquet_file_metadata", "parquet_kv_metadata", "glob", "sniff_csv", "iceberg_scan", "delta_scan",
            "sqlite_scan", "read_xlsx", "query_table")
_EXTENSIONS = ("httpfs", "sqlite", "postgres_scanner", "spatial", "excel", "iceberg", "delta", "shellfs", "aws")


# Linux refuses a single command-line argument longer than 128 KiB (MAX_ARG_STRLEN) or holding NUL.
MAX_QUERY = 120_000


def gen_sql(rng: random.Random, shape: str | None = None, paths=PATHS) -> str:
    shape = shape or rng.choice(SHAPES)
    q = _SHAPES[shape](rng, list(paths)).replace("\x00", "")
    while len(q.encode("utf-8")) > MAX_QUERY:
        q = q[:MAX_QUERY - (len(q.encode("utf-8")) - len(q)) - 1]
    return q


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _path(rng, paths) -> str:
    return _q(rng.choice(paths))


def _table(rng) -> str:
    return rng.choice(TABLES)


def _write(rng, paths) -> str:
    src = rng.choice(["(SELECT 42)", "(SELECT * FROM events)", _table(rng), "(FROM range(3))",
                      "(SELECT 'PK\x03\x04' AS x)"])
    opts = rng.choice(["", " (FORMAT csv)", " (FORMAT parquet)", " (FORMAT json)", " (HEADER false, DELIMITER '|')",
                       " (FORMAT csv, PARTITION_BY (x), OVERWRITE_OR_IGNORE)", " (FORMAT parquet, OVERWRITE true)",
                       " WITH (FORMAT 'csv')", " (FORMAT blob)"])
    return rng.choice([f"COPY {src} TO {_path(rng, paths)}{opts}",
                       f"EXPORT DATABASE {_path(rng, paths)}{rng.choice(['', ' (FORMAT parquet)'])}",
                       f"COPY FROM DATABASE memory TO m{rng.randrange(9)}",
                       f"COPY {_table(rng)} FROM {_path(rng, paths)}"])


def _attach(rng, paths) -> str:
    name = f"db{rng.randrange(10)}"
    return rng.choice([
        f"ATTACH {_path(rng, paths)} AS {name}",
        f"ATTACH {_path(rng, paths)} AS {name} (TYPE sqlite)",
        f"ATTACH {_path(rng, paths)} AS {name} (READ_ONLY)",
        f"ATTACH IF NOT EXISTS ':memory:' AS {name}",
        f"ATTACH ':memory:' AS {name}; CREATE TABLE {name}.t AS SELECT 1; COPY {name}.t TO {_path(rng, paths)}",
        f"ATTACH 'md:' AS {name}", f"DETACH {name}", "USE memory", "DETACH DATABASE IF EXISTS memory",
    ])


def _extension(rng, paths) -> str:
    ext = rng.choice(_EXTENSIONS)
    return rng.choice([f"INSTALL {ext}", f"FORCE INSTALL {ext}", f"LOAD {ext}", f"INSTALL {ext} FROM community",
                       f"INSTALL {ext} FROM 'http://127.0.0.1:9/repo'", f"LOAD {_path(rng, paths)}",
                       "UPDATE EXTENSIONS", f"SELECT * FROM duckdb_extensions()",
                       f"INSTALL {ext}; LOAD {ext}; SELECT * FROM read_csv('http://127.0.0.1:9/x')"])


def _settings(rng, paths) -> str:
    name = rng.choice(_SETTINGS)
    value = rng.choice(["true", "false", "1", "''", _path(rng, paths), "'100GB'", "64", "'json'", "'/tmp'"])
    return rng.choice([f"SET {name} = {value}", f"SET GLOBAL {name} = {value}", f"SET SESSION {name} TO {value}",
                       f"RESET {name}", f"RESET ALL", f"PRAGMA {name} = {value}", f"PRAGMA {name}({value})",
                       f"PRAGMA {name}", f"CALL {name}()", f"SELECT set_config('{name}', {value}, false)",
                       f"SET VARIABLE v = {value}", "PRAGMA enable_profiling", "PRAGMA enable_verification",
                       "PRAGMA disable_optimizer", f"PRAGMA import_database({_path(rng, paths)})",
                       "PRAGMA force_checkpoint", "CALL enable_logging()", "CALL truncate_duckdb_logs()"])


def _read_file(rng, paths) -> str:
    fn = rng.choice(_READERS)
    arg = rng.choice([_path(rng, paths), f"[{_path(rng, paths)}, {_path(rng, paths)}]"])
    extra = rng.choice(["", ", header = true", ", union_by_name = true", ", hive_partitioning = true",
                        ", filename = true", ", ignore_errors = true"])
    return rng.choice([f"SELECT * FROM {fn}({arg}{extra})", f"FROM {fn}({arg})",
                       f"SELECT count(*) FROM {fn}({arg})",
                       f"SELECT (SELECT content FROM read_text({_path(rng, paths)}))",
                       f"SELECT * FROM events WHERE name IN (SELECT content FROM read_text({_path(rng, paths)}))",
                       f"SELECT getenv('HOME')", f"SELECT current_setting('home_directory')",
                       f"SELECT * FROM read_csv({_path(rng, paths)}, columns = {{'a': 'VARCHAR'}})",
                       f"SELECT file FROM glob({_path(rng, paths)})"])


def _replacement(rng, paths) -> str:
    name = rng.choice(["tables", "sql", "con", "rel", "result", "r", "pa", "np", "params", "table", "duckdb",
                       "self", "os", "sys", "leaked", "df"])
    return rng.choice([f"SELECT * FROM {_path(rng, paths)}", f"FROM {_path(rng, paths)}",
                       f"SELECT * FROM \"{rng.choice(paths)}\"", f"SELECT * FROM {name}",
                       f"SELECT * FROM {name} LIMIT 1", f"DESCRIBE {name}", f"SUMMARIZE {_path(rng, paths)}",
                       f"SELECT * FROM events, {_path(rng, paths)}"])


def _ddl(rng, paths) -> str:
    t = _table(rng)
    return rng.choice([f"CREATE TABLE t AS SELECT * FROM {t}", f"CREATE OR REPLACE VIEW {t} AS SELECT 1 AS x",
                       f"INSERT INTO {t} SELECT * FROM {t}", f"UPDATE {t} SET name = 'x'", f"DELETE FROM {t}",
                       f"DROP VIEW {t}", f"ALTER VIEW {t} RENAME TO x", "CREATE MACRO m(a) AS a",
                       "CREATE TEMP TABLE t (a INT)", "CREATE SEQUENCE s", "CREATE TYPE e AS ENUM ('a')",
                       "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
                       f"CREATE PERSISTENT SECRET s (TYPE http, BEARER_TOKEN 'x')", "CHECKPOINT", "FORCE CHECKPOINT",
                       "VACUUM", "ANALYZE", "BEGIN TRANSACTION", "COMMIT", "ROLLBACK", "PREPARE p AS SELECT 1",
                       f"PREPARE p AS COPY (SELECT 1) TO {_path(rng, paths)}; EXECUTE p", "DEALLOCATE p",
                       f"CALL pragma_table_info('{t}')", "CALL checkpoint()",
                       f"MERGE INTO {t} USING {t} AS s ON true WHEN MATCHED THEN DELETE",
                       f"PIVOT {t} ON name", "LOAD parquet", "SET search_path = 'memory'"])


def _bad(rng, paths) -> str:
    """One statement that does more than read."""
    return _SHAPES[rng.choice(["write", "attach", "extension", "settings", "read_file", "replacement", "ddl"])](
        rng, paths)


def _wrapped(rng, paths) -> str:
    bad = _bad(rng, paths)
    ok = _allowed(rng, paths)
    return rng.choice([f"{ok}; {bad}", f"{bad}; {ok}", f"{ok};;; {bad};", f"EXPLAIN {bad}", f"EXPLAIN ANALYZE {bad}",
                       f"EXPLAIN (FORMAT json) {bad}", f"WITH x AS ({bad}) SELECT * FROM x",
                       f"SELECT * FROM ({bad})", f"SELECT 1 UNION ALL ({bad})", f"SELECT EXISTS ({bad})",
                       f"SELECT * FROM events, LATERAL ({bad})", f"DESCRIBE {bad}", f"SUMMARIZE {bad}",
                       f"SELECT * FROM query({_q(bad)})", f"SELECT * FROM query_table({_q(bad)})",
                       f"{ok}\n;\n{bad}", f"SHOW {bad}", f"PRAGMA show({_q(bad)})"])


def _comments(rng, paths) -> str:
    bad = rng.choice([f"COPY (SELECT 42) TO {_path(rng, paths)}", f"ATTACH {_path(rng, paths)} AS a",
                      "INSTALL httpfs", "SET enable_external_access = true"])
    lead = rng.choice(["/* SELECT */ ", "-- SELECT\n", "/* /* nested */ */ ", "\ufeff", "\t\r\n ", "\x0c",
                       "/*;*/", "select 1 /* ; */ ; ", "SELECT $$;$$; ", "SELECT ';'; ", "SELECT e'\\'' ; ",
                       "SELECT U&'\\0041'; ", "(", "SELECT 1 -- ;\n; "])
    body = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in bad)
    tail = rng.choice(["", ";", " -- trailing", " /* unterminated", ")", "; SELECT 1", "\x01", "\u2028"])
    return lead + body + tail


def _huge(rng, paths) -> str:
    n = rng.choice([10**3, 10**4, 90_000])
    return rng.choice([f"SELECT '{'x' * n}' AS s", f"SELECT {'9' * min(n, 200_000)} AS n",
                       f"SELECT {'9' * min(n, 200_000)}.5 AS n", f"SELECT 1e{'9' * 6} AS n",
                       f"SELECT * FROM events WHERE name IN ({', '.join(_q(str(i)) for i in range(min(n, 10_000)))})",
                       f"SELECT 1 AS {'a' * n}", f"SELECT 1 AS \"{'=' * min(n, 10_000)}\"",
                       f"SELECT repeat('ab', {n}) AS s", f"SELECT range({min(n, 10**6)}) AS l",
                       f"SELECT list_value({', '.join(['1'] * min(n, 20_000))}) AS l",
                       "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(min(n, 5_000)))])


def _deep(rng, paths) -> str:
    d = rng.choice([50, 500, 999, 1000, 1001, 5000, 50_000])
    return rng.choice(["SELECT " + "(" * d + "1" + ")" * d, "SELECT " + "abs(" * d + "1" + ")" * d,
                       "SELECT " + "[" * d + "1" + "]" * d, "SELECT " + "1+" * d + "1",
                       "SELECT * FROM " + "(SELECT * FROM " * min(d, 3000) + "events" + ")" * min(d, 3000),
                       "WITH " + ", ".join(f"c{i} AS (SELECT {i})" for i in range(min(d, 3000))) + " SELECT 1",
                       "SELECT " + "{'a': " * min(d, 3000) + "1" + "}" * min(d, 3000),
                       "SELECT " + "NOT " * d + "true", "SELECT " + "-" * d + "1",
                       "SELECT " + "CASE WHEN true THEN " * min(d, 3000) + "1" + " END" * min(d, 3000)])


_HARD = ("1.25::DECIMAL(10,2)", "12345678901234567890123456789.123456789::DECIMAL(38,9)", "0.1::DECIMAL(38,37)",
         "'\\xAA\\x00'::BLOB", "TIME '12:34:56.5'", "'24:00:00'::TIME", "TIMETZ '12:00:00+02'",
         "INTERVAL '1 year 2 months 3 days 4 hours 0.5 seconds'", "-INTERVAL 1 DAY", "uuid()",
         "'00000000-0000-0000-0000-000000000000'::UUID", "170141183460469231731687303715884105727::HUGEINT",
         "(-170141183460469231731687303715884105727)::HUGEINT", "340282366920938463463374607431768211455::UHUGEINT",
         "'101'::BIT", "(10::BIGNUM) ^ 300", "'infinity'::TIMESTAMP", "'-infinity'::TIMESTAMP", "'infinity'::DATE",
         "'-infinity'::DATE", "'infinity'::TIMESTAMPTZ", "'infinity'::TIMESTAMP_NS", "'infinity'::TIMESTAMP_S",
         "'infinity'::TIMESTAMP_MS", "DATE '294247-01-01'", "DATE '-4712-01-01'", "TIMESTAMP '0001-01-01'",
         "'nan'::DOUBLE", "'inf'::DOUBLE", "-'inf'::FLOAT", "NULL", "[]", "[NULL]", "[1, NULL]",
         "[[1], NULL, []]", "{'a': 1, 'b': [TIMESTAMP 'infinity']}", "MAP {1: 'a', 2: NULL}", "MAP {}",
         "MAP {[1]: {'x': 1}}", "[1, 2]::INT[2]", "union_value(k := 1)", "'a'::ENUM('a', 'b')",
         "chr(0) || chr(27) || '[31m'", "' =1+2'", "chr(10) || '@SUM(1)'", "'\u202e\u2028'", "'-infinity'",
         "range(100000)", "[{'k': MAP {'x': [INTERVAL 1 SECOND]}}]", "'{\"a\": 1}'::JSON", "true", "1::UTINYINT",
         "18446744073709551615::UBIGINT", "-9223372036854775808::BIGINT", "1e308 * 10", "1.5::FLOAT")
_NAMES = ("a", "a", "\"a\"", "\"\x1b[31m\"", "\"=cmd\"", "\" \"", "\"\"\"\"", "\"\u202e\"", "\"NULL\"", "\"x y\"")


def _hard_types(rng, paths) -> str:
    cols = [f"{rng.choice(_HARD)} AS {rng.choice(_NAMES)}" for _ in range(rng.randint(1, 6))]
    base = "SELECT " + ", ".join(cols)
    return rng.choice([base, base + " FROM range(3)", base + " UNION ALL " + base, base + " WHERE false",
                       f"SELECT * FROM ({base}) t, events LIMIT 3", f"SUMMARIZE {base}", f"DESCRIBE {base}",
                       f"SELECT list(x) FROM ({base}) AS t(x)" if len(cols) == 1 else base])


def _allowed(rng, paths) -> str:
    t = _table(rng)
    return rng.choice([f"SELECT * FROM {t} LIMIT 5", f"SELECT count(*) FROM {t}", f"DESCRIBE {t}", f"SUMMARIZE {t}",
                       "SHOW TABLES", f"PRAGMA table_info('{t}')", "PRAGMA show_tables", "PRAGMA version",
                       f"EXPLAIN SELECT * FROM {t}", f"EXPLAIN ANALYZE SELECT count(*) FROM {t}",
                       f"WITH x AS (SELECT * FROM {t}) SELECT count(*) FROM x", "VALUES (1, 'a'), (2, 'b')",
                       f"FROM {t} SELECT *", "SELECT 1", "SELECT current_setting('enable_external_access')",
                       "SELECT * FROM duckdb_settings() WHERE name LIKE '%access%'", "FROM duckdb_tables()",
                       f"SELECT * FROM {t} USING SAMPLE 10%", "SELECT count(*) FROM range(1000000)"])


_SHAPES = {"write": _write, "attach": _attach, "extension": _extension, "settings": _settings,
           "read_file": _read_file, "replacement": _replacement, "ddl": _ddl, "wrapped": _wrapped,
           "comments": _comments, "huge": _huge, "deep": _deep, "hard_types": _hard_types, "allowed": _allowed}
assert set(_SHAPES) == set(SHAPES)
