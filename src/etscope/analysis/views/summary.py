"""The summary of one profile (the JSON of ``etscope summary --json``) as a typed result
(``analysis.views.summary_result``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import fields

import numpy as np

from etscope import profile as P
from etscope.analysis.ops import per_op as ops_analysis
from etscope.analysis.ops import placement
from etscope.analysis.ops.latency import RunLatency, latency_summary
from etscope.analysis.ops.placement import FallbackOp
from etscope.analysis.qnn import files_alone
from etscope.analysis.qnn.result import QnnReport
from etscope.analysis.views.summary_result import (DelegateCall, EtdumpFacts, FilesSummary, LoadEvent, Memory,
                                                   OpTypeTime, PhasedSummary, PhaseFacts, PhaseSummary,
                                                   QnnBrief, QnnCompile, Summary)


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

SCHEMA = "etscope.summary/1"


def summarize(profile: P.Profile, top: int = 10, runtrace=None) -> Summary:
    """The summary, running the op table and (for QNN programs) the QNN analysis it needs."""
    from etscope.analysis import qnn

    report = qnn.qnn_report(profile, runtrace=runtrace) if qnn.qnn_instructions(profile) else None
    soc = None
    if profile.pte is not None:   # the compile-spec reader (~15 ms to import) only when there is a .pte
        from etscope.formats.qnn_compile_spec import soc_from_pte

        soc = soc_from_pte(profile.pte)
    return summary_of(profile, ops_analysis.op_table(profile), report, soc, top)


def summary_of(profile: P.Profile, ops: list[OpRow], qnn_report: QnnReport | None, soc: QnnCompile | None,
               top: int = 10, steady: np.ndarray | None = None) -> Summary:
    """The summary from analyses already made: the op table, the QNN report (None when the program
    has no QNN partition) and the QNN compile spec of the .pte (``soc_from_pte``). Its statistics
    over runs are over the steady runs (``steady``: bool per run, the op table's; default
    ``stats.steady_runs``)."""
    fallback = placement.fallback_ops(profile, steady)
    return Summary(
        schema=SCHEMA,
        inputs=dict(profile.sources),
        method=profile.method,
        phase=phase_facts(profile),
        etdump=_file_facts(profile),
        runs=latency_summary(profile, steady),
        breakdown=placement.breakdown(profile, steady),
        fallback_ops=fallback,
        top_fallback_op_types=_top_op_types(profile, fallback, top),
        delegate_calls=delegate_calls(profile, ops),
        load=load_events(profile, steady),
        memory=memory(profile),
        qnn=qnn_brief(qnn_report),
        qnn_compile=soc if profile.pte is not None else None,
        warnings=tuple(profile.warnings),
    )


def files_alone_summary(qnn: QnnReport | None, inputs: dict[str, str], soc: QnnCompile | None) -> FilesSummary:
    """The summary of QNN files alone (schema etscope.summary/1): no runs, no ETDump facts;
    ``qnn_only`` says which files were given and what they cannot show."""
    return FilesSummary(schema=SCHEMA, inputs=dict(inputs), method=None, etdump=None,
                        runs=RunLatency(0, None), qnn=qnn_brief(qnn), qnn_compile=soc,
                        warnings=tuple(qnn.warnings) if qnn is not None else (),
                        qnn_only=files_alone.qnn_only(qnn, inputs))


def phased_summary(whole: Summary, phases) -> PhasedSummary:
    """``whole`` (the summary of every run) with each phase's: ``phases`` as (its
    ``analysis.llm.run_phases.PhaseRow``, its summary)."""
    return PhasedSummary(whole=whole, phases=tuple(
        PhaseSummary.of(row, summary=s) for row, s in phases))


def phase_facts(profile: P.Profile) -> PhaseFacts | None:
    """The phase these runs are, when the profile holds one phase's runs (``--phase``)."""
    ph = profile.phase
    if ph is None:
        return None
    return PhaseFacts(name=ph.name, method=ph.method, runs=tuple(ph.runs), of_runs=ph.of_runs, how=ph.how)


def qnn_brief(report: QnnReport | None) -> tuple[QnnBrief, ...] | None:
    """Per QNN partition, the nested totals (p50): what `etscope qnn` details."""
    if report is None:
        return None
    copied = [f.name for f in fields(QnnBrief) if f.name not in ("checks_failed", "ops")]
    return tuple(QnnBrief(**{k: getattr(p, k) for k in copied},
                          checks_failed=tuple(c.check for c in p.checks if not c.ok), ops=len(p.ops))
                 for p in report.partitions)


def _file_facts(profile: P.Profile) -> EtdumpFacts:
    """The ETDump as a file; when it holds several methods' runs, also the events of this one's;
    when backend events accumulated across executes, how many older copies were removed."""
    data, split, acc = profile.etdump, profile.method_split, profile.accumulation
    removed = acc.total_removed if acc else 0
    return EtdumpFacts(version=data.version, run_data=len(data.runs),
                       events=split.file_events if split else data.event_count + removed, size_bytes=data.size_bytes,
                       events_analysed=data.event_count, accumulated_copies_removed=removed,
                       events_of_method=data.event_count + removed if split else None)


def delegate_calls(profile: P.Profile, table: list[OpRow]) -> tuple[DelegateCall, ...]:
    """Each delegate instruction with its wall time and what is logged inside it (``table``: the
    op table)."""
    rows = []
    inner_of: dict[int, list[OpRow]] = {}     # grouped once: a scan of the table per call was calls x rows
    for x in table:
        if x.level == 1:
            inner_of.setdefault(x.instruction_id, []).append(x)
    for r in table:
        if r.role != "delegate_call":
            continue
        inner = inner_of.get(r.instruction_id, [])
        ins = profile.instructions.get(r.instruction_id)
        rows.append(DelegateCall(instruction_id=r.instruction_id, backend=r.placement,
                                 backend_from=ins.backend_from if ins else None,
                                 p50_ms=r.p50_ms, mean_ms=r.mean_ms, share=r.share,
                                 inner_events=len(inner), inner_units=tuple(sorted({x.unit for x in inner})),
                                 op_types=tuple(ins.op_types) if ins else ()))
    return tuple(rows)


def load_events(profile: P.Profile, steady: np.ndarray | None = None) -> tuple[LoadEvent, ...]:
    """Events outside the Execute runs (Program::load_method, Method::init); from the event table
    of the summary's runs (``steady``: the op table's), the one already made."""
    return tuple(LoadEvent(name=s.name, ms=s.total_ms, count=s.runs)
                 for s in ops_analysis.event_stats(profile, steady=steady)
                 if s.block == "Default" and s.unit == "ns")


def memory(profile: P.Profile) -> Memory:
    """Planned memory from the .pte and allocation events from the ETDump, in bytes."""
    planned = buffers = blobs = per_run = None
    pte = profile.pte
    if pte is not None and profile.method:
        for m in pte.methods:
            if m.name == profile.method:
                buffers = tuple(int(s) for s in m.non_const_buffer_sizes)
                planned = int(sum(buffers))
                blobs = {d.backend_id: 0 for d in m.delegates}
                for d in m.delegates:
                    blobs[d.backend_id] += int(d.blob_size or 0)
    ev = profile.events
    alloc = ev["role"] == P.ROLE_ALLOCATION
    if alloc.any():
        in_exec = alloc & (ev["execute"] >= 0)
        if in_exec.any():
            per = np.bincount(ev["execute"][in_exec], weights=ev["value"][in_exec], minlength=profile.n_runs)
            per_run = float(per.mean())
    return Memory(planned_bytes=planned, planned_buffers=buffers, allocation_events=int(alloc.sum()),
                  allocated_bytes_per_run=per_run, delegate_blob_bytes=blobs)


def _top_op_types(profile: P.Profile, fallback: tuple[FallbackOp, ...], top: int) -> tuple[OpTypeTime, ...]:
    """Fallback time per op type; ``sources`` lists every source line of its instructions' nodes."""
    agg: dict[str, dict] = {}
    for f in fallback:
        key = f.op_type or f.kernel or "?"
        a = agg.setdefault(key, {"op_type": key, "instructions": 0, "mean_ms": 0.0, "share": 0.0,
                                 "sources": []})
        a["instructions"] += 1
        a["mean_ms"] += f.mean_ms * f.runs / max(1, f.runs)
        a["share"] += f.share
        ins = profile.instructions.get(f.instruction_id)
        for src in (ins.sources if ins and ins.sources else [f.source]):
            if src and src not in a["sources"]:
                a["sources"].append(src)
    ranked = sorted(agg.values(), key=lambda a: -a["share"])[:top]
    return tuple(OpTypeTime(**dict(a, sources=tuple(a["sources"]))) for a in ranked)
