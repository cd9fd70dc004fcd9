"""``etscope numerics --export FILE.csv|FILE.parquet``: one row per tensor per run (the statistics,
or with --reference the comparison), from the command's typed result. An LLM comparison's rows
carry their decode ``step``, token ``position`` and ``layer`` (``analysis.numerics.drift``): the drift
table is the lowest ``snr_db`` and largest ``max_abs_error`` per (layer, run)."""
from __future__ import annotations

import pyarrow as pa

from etscope.analysis.numerics.compare import Comparison, MethodComparisons
from etscope.analysis.numerics.tensors import NumericsResult
from etscope.render.export import write_table



def _shape(v) -> str:
    return "x".join(map(str, v)) if v else "scalar"


_STATS = ["run", "instruction", "role", "name", "node", "graph_pos", "dtype", "numel", "nan", "inf", "min", "max",
          "mean", "std", "at_limits_share", "shape", "flags"]


def stats_table(r: NumericsResult) -> pa.Table:
    rows = []
    for row in r.rows:
        t, s = row.id, row.stats
        rows.append((t.run, t.instruction, t.role, t.name, t.node, t.graph_pos, t.dtype, s.numel, s.nan, s.inf, s.min,
                     s.max, s.mean, s.std, s.at_limits, _shape(t.shape), "; ".join(row.flags)))
    return _table(rows, _STATS)


_COMPARE = ["method", "run", "phase", "step", "position", "layer", "reference_run", "name", "role",
            "candidate_instruction", "candidate_node", "candidate_dtype", "candidate_shape", "reference_instruction",
            "reference_node", "reference_dtype", "reference_shape", "graph_pos", "compared", "equal", "cosine",
            "snr_db", "mse", "max_abs_error", "relative_error", "diverged", "first_divergence", "note", "matched_by"]


def compare_table(c: Comparison | MethodComparisons) -> pa.Table:
    rows = []
    for m in (c.methods if isinstance(c, MethodComparisons) else (c,)):
        for r in m.runs:
            for i, t in enumerate(r.tensors):
                cand, ref, x = t.cand, t.ref, t.metrics
                rows.append((m.method, r.run, r.phase, r.step, r.position, t.layer, r.ref_run, t.name, t.role,
                             cand.instruction, cand.node, cand.dtype, _shape(cand.shape), ref.instruction, ref.node,
                             ref.dtype, _shape(ref.shape), ref.graph_pos, t.compared, x and x.equal, x and x.cosine,
                             x and x.snr_db, x and x.mse, x and x.max_abs, x and x.rel_err, t.diverged,
                             i == r.first_divergence, t.note, t.matched_by))
    return _table(rows, _COMPARE)


_FLOATS = {"min", "max", "mean", "std", "at_limits_share", "cosine", "snr_db", "mse", "max_abs_error",
           "relative_error"}
_TYPED = {"step": pa.int64(), "position": pa.int64(), "layer": pa.string()}


def _table(rows: list[tuple], names: list[str]) -> pa.Table:
    arrays = []
    for k, n in enumerate(names):
        vals = [r[k] for r in rows]
        typ = pa.float64() if n in _FLOATS else _TYPED.get(n)
        arrays.append(pa.array(vals, type=typ) if typ is not None else pa.array(vals))
    return pa.table(arrays, names=names)


def write(result: NumericsResult | Comparison | MethodComparisons, path: str, fmt: str) -> None:
    write_table(stats_table(result) if isinstance(result, NumericsResult) else compare_table(result), path, fmt)
