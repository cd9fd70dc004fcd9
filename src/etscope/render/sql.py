"""SQL over the profile's tables with DuckDB: ``events``, ``ops`` and ``runs`` (built by
``analysis.tables``; columns in its COLUMNS)."""
from __future__ import annotations

import pyarrow as pa


class SqlError(Exception):
    """The query was rejected by DuckDB (syntax, unknown column ...). ``str()`` is one line."""


def connect(tables: dict[str, pa.Table]):
    """An in-memory DuckDB connection with each table registered as a view of the Arrow data."""
    try:
        import duckdb
    except ImportError as e:  # pragma: no cover - duckdb is a dependency
        raise SqlError("DuckDB is not installed (pip install duckdb)") from e
    con = duckdb.connect(database=":memory:")
    for name, table in tables.items():
        con.register(name, table)
    return con


def query(tables: dict[str, pa.Table], sql: str) -> pa.Table:
    """Run ``sql`` over ``tables`` (name -> Arrow table) and return the result as an Arrow table."""
    con = connect(tables)
    try:
        return run(con, sql)
    finally:
        con.close()


def run(con, sql: str, params: list | None = None) -> pa.Table:
    """Run ``sql`` (with ``?`` ``params``) on a DuckDB connection; the result as an Arrow table
    (SqlError: one line)."""
    import duckdb

    try:
        rel = con.sql(sql, params=params) if params else con.sql(sql)
        if rel is None:  # a statement without a result (e.g. SET)
            return pa.table({})
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
    except duckdb.Error as e:
        raise SqlError(_one_line(str(e))) from None


def _one_line(s: str) -> str:
    lines = [ln.strip() for ln in s.strip().splitlines() if ln.strip()]
    # DuckDB adds a caret diagram after "LINE 1: ..."; keep the message and the position line.
    keep = [ln for ln in lines if not set(ln) <= {"^", " "}]
    return " ".join(keep)[:500]


SQL_SHOWN = 100     # rows on a terminal without --limit; piped output lists all


def sql_table(table: pa.Table, max_rows: int | None) -> "Table":
    """The result as a text table (render.screen): numbers right-aligned, a count line as caption."""
    from etscope.render.text import Table, shown

    names = table.column_names
    rows = table.slice(0, max_rows).to_pylist() if max_rows is not None else table.to_pylist()

    def cell(v):
        if v is None:
            return "NULL"
        if isinstance(v, float):
            if v != v:
                return "NaN"
            return f"{v:.6g}" if abs(v) < 1e15 else f"{v:.6e}"
        return shown(v)

    t = Table()
    for n in names:
        numeric = all(isinstance(r[n], (int, float)) or r[n] is None for r in rows)
        t.add_column(shown(n), justify="right" if numeric else "left")
    for r in rows:
        t.add_row(*(cell(r[n]) for n in names))
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
