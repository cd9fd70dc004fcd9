"""Write the profile's tables (events, ops, runs; built by ``analysis.tables``) as CSV / Parquet /
JSON files, or the Model Explorer overlay. Only formatting happens here.

``model-explorer`` writes Google Model Explorer node data (``GraphNodeData`` JSON: ``results``
keyed by the FX node names of the ETRecord's edge graph) so time and placement can be overlaid on
the graph in Model Explorer.
"""
from __future__ import annotations

import json
import os

import pyarrow as pa

from etscope.analysis.qnn_tables import QNN_COLUMNS
from etscope.analysis.results import Results
from etscope.paths import atomic_paths, check_output_dir
from etscope.render.table_cells import no_formulas, plain_strings

# ---- Model Explorer ---------------------------------------------------------------------------------
PLACEMENT_COLORS = {"QnnBackend": "#2e7d32", "cpu": "#c62828"}
OTHER_DELEGATE_COLOR = "#1565c0"


def placement_color(placement: str | None) -> str:
    if placement is None:
        return "#9e9e9e"
    return PLACEMENT_COLORS.get(placement, OTHER_DELEGATE_COLOR)


def model_explorer(nodes: dict | None) -> dict[str, dict]:
    """Model Explorer node data files: {file name: GraphNodeData dict} from ``analysis.nodes.node_table``
    (``Results.nodes``). Empty without an ETRecord graph (``nodes`` None).

    Keys of ``results`` are the FX node names of the ETRecord's edge graph (Model Explorer's node
    ids for an ExportedProgram). ``time_us``: mean µs per run (CPU kernels measured, QNN ops
    estimated from cycles); ``placement``: the backend as a label with a colour per backend.
    """
    nt = nodes
    if nt is None:
        return {}
    time_results = {}
    placement_results = {}
    for n in nt["nodes"]:
        if n["time_us"] is not None:
            time_results[n["name"]] = {"value": round(float(n["time_us"]), 3)}
        if n["placement"] is not None:
            placement_results[n["name"]] = {"value": n["placement"], "bgColor": placement_color(n["placement"]),
                                            "textColor": "#ffffff"}
    return {
        "node_time_us.json": {
            "results": time_results,
            "gradient": [{"stop": 0, "bgColor": "#fff5f0"}, {"stop": 0.5, "bgColor": "#fb6a4a"},
                         {"stop": 1, "bgColor": "#67000d"}],
        },
        "node_placement.json": {"results": placement_results, "showExpandedSummaryOnGroupNode": True,
                                "showLabelCountColumnsInChildrenStatsTable": True},
    }


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
MODEL_EXPLORER_FILES = ("node_time_us.json", "node_placement.json")


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
        docs = model_explorer(results.nodes)
        written = [os.path.join(out_dir, name) for name in docs]
        outs = check_output_dir(out_dir, list(docs), inputs)
        with atomic_paths(outs, make_folder=True) as tmps:
            for tmp, data in zip(tmps, docs.values()):
                with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                    f.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        return written
    ext = {"csv": "csv", "parquet": "parquet", "json": "json"}[fmt]
    named = results.tables
    written = [os.path.join(out_dir, f"{name}.{ext}") for name in named]
    outs = check_output_dir(out_dir, [os.path.basename(w) for w in written], inputs)
    with atomic_paths(outs, make_folder=True) as tmps:
        for tmp, table in zip(tmps, named.values()):
            write_table(table, tmp, fmt)
    return written
