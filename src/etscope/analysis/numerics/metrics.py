"""Metrics of one candidate tensor against its reference (``numerics.compare``).

In float64, chunk by chunk (bounded memory): cosine similarity, SNR in dB (10 log10 of reference
power over error power), MSE, max abs error, relative error (L2 norm of the error over the
reference's). Two tensors of different shapes are never compared, unless one is the other's NHWC
layout (undone, said in the note); an integer tensor facing a float one is dequantized with its
node's per-tensor scale and zero point (``numerics.quant``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from etscope.analysis.numerics.identity import TensorId
from etscope.analysis.numerics.quant import Quantization, QuantParams
from etscope.analysis.numerics.sums import PairSums
from etscope.analysis.numerics.tensors import CHUNK_ELEMS, as_float
from etscope.formats.debug_buffer import DebugBuffer, chunks, decodable
from etscope.profile import Profile

DEFAULT_THRESHOLDS = {"cosine": 0.999, "snr": 30.0}


@dataclass(frozen=True)
class Thresholds:
    """A tensor diverges below either (None: that metric is not tested; NaN/Inf values always are)."""

    cosine: float | None = field(default=DEFAULT_THRESHOLDS["cosine"], metadata={"json": "cosine_below"})
    snr_db: float | None = field(default=DEFAULT_THRESHOLDS["snr"], metadata={"json": "snr_db_below"})

    @classmethod
    def of(cls, given: "dict[str, float] | Thresholds | None") -> "Thresholds":
        """From ``{"cosine": V, "snr": DB}`` (a metric left out: not tested); None: the defaults."""
        if given is None or isinstance(given, Thresholds):
            return given or cls()
        return cls(given.get("cosine"), given.get("snr"))


@dataclass(frozen=True)
class PairMetrics:
    numel: int
    equal: bool           # bit-for-bit equal values
    cosine: float
    snr_db: float
    mse: float
    max_abs: float = field(metadata={"json": "max_abs_error"})
    rel_err: float = field(metadata={"json": "relative_error"})
    nonfinite: int        # elements NaN/Inf on one side only or unequal (metrics are then NaN)


def crosses(m: PairMetrics, thresholds: Thresholds) -> bool:
    """Below the cosine or SNR threshold (NaN/Inf values count as crossing)."""
    if m.nonfinite:
        return True
    return ((thresholds.cosine is not None and m.cosine < thresholds.cosine)
            or (thresholds.snr_db is not None and m.snr_db < thresholds.snr_db))


# Layout changes a backend may log in: NHWC for NCHW (4-D) and NDHWC for NCDHW (5-D). Any other
# axis order is not a layout: two tensors of shapes [1, 4, 6, 16] and [1, 6, 4, 16] are different
# values (issue 32's false divergence), never compared.
_LAYOUTS = {4: ((0, 3, 1, 2), (0, 2, 3, 1)), 5: ((0, 4, 1, 2, 3), (0, 2, 3, 4, 1))}


def _permutation(cand: tuple[int, ...], ref: tuple[int, ...]) -> tuple[int, ...] | None:
    """The layout change (``_LAYOUTS``) taking ``cand``'s shape to ``ref``'s, when exactly one does."""
    perms = [pm for pm in _LAYOUTS.get(len(cand), ()) if len(ref) == len(cand)
             and tuple(cand[i] for i in pm) == tuple(ref)]
    return perms[0] if len(perms) == 1 else None


_INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool", "bits16")


def dequantization(c: TensorId, qc: Quantization, r: TensorId, qr: Quantization):
    """(candidate params, reference params, why not comparable or None): an integer tensor facing a
    float one is dequantized with its node's per-tensor scale/offset (edge graph); two integer
    tensors are dequantized when both have them, else compared as raw integers."""
    ic, ir = c.dtype in _INTS, r.dtype in _INTS
    if not (ic or ir):
        return None, None, None
    got = []
    for t, q, is_int in ((c, qc, ic), (r, qr, ir)):
        if not is_int:
            got.append(None)
            continue
        p = q.of(t.node) if t.node else f"{t.name}: no graph node, scale/offset unknown"
        got.append(p)
    pc_, pr_ = got
    if ic and ir:
        if isinstance(pc_, QuantParams) and isinstance(pr_, QuantParams):
            return pc_, pr_, None
        return None, None, None
    bad = pc_ if ic else pr_
    if isinstance(bad, str):
        return None, None, f"{c.dtype} vs {r.dtype}: {bad}"
    return pc_, pr_, None


def pair_metrics(buf_c: DebugBuffer, pc: Profile, c: TensorId, buf_r: DebugBuffer, pr: Profile, r: TensorId,
                 chunk: int = CHUNK_ELEMS, deq_c: QuantParams | None = None,
                 deq_r: QuantParams | None = None) -> tuple[PairMetrics | None, str | None]:
    """Metrics of candidate ``c`` against reference ``r`` (None and why when not comparable);
    ``deq_*``: dequantize that side first, (q - zero_point) * scale in float64."""
    tc, tr = pc.etdump.tensors, pr.etdump.tensors
    stc, str_ = int(tc.columns["scalar_type"][c.index]), int(tr.columns["scalar_type"][r.index])
    if not (decodable(stc) and decodable(str_)):
        return None, "dtype not decodable"
    vc, vr = buf_c.array(tc, c.index), buf_r.array(tr, r.index)
    notes = [f"{side} dequantized: scale {q.scale:.6g}, zero point {q.zero_point} ({q.node})"
             for side, q in (("candidate", deq_c), ("reference", deq_r)) if q is not None]
    if vc.shape != vr.shape:
        perm = _permutation(vc.shape, vr.shape)
        if perm is None:
            return None, (f"shapes differ: {list(vc.shape)} vs {list(vr.shape)} (no layout change explains it): "
                          "pair refused, not compared")
        vc = vc.transpose(perm)
        notes.append(f"candidate permuted {list(perm)} to the reference's layout")
    note = "; ".join(notes) or None
    n = int(vc.size)
    sums = PairSums()       # overflow-free (numerics.sums)
    bad = agreeing = 0
    equal = True
    for xc, xr in zip(chunks(vc, chunk), chunks(vr, chunk)):
        a, b = as_float(xc, stc), as_float(xr, str_)
        if deq_c is not None:
            a = (a - deq_c.zero_point) * deq_c.scale
        if deq_r is not None:
            b = (b - deq_r.zero_point) * deq_r.scale
        fin = np.isfinite(a) & np.isfinite(b)
        if not fin.all():
            # Non-finite values equal on both sides (the -inf of an attention mask) agree: left out
            # of the sums and counted apart; any other non-finite value makes the metrics NaN.
            same = ~fin & ((a == b) | (np.isnan(a) & np.isnan(b)))
            agreeing += int(np.count_nonzero(same))
            bad += int(fin.size - np.count_nonzero(fin) - np.count_nonzero(same))
            equal = equal and bool(np.array_equal(a, b, equal_nan=True))
            a, b = a[fin], b[fin]
        equal = equal and bool(np.array_equal(a, b))
        sums.add(a, b)
        buf_c.release(xc)
        buf_r.release(xr)
    buf_c.release(buf_c.memory(tc, c.index))
    buf_r.release(buf_r.memory(tr, r.index))
    if agreeing:
        note = "; ".join([*([note] if note else []), f"{agreeing} non-finite value(s) equal on both sides, left out"])
    if bad:
        nan = float("nan")
        return PairMetrics(numel=n, equal=equal, cosine=nan, snr_db=nan, mse=nan, max_abs=nan, rel_err=nan,
                           nonfinite=bad), note
    m = PairMetrics(numel=n, cosine=sums.cosine(), snr_db=sums.snr_db(), mse=sums.mse(n), max_abs=sums.max_abs,
                    rel_err=sums.rel_err(), nonfinite=0, equal=equal)
    past = [k for k, v in (("MSE", m.mse), ("max abs error", m.max_abs), ("relative error", m.rel_err))
            if math.isinf(v)]
    if past:    # finite values whose error exceeds float64: JSON writes inf as null, so say it
        note = "; ".join([*([note] if note else []), ", ".join(past) + " past float64's range (inf)"])
    return m, note
