"""What the HTML report shows, computed once from the other analyses (issue 14: the view bundle;
``render.html`` only formats it).

- ``hierarchy``: Method::execute -> delegate calls per backend / CPU kernels / overhead ->
  instructions -> the events inside them, ms per run (mean);
- ``placement``: mean ms per run per (category, op type);
- ``runs``: per-run columns (latency and its split, start) and the LLM phase of each run;
- ``nodes``: the ETRecord graph's nodes with placement and time (``analysis.ops.nodes``);
- ``modules``: inclusive time per source module (``analysis.ops.modules``);
- ``checks``: warnings about units and failed invariants, in plain words;
- ``findings``: what the report says first, ranked (``analysis.findings``).

Values are unrounded: the renderer rounds them for the page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.findings import Finding, findings
from etscope.analysis.qnn.partition_result import Partition
from etscope.analysis.qnn.result import QnnReport
from etscope.analysis.ops.delegate_ops import MATCHED_HOW, PartitionOps, match_delegate_ops
from etscope.analysis.ops.modules import ModuleTimes, module_times
from etscope.analysis.ops.nodes import NodeTable, graph_for_views, node_table
from etscope.analysis.ops.per_op import OpRow, inner_rows_by_call
from etscope.analysis.ops.placement import per_run_parts
from etscope.analysis.stats import runs_counted
from etscope.analysis.views.report_parts import (AnyBox, Box, CallBox, CpuOpBox, DelegateBox, EventBox, OpTypeTime,
                                                 QnnOpBox, RunColumns, fitted)
from etscope.analysis.views.timeline import first_timed_ns, since_origin
from etscope.formats.backends import backend_of, is_qnn

if TYPE_CHECKING:
    from etscope.analysis.llm.result import LlmReport
    from etscope.analysis.views.summary_result import FilesSummary, Summary

_XNN_REPEAT = re.compile(r"#\d+$")   # then rstrip(): "\s*#\d+$" is quadratic on runs of spaces


@dataclass(frozen=True)
class ReportView:
    """Everything one report needs, each analysis run once (see :func:`report_view`)."""
    profile: P.Profile
    summary: Summary | FilesSummary  # FilesSummary: QNN files alone
    ops: list[OpRow]
    qnn: QnnReport | None          # analysis.qnn.result (QNN files alone: the QnnView with their files)
    llm: LlmReport | None          # with its memory wall
    hierarchy: AnyBox | None
    placement: list[OpTypeTime]
    runs: RunColumns | None      # None: no ETDump (QNN files alone)
    nodes: NodeTable | None
    checks: list[str]
    notes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    modules: ModuleTimes | None = None


def report_view(profile: P.Profile, summary, ops: list[OpRow], qnn: QnnReport | None, llm,
                notes: list[str] | None = None, modules: ModuleTimes | None = None,
                ranked: list[Finding] | None = None, steady: np.ndarray | None = None) -> ReportView:
    """The view bundle of one profile from its summary, op table, QNN and LLM results (and the
    module times and the findings, computed here when not given: ``ranked`` is the command's one
    list, ``analysis.results.Results.findings``). ``steady``: the runs the summary and op table are
    over (default ``stats.steady_runs``): means per run divide by their count; the per-run columns
    keep every run."""
    matched = match_delegate_ops(profile, ops, graph_for_views(profile), steady)
    n_steady = runs_counted(profile, steady)
    tree = hierarchy(summary, ops, qnn, n_steady, matched)
    return ReportView(profile=profile, summary=summary, ops=ops, qnn=qnn, llm=llm, hierarchy=tree,
                      placement=placement_by_op_type(summary, ops, qnn, n_steady),
                      runs=run_columns(profile, llm), nodes=node_table(profile, ops, qnn, steady),
                      checks=checks(summary, profile, qnn, tree), notes=list(notes or []),
                      findings=list(ranked) if ranked is not None else findings(summary, qnn),
                      modules=modules if modules is not None else module_times(profile, ops, qnn, steady))


def _ns_to_ms(x) -> float:
    return float(units.to_ms(x, units.NS))


def _us_to_ms(x) -> float:
    return float(units.to_ms(x, units.US))


def _qnn_partitions(qnn: QnnReport | None) -> dict:
    return {p.instruction_id: p for p in (qnn.partitions if qnn is not None else ())}


def hierarchy(summary, ops: list[OpRow], qnn: QnnReport | None, n_runs: int,
              matched: dict[int, PartitionOps] | None = None) -> AnyBox | None:
    """Method::execute -> delegate calls per backend / CPU kernels / overhead -> instructions -> the
    events inside them, in ms per run (mean). Inside a QNN call: the QNN time levels it logs, outside
    in (QNN execute ⊇ RPC ⊇ … ⊇ Accelerator), then the ops in the innermost, estimated as their
    share of it (``analysis.qnn.container``). Children never add up to more than their box. ``matched`` (``analysis.ops.delegate_ops``): a delegate event matched
    to a graph node is named by the node (``event`` keeps the backend's name for it)."""
    lat = summary.runs.latency_ms
    if not lat:
        return None
    n = max(n_runs, 1)
    qparts = _qnn_partitions(qnn)
    inside = inner_rows_by_call(ops)
    calls_ms: dict[int, float] = {}
    for r in ops:
        if r.level == 0 and r.role == "delegate_call":
            calls_ms[r.instruction_id] = calls_ms.get(r.instruction_id, 0.0) + r.total_ms / n
    boxes: list[AnyBox] = []
    for b in summary.breakdown:
        if b.kind == "delegate":
            calls: list[AnyBox] = []
            for r in ops:
                if r.level == 0 and r.role == "delegate_call" and r.placement == b.backend:
                    iid = r.instruction_id
                    call_ms = r.total_ms / n
                    # A partition's per-op times cover all its calls in a run: this call's part of them.
                    part_of_calls = call_ms / calls_ms[iid] if calls_ms.get(iid) else 0.0
                    calls.append(CallBox(name=f"DELEGATE_CALL #{iid}", ms=call_ms, kind="delegate_call",
                                         backend=b.backend, op_type=r.op_type,
                                         children=_inside_call(iid, r.occurrence, qparts, inside, n,
                                                               (matched or {}).get(iid), part_of_calls)))
            boxes.append(DelegateBox(name=f"{b.backend} delegate calls", ms=b.mean_ms, kind="delegate",
                                     backend=b.backend, children=tuple(calls)))
        elif b.kind == "cpu_ops":
            boxes.append(_cpu_node(b, ops, inside, n))
        else:
            boxes.append(Box(name="framework overhead", ms=b.mean_ms, kind="overhead"))
    return fitted(Box(name="Method::execute", ms=lat.mean, kind="method", children=tuple(boxes)))


def _inside_call(iid: int, occurrence: int, qparts: dict, inside: dict, n: int,
                 matched: PartitionOps | None = None, part_of_calls: float = 1.0) -> tuple[AnyBox, ...]:
    """The events inside one delegate call: its QNN ops when there are (shown under the
    instruction's first call, at that call's part of the partition's time per run), else its own
    rows (named by their graph node where ``matched`` paired them)."""
    part = qparts.get(iid)
    if part and part.ops and occurrence == 0:
        qnn_box = _qnn_ops_box(part, part_of_calls)
        if qnn_box:
            return qnn_box
    out = []
    event_node = matched.event_node if matched is not None else {}
    for k, r in enumerate(inside.get((iid, occurrence), [])):
        if r.unit == "ns" and r.total:
            ms = _ns_to_ms(r.total) / n
            node = event_node.get((occurrence, k))
            out.append(EventBox(name=r.name, ms=ms, kind=r.role) if node is None else
                       EventBox(name=node, ms=ms, kind=r.role, node=node, event=r.name, how=MATCHED_HOW))
    return tuple(out)


def _qnn_ops_box(part: Partition, factor: float) -> tuple[AnyBox, ...]:
    """The measured QNN levels inside the call, outside in (QNN execute ⊇ RPC ⊇ … ⊇ Accelerator:
    none when the ops are shares of the DELEGATE_CALL itself), the partition's ops inside the
    innermost: each op's share of it, ms per run (mean); ``factor``: this call's part of them."""
    ot = part.op_times
    estimate = ot.estimate
    ops = []
    for op in part.ops:
        us = op.us_in_container
        if isinstance(us, (int, float)) and us > 0:
            ops.append(QnnOpBox(name=str(op.qnn_name or op.node or "?"), ms=_us_to_ms(us) * factor,
                                kind="qnn_op", estimated=True, estimate=estimate, op_type=op.op_type,
                                node=op.node))
    if not ops:
        return ()
    inner: tuple[AnyBox, ...] = tuple(ops)
    for level in reversed(ot.levels):
        if level.us_mean is None:
            continue
        inner = (Box(name=f"{level.name} (QNN, measured)", ms=_us_to_ms(level.us_mean) * factor,
                     kind="qnn_level", children=inner),)
    return inner


def _cpu_node(b, ops: list[OpRow], inside: dict, n: int) -> Box:
    kernels = []
    for r in ops:
        if r.level == 0 and r.role in ("operator_call", "kernel") and r.unit == "ns":
            iid = r.instruction_id
            kernels.append(CpuOpBox(
                name=f"{r.op_type or r.name} (#{iid})", ms=r.total_ms / n, kind="operator_call", source=r.source,
                children=tuple(Box(name=k.name, ms=_ns_to_ms(k.total) / n, kind="kernel")
                               for k in inside.get((iid, r.occurrence), []) if k.unit == "ns")))
    return Box(name="CPU kernels (fallback)", ms=b.mean_ms, kind="cpu", children=tuple(kernels))


def category_of(placement: str | None) -> str:
    backend = backend_of(placement)
    if backend is not None and backend.npu:
        return f"NPU ({backend.name})"
    if placement == "cpu":
        return "CPU"
    if placement is None:
        return "framework overhead"
    return f"other delegate ({placement})"


def placement_by_op_type(summary, ops: list[OpRow], qnn: QnnReport | None, n_runs: int) -> list[OpTypeTime]:
    """Mean ms per run per (category, op type): CPU kernels by edge op type, QNN ops by op type
    (estimated: their share of the measured accelerator time, ``analysis.qnn.container``; ``estimate``
    says so), other delegates by the op names they log (XNNPACK ``#N`` suffix dropped), partitions
    without per-op rows as a whole. Ops only: framework overhead is in the summary's breakdown."""
    n = max(n_runs, 1)
    agg: dict[tuple[str, str], dict] = {}

    def add(cat, placement, op_type, ms, estimated=False):
        a = agg.setdefault((cat, op_type), {"category": cat, "placement": placement, "op_type": op_type,
                                            "ms": 0.0, "count": 0, "estimated": False})
        a["ms"] += ms
        a["count"] += 1
        a["estimated"] = a["estimated"] or bool(estimated)
        if isinstance(estimated, str):      # what the estimate is a share of (QNN ops only)
            a["estimate"] = estimated if a.get("estimate") in (None, estimated) else "estimate: share of measured QNN time"

    qparts = _qnn_partitions(qnn)
    inside = inner_rows_by_call(ops)
    for r in ops:
        if r.level != 0 or r.unit != "ns":
            continue
        iid, pl = r.instruction_id, r.placement
        cat = category_of(pl)
        if r.role != "delegate_call":
            add(cat, pl, r.op_type or r.name, r.total_ms / n)
            continue
        part = qparts.get(iid)
        qops = [o for o in (part.ops if part is not None else ()) if isinstance(o.us_in_container, (int, float))]
        if qops:
            # The partition's per-op estimates (shares of its measured container) describe the
            # instruction: counted once, with its first call (as in the hierarchy), not once per call.
            if r.occurrence == 0:
                for o in qops:
                    add(cat, pl, str(o.op_type or o.qnn_name or "?"), _us_to_ms(o.us_in_container),
                        part.op_times.estimate or True)
            continue
        inner = [x for x in inside.get((iid, r.occurrence), []) if x.unit == "ns"]
        if inner:
            for x in inner:
                add(cat, pl, _XNN_REPEAT.sub("", x.name).rstrip() or "?", _ns_to_ms(x.total) / n)
        else:
            add(cat, pl, f"whole partition (DELEGATE_CALL #{iid}, no per-op times)", r.total_ms / n)
    # Framework overhead is not an op type: the Method::execute split (summary breakdown) shows it;
    # ranked here it sat among the NPU ops (issue 15: "framework overhead 6.2 µs" second).
    return [OpTypeTime(**a) for a in sorted(agg.values(), key=lambda a: -a["ms"])]


def run_phases(llm, n_runs: int) -> tuple[str | None, ...] | None:
    """Phase name per Execute run from the LLM analysis (``analysis.llm.result.LlmReport``: its
    phases list their run indices)."""
    if llm is None:
        return None
    out: list[str | None] = [None] * n_runs
    any_set = False
    for ph in llm.llm.phases:
        for r in ph.runs:
            if 0 <= r < n_runs:
                out[r] = ph.name
                any_set = True
    return tuple(out) if any_set else None


def run_columns(profile: P.Profile, llm) -> RunColumns:
    """Per-run columns (the ``runs`` table of render.export) as arrays: execute, start (µs since
    the first timed event; NaN for a run without a start), latency and its parts (ms); and the
    phases (a list)."""
    parts = per_run_parts(profile)
    start = profile.runs["start_ns"].astype("int64")
    start_us = np.asarray(units.to_us(since_origin(start, first_timed_ns(profile)), units.NS), dtype=np.float64)
    start_us[start == 0] = np.nan

    def ms(a):
        return np.asarray(units.to_ms(np.asarray(a), units.NS), dtype=np.float64)

    return RunColumns(execute=np.arange(profile.n_runs), start_us=start_us, latency_ms=ms(parts["latency"]),
                      delegate_ms=tuple((b, ms(parts[f"delegate:{b}"])) for b in profile.backends()),
                      cpu_ops_ms=ms(parts["cpu_ops"]), framework_overhead_ms=ms(parts["framework_overhead"]),
                      phase=run_phases(llm, profile.n_runs))


def checks(summary, profile: P.Profile, qnn: QnnReport | None, tree: AnyBox | None) -> list[str]:
    """Warnings about units and failed invariants, in plain words (shown in the report)."""
    out: list[str] = []
    parts = per_run_parts(profile)
    neg = int((parts["framework_overhead"] < -units.us_to_ns(1.0)).sum())   # more than 1 µs below zero
    if neg:
        out.append(f"In {neg} run(s) the delegate calls and CPU kernels add up to more than Method::execute "
                   "(overhead below zero): events overlap or the clock is not monotonic.")
    has_qnn_rows = any(is_qnn(d.backend) for d in summary.delegate_calls)
    if has_qnn_rows and not (qnn and qnn.partitions):
        out.append("QNN rows are in their own units (cycles, µs, counts); the QNN analysis was not available, "
                   "so no per-op times are estimated from cycles.")
    elif qnn and qnn.partitions:
        holders = sorted({p.op_times.container for p in qnn.partitions if p.op_times.ops_us_mean} - {None})
        if holders:
            out.append("QNN per-op times are estimates, not measured times: each op's share of its partition's "
                       f"cycles × the measured {' / '.join(holders)} of the same run (within its DELEGATE_CALL). "
                       "Cycles ÷ clock and the clock's bounds are in the QNN section.")
    if tree:
        _overfull(tree, [], out)
    return out


def _overfull(box: AnyBox, path: list[str], out: list[str]) -> None:
    """Boxes whose logged events added up to more than the box (``fitted`` made them shares)."""
    logged = box.children_logged_ms
    if logged is not None and logged > box.ms * 1.01 + 1e-6:
        out.append(f"'{' > '.join(path + [box.name])}': the events logged inside add up to {logged:.4g} ms per "
                   f"run, more than its own {box.ms:.4g} ms (events overlap, or the clock is not monotonic); "
                   "they are shown as their shares of it.")
    for k in box.children or ():
        _overfull(k, path + [box.name], out)
