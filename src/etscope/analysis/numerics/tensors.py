"""Numerics of the logged intermediate outputs: each tensor's statistics (``etscope numerics``).

Which tensor is what (run, instruction, role, graph node) is ``numerics.identity``. Statistics are
computed chunk by chunk (``CHUNK_ELEMS`` elements at a time, float64), so memory stays bounded
whatever the tensor sizes. min/max/mean/std are over the finite values (NaN and Inf are counted
apart); ``at_limits`` is the share of values equal to the integer dtype's min or max (saturation of
quantized tensors).

The result (``NumericsResult``, schema ``etscope.numerics/1``) is a tree of frozen dataclasses the
renderers read; ``render.json`` writes it field by field: one entry per tensor per execute run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from etscope.analysis.numerics.identity import TensorId, tensor_ids
from etscope.analysis.numerics.sums import Scale
from etscope.formats.debug_buffer import BFLOAT16, DebugBuffer, chunks, decodable, region_key
from etscope.profile import PhaseSelection, Profile, event_runs

CHUNK_ELEMS = 1 << 20      # elements per chunk: ~8 MB of float64 per temporary
SATURATION_SHARE = 0.01    # flag a quantized tensor when more than 1% of its values sit at a limit
SCHEMA = "etscope.numerics/1"


@dataclass(frozen=True)
class TensorStats:
    numel: int
    decoded: bool               # False: a dtype numpy cannot hold (quantized/float8): only numel
    finite: int
    nan: int
    inf: int
    min: float | None
    max: float | None
    mean: float | None
    std: float | None           # population std of the finite values
    # share of values at the integer dtype's min or max (None: a float dtype)
    at_limits: float | None = field(metadata={"json": "at_limits_share"})


@dataclass(frozen=True)
class TensorRow:
    """One tensor of one run: what it is, its statistics and what is wrong with it (one JSON object)."""

    id: TensorId = field(metadata={"inline": TensorId})
    stats: TensorStats = field(metadata={"inline": TensorStats})
    flags: tuple[str, ...]      # NaN x n, Inf x n, share at the int limits above SATURATION_SHARE


@dataclass(frozen=True, kw_only=True)
class NumericsResult:
    """``etscope numerics`` without a reference: statistics over the finite values, NaN/Inf apart."""

    schema: str = SCHEMA
    method: str | None
    runs: int
    chunk_elems: int = field(metadata={"json": "chunk_elements"})
    saturation_share_flagged_above: float = SATURATION_SHARE
    rows: tuple[TensorRow, ...] = field(metadata={"json": "tensors"})    # run, then graph order
    flagged: int                # rows with a flag
    notes: tuple[str, ...]
    phase: PhaseSelection | None = field(default=None, metadata={"omit_empty": True})   # --phase: whose runs


def as_float(x: np.ndarray, scalar_type: int) -> np.ndarray:
    """A chunk of values as float64 (bfloat16: its raw 16 bits widened to float32 first)."""
    if scalar_type == BFLOAT16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def tensor_stats(buf: DebugBuffer, p: Profile, tid: TensorId, chunk: int = CHUNK_ELEMS) -> TensorStats:
    t = p.etdump.tensors
    st = int(t.columns["scalar_type"][tid.index])
    numel = int(np.prod(tid.shape, dtype=object)) if tid.shape else 1
    if not decodable(st):
        return TensorStats(numel=numel, decoded=False, finite=0, nan=0, inf=0, min=None, max=None, mean=None,
                           std=None, at_limits=None)
    view = buf.array(t, tid.index)
    is_int = view.dtype.kind in "iub" and st != BFLOAT16
    lim = (np.iinfo(view.dtype).min, np.iinfo(view.dtype).max) if view.dtype.kind in "iu" and st != BFLOAT16 else None
    n = nan = inf = limits = 0
    unit = Scale()          # values summed in a power-of-two unit: overflow-free (numerics.sums)
    mean = m2 = 0.0
    lo, hi = np.inf, -np.inf
    for c in chunks(view, chunk):
        if lim is not None:
            limits += int(np.count_nonzero((c == lim[0]) | (c == lim[1])))
        x = as_float(c, st)
        if not is_int:
            bad_nan = np.isnan(x)
            bad_inf = np.isinf(x)
            nan += int(bad_nan.sum())
            inf += int(bad_inf.sum())
            if nan or inf:
                x = x[~(bad_nan | bad_inf)]
        if x.size == 0:
            continue
        lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
        f = unit.fit(max(abs(lo), abs(hi)))
        mean, m2 = mean * f, m2 * f * f
        if unit.unit != 1.0:
            x = x * unit.inverse
        # Chan et al.'s pairwise combination of (count, mean, M2): exact enough and chunk-size free
        cm = float(x.mean())
        cm2 = float(np.square(x - cm).sum())
        tot = n + x.size
        delta = cm - mean
        mean += delta * x.size / tot
        m2 += cm2 + delta * delta * n * x.size / tot
        n = tot
        buf.release(c)
    buf.release(buf.memory(t, tid.index))
    return TensorStats(numel=numel, decoded=True, finite=n, nan=nan, inf=inf, min=lo if n else None, max=hi if n else None,
                       mean=mean * unit.unit if n else None, std=float(np.sqrt(m2 / n)) * unit.unit if n else None,
                       at_limits=(limits / numel if numel else 0.0) if lim is not None else None)


def flags_of(tid: TensorId, s: TensorStats) -> tuple[str, ...]:
    out = []
    if s.nan:
        out.append(f"NaN x{s.nan}")
    if s.inf:
        out.append(f"Inf x{s.inf}")
    if s.at_limits is not None and tid.dtype in ("int8", "uint8", "int16", "uint16") and s.at_limits > SATURATION_SHARE:
        out.append(f"{100 * s.at_limits:.1f}% at {tid.dtype} limits")
    return tuple(out)


def numerics(p: Profile, buf: DebugBuffer, chunk: int = CHUNK_ELEMS, taps: dict | None = None) -> NumericsResult:
    """Statistics of every tensor of the profile's execute runs (the buffer is checked first);
    ``taps``: the intermediate-output tap sidecar (``formats.taps``). The result carries the phase
    the profile's runs are (``--phase``), if one."""
    ids, notes = tensor_ids(p, taps=taps)
    reduced = {t.tap.reducer for t in ids if t.tap is not None and not t.tap.full_tensor}
    if reduced:
        notes.append("taps reduced on the device (" + ", ".join(sorted(reduced)) + "): their values are the reducer's "
                     "fields (see the sidecar), the statistics here are over those fields")
    if p.etdump.tensors is not None:
        check_buffer(p, buf)
    rows = []
    done: dict[tuple, TensorStats] = {}     # one decode per distinct region (check bounds their bytes)
    for tid in sorted(ids, key=lambda x: (x.run, x.order, x.role)):
        key = region_key(p.etdump.tensors, tid.index)
        s = done.get(key)
        if s is None:
            s = done[key] = tensor_stats(buf, p, tid, chunk)
        rows.append(TensorRow(id=tid, stats=s, flags=flags_of(tid, s)))
    if p.etrecord is None and ids:
        notes.append("no ETRecord: tensors are named by instruction, not graph node")
    return NumericsResult(method=p.method, runs=p.n_runs, chunk_elems=chunk, rows=tuple(rows),
                          flagged=sum(1 for r in rows if r.flags), notes=tuple(notes), phase=p.phase)


def check_buffer(p: Profile, buf: DebugBuffer) -> None:
    """Every tensor checked against the buffer before any value is read (one line naming it)."""
    data = p.etdump
    ev = data.events

    def where(i: int) -> str:
        e = int(data.tensors.columns["event"][i])
        return f"tensor {i} (RunData {int(event_runs(p, np.array([e]))[0])}, instruction {int(ev['instruction_id'][e])})"
    buf.check(data.tensors, where)

