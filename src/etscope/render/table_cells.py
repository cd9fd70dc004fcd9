"""Cells of an Arrow table written as text (CSV, JSON), by ``export`` and ``sql``: dictionary
columns decoded to plain strings, and CSV cells that a spreadsheet would run as formulas quoted."""
from __future__ import annotations

import pyarrow as pa


def plain_strings(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded to plain strings (for CSV / JSON)."""
    cols = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)


# A cell a spreadsheet would run: a formula character after any leading blanks or controls (Excel
# and LibreOffice skip a leading space, tab or line break), or a leading tab / CR on its own.
FORMULA_START = r"^(?:[\t\r]|[\s\p{Z}\x00-\x1f\x7f]*[=+\-@])"


def no_formulas(table: pa.Table) -> pa.Table:
    """CSV cells from input strings that a spreadsheet would run as formulas (``FORMULA_START``):
    prefix them with a quote. Numbers are typed columns and are left alone."""
    import pyarrow.compute as pc

    cols = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            risky = pc.match_substring_regex(col, FORMULA_START)
            quote, empty = pa.scalar("'", col.type), pa.scalar("", col.type)   # large_string too
            col = pc.if_else(risky, pc.binary_join_element_wise(quote, col, empty), col)
        cols.append(col)
    return pa.table(cols, names=table.column_names)
