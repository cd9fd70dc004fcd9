"""What ``etscope qnn`` (and ``p.qnn()``) shows of a set of inputs: :class:`QnnView`, built whole
from the inputs' analyses (``analysis.results.Results``): the QNN report, the QNN files alone,
ONNX Runtime's view, the ranked findings of the same inputs (the list ``summary`` and ``report``
show) and, when the runs form several phases, each phase's own view."""
from __future__ import annotations

from dataclasses import dataclass

from etscope.analysis.qnn.report import qnn_report
from etscope.analysis.qnn.result import QnnPhase, QnnReport, QnnView, report_fields
from etscope.analysis.qnn.model import SCHEMA
from etscope.analysis.views.summary_result import PhaseHead


@dataclass(frozen=True)
class QnnPhaseView(PhaseHead):
    """One phase of several (``QnnView.phases``): its runs and latency, and its own QNN view."""
    qnn: QnnView


def qnn_view(r, phases: bool = False, consume: bool = False, inputs: dict | None = None) -> QnnView:
    """The view of Results ``r``. ``phases``: with each phase's own view when the runs form several
    (``consume``: the phases then take ``r``'s events, ``Results.by_phase``); ``inputs``: the
    input paths as shown (``--json`` writes them beside the view)."""
    view = _one(r)
    parts = r.by_phase(consume=consume) if phases else []   # after the whole runs' view: they take the events
    if not parts:
        return view if inputs is None else QnnView(**_fields(view), inputs=inputs)
    return QnnView(**_fields(view), phases=tuple(QnnPhaseView.of(row, qnn=_one(pr))
                                                 for row, (_, pr) in zip(r.phase_rows, parts)),
                   phase_rows=tuple(r.phase_rows), phases_how=r.phases.how, inputs=inputs)


def files_alone_view(r) -> QnnView | QnnReport | None:
    """The report's QNN section of QNN files alone: the QNN report with the files that have no
    partition and ONNX Runtime's view (the findings are the report's own, at its top)."""
    if r.qnn_files is None and r.ort_view is None:
        return r.qnn
    return QnnView(**report_fields(_report(r)), files=r.qnn_files, ort=r.ort_view)


def _report(r) -> QnnReport:
    report = r.qnn
    if report is None and r.profile is None:     # an ONNX Runtime profile alone: no QNN level
        report = QnnReport(schema=SCHEMA, partitions=(), qhas=None, optrace=None, htp_timeline=None, soc=r.soc,
                           runtrace=None, warnings=())
    elif report is None:      # an ETDump without QNN partitions: the report says so
        report = qnn_report(r.profile, soc=r.soc, runtrace=r.runtrace)
    return report


def _one(r) -> QnnView:
    """The view of one set of runs (the whole, or one phase's)."""
    report = _report(r)
    warnings = report.warnings + tuple(r.notes)     # the notes so far (before the files' and ORT's)
    files, ort = r.qnn_files, r.ort_view
    ph = r.profile.phase if r.profile is not None else None
    return QnnView(**dict(report_fields(report), warnings=warnings), files=files, ort=ort,
                   findings=tuple(r.findings),
                   phase=None if ph is None else QnnPhase(name=ph.name, method=ph.method, runs=list(ph.runs),
                                                          of_runs=ph.of_runs, how=ph.how))


def _fields(view: QnnView) -> dict:
    from dataclasses import fields

    return {f.name: getattr(view, f.name) for f in fields(QnnView) if f.name not in ("phases", "phase_rows",
                                                                                      "phases_how", "inputs")}
