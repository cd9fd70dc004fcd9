"""The typed QNN result (schema ``etscope.qnn/1``): :class:`QnnReport` is what ``qnn_report``
analyses of the QNN sources given, :class:`QnnView` what ``etscope qnn`` shows of one set of runs
(the report, the files alone, ONNX Runtime's view, the findings, the phases). ``render.json`` writes
each field by field in declared order: the declared order is the schema's key order, and a field
marked ``OPTIONAL`` is a key the schema adds only with some inputs (left out when None)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields

# Field metadata read by render.json (omit_none): the key is left out of the JSON when the value is None.
OPTIONAL = {"omit_none": True}


@dataclass(frozen=True)
class RuntraceClock:
    """The runtrace given (``--runtrace``) and the HTP clock measured from it."""
    path: str
    graphs: list
    clock_mhz: float | None
    clock_mhz_per_execute: list | None


@dataclass(frozen=True)
class PerCall:
    """Beside QHAS's one inference: this ETDump's real calls of a partition (the NPU's busy share of
    its DELEGATE_CALL, p50 over warm runs; at most how many calls a second)."""
    partition: str
    instruction_id: int | None
    delegate_call_ms: float
    npu_busy_p50: float
    runs: int
    calls_per_s: float
    basis: str


@dataclass(frozen=True)
class HtpView:
    """One QHAS/optrace file pair: its HTP-op breakdown (``analysis.qnn.htp_ops``) and limits
    (``analysis.qnn.limits``)."""
    breakdown: object          # analysis.qnn.htp_ops.HtpBreakdown
    limits: object             # analysis.qnn.limits.HtpLimits


@dataclass(frozen=True)
class QnnReport:
    """Everything QNN of the sources given (``analysis.qnn.report.qnn_report``)."""
    schema: str
    partitions: tuple                      # per QNN partition (analysis.qnn.partition)
    qhas: object | None                    # analysis.qnn.op_tables.QhasSummary, with ``per_call``
    optrace: object | None                 # analysis.qnn.op_tables.OptraceSummary
    htp_timeline: object | None            # analysis.qnn.htp_timeline.TimelineView
    soc: object | None                     # formats.qnn_compile_spec.QnnSoc: the .pte's QNN compile spec
    runtrace: RuntraceClock | None
    warnings: tuple[str, ...]
    htp_ops: tuple[HtpView, ...] | None = field(default=None, metadata=OPTIONAL)   # with QHAS/optrace
    shards: object | None = field(default=None, metadata=OPTIONAL)  # partition_files.ShardView: several QNN files


@dataclass(frozen=True)
class QnnPhase:
    """One phase of the runs (``--phase``, or each of several): which runs the QNN view is over."""
    name: str
    method: str | None
    runs: list
    of_runs: int
    how: str


@dataclass(frozen=True)
class QnnView(QnnReport):
    """What ``etscope qnn`` shows of one set of runs: the report (its warnings with the inputs'
    notes), the QNN files alone, ONNX Runtime's view, the ranked findings of the same inputs
    (``analysis.findings``, the list ``summary`` and ``report`` show), and the phases."""
    files: dict | None = field(default=None, metadata=OPTIONAL)     # QNN files without a partition
    ort: object | None = field(default=None, metadata=OPTIONAL)     # analysis.qnn.ort_view.OrtView
    findings: tuple | None = field(default=None, metadata=OPTIONAL)  # analysis.findings.Finding
    phase: QnnPhase | None = field(default=None, metadata=OPTIONAL)
    phases: tuple | None = field(default=None, metadata=OPTIONAL)   # analysis.views.qnn_view.QnnPhaseView
    # Handles, not JSON: the phases side by side (their rows, how they were told apart), the inputs.
    phase_rows: tuple | None = field(default=None, metadata={"json": False})
    phases_how: str | None = field(default=None, metadata={"json": False})
    inputs: dict | None = field(default=None, metadata={"json": False})


def report_fields(report: QnnReport) -> dict:
    """``report``'s fields by name, to build a :class:`QnnView` (or a report with more) from it."""
    return {f.name: getattr(report, f.name) for f in fields(QnnReport)}

