"""SQL over the profile's tables with DuckDB: ``events``, ``ops`` and ``runs`` (built by
``analysis.views.tables``; columns in its COLUMNS)."""
from __future__ import annotations

import pyarrow as pa


class SqlError(Exception):
    """The query was refused (it does more than read; ``render.sql_guard``) or rejected by DuckDB
    (syntax, unknown column ...). ``str()`` is one line."""


def connect(tables: dict):
    """An in-memory DuckDB connection that can read ``tables`` (name -> pyarrow Table or
    pyarrow.dataset Dataset, registered as views) and nothing else: no files, no network, no
    extensions, no Python variables, settings locked (``render.sql_guard``)."""
    try:
        import duckdb
    except ImportError as e:  # pragma: no cover - duckdb is a dependency
        raise SqlError("DuckDB is not installed (pip install duckdb)") from e
    from etscope.render.sql_guard import config, lock

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

    from etscope.render.sql_guard import refusal

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


SQL_SHOWN = 100     # rows on a terminal without --limit; piped output lists all


def sql_table(table: pa.Table, max_rows: int | None) -> "Table":
    """The result as a text table (render.screen): numbers right-aligned, a count line as caption."""
    from etscope.render.sql_cells import cell_text, column_values
    from etscope.render.text import Table, shown

    shown_part = table.slice(0, max_rows) if max_rows is not None else table
    # by position: a result's column names may repeat (SELECT 1 AS a, 2 AS a)
    columns = [column_values(col) for col in shown_part.columns]

    def cell(v):
        if v is None:
            return "NULL"
        if isinstance(v, float):
            if v != v:
                return "NaN"
            return f"{v:.6g}" if abs(v) < 1e15 else f"{v:.6e}"
        return shown(v if isinstance(v, (int, bool)) else cell_text(v))

    t = Table()
    for n, vals in zip(table.column_names, columns):
        numeric = all(isinstance(v, (int, float)) or v is None for v in vals)
        t.add_column(shown(n), justify="right" if numeric else "left")
    for row in zip(*columns):
        t.add_row(*(cell(v) for v in row))
    if max_rows is not None and table.num_rows > max_rows:
        t.caption = f"({table.num_rows} rows, first {max_rows} shown; --limit 0 shows all)"
    else:
        t.caption = f"({table.num_rows} row{'s' if table.num_rows != 1 else ''})"
    return t


def print_table(table: pa.Table, limit: int | None = None, console=None) -> None:
    """``etscope sql --format table``: ``limit`` rows (0: all; None: all when piped, SQL_SHOWN on a
    terminal), fitted to the width (render.screen)."""
    from etscope.render.text import screen

    out = screen(console)
    if limit is None:
        limit = 0 if out.complete else SQL_SHOWN
    t = sql_table(table, limit or None)
    out.print(t)


def csv_text(table: pa.Table) -> str:
    """``etscope sql --format csv``: every column written (render.sql_cells), formulas quoted."""
    import io

    import pyarrow.csv as pacsv

    from etscope.render.sql_cells import text_table
    from etscope.render.table_cells import no_formulas, plain_strings

    buf = io.BytesIO()
    pacsv.write_csv(no_formulas(text_table(plain_strings(table))), buf)
    return buf.getvalue().decode("utf-8")


def json_text(table: pa.Table) -> str:
    """``etscope sql --format json``: a list of row objects (render.sql_cells' forms)."""
    from etscope.render.json import dumps
    from etscope.render.sql_cells import json_rows

    return dumps(json_rows(table), indent=None)
