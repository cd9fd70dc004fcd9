"""Compare the intermediate outputs of two runs of a model (candidate vs reference).

Matching (by identity, never by position alone; ``numerics.match``): within one program (both
ETRecords hold the same graph) by edge-node name; across programs by the source node each tensor
stands for (``from_node`` provenance, module path + op + order, debug handle), q/dq looked
through, a delegate output as the value leaving its partition; never by edge-node names alone.
Program outputs pair by position, backend-logged tensors (QNN tensor names) by name; without
ETRecords by instruction and output position (valid only for one program run twice: said in the
notes). Two tensors of different shapes are never compared, unless one is the other's NHWC layout
(undone, said in the note). Coverage: the share of the reference's logged nodes paired.

Runs are paired by LLM phase and token position, or in order (``numerics.runs``); an LLM's
comparison carries its drift table: per layer, the error at every step (``numerics.drift``).
Metrics per matched tensor (``numerics.metrics``), in float64, chunk by chunk (bounded memory):
cosine similarity, SNR in dB (10 log10 of reference power over error power), MSE, max abs error,
relative error (L2 norm of the error over the reference's).
The curve is each run's compared tensors in graph order; the first divergence is the first tensor
crossing a threshold (default cosine < 0.999 or SNR < 30 dB); the largest single-step drop is the
biggest SNR fall between consecutive compared tensors (SNR above ``SNR_CAP_DB`` counted as the cap,
so a step from bit-exact to nearly exact is not infinite).

The result (``Comparison``, schema ``etscope.numerics.compare/1``; ``MethodComparisons`` for a
several-method ETDump) is a tree of frozen dataclasses the renderers read; ``render.json`` writes it
field by field. An infinite SNR (equal tensors) is written as null with ``equal: true``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from etscope.analysis.numerics.drift import Drift, layer_drift, layer_of
from etscope.analysis.numerics.identity import TensorId, tensor_ids
from etscope.analysis.numerics.match import MODE_NAMES, graph_of, match
from etscope.analysis.numerics.metrics import PairMetrics, Thresholds, crosses, dequantization, pair_metrics
from etscope.analysis.numerics.pairing import COVERAGE_FINDING
from etscope.analysis.numerics.quant import Quantization
from etscope.analysis.numerics.runs import RunPairing, method_pairs, pair_schedules, run_schedule
from etscope.analysis.numerics.tapstats import reduced_tap_note
from etscope.analysis.numerics.tensors import CHUNK_ELEMS, check_buffer
from etscope.errors import FormatError
from etscope.formats.debug_buffer import DebugBuffer, region_key
from etscope.profile import PhaseSelection, Profile

MAX_PAIR_WORK_FACTOR = 4    # values compared over distinct pairs <= 4 x both buffers' bytes + 1 Mi
SNR_CAP_DB = 150.0
SCHEMA = "etscope.numerics.compare/1"


@dataclass(frozen=True)
class ComparedTensor:
    run: int = field(metadata={"json": False})
    name: str
    role: str
    matched_by: str              # how the two tensors were found to stand for one node (numerics.match)
    cand: TensorId = field(metadata={"json": "candidate"})
    ref: TensorId = field(metadata={"json": "reference"})
    compared: bool               # metrics computed (else the note says why not)
    note: str | None             # why not compared, or a layout permutation / dequantization applied
    metrics: PairMetrics | None = field(metadata={"inline": PairMetrics})
    diverged: bool
    layer: str | None = None     # the layer it belongs to (numerics.drift), for an LLM's runs paired by phase


@dataclass(frozen=True)
class LargestDrop:
    """The biggest SNR fall between consecutive compared tensors of a run (``largest_drop``)."""

    before: int = field(metadata={"json": False})     # index of the tensor before the drop
    after: int = field(metadata={"json": False})      # index of the tensor after it
    from_name: str = field(metadata={"json": "from"})
    to_name: str = field(metadata={"json": "to"})
    snr_drop_db: float


@dataclass(frozen=True, kw_only=True)
class RunComparison:
    run: int
    ref_run: int | None = field(metadata={"json": "reference_run"})   # the reference run compared with
    phase: str | None = None               # LLM phase of the run (prefill, decode...), None without
    step: int | None = None                # decode step since its prefill (LLM decode runs)
    position: int | None = None            # token position of a decode run, when known
    tensors: tuple[ComparedTensor, ...]    # graph order
    first_divergence: int | None = field(metadata={"json": False})   # index into tensors
    first_divergence_name: str | None = field(metadata={"json": "first_divergence"})
    largest_drop: LargestDrop | None
    lowest_snr_db: float | None = field(metadata={"json": False})    # over the unequal compared tensors of finite SNR
    matched_by_counts: tuple[tuple[str, int], ...] = field(metadata={"json": False})   # rule, tensors; most first


@dataclass(frozen=True)
class Coverage:
    """How much of the reference was paired (nodes: distinct graph nodes over the compared runs)."""

    ref_nodes: int = field(metadata={"json": "reference_nodes_logged"})     # reference nodes logged
    hidden: int = field(metadata={"json": "inside_candidate_partitions"})   # of those, inside a candidate partition
    paired: int                 # of the others, paired
    share: float | None         # paired / loggable (None: nothing loggable)
    low: bool                   # share below pairing.COVERAGE_FINDING
    # pairs refused (shapes no layout change explains), over all runs
    refused: int = field(metadata={"json": "pairs_refused"})

    @classmethod
    def of(cls, ref_nodes: int, hidden: int, paired: int, refused: int) -> "Coverage":
        seen = ref_nodes - hidden
        share = paired / seen if seen > 0 else None
        return cls(ref_nodes, hidden, paired, share, share is not None and share < COVERAGE_FINDING, refused)

    @property
    def loggable(self) -> int:
        """Reference nodes the candidate could log (outside its delegate partitions)."""
        return self.ref_nodes - self.hidden


@dataclass(frozen=True)
class FirstDivergence:
    """The earliest tensor (graph order) where any run diverges, and the runs diverging there."""

    name: str
    runs: tuple[int, ...]
    tensor: ComparedTensor = field(metadata={"json": False})


@dataclass(frozen=True, kw_only=True)
class Comparison:
    schema: str = SCHEMA
    thresholds: Thresholds
    snr_cap_db: float = field(default=SNR_CAP_DB, metadata={"json": "snr_cap_db_for_drops"})
    match_by: str               # instruction | node | source node
    method: str | None = None
    runs_paired_by: str         # "llm phase" | "order" (numerics.runs)
    cand_runs: int = field(metadata={"json": "candidate_runs"})
    ref_runs: int = field(metadata={"json": "reference_runs"})
    first_divergence: FirstDivergence | None
    runs: tuple[RunComparison, ...]
    unmatched_cand: tuple[str, ...] = field(metadata={"json": "unmatched_candidate"})
    unmatched_ref: tuple[str, ...] = field(metadata={"json": "unmatched_reference"})
    coverage: Coverage
    drift: Drift | None = None             # LLM: per layer, the error at every step (numerics.drift)
    notes: tuple[str, ...]
    phase: PhaseSelection | None = field(default=None, metadata={"omit_empty": True})   # --phase: whose runs

    @property
    def runs_by_phase(self) -> bool:
        return self.runs_paired_by == "llm phase"


@dataclass(frozen=True, kw_only=True)
class MethodComparisons:
    """A several-method ETDump: one comparison per method, in the order they first ran."""

    schema: str = SCHEMA
    methods: tuple[Comparison, ...]
    phase: PhaseSelection | None = field(default=None, metadata={"omit_empty": True})


def compare(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer,
            thresholds: dict[str, float] | Thresholds | None = None, chunk: int = CHUNK_ELEMS,
            pairing: RunPairing | None = None, taps_c: dict | None = None, taps_r: dict | None = None,
            more_notes: tuple[str, ...] = (), phase: PhaseSelection | None = None) -> Comparison:
    """``pairing``: which runs to compare (``numerics.runs``; default: by LLM phase and token
    position when both sides have phases, else in order); ``more_notes``: said after the
    comparison's own; ``phase``: the phase the compared runs are (``--phase``), when one."""
    thresholds = Thresholds.of(thresholds)
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
    by_run = _compared(pc, buf_c, pr, buf_r, pm.pairs, thresholds, chunk)
    gc, gr = graph_of(pc), graph_of(pr)
    cand_to_ref = {c: r for r, c in pairing.ref_to_cand.items()}
    runs = [_run(run, sorted(by_run[run], key=lambda t: (t.ref.role == "program_output", t.ref.order, t.cand.order)),
                 pairing, cand_to_ref) for run in sorted(by_run)]
    drift = layer_drift(runs, gr, gc) if pairing.by_phase else None
    if drift is None and pairing.by_phase and any(rc.phase is not None for rc in runs):
        notes.append("no drift table: its layers x steps would be far more cells than (layer, step) pairs holding a "
                     "tensor (each run logged other nodes)")
    if drift is not None:       # each tensor names its layer (the drift table's rows)
        runs = [replace(rc, tensors=tuple(replace(t, layer=layer_of(t, gr, gc)[0]) for t in rc.tensors))
                for rc in runs]
    refused = sum(1 for rc in runs for t in rc.tensors if t.metrics is None and t.note and "shapes differ" in t.note)
    cov = Coverage.of(pm.ref_nodes, pm.hidden, pm.paired_nodes, refused)
    if cov.low:
        notes.insert(0, f"low coverage: only {pm.paired_nodes} of the reference's {cov.loggable} logged "
                        f"node(s) the candidate could log were paired ({100 * cov.share:.0f}%): a divergence elsewhere "
                        "would not be seen")
    return Comparison(thresholds=thresholds, match_by=MODE_NAMES[pm.mode], method=pc.method,
                      runs_paired_by="llm phase" if pairing.by_phase else "order", cand_runs=pc.n_runs,
                      ref_runs=pr.n_runs, first_divergence=_first_divergence(runs), runs=tuple(runs),
                      unmatched_cand=tuple(pm.unmatched_cand), unmatched_ref=tuple(pm.unmatched_ref), coverage=cov,
                      drift=drift, notes=(*notes, *more_notes), phase=phase)


def _compared(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer, pairs, thresholds: Thresholds,
              chunk: int) -> dict[int, list[ComparedTensor]]:
    """Each pair's metrics (or why not compared), per candidate run."""
    by_run: dict[int, list[ComparedTensor]] = {}
    qc, qr = Quantization(graph_of(pc)), Quantization(graph_of(pr))
    # Two pairs over the same regions (and dequantization) have the same metrics: computed once.
    # Each side's distinct regions are bounded by the buffer check; the values compared over
    # distinct pairs are bounded here too (honest runs compare each value once).
    done: dict[tuple, tuple] = {}
    work = MAX_PAIR_WORK_FACTOR * (buf_c.size + buf_r.size) + (1 << 20)
    for c, r, how in pairs:
        dc, dr, why = dequantization(c, qc, r, qr)
        key = (region_key(pc.etdump.tensors, c.index), region_key(pr.etdump.tensors, r.index), dc, dr)
        reduced = next((t.tap for t in (c, r) if t.tap is not None and not t.tap.full_tensor), None)
        if reduced is not None and not (c.tap is not None and r.tap is not None and c.tap.reducer == r.tap.reducer):
            why = reduced_tap_note(reduced, c, buf_c, pc, r, buf_r, pr, chunk)
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
        ct = ComparedTensor(run=c.run, name=r.name if r.node else c.name, role=c.role, matched_by=how, cand=c, ref=r,
                            compared=m is not None, note=note, metrics=m,
                            diverged=m is not None and crosses(m, thresholds))
        by_run.setdefault(c.run, []).append(ct)
    return by_run


def _run(run: int, ts: list[ComparedTensor], pairing: RunPairing, cand_to_ref: dict[int, int]) -> RunComparison:
    """One run's comparison: its tensors in graph order, first divergence, largest drop, lowest SNR."""
    first = next((i for i, t in enumerate(ts) if t.diverged), None)
    snrs = [t.metrics.snr_db for t in ts
            if t.metrics is not None and not t.metrics.equal and math.isfinite(t.metrics.snr_db)]
    hows: dict[str, int] = {}
    for t in ts:
        hows[t.matched_by] = hows.get(t.matched_by, 0) + 1
    return RunComparison(run=run, ref_run=cand_to_ref.get(run), phase=pairing.phase.get(run),
                         step=pairing.step.get(run), position=pairing.position.get(run), tensors=tuple(ts),
                         first_divergence=first, first_divergence_name=ts[first].name if first is not None else None,
                         largest_drop=largest_drop(ts), lowest_snr_db=min(snrs) if snrs else None,
                         matched_by_counts=tuple(sorted(hows.items(), key=lambda x: -x[1])))


def _first_divergence(runs: list[RunComparison]) -> FirstDivergence | None:
    """The earliest tensor (graph order) where any run diverges, and the runs diverging there."""
    best = None
    for rc in runs:
        if rc.first_divergence is None:
            continue
        t = rc.tensors[rc.first_divergence]
        if best is None or t.ref.order < best[0].ref.order:
            best = (t, [rc.run])
        elif t.ref.order == best[0].ref.order:
            best[1].append(rc.run)
    return FirstDivergence(best[0].name, tuple(best[1]), best[0]) if best else None


def largest_drop(ts: list[ComparedTensor]) -> LargestDrop | None:
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
    return LargestDrop(best[0], best[1], ts[best[0]].name, ts[best[1]].name, best[2]) if best else None


def compare_methods(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer,
                    thresholds: dict[str, float] | Thresholds | None = None, chunk: int = CHUNK_ELEMS,
                    taps_c: dict | None = None, taps_r: dict | None = None) -> list[Comparison]:
    """One comparison per method of the candidate's ETDump (every method of a several-method
    ETDump unless --method chose one), each against the reference's runs of that method."""
    return list(_method_comparisons(pc, buf_c, pr, buf_r, thresholds, chunk, taps_c, taps_r, None))


def comparison(pc: Profile, buf_c: DebugBuffer, pr: Profile, buf_r: DebugBuffer,
               thresholds: dict[str, float] | Thresholds | None = None, chunk: int = CHUNK_ELEMS,
               taps_c: dict | None = None, taps_r: dict | None = None) -> Comparison | MethodComparisons:
    """``etscope numerics --reference``: one method's comparison, or one per method
    (``compare_methods``), carrying the phase the candidate's runs are (``--phase``), if one."""
    cs = _method_comparisons(pc, buf_c, pr, buf_r, thresholds, chunk, taps_c, taps_r, pc.phase)
    return cs[0] if len(cs) == 1 else MethodComparisons(methods=cs, phase=pc.phase)


def _method_comparisons(pc, buf_c, pr, buf_r, thresholds, chunk, taps_c, taps_r, phase) -> tuple[Comparison, ...]:
    pairs, notes = method_pairs(pc, pr)
    if not pairs:      # no method in common: the loaded ones, said so
        pairs = [(pc.method, pc, pr)]
    one = len(pairs) == 1
    return tuple(compare(c, buf_c, r, buf_r, thresholds, chunk, taps_c=taps_c, taps_r=taps_r,
                         more_notes=tuple(notes) if k == 0 else (), phase=phase if one else None)
                 for k, (_, c, r) in enumerate(pairs))
