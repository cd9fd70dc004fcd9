"""The report's numerics section data: ``analysis.numerics.view.NumericsView`` formatted for the
page (numbers rounded, tensors cut to ``MAX_TENSORS`` per run); drawn by assets/numerics.js."""
from __future__ import annotations

import math

from etscope.analysis.numerics.tensors import numerics_dict
from etscope.analysis.numerics.compare import comparison_dict
from etscope.analysis.numerics.view import NumericsView

MAX_TENSORS = 5000

_COMPARED = ("name", "role", "matched_by", "compared", "note", "numel", "equal", "cosine", "snr_db", "mse", "max_abs_error",
             "relative_error", "nonfinite", "diverged")
_STATS = ("run", "name", "role", "node", "dtype", "shape", "numel", "min", "max", "mean", "std", "nan", "inf",
          "at_limits_share", "flags")


def _r(x, nd: int = 6):
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else float(f"{x:.{nd}g}")
    return x


def numerics_data(v: NumericsView | None) -> dict | None:
    if v is None:
        return None
    if v.comparison is None:
        d = numerics_dict(v.stats)
        rows = [{k: _r(t[k]) for k in _STATS} for t in d["tensors"][:MAX_TENSORS]]
        return {"kind": "stats", "method": d["method"], "runs": d["runs"], "tensors": rows,
                "total_tensors": len(d["tensors"]), "flagged": d["flagged"],
                "saturation_share_flagged_above": d["saturation_share_flagged_above"], "notes": d["notes"]}
    d = comparison_dict(v.comparison)
    runs = []
    for r in d["runs"]:
        ts = [dict({k: _r(t[k]) for k in _COMPARED}, node=t["candidate"]["node"],
                   dtype=t["candidate"]["dtype"], ref_dtype=t["reference"]["dtype"], shape=t["candidate"]["shape"])
              for t in r["tensors"][:MAX_TENSORS]]
        drop = r["largest_drop"]
        runs.append({"run": r["run"], "phase": r["phase"], "reference_run": r["reference_run"], "tensors": ts, "total_tensors": len(r["tensors"]),
                     "first_divergence": r["first_divergence"],
                     "largest_drop": dict(drop, snr_drop_db=_r(drop["snr_drop_db"])) if drop else None})
    return {"kind": "compare", "thresholds": d["thresholds"], "snr_cap_db": d["snr_cap_db_for_drops"],
            "match_by": d["match_by"], "method": d["method"], "runs_paired_by": d["runs_paired_by"], "candidate_runs": d["candidate_runs"], "reference_runs": d["reference_runs"],
            "first_divergence": d["first_divergence"], "runs": runs,
            "unmatched_candidate": d["unmatched_candidate"], "unmatched_reference": d["unmatched_reference"],
            "notes": d["notes"], "coverage": d["coverage"], "drift": _drift(d.get("drift")),
            # graph view colouring: -inf dB (non-finite values) written as null, with diverged true
            "node_snr": {n: _r(s, 4) for n, s in v.node_snr.items()}, "node_diverged": dict(v.node_diverged)}


def _drift(dr: dict | None) -> dict | None:
    """The drift heatmap's data (layers x steps, ``analysis.numerics.drift``), numbers rounded."""
    if dr is None:
        return None

    def cell(c):
        return None if c is None else dict(c, snr_db=_r(c["snr_db"], 4), max_abs_error=_r(c["max_abs_error"], 4))

    return dict(dr, cells=[[cell(c) for c in row] for row in dr["cells"]],
                first_divergence=(dict(dr["first_divergence"], snr_db=_r(dr["first_divergence"]["snr_db"], 4),
                                       max_abs_error=_r(dr["first_divergence"]["max_abs_error"], 4))
                                  if dr["first_divergence"] else None))
