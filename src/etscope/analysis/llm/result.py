"""The ``etscope llm`` result (schema ``etscope.llm/1``) as a tree of frozen dataclasses: the schema
is these classes, written field by field in declared order by ``render.json`` (a field declared
``omit_none`` is a key the schema has only sometimes: left out when None). Built once by
``report.llm_report`` and never changed after; the views read attributes only.

The per-phase QNN partitions are ``partitions.PhasePartitions``; the memory wall, added by the
callers that know the program and the DRAM bandwidth (``with_memory_wall``), is
``analysis.qnn.limits.MemoryWall``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from etscope.analysis.llm.partitions import PhasePartitions

SOMETIMES = {"omit_none": True}     # a key of the schema only when it has a value, [] included (render.json)


@dataclass(frozen=True)
class LatencyStats:
    """Method::execute latency of a phase's steady runs (ms)."""
    p50: float
    p90: float
    p99: float
    max: float
    min: float
    mean: float


@dataclass(frozen=True)
class BreakdownPart:
    """One part of Method::execute in a phase (steady runs): a backend's delegate calls, the CPU
    kernels or the framework overhead; ``share`` is of the mean run."""
    kind: str                          # delegate | cpu_ops | framework_overhead
    backend: str | None = field(default=None, metadata=SOMETIMES)
    calls_per_run: float | None = field(default=None, metadata=SOMETIMES)
    mean_ms: float = 0.0
    p50_ms: float = 0.0
    p10_ms: float = 0.0
    p90_ms: float = 0.0
    share: float = 0.0


@dataclass(frozen=True)
class TopInstruction:
    """One instruction of a phase by its mean time per steady run; ``share`` of the mean run."""
    instruction_id: int
    placement: str | None
    op_type: str | None
    kernel: str | None
    source: str | None
    mean_ms: float
    p50_ms: float
    share: float | None
    kind: str                          # cpu | delegate


@dataclass(frozen=True)
class FallbackOpType:
    """The CPU instructions of one op type (``runs.label_text``) in a phase, their means added."""
    op_type: str
    instructions: tuple[int, ...]
    mean_ms: float
    share: float


@dataclass(frozen=True)
class Phase:
    """One phase (prefill, decode, a method's runs, or all runs): its runs (indices over all runs),
    latency over its steady runs, tokens and rates, where its time goes."""
    name: str
    runs: tuple[int, ...]
    steady_runs: int
    warmup_runs: tuple[int, ...]
    method: str | tuple[str, ...] | None
    tokens_per_run: int | float | None
    tokens_from: str | None = field(metadata=SOMETIMES)   # the user's or the program's count
    latency_ms: LatencyStats | None
    ms_per_token: float | None
    runs_per_s: float | None
    breakdown: tuple[BreakdownPart, ...]
    top_ops: tuple[TopInstruction, ...]
    top_fallback_ops: tuple[TopInstruction, ...]
    fallback_op_types: tuple[FallbackOpType, ...]
    qnn: PhasePartitions | None = field(default=None, metadata=SOMETIMES)
    method_from: str | None = field(default=None, metadata=SOMETIMES)   # look-alike methods named it


@dataclass(frozen=True)
class FileSplit:
    """How one ETDump's phases were found (several ETDumps) and which joined phase each became."""
    file: int
    etdump: str
    by: str
    evidence: str
    runs: int
    phases: tuple[str, ...]
    joined_as: tuple[str, ...]
    runs_by_phase: dict            # joined phase name -> this file's runs in it (read only)


@dataclass(frozen=True)
class PhaseSplit:
    """How the runs were told into phases (``by``: the rule; ``evidence``: what it rested on);
    with several ETDumps each one's split (``files``)."""
    by: str
    evidence: str
    files: tuple[FileSplit, ...] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True)
class WarmupNote:
    """A warm-up run and what it was compared with: the median (and IQR) of its phase's later runs
    (in its file: ``file``, ``file_run`` with several ETDumps)."""
    run: int
    phase: str
    latency_ms: float
    phase_p50_ms: float
    ratio: float | None
    later_runs: int
    later_iqr_ms: tuple[float, float]
    file: int | None = field(default=None, metadata=SOMETIMES)
    file_run: int | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True)
class TokensUnknown:
    """The prefill/decode phases whose tokens per run nothing gave, and how to give them."""
    phases: tuple[str, ...]
    how: str
    runs_with_logged_tokens: int | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True)
class FirstDecode:
    """The first decodes after a prefill against the other decodes (``drift.first_decode``)."""
    p50_ms: float
    ratio: float | None
    instances: int
    range_ms: tuple[float, float]
    above_upper_quartile: int
    others_runs: int
    others_p50_ms: float
    others_iqr_ms: tuple[float, float]
    slower: bool


@dataclass(frozen=True)
class ByPosition:
    """Decode latency per position: rows of (position, runs, p50 ms)."""
    columns: tuple[str, ...]
    rows: tuple[tuple[int, int, float], ...]


@dataclass(frozen=True)
class Drift:
    """Decode latency against the position in the generation (``drift.decode_drift``)."""
    x: str
    positions: tuple[int, int]
    slope_ms_per_100_tokens: float
    slope_ci95_ms_per_100_tokens: tuple[float, float] | None
    relative_per_100_tokens: float | None
    intercept_ms: float
    runs: int
    change_over_range_ms: float
    spread_ms: float
    drift_shown: bool
    first_decode_after_prefill: FirstDecode | None
    by_position: ByPosition


@dataclass(frozen=True)
class Series:
    """One value per run, in the order the runs ran (None: not known); with several ETDumps each
    run's input (``file``) and its index there (``file_run``); its method when known by input."""
    latency_ms: tuple
    phase: tuple[str, ...]
    warmup: tuple[bool, ...]
    tokens: tuple
    step: tuple
    position: tuple
    etdump_run: tuple[int, ...]
    file: tuple[int, ...] | None = field(default=None, metadata=SOMETIMES)
    file_run: tuple[int, ...] | None = field(default=None, metadata=SOMETIMES)
    method: tuple | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True)
class LeftOut:
    """Instructions left out of the per-instruction tables, over all parts."""
    instructions: int
    left_out: int


@dataclass(frozen=True)
class Duplicate:
    """Input ``file`` holds the same run data as the earlier input ``same_as``."""
    file: int
    same_as: int
    by: str          # "same file" (the same path given twice) | "same run data" (another file)

    def warning(self, names: list[str]) -> str:
        if self.by == "same file":
            return (f"{names[self.file]} is given twice (ETDumps {self.same_as + 1} and {self.file + 1} of "
                    f"{len(names)}): the same file, counted once")
        return (f"{names[self.file]} holds the same run data as {names[self.same_as]} (every run's timestamps "
                "and events equal): counted once")


@dataclass(frozen=True)
class LlmRuns:
    """The ``llm`` object: runs, warm-up, phases, rates, drift, the per-run series."""
    runs: int
    warmup_runs: tuple[int, ...]
    warmup: tuple[WarmupNote, ...]
    phase_split: PhaseSplit
    phases: tuple[Phase, ...]
    decode_tokens_per_s: float | None
    decode_runs_per_s: float | None
    tokens_unknown: TokensUnknown | None
    ttft_ms: float | None
    ttft_first_ms: float | None
    drift: Drift | None
    series: Series
    instructions_left_out: LeftOut | None = field(default=None, metadata=SOMETIMES)
    duplicates: tuple[Duplicate, ...] | None = field(default=None, metadata=SOMETIMES)
    memory_wall: object | None = field(default=None, metadata=SOMETIMES)   # analysis.qnn.limits.MemoryWall

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)


@dataclass(frozen=True)
class LlmReport:
    """``etscope llm``'s result: the inputs, the method(s), the analysis, its findings and warnings."""
    schema: str
    inputs: tuple                      # profile.SourceFiles per input: its ETDump, ETRecord, .pte
    method: str | tuple[str | None, ...] | None
    llm: LlmRuns
    findings: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def is_llm(self) -> bool:
        """Whether the runs show LLM phases (prefill / decode, or several phases); a CNN's single
        group of identical runs is not shown as an LLM."""
        return len(self.llm.phases) > 1 or any(p.name in ("prefill", "decode") for p in self.llm.phases)


def with_memory_wall(report: LlmReport, wall) -> LlmReport:
    """The result with the decode's memory wall (``analysis.qnn.limits.llm_memory_wall``), a new
    object: a result is never changed after analysis."""
    if wall is None:
        return report
    return dataclasses.replace(report, llm=dataclasses.replace(report.llm, memory_wall=wall))
