"""``etscope numerics --export FILE.csv|FILE.parquet``: one row per tensor per run (the statistics,
or with --reference the comparison), from the command's plain-data result. An LLM comparison's rows
carry their decode ``step``, token ``position`` and ``layer`` (``analysis.numerics.drift``): the drift
table is the lowest ``snr_db`` and largest ``max_abs_error`` per (layer, run)."""
from __future__ import annotations

import pyarrow as pa

from etscope.render.export import write_table

_ID = ("run", "instruction", "role", "name", "node", "graph_pos", "dtype")


def _shape(v) -> str:
    return "x".join(map(str, v)) if v else "scalar"


def stats_table(d: dict) -> pa.Table:
    cols = [*_ID, "numel", "nan", "inf", "min", "max", "mean", "std", "at_limits_share"]
    rows = [{**{k: t[k] for k in cols}, "shape": _shape(t["shape"]), "flags": "; ".join(t["flags"])}
            for t in d["tensors"]]
    return _table(rows, [*cols, "shape", "flags"])


def compare_table(d: dict) -> pa.Table:
    rows = []
    for m, r in ((m, r) for m in d.get("methods") or [d] for r in m["runs"]):
        for t in r["tensors"]:
            c, ref = t["candidate"], t["reference"]
            rows.append({"method": m.get("method"), "run": r["run"], "phase": r.get("phase"),
                         "step": r.get("step"), "position": r.get("position"), "layer": t.get("layer"),
                         "reference_run": r.get("reference_run"), "name": t["name"], "role": t["role"],
                         "candidate_instruction": c["instruction"], "candidate_node": c["node"],
                         "candidate_dtype": c["dtype"], "candidate_shape": _shape(c["shape"]),
                         "reference_instruction": ref["instruction"], "reference_node": ref["node"],
                         "reference_dtype": ref["dtype"], "reference_shape": _shape(ref["shape"]),
                         "graph_pos": ref["graph_pos"], "compared": t["compared"], "equal": t["equal"],
                         "cosine": t["cosine"], "snr_db": t["snr_db"], "mse": t["mse"],
                         "max_abs_error": t["max_abs_error"], "relative_error": t["relative_error"],
                         "diverged": t["diverged"], "first_divergence": t["name"] == r["first_divergence"] and t["diverged"],
                         "note": t["note"], "matched_by": t.get("matched_by")})
    names = ["method", "run", "phase", "step", "position", "layer", "reference_run", "name", "role", "candidate_instruction", "candidate_node", "candidate_dtype", "candidate_shape",
             "reference_instruction", "reference_node", "reference_dtype", "reference_shape", "graph_pos", "compared",
             "equal", "cosine", "snr_db", "mse", "max_abs_error", "relative_error", "diverged", "first_divergence",
             "note", "matched_by"]
    return _table(rows, names)


_FLOATS = {"min", "max", "mean", "std", "at_limits_share", "cosine", "snr_db", "mse", "max_abs_error",
           "relative_error"}


_TYPED = {"step": pa.int64(), "position": pa.int64(), "layer": pa.string()}


def _table(rows: list[dict], names: list[str]) -> pa.Table:
    arrays = []
    for n in names:
        vals = [r[n] for r in rows]
        typ = pa.float64() if n in _FLOATS else _TYPED.get(n)
        arrays.append(pa.array(vals, type=typ) if typ is not None else pa.array(vals))
    return pa.table(arrays, names=names)


def write(d: dict, path: str, fmt: str) -> None:
    write_table(compare_table(d) if "match_by" in d or "methods" in d else stats_table(d), path, fmt)
