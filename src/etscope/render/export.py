"""Write the profile's tables (events, ops, runs; built by ``analysis.views.tables``) as CSV / Parquet /
JSON files, or the Model Explorer overlay. Only formatting happens here.

``model-explorer`` writes Google Model Explorer node data (``render.model_explorer``).
"""
from __future__ import annotations

import json
import os

import pyarrow as pa

from etscope.analysis.qnn.tables import QNN_COLUMNS
from etscope.analysis.results import Results
from etscope.paths import atomic_paths, check_output_dir
from etscope.render.model_explorer import MODEL_EXPLORER_FILES, node_data, placement_color  # noqa: F401
from etscope.render.table_cells import no_formulas, plain_strings


# ---- writing -----------------------------------------------------------------------------------------
def write_table(table: pa.Table, path: str, fmt: str) -> None:
    """Write one table to ``path`` as it is (export() makes the files appear together)."""
    if fmt == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(no_formulas(plain_strings(table)), path)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path, compression="zstd")
    elif fmt == "json":
        from etscope.render.json import dumps

        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(dumps(plain_strings(table).to_pylist(), indent=None) + "\n")
    else:  # pragma: no cover - guarded by the CLI
        raise ValueError(f"unknown format {fmt!r}")


TABLE_NAMES = ("events", "ops", "runs", *QNN_COLUMNS)


def export_names(fmt: str) -> list[str]:
    """The files ``export`` may write into its folder (checked against the inputs before any work)."""
    if fmt == "model-explorer":
        return list(MODEL_EXPLORER_FILES)
    return [f"{name}.{fmt}" for name in TABLE_NAMES]


def export(results: Results, fmt: str, out_dir: str | os.PathLike, inputs=None) -> list[str]:
    """Write the tables (or the Model Explorer overlay) of analysed ``results`` into ``out_dir``;
    return the paths written. The files appear together once all are written (an interrupted export
    leaves none). The folder may be created, never its parents; no file written may be an input
    (``inputs``; by default the profile's own files)."""
    out_dir = os.fspath(out_dir)
    if inputs is None:
        inputs = list(results.profile.sources.values()) if results.profile is not None else []
    if fmt == "model-explorer":
        docs = node_data(results.nodes)
        written = [os.path.join(out_dir, name) for name in docs]
        outs = check_output_dir(out_dir, list(docs), inputs)
        with atomic_paths(outs, make_folder=True) as tmps:
            for tmp, data in zip(tmps, docs.values()):
                with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                    f.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        return written
    ext = {"csv": "csv", "parquet": "parquet", "json": "json"}[fmt]
    named = results.tables.named()
    written = [os.path.join(out_dir, f"{name}.{ext}") for name in named]
    outs = check_output_dir(out_dir, [os.path.basename(w) for w in written], inputs)
    with atomic_paths(outs, make_folder=True) as tmps:
        for tmp, table in zip(tmps, named.values()):
            write_table(table, tmp, fmt)
    return written
