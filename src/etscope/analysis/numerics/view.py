"""What the report's numerics section shows (``etscope report --debug-buffer [--reference]``).

One typed result per report: the statistics of the logged tensors, or (with a reference) their
comparison, plus the per-graph-node SNR the graph view colours by: for each candidate graph node
its lowest SNR over runs (capped at ``SNR_CAP_DB``; an equal tensor counts as the cap) and whether
any run's tensor there crossed a threshold. Renderers only format this.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from etscope.analysis.numerics.tensors import NumericsResult, numerics
from etscope.analysis.numerics.compare import SNR_CAP_DB, Comparison, compare
from etscope.analysis.numerics.runs import reference_of
from etscope.formats.debug_buffer import DebugBuffer
from etscope.profile import Profile


@dataclass(frozen=True)
class NodeSnr:
    """A candidate graph node's lowest SNR over runs and whether a tensor there diverged."""

    node: str
    snr_db: float               # dB, capped at SNR_CAP_DB; -inf: non-finite values
    diverged: bool              # crossed a threshold in some run


@dataclass(frozen=True)
class NumericsView:
    stats: NumericsResult | None = None          # without a reference
    comparison: Comparison | None = None         # with a reference
    nodes: tuple[NodeSnr, ...] = ()              # per candidate graph node (first seen first), with a reference


def node_snr(c: Comparison) -> tuple[NodeSnr, ...]:
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
    return tuple(NodeSnr(n, s, div[n]) for n, s in snr.items())


def numerics_view(p: Profile, buf: DebugBuffer, ref: Profile | None = None, ref_buf: DebugBuffer | None = None,
                  thresholds: dict[str, float] | None = None) -> NumericsView:
    if ref is None:
        return NumericsView(stats=numerics(p, buf))
    c = compare(p, buf, reference_of(ref, p.method, strict=False), ref_buf, thresholds)   # the report's method
    return NumericsView(comparison=c, nodes=node_snr(c))
