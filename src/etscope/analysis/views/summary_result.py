"""The summary of one profile as a typed result (what ``etscope summary --json`` prints, schema
``etscope.summary/1``): frozen dataclasses written field by field in declared order by
``render.json``. Made by ``analysis.views.summary`` (an ETDump's runs) or
``analysis.views.summary.files_alone_summary`` (QNN files alone)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from etscope.analysis.ops.latency import RunLatency
from etscope.analysis.ops.placement import ExecutePart, FallbackOp
from etscope.analysis.qnn.files_alone import QnnOnly
from etscope.formats.qnn_compile_spec import QnnSoc

OMIT_NONE = {"omit_none": True}


@dataclass(frozen=True)
class PhaseFacts:
    """The phase these runs are, when the profile holds one phase's runs (``--phase``)."""
    name: str
    method: str | None
    runs: tuple[int, ...]
    of_runs: int
    how: str | None


@dataclass(frozen=True)
class EtdumpFacts:
    """The ETDump as a file; ``events_of_method`` when it holds several methods' runs;
    ``accumulated_copies_removed``: older copies of backend events that accumulated across executes."""
    version: int | None = None
    run_data: int | None = None
    events: int | None = None
    size_bytes: int | None = field(default=None, metadata={"json": "bytes"})
    events_analysed: int | None = None
    accumulated_copies_removed: int = 0
    events_of_method: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class OpTypeTime:
    """CPU-fallback time of one op type: its instructions, summed mean and share, and every source
    line of its instructions' nodes."""
    op_type: str | None
    instructions: int
    mean_ms: float = 0.0
    share: float = 0.0
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class DelegateCall:
    """One delegate instruction with its wall time and what is logged inside it."""
    instruction_id: int
    backend: str | None
    backend_from: str | None = None
    p50_ms: float | None = None
    mean_ms: float | None = None
    share: float | None = None
    inner_events: int = 0
    inner_units: tuple[str, ...] = ()
    op_types: tuple = ()


@dataclass(frozen=True)
class LoadEvent:
    """An event outside the Execute runs (Program::load_method, Method::init)."""
    name: str
    ms: float
    count: int | None


@dataclass(frozen=True)
class Memory:
    """Planned memory from the .pte and allocation events from the ETDump, in bytes
    (``delegate_blob_bytes``: per backend id)."""
    planned_bytes: int | None = None
    planned_buffers: tuple[int, ...] | None = None
    allocation_events: int = 0
    allocated_bytes_per_run: float | None = None
    delegate_blob_bytes: dict | None = None


# The QNN compile spec of the .pte: what ``formats.qnn_compile_spec.soc_from_pte`` reads, as it reads it.
QnnCompile = QnnSoc


@dataclass(frozen=True)
class QnnBrief:
    """One QNN partition in the summary: its nested totals (p50), clock, and the nesting picture
    (``analysis.qnn.partition_result.Partition`` has every figure; ``etscope qnn`` details them)."""
    instruction_id: int | None
    runs: int
    delegate_call_ms: float | None
    qnn_execute_us: float | None
    accel_us: float | None
    accel_excl_wait_us: float | None
    accel_cycles: float | None
    clock_mhz_est: float | None
    clock_mhz_est_range: tuple
    cold_runs: tuple
    accumulating: bool
    clock_basis: str
    clock_bound: str | None
    clock_mhz_bounds: tuple
    clock_mhz_est_per_run_range: tuple | None
    clock_source: str | None
    clock_mhz_measured: float | None
    clock_mhz_used: float | None
    checks_failed: tuple
    ops: int
    headline: str
    nesting: object                 # analysis.qnn.nesting.Nesting


@dataclass(frozen=True)
class Summary:
    """The summary of an ETDump's runs. ``qnn``: per QNN partition (None: no QNN partition);
    ``qnn_heap``: the DSP heap view (``--qnn-heap``); ``views``: the views of registry input kinds
    without an analysis of their own, by input name, written as keys of their own;
    ``findings``: the ranked findings of the same inputs (``Results.summary_view``)."""
    schema: str
    inputs: dict
    method: str | None
    phase: PhaseFacts | None
    etdump: EtdumpFacts | None
    runs: RunLatency
    breakdown: tuple[ExecutePart, ...]
    fallback_ops: tuple[FallbackOp, ...]
    top_fallback_op_types: tuple[OpTypeTime, ...]
    delegate_calls: tuple[DelegateCall, ...]
    load: tuple[LoadEvent, ...]
    memory: Memory
    qnn: tuple[QnnBrief, ...] | None
    qnn_compile: QnnCompile | None
    warnings: tuple[str, ...]
    qnn_heap: object = field(default=None, metadata=OMIT_NONE)
    views: dict = field(default_factory=dict, metadata={"spread": True})
    findings: tuple | None = field(default=None, metadata=OMIT_NONE)
    qnn_only: ClassVar[None] = None     # a summary of QNN files alone is a FilesSummary


@dataclass(frozen=True)
class FilesSummary:
    """The summary of QNN files alone (no ETDump): no runs, no ETDump facts, no phase; ``qnn_only``
    says which files were given, what each shows and what they cannot show. Read as a
    :class:`Summary` (the same attributes)."""
    schema: str
    inputs: dict
    method: None
    etdump: None
    runs: RunLatency
    breakdown: tuple = ()
    fallback_ops: tuple = ()
    top_fallback_op_types: tuple = ()
    delegate_calls: tuple = ()
    load: tuple = ()
    memory: Memory = Memory()
    qnn: tuple[QnnBrief, ...] | None = None
    qnn_compile: QnnCompile | None = None
    warnings: tuple[str, ...] = ()
    qnn_only: QnnOnly | None = None
    qnn_heap: object = field(default=None, metadata=OMIT_NONE)
    views: dict = field(default_factory=dict, metadata={"spread": True})
    findings: tuple | None = field(default=None, metadata=OMIT_NONE)
    phase: ClassVar[None] = None        # no runs: no phase (and no "phase" key)


@dataclass(frozen=True)
class PhaseLatency:
    """A phase's Method::execute latency, in ms."""
    p50: float | None
    mean: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class PhaseHead:
    """One phase of the runs beside the others, as the phases table shows it
    (``analysis.llm.run_phases.PhaseRow``): its runs, warm-up runs and Method::execute latency. A
    command's phase entry adds that phase's own view (``PhaseSummary``, ``qnn_view.QnnPhaseView``)."""
    name: str
    method: str | None
    runs: tuple[int, ...]
    warmup_runs: tuple[int, ...]
    latency_ms: PhaseLatency

    @classmethod
    def of(cls, row, **view):
        """The entry of ``row`` (a ``PhaseRow``) with ``view``, the phase's own view by field name."""
        return cls(name=row.name, method=row.method, runs=tuple(row.runs), warmup_runs=tuple(row.warmup_runs),
                   latency_ms=PhaseLatency(p50=row.p50_ms, mean=row.mean_ms, min=row.min_ms, max=row.max_ms),
                   **view)


@dataclass(frozen=True)
class PhaseSummary(PhaseHead):
    """One phase of the runs with its own summary."""
    summary: Summary


@dataclass(frozen=True)
class PhasedSummary:
    """The summary of runs that are several phases: the whole runs' (its keys at the top level,
    pooling every phase), said so in ``phases_pooled``, then each phase's."""
    whole: Summary = field(metadata={"inline": Summary})
    phases_pooled: str = "the top-level figures pool the steady runs of every phase; phases[] gives each phase's own"
    phases: tuple[PhaseSummary, ...] = ()
