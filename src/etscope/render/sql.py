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
    import duckdb

    con = connect(tables)
    try:
        rel = con.sql(sql)
        if rel is None:  # a statement without a result (e.g. SET)
            return pa.table({})
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
    except duckdb.Error as e:
        raise SqlError(_one_line(str(e))) from None
    finally:
        con.close()


def _one_line(s: str) -> str:
    lines = [ln.strip() for ln in s.strip().splitlines() if ln.strip()]
    # DuckDB adds a caret diagram after "LINE 1: ..."; keep the message and the position line.
    keep = [ln for ln in lines if not set(ln) <= {"^", " "}]
    return " ".join(keep)[:500]


def format_table(table: pa.Table, max_rows: int | None = 100) -> str:
    """Plain text table (for the terminal): header, rows, and a count line when cut."""
    from etscope.render.safe import clean

    names = table.column_names
    rows = table.slice(0, max_rows).to_pylist() if max_rows is not None else table.to_pylist()

    def cell(v):
        if v is None:
            return "NULL"
        if isinstance(v, float):
            if v != v:
                return "NaN"
            return f"{v:.6g}" if abs(v) < 1e15 else f"{v:.6e}"
        return clean(v, 120)

    body = [[cell(r[n]) for n in names] for r in rows]
    widths = [max([len(clean(n, 120))] + [len(b[i]) for b in body]) for i, n in enumerate(names)]
    num = [all(isinstance(r[n], (int, float)) or r[n] is None for r in rows) for n in names]

    def line(vals):
        return "  ".join(v.rjust(w) if nm else v.ljust(w) for v, w, nm in zip(vals, widths, num)).rstrip()

    out = [line([clean(n, 120) for n in names]), line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    if max_rows is not None and table.num_rows > max_rows:
        out.append(f"({table.num_rows} rows, first {max_rows} shown; --limit 0 shows all)")
    else:
        out.append(f"({table.num_rows} row{'s' if table.num_rows != 1 else ''})")
    return "\n".join(out)
