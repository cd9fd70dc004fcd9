"""What the report's numerics section shows (``etscope report --debug-buffer [--reference]``).

One typed result per report: the statistics of the logged tensors, or (with a reference) their
comparison, plus the per-graph-node SNR the graph view colours by: for each candidate graph node
its lowest SNR over runs (capped at ``SNR_CAP_DB``; an equal tensor counts as the cap) and whether
any run's tensor there crossed a threshold. Renderers only format this.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from etscope.analysis.numerics.tensors import NumericsResult, numerics
from etscope.analysis.numerics.compare import SNR_CAP_DB, Comparison, compare
from etscope.analysis.numerics.runs import reference_of
from etscope.formats.debug_buffer import DebugBuffer
from etscope.profile import Profile


@dataclass
class NumericsView:
    stats: NumericsResult | None = None          # without a reference
    comparison: Comparison | None = None         # with a reference
    node_snr: dict[str, float] = field(default_factory=dict)      # graph node -> lowest SNR (dB, capped)
    node_diverged: dict[str, bool] = field(default_factory=dict)  # graph node -> crossed a threshold in a run


def node_snr(c: Comparison) -> tuple[dict[str, float], dict[str, bool]]:
    """Lowest capped SNR and divergence per candidate graph node over every run; a tensor whose
    metrics are NaN (non-finite values) counts as -inf dB (it diverged)."""
    snr: dict[str, float] = {}
    div: dict[str, bool] = {}
    for rc in c.runs:
        for t in rc.tensors:
            node = t.cand.node
            if node is None or t.metrics is None:
                continue
            s = -math.inf if t.metrics.nonfinite else min(t.metrics.snr_db, SNR_CAP_DB)
            snr[node] = min(snr.get(node, math.inf), s)
            div[node] = div.get(node, False) or t.diverged
    return snr, div


def numerics_view(p: Profile, buf: DebugBuffer, ref: Profile | None = None, ref_buf: DebugBuffer | None = None,
                  thresholds: dict[str, float] | None = None) -> NumericsView:
    if ref is None:
        return NumericsView(stats=numerics(p, buf))
    c = compare(p, buf, reference_of(ref, p.method, strict=False), ref_buf, thresholds)   # the report's method
    snr, div = node_snr(c)
    return NumericsView(comparison=c, node_snr=snr, node_diverged=div)
