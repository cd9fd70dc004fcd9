"""The typed result of `etscope diff`: a tree of frozen dataclasses, built once by the analysis
(``compare``, ``phases``, ``axes``, ``attribution``, ``placement``, ``noise``) and read by every
view (text, JSON, the diff page) by attribute. ``render.json`` writes a dataclass field by field
in declared order, so each class's field order *is* the ``etscope.diff/2`` schema: do not reorder.
Where the schema has a key only sometimes, the field is declared ``omit_empty`` (left out when
None; such a field is never an empty value) or the shapes are separate classes (a key that may be
present with the value null).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

OMIT = {"omit_empty": True}


def _omit(default=None):
    return field(default=default, metadata=OMIT)


@dataclass(frozen=True)
class Sides:
    """One figure of each side, base and new."""
    base: Any
    new: Any


@dataclass(frozen=True)
class Change:
    """A figure of each side and its change (%), None when a side lacks it."""
    base: float | None
    new: float | None
    change_pct: float | None


# ---- latency ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Latency:
    """The whole-run (or one phase's) latency change: p50 over the steady runs of each side, pooled
    over its sessions, and the 95% interval of the change."""
    base_p50_ms: float | None
    new_p50_ms: float | None
    change_pct: float
    ci_pct: tuple[float, float]
    base_runs: int
    new_runs: int
    base_sessions: int
    new_sessions: int
    warmup_runs_dropped: Sides          # tuple of the leading warm-up runs left out, per session
    significant: bool
    session_allowance_pct: float
    method: str


@dataclass(frozen=True)
class ProgramIdentity:
    identical: bool | None
    basis: str


@dataclass(frozen=True)
class OpShift:
    """One substantial instruction's p50 ratio new/base, and against the common shift of the others."""
    name: str
    placement: str | None
    base_p50_ns: float
    new_p50_ns: float
    ratio: float
    share_of_base: float
    p_value: float
    vs_common: float


@dataclass(frozen=True)
class SessionNoise:
    """The one-session-per-side verdict (``noise.judge_one_session_each``)."""
    verdict: str
    beyond_allowance: bool
    localised: bool
    localised_ops: tuple[str, ...]
    uniform_shift: bool
    allowance_ratio: tuple[float, float]


@dataclass(frozen=True)
class BreakdownPart:
    """A part of Method::execute (a delegate's calls, the CPU ops, framework overhead): p50 per run."""
    kind: str
    backend: str | None
    base_p50_ms: float | None
    new_p50_ms: float | None
    base_calls_per_run: float | None
    new_calls_per_run: float | None
    change_ms: float


# ---- placement ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpMoved:
    """CPU ops that appeared or went (``kind``: moved_to_cpu, moved_to_delegate); ``from_`` is JSON's
    ``from``."""
    kind: str
    op_type: str
    source: str | None
    count: int
    from_: str | None = field(metadata={"json": "from"})
    to: str | None
    matched_by: str | None


@dataclass(frozen=True)
class OpMovedByEvents(OpMoved):
    """A move told by per-op delegate events of the same op kind that went or came (their names)."""
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class CpuOpChanged(OpMoved):
    """A new or removed CPU op (``new_cpu_op``, ``removed_cpu_op``) that did not move as far as the
    inputs tell; ``undecided``: why it still may have (None when the inputs settle it)."""
    undecided: str | None = None


@dataclass(frozen=True)
class PartitionsChanged:
    kind: str                 # partitions_changed
    backend: str
    base_partitions: int
    new_partitions: int
    detail: str               # split, merged, added, removed


PlacementChange = OpMoved | PartitionsChanged


# ---- ops ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpChange:
    """One op matched between the sides (by an identity that survives re-export): p50 per steady
    run of each side in ``unit``, the change and the rank test."""
    identity: tuple[str, ...]
    name: str
    role: str
    unit: str
    op_type: str | None
    source: str | None
    placement_base: str | None
    placement_new: str | None
    status: str               # new, removed, slower, faster, uncertain, same, not_compared
    base_p50: float | None
    new_p50: float | None
    change_pct: float | None
    p_value: float | None
    significant: bool | None


@dataclass(frozen=True)
class QnnOpChange:
    op: str
    base_cycles_p50: float | None
    new_cycles_p50: float | None
    change_cycles: float
    status: str               # both, new, removed


@dataclass(frozen=True)
class QnnPartitionChange:
    partition: int
    accel_cycles: Change
    clock_mhz_est: Change
    accel_us: Change
    qnn_execute_us: Change
    delegate_call_ms: Change
    ops: tuple[QnnOpChange, ...]


@dataclass(frozen=True)
class Gate:
    fail: bool
    why: tuple[str, ...]


# ---- axes ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fact:
    """What differs (or is stated) on an axis: ``base`` and ``new`` as the inputs give them."""
    what: str
    base: Any
    new: Any


@dataclass(frozen=True)
class DetailFact:
    """A placement fact: what moved, and which op or backend (``detail``)."""
    what: str
    detail: str
    base: Any
    new: Any


@dataclass(frozen=True)
class Axis:
    verdict: str              # changed, no_change, unknown (latency: the latency verdict)
    summary: str
    facts: tuple[Fact | DetailFact, ...]


@dataclass(frozen=True)
class FactsAxis:
    """An axis whose facts come before its summary in the schema (environment; placement unknown)."""
    verdict: str
    facts: tuple[Fact | DetailFact, ...]
    summary: str


@dataclass(frozen=True)
class ProgramAxis:
    verdict: str
    summary: str
    facts: tuple[Fact, ...]
    basis: str                # what was compared: .pte files, or the ETDumps' instructions


AnyAxis = Axis | FactsAxis | ProgramAxis


@dataclass(frozen=True)
class Axes:
    latency: AnyAxis
    placement: AnyAxis
    program: AnyAxis
    environment: AnyAxis

    def named(self) -> tuple[tuple[str, AnyAxis], ...]:
        """(name, axis) in the order of ``axes.AXES``."""
        return (("latency", self.latency), ("placement", self.placement), ("program", self.program),
                ("environment", self.environment))


# ---- attribution --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NestingPart:
    name: str
    change_ms: float


@dataclass(frozen=True)
class Part:
    """A part of the latency change without an op of its own (other CPU ops, framework overhead)."""
    kind: str
    name: str
    change_ms: float
    share_pct: float | None


@dataclass(frozen=True)
class OpPart:
    """An op that moved between a delegate and the CPU: its own p50 each side."""
    kind: str
    name: str
    change_ms: float
    base_ms: float
    new_ms: float
    share_pct: float | None


@dataclass(frozen=True)
class DelegateCallPart:
    """A DELEGATE_CALL; ``of_which``: a QNN call's change split by the levels of its nesting."""
    kind: str
    name: str
    change_ms: float
    base_ms: float
    new_ms: float
    of_which: tuple[NestingPart, ...] | None
    share_pct: float | None


AttributionPart = Part | OpPart | DelegateCallPart


@dataclass(frozen=True)
class Attribution:
    base_ms: float
    new_ms: float
    change_ms: float
    parts: tuple[AttributionPart, ...]
    explained_ms: float
    unexplained_ms: float
    unexplained_pct: float | None
    moved_ops_ms: float
    moved_ops_pct: float | None
    significant: bool
    method: str


@dataclass(frozen=True)
class Comparability:
    comparable: bool | None
    share: float | None
    basis: str


# ---- one comparison, and an LLM's phases ---------------------------------------------------------------
# A dataclass lists its bases' fields first, the base named last first: ``class C(ComparedPart,
# VerdictPart, Schema)`` declares ``schema``, verdict and reasons, what was compared, then its own
# fields: the schema's key order.
@dataclass(frozen=True)
class Schema:
    schema: str               # etscope.diff/2


@dataclass(frozen=True)
class Statistic:
    statistic: str            # the statistic every figure is (p50 over the steady runs, ...)


@dataclass(frozen=True)
class VerdictPart:
    verdict: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ComparedPart:
    """What one comparison of two sets of runs found (``compare.compare_runs``), in schema order."""
    latency: Latency
    program: ProgramIdentity
    op_shifts: tuple[OpShift, ...]
    session_noise: SessionNoise | None
    breakdown: tuple[BreakdownPart, ...]
    placement_changes: tuple[PlacementChange, ...]
    ops: tuple[OpChange, ...]
    qnn: tuple[QnnPartitionChange, ...] | None
    gate: Gate
    warnings: tuple[str, ...]
    axes: Axes
    changed_axes: tuple[str, ...]
    headline: str
    attribution: Attribution | None
    comparable: Comparability


def judged(d: VerdictPart | ComparedPart) -> dict:
    """The verdict and what a comparison found, by field name (to build a phase's or a headline's)."""
    return {f.name: getattr(d, f.name) for part in (VerdictPart, ComparedPart) for f in fields(part)}


@dataclass(frozen=True)
class Comparison(ComparedPart, Statistic, VerdictPart, Schema):
    """A diff of two sets of runs as one phase (``diff --json`` of runs that are not an LLM's
    phases, or ``--phase all``). ``inputs``: the files given, per side (set by the command)."""
    phases_pooled: str | None = _omit()
    inputs: Sides | None = _omit()

    phases = ()               # not a field: a one-phase diff has no phases (the views ask)
    verdict_phase = None


@dataclass(frozen=True)
class LlmFigures:
    """What ``etscope llm`` says of a phase on each side (median over a side's sessions)."""
    ttft_ms: Change | None = _omit()
    tokens_per_s: Change | None = _omit()
    runs_per_s: Change | None = _omit()
    ms_per_token: Change | None = _omit()
    tokens_per_run: Change | None = _omit()
    source: str | None = _omit()


@dataclass(frozen=True)
class PhaseHead:
    """Which phase, its method on each side, on which side(s) it was found, and per side, per
    session, its run indices."""
    name: str
    method: str | None
    methods: Sides
    on: str
    runs: Sides


@dataclass(frozen=True)
class PhaseNotCompared(PhaseHead):
    """A phase found on one side only (``on``): listed, not compared."""
    verdict: str
    reasons: tuple[str, ...]

    latency = None            # not fields: nothing was compared
    llm = None


@dataclass(frozen=True)
class PhaseComparison(ComparedPart, VerdictPart, PhaseHead):
    """One phase compared with its namesake on the other side, and ``etscope llm``'s figures of it."""
    llm: LlmFigures


Phase = PhaseComparison | PhaseNotCompared


@dataclass(frozen=True)
class PhasedComparison(ComparedPart, VerdictPart, Schema):
    """A diff of an LLM's runs, phase by phase: the leading phase's comparison at the top level
    under a verdict from every phase (``verdict_phase``), and ``phases``."""
    statistic: str
    verdict_phase: str
    verdict_basis: str
    phases: tuple[Phase, ...]
    inputs: Sides | None = _omit()


@dataclass(frozen=True)
class NoPhaseOnBoth:
    """A phase-split diff where no phase is on both sides: nothing compared like with like."""
    schema: str
    verdict: str
    verdict_phase: None
    verdict_basis: str
    headline: str
    reasons: tuple[str, ...]
    phases: tuple[Phase, ...]
    breakdown: tuple[BreakdownPart, ...]
    placement_changes: tuple[PlacementChange, ...]
    ops: tuple[OpChange, ...]
    qnn: None
    gate: Gate
    warnings: tuple[str, ...]
    inputs: Sides | None = _omit()

    latency = None            # not fields: nothing was compared
    axes = None
    attribution = None


Diff = Comparison | PhasedComparison | NoPhaseOnBoth
