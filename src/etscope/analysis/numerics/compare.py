"""Compare the intermediate outputs of two runs of a model (candidate vs reference).

Matching (by identity, never by position alone; ``numerics_pairing``): within one program (both
ETRecords hold the same graph) by edge-node name; across programs by the source node each tensor
stands for (``from_node`` provenance, module path + op + order, debug handle), q/dq looked
through, a delegate output as the value leaving its partition; never by edge-node names alone.
Program outputs pair by position, backend-logged tensors (QNN tensor names) by name; without
ETRecords by instruction and output position (valid only for one program run twice: said in the
notes). Two tensors of different shapes are never compared, unless one is the other's NHWC layout
(undone, said in the note). Coverage: the share of the reference's logged nodes paired.

Runs are paired by LLM phase and token position, or in order (``numerics_runs``); an LLM's
comparison carries its drift table: per layer, the error at every step (``numerics_drift``). Metrics per matched tensor, in float64,
chunk by chunk (bounded memory): cosine similarity, SNR in dB (10 log10 of reference power over
error power), MSE, max abs error, relative error (L2 norm of the error over the reference's).
The curve is each run's compared tensors in graph order; the first divergence is the first tensor
crossing a threshold (default cosine < 0.999 or SNR < 30 dB); the largest single-step drop is the
biggest SNR fall between consecutive compared tensors (SNR above ``SNR_CAP_DB`` counted as the cap,
so a step from bit-exact to nearly exact is not infinite).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from etscope.analysis.numerics.tensors import CHUNK_ELEMS, Quantization, QuantParams, TensorId, as_float, check_buffer, tensor_ids
from etscope.analysis.numerics.pairing import BY_TAP_PROVENANCE, COVERAGE_FINDING, LOOKED_THROUGH, Keyed, Identities, handles_agree, hidden_keys, keyed, same_program
from etscope.analysis.numerics.sums import PairSums
from etscope.analysis.numerics.drift import Drift, drift_dict, layer_drift, layer_of
from etscope.analysis.numerics.runs import RunPairing, method_pairs, pair_schedules, run_schedule
from etscope.errors import FormatError
from etscope.formats.debug_buffer import DebugBuffer, chunks, decodable, region_key
from etscope.profile import Profile

DEFAULT_THRESHOLDS = {"cosine": 0.999, "snr": 30.0}
MAX_PAIR_WORK_FACTOR = 4    # values compared over distinct pairs <= 4 x both buffers' bytes + 1 Mi
SNR_CAP_DB = 150.0


@dataclass(frozen=True)
class PairMetrics:
    numel: int
    cosine: float
    snr_db: float
    mse: float
    max_abs: float
    rel_err: float
    nonfinite: int        # elements NaN/Inf on one side only or unequal (metrics are then NaN)
    equal: bool           # bit-for-bit equal values


@dataclass
class ComparedTensor:
    run: int
    name: str
    role: str
    cand: TensorId
    ref: TensorId
    metrics: PairMetrics | None
    note: str | None = None      # why not compared, or a layout permutation applied
    diverged: bool = False
    matched_by: str = ""         # how the two tensors were found to stand for one node (numerics_pairing)
    layer: str | None = None     # the layer it belongs to (numerics_drift), for an LLM's runs paired by phase


@dataclass
class RunComparison:
    run: int
    tensors: list[ComparedTensor]          # graph order
    first_divergence: int | None           # index into tensors
    largest_drop: tuple[int, int, float] | None  # (index before, index after the drop, dB)
    ref_run: int | None = None             # the reference run compared with (LLM: same phase)
    phase: str | None = None               # LLM phase of the run (prefill, decode...), None without
    step: int | None = None                # decode step since its prefill (LLM decode runs)
    position: int | None = None            # token position of a decode run, when known


@dataclass(frozen=True)
class Coverage:
    """How much of the reference was paired (nodes: distinct graph nodes over the compared runs)."""

    ref_nodes: int          # reference nodes logged
    hidden: int             # of those, inside a candidate delegate partition (the backend never logs them)
    paired: int             # of the others, paired
    refused: int            # pairs refused (shapes no layout change explains), over all runs

    @property
    def share(self) -> float | None:
        seen = self.ref_nodes - self.hidden
        return self.paired / seen if seen > 0 else None


_MODE_NAMES = {"instruction": "instruction", "name": "node", "source": "source node"}


@dataclass
class Comparison:
    thresholds: dict[str, float]
    match_by: str
    runs: list[RunComparison]
    cand_runs: int
    ref_runs: int
    unmatched_cand: list[str]
    unmatched_ref: list[str]
    notes: list[str] = field(default_factory=list)
    method: str | None = None
    runs_by_phase: bool = False            # runs paired by LLM phase (numerics_runs.pair_runs)
    coverage: "Coverage | None" = None
    drift: Drift | None = None             # LLM: per layer, the error at every step (numerics_drift)

    @property
    def first_divergence(self) -> tuple[ComparedTensor, list[int]] | None:
        """The earliest tensor (graph order) where any run diverges, and the runs diverging there."""
        best = None
        for rc in self.runs:
            if rc.first_divergence is None:
                continue
            t = rc.tensors[rc.first_divergence]
            if best is None or t.ref.order < best[0].ref.order:
                best = (t, [rc.run])
            elif t.ref.order == best[0].ref.order:
                best[1].append(rc.run)
        return best


# ---- matching -------------------------------------------------------------------------------------
def _graph(p: Profile):
    er = p.etrecord
    return er.graphs.get(p.method or "forward") if er is not None else None


@dataclass(frozen=True)
class Pairing:
    """The pairs and what could not be paired (``match``)."""

    pairs: list[tuple[TensorId, TensorId, str]]      # (candidate, reference, how matched)
    mode: str                                        # "instruction" | "name" | "source"
    unmatched_cand: list[str]
    unmatched_ref: list[str]
    notes: list[str]
    ref_nodes: int = 0          # distinct reference nodes logged in the compared runs
    hidden: int = 0             # of those, inside a candidate partition (never logged by the backend)
    paired_nodes: int = 0       # of the others, paired in some compared run

    @property
    def coverage(self) -> float | None:
        seen = self.ref_nodes - self.hidden
        return self.paired_nodes / seen if seen > 0 else None


def match(pc: Profile, ids_c: list[TensorId], pr: Profile, ids_r: list[TensorId],
          ref_to_cand: dict[int, int] | None = None) -> Pairing:
    """Pairs (candidate, reference, rule) per compared run (``numerics_pairing``); ``ref_to_cand``:
    which candidate run each reference run is compared with (default: the same)."""
    gc, gr = _graph(pc), _graph(pr)
    notes = []
    taps = any(t.tap is not None for t in ids_c) or any(t.tap is not None for t in ids_r)
    if (gc is None and gr is None) or ((gc is None or gr is None) and not taps):
        mode = "instruction"
        notes.append("matched by instruction and output position (an ETRecord on each side matches by graph "
                     "node instead): valid only when both ETDumps come from the same program")
    elif gc is not None and gr is not None and same_program(gc, gr):
        mode = "name"
    else:           # two programs; or taps on a side without an ETRecord (a tapped program has none)
        mode = "source"
        if gc is None or gr is None:
            notes.append(f"the {'candidate' if gc is None else 'reference'} has no ETRecord: only its taps and "
                         "program outputs can be paired")
    use_handles = mode == "source" and gc is not None and gr is not None and handles_agree(gc, gr)
    ic, ir = Identities(gc, mode, use_handles), Identities(gr, mode, use_handles)
    ic.compare_groups(ir)
    if ref_to_cand is None:
        ref_to_cand = {r: r for r in range(pr.n_runs)}
    cand_runs = {c: c for c in ref_to_cand.values()}          # only the candidate runs compared
    kc, kr = keyed(ids_c, ic, cand_runs), keyed(ids_r, ir, ref_to_cand)
    _alias_taps(kc, kr, ir)
    _alias_taps(kr, kc, ic)
    pairs = []
    for k, c in kc.items():
        r = kr.get(k)
        if r is None:
            continue
        how = c.rule if c.rule == r.rule else f"{c.rule} / {r.rule}"
        if c.looked_through or r.looked_through:
            how += LOOKED_THROUGH
        if c.tensor.role == "delegate_output" and mode != "instruction":
            how = "delegate output (value leaving its partition): " + how
        pairs.append((c.tensor, r.tensor, how))
    un_c = _unmatched(kc, kr)
    un_r = _unmatched(kr, kc)
    hidden = hidden_keys(pc, gc, ic, kc) if mode == "source" else set()
    ref_nodes = {k[1:] for k in kr if k[1] != "output"}
    paired = {k[1:] for k in kr if k[1] != "output" and k in kc}
    out = Pairing(pairs, mode, un_c, un_r, notes, len(ref_nodes), len(ref_nodes & hidden), len(paired - hidden))
    if mode == "source" and gc is not None and not ic.keys:
        notes.append("the candidate's edge graph has no node provenance: nothing paired by source node")
    return out


def _reduced_tap_note(tap, c: TensorId, buf_c, pc, r: TensorId, buf_r, pr, chunk: int) -> str:
    """A reduced tap facing a full tensor: STATS fields side by side (``numerics_tapstats``),
    other reducers only named."""
    from etscope.analysis.numerics.tapstats import STATS_FIELDS, compare_fields, reference_stats

    tapped, full, b_t, b_f, p_t, p_f = (c, r, buf_c, buf_r, pc, pr) if c.tap is tap else (r, c, buf_r, buf_c, pr, pc)
    st_t = int(p_t.etdump.tensors.columns["scalar_type"][tapped.index])
    st_f = int(p_f.etdump.tensors.columns["scalar_type"][full.index])
    if tap.reducer_name != "STATS" or tuple(tap.fields) != STATS_FIELDS or tapped.shape != (len(STATS_FIELDS),) \
            or not (decodable(st_t) and decodable(st_f)):
        return f"{tap.reducer_name} tap: statistics reduced on the device, not compared with a tensor"
    ref = reference_stats(b_f.array(p_f.etdump.tensors, full.index), st_f, chunk)
    vals = as_float(np.asarray(b_t.array(p_t.etdump.tensors, tapped.index)), st_t)
    note = compare_fields(vals, tap.fields, ref).note()
    return note if c.tap is tap else note.replace("(tap/reference)", "(candidate tensor/reference tap)")


def _alias_taps(mine: dict, theirs: dict, their_ident) -> None:
    """A tap (keyed by its node name) facing a graph without that tap: re-keyed to the group of the
    other graph whose provenance names the tapped node (``Identities.ep_key``)."""
    for k in [k for k in mine if k[1] == "tap" and k not in theirs]:
        other = their_ident.ep_key(k[2])
        if other is not None and (k[0], *other) not in mine:
            v = mine.pop(k)
            mine[(k[0], *other)] = Keyed(v.tensor, BY_TAP_PROVENANCE, v.looked_through)


def _unmatched(mine: dict, theirs: dict) -> list[str]:
    """Names of tensors with no partner in some compared run (a tensor matched in every run where
    it was logged is not listed), each once, in first-seen order."""
    return list(dict.fromkeys(v.tensor.name for k, v in mine.items() if k not in theirs))


# ---- metrics --------------------------------------------------------------------------------------
# Layout changes a backend may log in: NHWC for NCHW (4-D) and NDHWC for NCDHW (5-D). Any other
# axis order is not a layout: two tensors of shapes [1, 4, 6, 16] and [1, 6, 4, 16] are different
# values (issue 32's false divergence), never compared.
_LAYOUTS = {4: ((0, 3, 1, 2), (0, 2, 3, 1)), 5: ((0, 4, 1, 2, 3), (0, 2, 3, 4, 1))}


def _permutation(cand: tuple[int, ...], ref: tuple[int, ...]) -> tuple[int, ...] | None:
    """The layout change (``_LAYOUTS``) taking ``cand``'s shape to ``ref``'s, when exactly one does."""
    perms = [pm for pm in _LAYOUTS.get(len(cand), ()) if len(ref) == len(cand)
             and tuple(cand[i] for i in pm) == tuple(ref)]
    return perms[0] if len(perms) == 1 else None


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
    from etscope.formats.debug_buffer import decodable

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
    sums = PairSums()       # overflow-free (numerics_sums)
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
        return PairMetrics(n, nan, nan, nan, nan, nan, bad, equal), note
    m = PairMetrics(numel=n, cosine=sums.cosine(), snr_db=sums.snr_db(), mse=sums.mse(n), max_abs=sums.max_abs,
                    rel_err=sums.rel_err(), nonfinite=0, equal=equal)
    past = [k for k, v in (("MSE", m.mse), ("max abs error", m.max_abs), ("relative error", m.rel_err))
            if math.isinf(v)]
    if past:    # finite values whose error exceeds float64: JSON writes inf as null, so say it
        note = "; ".join([*([note] if note else []), ", ".join(past) + " past float64's range (inf)"])
    return m, note


_INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool", "bits16")


def crosses(m: PairMetrics, thresholds: dict[str, float]) -> bool:
    """Below the cosine or SNR threshold (NaN/Inf values count as crossing)."""
    if m.nonfinite:
        return True
    return m.cosine < thresholds.get("cosine", -math.inf) or m.snr_db < thresholds.get("snr", -math.inf)


def compare(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer,
            thresholds: dict[str, float] | None = None, chunk: int = CHUNK_ELEMS,
            pairing: RunPairing | None = None, taps_c: dict | None = None, taps_r: dict | None = None) -> Comparison:
    """``pairing``: which runs to compare (``numerics_runs``; default: by LLM phase and token
    position when both sides have phases, else in order)."""
    thresholds = dict(DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    if pairing is None:
        pairing = pair_schedules(pc.n_runs, pr.n_runs, run_schedule(pc), run_schedule(pr))
    for p, b in ((pc, buf_c), (pr, buf_r)):
        if p.etdump.tensors is not None:
            check_buffer(p, b)
    ids_c, notes_c = tensor_ids(pc, taps=taps_c)
    ids_r, notes_r = tensor_ids(pr, taps=taps_r)
    pm = match(pc, ids_c, pr, ids_r, pairing.ref_to_cand)
    notes = [*(f"candidate: {n}" for n in notes_c), *(f"reference: {n}" for n in notes_r), *pm.notes,
             *pairing.notes]
    cand_to_ref = {c: r for r, c in pairing.ref_to_cand.items()}
    by_run: dict[int, list[ComparedTensor]] = {}
    qc, qr = Quantization(_graph(pc)), Quantization(_graph(pr))
    # Two pairs over the same regions (and dequantization) have the same metrics: computed once.
    # Each side's distinct regions are bounded by the buffer check; the values compared over
    # distinct pairs are bounded here too (honest runs compare each value once).
    done: dict[tuple, tuple] = {}
    work = MAX_PAIR_WORK_FACTOR * (buf_c.size + buf_r.size) + (1 << 20)
    for c, r, how in pm.pairs:
        dc, dr, why = dequantization(c, qc, r, qr)
        key = (region_key(pc.etdump.tensors, c.index), region_key(pr.etdump.tensors, r.index), dc, dr)
        reduced = next((t.tap for t in (c, r) if t.tap is not None and not t.tap.full_tensor), None)
        if reduced is not None and not (c.tap is not None and r.tap is not None
                                        and c.tap.reducer_name == r.tap.reducer_name):
            why = _reduced_tap_note(reduced, c, buf_c, pc, r, buf_r, pr, chunk)
        if why is not None:
            m, note = None, why
        elif key in done:
            m, note = done[key]
        else:
            work -= math.prod(c.shape) if c.shape else 1
            if work < 0:
                raise FormatError(f"the tensor pairs to compare hold more values than {MAX_PAIR_WORK_FACTOR} x "
                                  "the two buffers' bytes (overlapping debug tensors: not buffers ExecuTorch wrote)",
                                  buf_c.path)
            m, note = done[key] = pair_metrics(buf_c, pc, c, buf_r, pr, r, chunk, dc, dr)
        ct = ComparedTensor(run=c.run, name=r.name if r.node else c.name, role=c.role, cand=c, ref=r,
                            metrics=m, note=note, diverged=m is not None and crosses(m, thresholds), matched_by=how)
        by_run.setdefault(c.run, []).append(ct)
    runs = []
    gc, gr = _graph(pc), _graph(pr)
    for run in sorted(by_run):
        ts = sorted(by_run[run], key=lambda t: (t.ref.role == "program_output", t.ref.order, t.cand.order))
        first = next((i for i, t in enumerate(ts) if t.diverged), None)
        runs.append(RunComparison(run, ts, first, largest_drop(ts), ref_run=cand_to_ref.get(run),
                                  phase=pairing.phase.get(run), step=pairing.step.get(run),
                                  position=pairing.position.get(run)))
    drift = layer_drift(runs, gr, gc) if pairing.by_phase else None
    if drift is None and pairing.by_phase and any(rc.phase is not None for rc in runs):
        notes.append("no drift table: its layers x steps would be far more cells than (layer, step) pairs holding a "
                     "tensor (each run logged other nodes)")
    if drift is not None:
        for rc in runs:
            for t in rc.tensors:
                t.layer = layer_of(t, gr, gc)[0]
    refused = sum(1 for rc in runs for t in rc.tensors if t.metrics is None and t.note and "shapes differ" in t.note)
    cov = pm.coverage
    if cov is not None and cov < COVERAGE_FINDING:
        notes.insert(0, f"low coverage: only {pm.paired_nodes} of the reference's {pm.ref_nodes - pm.hidden} logged "
                        f"node(s) the candidate could log were paired ({100 * cov:.0f}%): a divergence elsewhere "
                        "would not be seen")
    return Comparison(thresholds=thresholds, match_by=_MODE_NAMES[pm.mode], runs=runs, cand_runs=pc.n_runs,
                      ref_runs=pr.n_runs, unmatched_cand=pm.unmatched_cand, unmatched_ref=pm.unmatched_ref,
                      notes=notes, method=pc.method, runs_by_phase=pairing.by_phase,
                      coverage=Coverage(pm.ref_nodes, pm.hidden, pm.paired_nodes, refused), drift=drift)


def compare_methods(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer,
                    thresholds: dict[str, float] | None = None, chunk: int = CHUNK_ELEMS,
                    taps_c: dict | None = None, taps_r: dict | None = None) -> list[Comparison]:
    """One comparison per method of the candidate's ETDump (every method of a several-method
    ETDump unless --method chose one), each against the reference's runs of that method."""
    pairs, notes = method_pairs(pc, pr)
    if not pairs:      # no method in common: the loaded ones, said so
        pairs = [(pc.method, pc, pr)]
    out = [compare(c, buf_c, r, buf_r, thresholds, chunk, taps_c=taps_c, taps_r=taps_r) for _, c, r in pairs]
    out[0].notes.extend(notes)
    return out


def largest_drop(ts: list[ComparedTensor]) -> tuple[int, int, float] | None:
    """Biggest SNR fall between consecutive compared tensors (SNR capped at SNR_CAP_DB)."""
    best = None
    prev = None
    for i, t in enumerate(ts):
        if t.metrics is None or t.metrics.nonfinite:
            continue
        s = min(t.metrics.snr_db, SNR_CAP_DB)
        if prev is not None:
            drop = prev[1] - s
            if drop > 0 and (best is None or drop > best[2]):
                best = (prev[0], i, drop)
        prev = (i, s)
    return best


SCHEMA = "etscope.numerics.compare/1"


def comparison_dict(c: Comparison) -> dict:
    """The comparison as plain data (schema ``etscope.numerics.compare/1``). An infinite SNR (the
    tensors are equal) is written as null with ``equal: true``."""
    from etscope.analysis.numerics.tensors import tensor_id_dict

    def tensor(t: ComparedTensor) -> dict:
        m = t.metrics
        return {"name": t.name, "role": t.role, "matched_by": t.matched_by, "candidate": tensor_id_dict(t.cand),
                "reference": tensor_id_dict(t.ref), "compared": m is not None, "note": t.note,
                "numel": m.numel if m else None, "equal": m.equal if m else None,
                "cosine": m.cosine if m else None, "snr_db": m.snr_db if m else None,
                "mse": m.mse if m else None, "max_abs_error": m.max_abs if m else None,
                "relative_error": m.rel_err if m else None, "nonfinite": m.nonfinite if m else None,
                "diverged": t.diverged, "layer": t.layer}

    runs = []
    for rc in c.runs:
        drop = rc.largest_drop
        runs.append({"run": rc.run, "reference_run": rc.ref_run, "phase": rc.phase, "step": rc.step,
                     "position": rc.position,
                     "tensors": [tensor(t) for t in rc.tensors],
                     "first_divergence": rc.tensors[rc.first_divergence].name if rc.first_divergence is not None else None,
                     "largest_drop": ({"from": rc.tensors[drop[0]].name, "to": rc.tensors[drop[1]].name,
                                       "snr_drop_db": drop[2]} if drop else None)})
    fd = c.first_divergence
    return {"schema": SCHEMA, "thresholds": {"cosine_below": c.thresholds.get("cosine"),
                                             "snr_db_below": c.thresholds.get("snr")},
            "snr_cap_db_for_drops": SNR_CAP_DB, "match_by": c.match_by, "method": c.method,
            "runs_paired_by": "llm phase" if c.runs_by_phase else "order",
            "candidate_runs": c.cand_runs, "reference_runs": c.ref_runs,
            "first_divergence": ({"name": fd[0].name, "runs": fd[1]} if fd else None),
            "runs": runs, "unmatched_candidate": c.unmatched_cand, "unmatched_reference": c.unmatched_ref,
            "coverage": _coverage_dict(c.coverage), "drift": drift_dict(c.drift), "notes": list(c.notes)}


def _coverage_dict(cv: Coverage | None) -> dict | None:
    if cv is None:
        return None
    return {"reference_nodes_logged": cv.ref_nodes, "inside_candidate_partitions": cv.hidden,
            "paired": cv.paired, "share": cv.share, "low": cv.share is not None and cv.share < COVERAGE_FINDING,
            "pairs_refused": cv.refused}


def comparisons_dict(cs: list[Comparison]) -> dict:
    """One method: its comparison (``comparison_dict``); several: ``{"schema", "methods": [...]}``,
    one comparison per method in the order they first ran."""
    if len(cs) == 1:
        return comparison_dict(cs[0])
    return {"schema": SCHEMA, "methods": [comparison_dict(c) for c in cs]}
