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


def no_formulas(table: pa.Table) -> pa.Table:
    """CSV cells from input strings starting with = + - @ (or tab / CR) would run as formulas in a
    spreadsheet: prefix them with a quote. Numbers are typed columns and are left alone."""
    import pyarrow.compute as pc

    cols = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            risky = pc.match_substring_regex(col, r"^[=+\-@\t\r]")
            col = pc.if_else(risky, pc.binary_join_element_wise(pa.scalar("'"), col, ""), col)
        cols.append(col)
    return pa.table(cols, names=table.column_names)
