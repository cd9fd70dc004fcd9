"""SQL results for people and pipes: a text table, CSV or JSON of what ``etscope.sql.engine`` returns
(over the profile's ``events``, ``ops`` and ``runs`` tables, built by ``analysis.views.tables``)."""
from __future__ import annotations

import pyarrow as pa

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
