"""QNN partitions of a QNN profile CSV / viewer text / viewer JSON as :class:`QnnSeries`."""
from __future__ import annotations

import numpy as np

from etscope.analysis.qnn.model import QnnSeries, root_key


def series_from_qnn_profile(qp) -> list[QnnSeries]:
    """From a QNN profile CSV / viewer text / viewer JSON (etscope.formats.qnn_csv.QnnProfile)."""
    blocks = [b for b in qp.blocks if b.kind == "execute"]
    by_graph: dict[int, list] = {}
    for b in blocks:
        by_graph.setdefault(b.graph_index if b.graph_index is not None else 0, []).append(b)
    graphs = sorted(by_graph)
    out = []
    for g in graphs:
        gb = by_graph[g]
        n = len(gb)
        roots: dict[tuple[str, str], np.ndarray] = {}
        row: dict[str, int] = {}          # node name -> row, in order of first appearance (a dict:
        for b in gb:                      # a list membership test was names x names)
            for nm in b.node_names:
                row.setdefault(nm, len(row))
        names = list(row)
        mat = np.full((len(names), n), np.nan)
        for j, b in enumerate(gb):
            for name, (value, unit) in b.roots.items():
                key = root_key(name, unit)
                roots.setdefault(key, np.full(n, np.nan))[j] = value
            for nm, cyc in zip(b.node_names, b.node_cycles):
                mat[row[nm], j] = cyc
        notes = []
        if getattr(qp, "graph_split", None) == "execute order":
            notes.append(f"graph told apart by execute order only (block i -> graph i mod {len(graphs)}; "
                         "basic level has no per-op names and the file names no graph)")
        out.append(QnnSeries(key=f"graph {g}", instruction_id=None, runs=np.arange(n), roots=roots,
                             node_names=names, node_values=mat, node_unit=["cycles"] * len(names),
                             source=qp.source, notes=notes))
    return out

