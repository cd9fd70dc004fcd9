"""The report's numerics section data: ``analysis.numerics.view.NumericsView`` formatted for the
page (numbers rounded, tensors cut to ``MAX_TENSORS`` per run); drawn by assets/numerics.js, which
formats it: the first divergence and the largest drop come as tensor indices, coverage with its
loggable node count, so the page locates and divides nothing itself."""
from __future__ import annotations

import math

from etscope.analysis.numerics.compare import ComparedTensor, RunComparison
from etscope.analysis.numerics.drift import Drift, DriftCell
from etscope.analysis.numerics.tensors import NumericsResult, TensorRow
from etscope.analysis.numerics.view import NumericsView
from etscope.render.json import to_jsonable

MAX_TENSORS = 5000


def _r(x, nd: int = 6):
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else float(f"{x:.{nd}g}")
    return x


def numerics_data(v: NumericsView | None) -> dict | None:
    if v is None:
        return None
    if v.comparison is None:
        return _stats(v.stats)
    c = v.comparison
    return {"kind": "compare", "thresholds": to_jsonable(c.thresholds), "snr_cap_db": c.snr_cap_db,
            "match_by": c.match_by, "method": c.method, "runs_paired_by": c.runs_paired_by,
            "candidate_runs": c.cand_runs, "reference_runs": c.ref_runs,
            "first_divergence": to_jsonable(c.first_divergence), "runs": [_run(r) for r in c.runs],
            "unmatched_candidate": list(c.unmatched_cand), "unmatched_reference": list(c.unmatched_ref),
            "notes": list(c.notes), "coverage": dict(to_jsonable(c.coverage), loggable=c.coverage.loggable),
            "drift": _drift(c.drift),
            # graph view colouring: -inf dB (non-finite values) written as null, with diverged true
            "node_snr": {n.node: _r(n.snr_db, 4) for n in v.nodes},
            "node_diverged": {n.node: n.diverged for n in v.nodes}}


def _stats(r: NumericsResult) -> dict:
    return {"kind": "stats", "method": r.method, "runs": r.runs,
            "tensors": [_stats_row(t) for t in r.rows[:MAX_TENSORS]], "total_tensors": len(r.rows), "flagged": r.flagged,
            "saturation_share_flagged_above": r.saturation_share_flagged_above, "notes": list(r.notes)}


def _stats_row(row: TensorRow) -> dict:
    t, s = row.id, row.stats
    return {"run": t.run, "name": t.name, "role": t.role, "node": t.node, "dtype": t.dtype, "shape": list(t.shape),
            "numel": s.numel, "min": _r(s.min), "max": _r(s.max), "mean": _r(s.mean), "std": _r(s.std), "nan": s.nan,
            "inf": s.inf, "at_limits_share": _r(s.at_limits), "flags": list(row.flags)}


def _run(r: RunComparison) -> dict:
    drop = r.largest_drop
    return {"run": r.run, "phase": r.phase, "reference_run": r.ref_run,
            "tensors": [_tensor(t) for t in r.tensors[:MAX_TENSORS]], "total_tensors": len(r.tensors),
            "first_divergence": r.first_divergence_name, "first_divergence_index": r.first_divergence,
            "largest_drop": ({"from": drop.from_name, "to": drop.to_name, "snr_drop_db": _r(drop.snr_drop_db),
                              "from_index": drop.before, "to_index": drop.after} if drop else None)}


def _tensor(t: ComparedTensor) -> dict:
    m = t.metrics
    return {"name": t.name, "role": t.role, "matched_by": t.matched_by, "compared": t.compared, "note": t.note,
            "numel": m and m.numel, "equal": m and m.equal, "cosine": m and _r(m.cosine), "snr_db": m and _r(m.snr_db),
            "mse": m and _r(m.mse), "max_abs_error": m and _r(m.max_abs), "relative_error": m and _r(m.rel_err),
            "nonfinite": m and m.nonfinite, "diverged": t.diverged, "node": t.cand.node, "dtype": t.cand.dtype,
            "ref_dtype": t.ref.dtype, "shape": list(t.cand.shape)}


def _drift(dr: Drift | None) -> dict | None:
    """The drift heatmap's data (layers x steps, ``analysis.numerics.drift``), numbers rounded."""
    if dr is None:
        return None
    fd = dr.first
    return {"layers": to_jsonable(dr.layers), "steps": to_jsonable(dr.steps),
            "cells": [[_cell(c) for c in row] for row in dr.cells],
            "first_divergence": (dict(to_jsonable(fd), snr_db=_r(fd.snr_db, 4), max_abs_error=_r(fd.max_abs, 4))
                                 if fd else None)}


def _cell(c: DriftCell | None) -> dict | None:
    return None if c is None else dict(to_jsonable(c), snr_db=_r(c.snr_db, 4), max_abs_error=_r(c.max_abs, 4))
