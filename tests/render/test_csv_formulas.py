"""The CSV formula guard (render.table_cells.no_formulas) for every CSV etscope writes: `sql
--format csv`, `export --format csv` (render.export.write_table) and `numerics --export FILE.csv`
(render.numerics_export.write). Spreadsheets skip leading blanks and line breaks before = + - @
(issue 31: the guard looked at the first character only)."""
from __future__ import annotations

import csv

import pyarrow as pa
import pytest

from etscope.render import numerics_export
from etscope.render.export import write_table
from etscope.render.table_cells import no_formulas

RISKY = ["=1+2", " =1+2", "  @SUM(A1)", "\n=1", "\r\n+1", "\t-2+3", "\u00a0=1", "\u3000=1", "\x0b=1", "\x00@x",
         "\t", "\r", "-cmd|' /C calc'!A0"]
HARMLESS = ["a=1", "x @y", "ok", "", " ", "\n", "1-2", "[=1]"]


def test_no_formulas_quotes_a_formula_after_leading_blanks():
    col = no_formulas(pa.table({"c": RISKY + HARMLESS + [None]})).column("c").to_pylist()
    assert col == ["'" + s for s in RISKY] + HARMLESS + [None]


def test_large_strings_too():
    col = no_formulas(pa.table({"c": pa.array([" =1", "a"], pa.large_string())})).column("c").to_pylist()
    assert col == ["' =1", "a"]


def _cells(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return [c for row in csv.reader(f) for c in row]


@pytest.mark.parametrize("cell", [" =1+2", "\n@SUM(1)", "\r\n+1", "  -2+3"])
def test_export_csv_quotes_it(tmp_path, cell):
    path = tmp_path / "ops.csv"
    write_table(pa.table({"name": [cell], "n": [1]}), str(path), "csv")
    assert "'" + cell in _cells(path)


@pytest.mark.parametrize("cell", [" =1+2", "\n@SUM(1)"])
def test_numerics_export_csv_quotes_it(tmp_path, cell):
    from etscope.analysis.numerics.identity import TensorId
    from etscope.analysis.numerics.tensors import NumericsResult, TensorRow, TensorStats

    tid = TensorId(index=0, run=0, instruction=1, role="output", item=0, name=cell, node=" +node", graph_pos=0,
                   dtype="float32", shape=(2, 2), strides=(2, 1))
    stats = TensorStats(numel=4, decoded=True, finite=4, nan=0, inf=0, min=0.0, max=1.0, mean=0.5, std=0.1,
                        at_limits=0.0)
    result = NumericsResult(method=None, runs=1, chunk_elems=1, rows=(TensorRow(id=tid, stats=stats, flags=()),),
                            flagged=0, notes=())
    path = tmp_path / "stats.csv"
    numerics_export.write(result, str(path), "csv")
    cells = _cells(path)
    assert "'" + cell in cells and "' +node" in cells
