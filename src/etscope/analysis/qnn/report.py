"""``qnn_report``: every QNN source given, analysed into the ``qnn`` object of ``etscope qnn --json``."""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.qnn.htp_timeline import htp_timeline
from etscope.analysis.qnn.clock import clock_warnings, measured_clock
from etscope.analysis.qnn.etdump import MAX_QNN_PARTITIONS, qnn_instructions, series_from_profile
from etscope.analysis.qnn.model import SCHEMA, QnnSeries
from etscope.analysis.qnn.op_tables import (merge_op_tables, optrace_op_table, optrace_summary,
                                            qhas_op_table, qhas_summary)
from etscope.analysis.qnn.partition import analyse_series
from etscope.analysis.qnn.profile_series import series_from_qnn_profile
from etscope.analysis.qnn.partition_result import Partition
from etscope.analysis.qnn.result import HtpView, PerCall, QnnReport, RuntraceClock
from etscope.analysis.stats import steady_or_default
from etscope.formats.backends import QNN_BACKEND_ID
from etscope.formats.qnn_compile_spec import QnnSoc


def qnn_report(profile: P.Profile | None = None, qhas=None, optrace=None, qnn_profile=None,
               soc: QnnSoc | None = None, runtrace=None, qhas_ops_by_key: dict[str, dict] | None = None,
               htp_sources: list[tuple] | None = None, dram_gbps: float | None = None,
               shards=None, steady: np.ndarray | None = None) -> QnnReport:
    """Everything QNN, as a typed result (``analysis.qnn.result.QnnReport``: the ``qnn`` object of
    ``etscope qnn --json``, which ``analysis.views.qnn_view`` completes).
    ``qhas_ops_by_key``: per partition key, the QHAS/optrace op table of that partition's own files
    (several context binaries, ``analysis.qnn.partition_files``), used instead of ``qhas``/``optrace``'s.
    ``htp_sources``: ``(partition key or None, qhas, optrace)`` per file pair of those shards, for the
    HTP-op breakdown (default: ``qhas``/``optrace`` joined by op names). ``dram_gbps``: the DRAM
    bandwidth to compare with (``--dram-gbps``; default: the SoC's sourced figure, if any). ``shards``:
    the several QNN files' view (``analysis.qnn.partition_files.shard_view``), when given.
    ``steady`` (bool per Execute run of ``profile``; default ``stats.steady_runs``): the runs the
    ETDump partitions' statistics are over (a QNN profile file's executes are each counted)."""
    graph = None
    if profile is not None and profile.etrecord is not None:
        graph = lowering_graph(profile)
    qhas_ops = merge_op_tables(qhas_op_table(qhas) if qhas is not None else None,
                                optrace_op_table(optrace) if optrace is not None else None)
    series: list[QnnSeries] = []
    if profile is not None:
        series += series_from_profile(profile)
    if qnn_profile is not None:
        series += series_from_qnn_profile(qnn_profile)
    measured = measured_clock(runtrace)
    method_us = method_execute_us(profile) if profile is not None else None
    backends = _backends(profile, series)
    steady = steady_or_default(profile, steady) if profile is not None else None
    partitions = [analyse_series(s, graph, qhas_ops if qhas_ops_by_key is None else qhas_ops_by_key.get(s.key),
                                 measured, method_us if s.source == "etdump" else None, backend=b,
                                 steady=steady[np.asarray(s.runs, dtype=np.int64)] if s.source == "etdump"
                                 and steady is not None else None)
                  for s, b in zip(series, backends)]
    warnings = _warnings(partitions, profile, series, qnn_profile, runtrace, measured) + _shard_warnings(shards)
    vtcm = soc.vtcm_bytes if soc is not None else None
    if htp_sources is None and (qhas is not None or optrace is not None):
        htp_sources = [(None, qhas, optrace)]
    htp = htp_view(htp_sources or [], partitions, runtrace, soc, dram_gbps)
    qhas_out = None
    if qhas is not None:
        qhas_out = qhas_summary(qhas, vtcm, soc.soc_model if soc is not None else None, per_call=_per_call(partitions))
    return QnnReport(
        schema=SCHEMA,
        partitions=tuple(partitions),
        qhas=qhas_out,
        optrace=optrace_summary(optrace) if optrace is not None else None,
        htp_timeline=None if optrace is None else htp_timeline(
            optrace, qhas, runtrace, next((p.clock_mhz_used for p in partitions if p.clock_mhz_used), None)
        ).view(),
        soc=soc,
        runtrace=None if runtrace is None else RuntraceClock(
            path=runtrace.path, graphs=runtrace.graphs, clock_mhz=measured["mhz"] if measured else None,
            clock_mhz_per_execute=measured["per_execute"] if measured else None),
        warnings=tuple(warnings),
        htp_ops=tuple(htp) or None,     # only with QHAS/optrace files (an added key, see htp_view)
        shards=shards)


def _backends(profile, series: list[QnnSeries]) -> list[str | None]:
    """Each partition's backend as the ETDump's instruction names it (None without an ETDump)."""
    if profile is None:
        return [None] * len(series)
    out = []
    for s in series:
        ins = profile.instructions.get(s.instruction_id) if s.instruction_id is not None else None
        out.append(ins.backend if ins else QNN_BACKEND_ID)
    return out


def _shard_warnings(shards) -> list[str]:
    """Per file of several QNN files (``partition_files.ShardView``): the partition it went to and how, or none."""
    out = []
    for f in (shards.files if shards is not None else ()):
        where = (f"{f.partition} ({f.how}, {f.match_ratio:.0%} of its ops matched)" if f.partition
                 else "no partition")
        out.append(f"{f.kind} {f.path}: {where}" + (f"; {f.note}" if f.note else ""))
    return out


def _warnings(partitions: list[Partition], profile, series, qnn_profile, runtrace, measured) -> list[str]:
    warnings = []
    for p in partitions:
        if p.clock_warning:
            warnings.append(f"{p.key}: {p.clock_warning}")
        for c in p.checks:
            if not c.ok:
                warnings.append(f"{p.key}: check failed: {c.check} ({c.runs_failing} of {c.runs_checked} runs)")
        if p.unmatched_ops:
            warnings.append(f"{p.key}: {len(p.unmatched_ops)} QNN op(s) not found in the ETRecord "
                            f"graph, e.g. {p.unmatched_ops[0]}")
    if qnn_profile is not None:
        warnings += [f"{qnn_profile.source}: {w}" for w in qnn_profile.warnings]
    warnings += clock_warnings(partitions, runtrace, measured)
    if profile is not None and not series:
        warnings.append("no QNN events in this ETDump (QNN profile level off, or no QnnBackend partition)")
    if profile is not None:
        skipped = qnn_instructions(profile)[MAX_QNN_PARTITIONS:]
        if skipped:
            warnings.append(f"{len(skipped)} more QNN partitions (instructions {skipped[0]} to {skipped[-1]}) "
                            f"not analysed: only the first {MAX_QNN_PARTITIONS} are")
    return warnings


def _per_call(partitions: list[Partition]) -> tuple[PerCall, ...]:
    """Beside QHAS's one inference of a separate run: this ETDump's real calls, per partition (the
    NPU's busy share of its DELEGATE_CALL, p50 over warm runs; at most how many calls a second)."""
    out = []
    for p in partitions:
        busy = p.npu_busy_per_call
        if busy is None or not p.delegate_call_ms:
            continue
        out.append(PerCall(partition=p.key, instruction_id=p.instruction_id, delegate_call_ms=p.delegate_call_ms,
                           npu_busy_p50=busy.p50, runs=busy.runs, calls_per_s=1000.0 / p.delegate_call_ms,
                           basis=busy.basis))
    return tuple(out)


def htp_view(sources: list[tuple], partitions: list[Partition], runtrace, soc: QnnSoc | None,
             dram_gbps: float | None) -> list[HtpView]:
    """Per QHAS/optrace file pair: the HTP-op breakdown (``analysis.qnn.htp_ops``) joined to its
    partition's graph nodes, and its limits (``analysis.qnn.limits``) at the clock of the optrace
    run's first inference (``htp_timeline.timeline_clock``, one rule for every view)."""
    from etscope.analysis.qnn.htp_timeline import timeline_clock
    from etscope.analysis.qnn.htp_ops import breakdown, joined
    from etscope.analysis.qnn.limits import dram_bandwidth, limits

    bw = dram_bandwidth(soc.soc_model if soc is not None else None, dram_gbps)
    by_key = {p.key: p for p in partitions}
    out = []
    for key, qhas, optrace in sources:
        b = breakdown(qhas, optrace, key)
        if b is None:
            continue
        if b.source == "qhas" and optrace is not None:
            b = _checked_against(b, optrace)
        part = by_key.get(key) if key is not None else _best_partition(b, partitions)
        if part is not None:
            b = joined(b, part)
        clock = timeline_clock(qhas, runtrace, part.clock_mhz_used if part else None)
        out.append(HtpView(breakdown=b, limits=limits(b, clock, bw)))
    return out


def _checked_against(b, optrace):
    """The QHAS breakdown with a note saying whether the optrace (the same inference, as QNN writes
    both) has the same cycles per QNN op; a mismatch means the two files come from different runs."""
    from dataclasses import replace

    from etscope.analysis.qnn.htp_ops import from_optrace

    o = from_optrace(optrace)
    if o is None:
        return b
    mine = {x.qnn_op: x.cycles for x in b.ops if x.htp_ops}
    theirs = {x.qnn_op: x.cycles for x in o.ops if x.htp_ops}
    if mine == theirs:
        note = f"the optrace holds the same {len(mine)} QNN ops with the same cycles (the same inference)"
    else:
        differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
        note = (f"the optrace disagrees with this QHAS on {len(differ)} QNN op(s), e.g. {differ[0]}: "
                "the two files may come from different runs; the QHAS is shown")
    return replace(b, notes=b.notes + (note,))


def _best_partition(b, partitions: list[Partition]) -> Partition | None:
    """The partition holding most of the breakdown's QNN op names as per-op rows (None: none)."""
    names = {o.qnn_op for o in b.ops}
    best, hits = None, 0
    for p in partitions:
        n = len(names & {o.base for o in p.ops})
        if n > hits:
            best, hits = p, n
    return best


def method_execute_us(profile: P.Profile) -> np.ndarray:
    """Method::execute per run in µs (NaN for a run without one)."""
    lat = profile.runs["latency_ns"].astype(np.float64)
    return np.where(lat > 0, units.ns_to_us(lat), np.nan)


def lowering_graph(profile: P.Profile):
    er = profile.etrecord
    method = profile.method or "forward"
    for attr in ("lowering_input",):
        fn = getattr(er, attr, None)
        if fn is not None:
            try:
                g = fn(method)
                if g is not None:
                    return g
            except Exception:  # noqa: BLE001 - any reader problem just means no graph join
                pass
    graphs = getattr(er, "graphs", None) or {}
    return graphs.get(method)
