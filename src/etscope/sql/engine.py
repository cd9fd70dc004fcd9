"""SQL over Arrow tables with DuckDB, locked down (``sql.guard``): the engine behind ``etscope sql``,
``sql --dataset`` and the notebook's ``p.sql()``. Renderers format its results (``render.sql``)."""
from __future__ import annotations

import pyarrow as pa


class SqlError(Exception):
    """The query was refused (it does more than read; ``sql.guard``) or rejected by DuckDB
    (syntax, unknown column ...). ``str()`` is one line."""


def connect(tables: dict):
    """An in-memory DuckDB connection that can read ``tables`` (name -> pyarrow Table or
    pyarrow.dataset Dataset, registered as views) and nothing else: no files, no network, no
    extensions, no Python variables, settings locked (``sql.guard``)."""
    try:
        import duckdb
    except ImportError as e:  # pragma: no cover - duckdb is a dependency
        raise SqlError("DuckDB is not installed (pip install duckdb)") from e
    from etscope.sql.guard import config, lock

    con = duckdb.connect(database=":memory:", config=config())
    lock(con)
    for name, table in tables.items():
        con.register(name, table)
    return con


def query(tables: dict, sql: str) -> pa.Table:
    """Run ``sql`` over ``tables`` (name -> Arrow table or dataset) and return the result as an
    Arrow table; only statements that read are run (SqlError otherwise)."""
    con = connect(tables)
    try:
        return run(con, sql)
    finally:
        con.close()


# DuckDB types Arrow carries as opaque bytes or without their offset: shown as DuckDB's text.
_AS_TEXT = ("BIT", "BIGNUM", "VARINT", "TIME WITH TIME ZONE")


def run(con, sql: str, params: list | None = None) -> pa.Table:
    """Run ``sql`` (with ``?`` ``params``) on a DuckDB connection; the result as an Arrow table
    (SqlError: one line). A query with a statement that does more than read is refused before
    any of it runs."""
    import duckdb

    from etscope.sql.guard import refusal

    why = refusal(sql)
    if why is not None:
        raise SqlError(why)
    def work() -> pa.Table:
        rel = con.sql(sql, params=params) if params else con.sql(sql)
        if rel is None:  # a statement without a result
            return pa.table({})
        rel = _types_as_text(rel)
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()

    try:
        return _interruptible(con, work)
    except duckdb.Error as e:
        raise SqlError(_one_line(str(e))) from None
    except pa.ArrowException as e:      # a result Arrow cannot carry (e.g. a type nested too deeply)
        raise SqlError("the result cannot be converted to Arrow data: " + _one_line(str(e))) from None


def _interruptible(con, work):
    """``work()`` in a thread, so that Ctrl-C stops the query: DuckDB looks at Python's signals only
    between pipelines (a count over 10^10 rows kept running 25 s after Ctrl-C). On KeyboardInterrupt
    the query is interrupted, then the KeyboardInterrupt goes on (the CLI: one line, exit 130)."""
    import threading

    done: dict = {}
    finished = threading.Event()

    def target():
        try:
            done["result"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            done["error"] = e
        finally:
            finished.set()

    threading.Thread(target=target, name="etscope-sql", daemon=True).start()
    try:
        finished.wait()                  # a lock wait: Ctrl-C interrupts it (Thread.join's does not
    except KeyboardInterrupt:            # survive being interrupted in Python 3.11)
        con.interrupt()
        finished.wait()
        raise
    if "error" in done:
        raise done["error"]
    return done["result"]


def _types_as_text(rel):
    """``rel`` with its BIT, BIGNUM and TIMETZ columns cast to VARCHAR (by position: names may
    repeat), so the result says what DuckDB would print."""
    types = [str(t) for t in rel.types]
    if not any(t in _AS_TEXT for t in types):
        return rel
    cols = []
    for i, (name, t) in enumerate(zip(rel.columns, types), start=1):
        alias = '"' + name.replace('"', '""') + '"'
        cols.append(f"CAST(#{i} AS VARCHAR) AS {alias}" if t in _AS_TEXT else f"#{i} AS {alias}")
    return rel.project(", ".join(cols))


def _one_line(s: str) -> str:
    lines = [ln.strip() for ln in s.strip().splitlines() if ln.strip()]
    # DuckDB adds a caret diagram after "LINE 1: ..."; keep the message and the position line.
    keep = [ln for ln in lines if not set(ln) <= {"^", " "}]
    return " ".join(keep)[:500]
