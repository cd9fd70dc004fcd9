"""What an ONNX Runtime profile says about a QNN session, joined to the QNN profile of the same
session when given: per steady run, the ``model_run`` wall time, each QNN partition's EP kernel
time (ORT's call into QNN: the level around QNN's own ``QNN (execute)``, as DELEGATE_CALL is in
ExecuTorch) and the CPU-fallback nodes between them.

Joining to the QNN profile: both list the QNN partitions in execution order (ORT: the partition
nodes of one ``model_run``; the QNN profile: graph 0, 1, ... numbered by first appearance), so
partition k of one is graph k of the other, when both have the same number of partitions. The
levels then nest: model_run ⊇ EP kernel ⊇ QNN execute ⊇ Accelerator (execute) time; each level's
p50 is over the steady runs of its own file (ORT's warm-up runs are left out by the rule of
``stats.leading_warmup``; the QNN profile's p50 is over its executes), so the "adds" between ORT
and QNN levels compare p50s of two event streams of one session, not run-by-run differences.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope.analysis.stats import leading_warmup
from etscope.arrays import median

MAX_PARTITIONS = 1000       # listed; a real session has a handful
MAX_CPU_NODES = 1000        # listed, largest share first; the shares above count them all


@dataclass(frozen=True)
class OrtPartition:
    order: int                         # k: the k-th QNN partition a run calls
    name: str                          # ORT's fused node (QNN_<hash>_<k>)
    calls_per_run: float
    p50_us: float
    mean_us: float
    share: float                       # of model_run (steady runs' means)
    qnn_graph: str | None              # the QNN profile graph joined to it ("graph 0"), if any
    qnn_execute_us: float | None       # that graph's QNN (execute) time p50
    accel_us: float | None             # its Accelerator (execute) time p50


@dataclass(frozen=True)
class OrtCpuNode:
    op: str
    name: str
    calls_per_run: float
    p50_us: float
    mean_us: float
    share: float


@dataclass(frozen=True)
class OrtView:
    path: str
    runs: int
    warmup_runs: tuple[int, ...]
    run_p50_us: float | None
    run_mean_us: float | None
    qnn_share: float                   # QNN partitions' EP kernel time ÷ model_run (steady means)
    cpu_share: float                   # CPU nodes ÷ model_run
    other_share: float                 # the rest: ORT between nodes, other providers
    partitions: tuple[OrtPartition, ...]
    cpu_nodes: tuple[OrtCpuNode, ...]  # slowest first (all of them; views cut)
    joined: str                        # how the partitions were joined to the QNN profile
    notes: tuple[str, ...]


def ort_view(ort, qnn_report=None) -> OrtView:
    """The session as ORT saw it (``formats.ort_profile.OrtProfile``), joined to the QNN report of
    the QNN profile file of the same session (``analysis.qnn.qnn_report`` of QNN files alone)."""
    n = ort.n_runs
    warm = leading_warmup(ort.run_dur_us) if n else 0
    steady = np.zeros(n, dtype=bool)
    steady[warm:] = True
    run_dur = ort.run_dur_us[steady]
    total = float(np.nansum(run_dur))
    in_steady = (ort.node_run >= 0) & np.append(steady, False)[ort.node_run]
    n_steady = int(steady.sum())
    qnn = ort.is_qnn() & in_steady
    cpu = (ort.node_provider == "CPUExecutionProvider") & in_steady
    partitions = _partitions(ort, qnn, n_steady, total)
    qnn_parts = [p for p in (qnn_report.partitions if qnn_report is not None else ()) if p.source != "etdump"]
    joined, partitions = _join(partitions, qnn_parts)
    notes = list(ort.warnings)
    if n and not n_steady:
        notes.append("no steady run")
    outside = int((ort.node_run < 0).sum())
    if outside:
        notes.append(f"{outside} node event(s) outside any model_run left out")
    qnn_us = float(np.nansum(ort.node_dur_us[qnn]))
    cpu_us = float(np.nansum(ort.node_dur_us[cpu]))
    share = (lambda x: x / total if total > 0 else 0.0)
    return OrtView(path=ort.path, runs=n, warmup_runs=tuple(range(warm)),
                   run_p50_us=float(median(run_dur)) if run_dur.size else None,
                   run_mean_us=float(np.nanmean(run_dur)) if run_dur.size else None,
                   qnn_share=share(qnn_us), cpu_share=share(cpu_us), other_share=share(max(total - qnn_us - cpu_us, 0.0)),
                   partitions=tuple(partitions), cpu_nodes=tuple(_cpu_nodes(ort, cpu, n_steady, total)),
                   joined=joined, notes=tuple(notes))


def _group_stats(group: np.ndarray, dur: np.ndarray, n_groups: int, n_steady: int, total: float):
    """Per group (``group``: int per node): calls per run, p50, mean and share of model_run, in one
    sort (no loop over groups: a crafted file may hold a million distinct node names)."""
    finite = np.isfinite(dur)
    g, d = group[finite], dur[finite]
    order = np.lexsort((d, g))
    g, d = g[order], d[order]
    count = np.bincount(g, minlength=n_groups)
    calls = np.bincount(group, minlength=n_groups)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    last = max(len(d) - 1, 0)
    lo = np.clip(start + np.maximum(count - 1, 0) // 2, 0, last)     # the middle one or two of each group
    hi = np.clip(start + count // 2, 0, last)
    p50 = np.where(count > 0, (d[lo] + d[hi]) / 2 if len(d) else 0.0, np.nan)
    sums = np.bincount(g, weights=d, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, sums / np.maximum(count, 1), np.nan)
    per_run = calls / n_steady if n_steady else np.zeros(n_groups)
    share = sums / total if total > 0 else np.zeros(n_groups)
    return per_run, p50, mean, share


def _partitions(ort, qnn: np.ndarray, n_steady: int, total: float) -> list[OrtPartition]:
    """QNN partitions in the order a run first calls them (the order of their first call)."""
    idx = np.flatnonzero(qnn)
    if idx.size == 0:
        return []
    key = ort.node_op[idx]
    key = np.where(key == "", ort.node_name[idx], key).astype(str)
    names, inv = np.unique(key, return_inverse=True)
    first = np.full(len(names), np.inf)
    np.minimum.at(first, inv, np.nan_to_num(ort.node_start_us[idx], nan=np.inf))
    calls, p50, mean, share = _group_stats(inv, ort.node_dur_us[idx], len(names), n_steady, total)
    out = []
    for k, g in enumerate(np.argsort(first, kind="stable")[:MAX_PARTITIONS]):
        out.append(OrtPartition(order=k, name=str(names[g]), calls_per_run=float(calls[g]), p50_us=float(p50[g]),
                                mean_us=float(mean[g]), share=float(share[g]), qnn_graph=None, qnn_execute_us=None,
                                accel_us=None))
    return out


def _join(partitions: list[OrtPartition], qnn_parts: list[dict]) -> tuple[str, list[OrtPartition]]:
    if not qnn_parts:
        return "no QNN profile given (--qnn-csv): the QNN levels inside each partition are not known", partitions
    if len(qnn_parts) != len(partitions):
        return (f"not joined: ORT ran {len(partitions)} QNN partition(s), the QNN profile has {len(qnn_parts)} "
                "graph(s)"), partitions
    out = []
    for p, q in zip(partitions, qnn_parts):
        out.append(OrtPartition(**{**p.__dict__, "qnn_graph": str(q.key),
                                   "qnn_execute_us": q.qnn_execute_us, "accel_us": q.accel_us}))
    return ("joined by execution order: ORT's k-th QNN partition of a run is the QNN profile's graph k "
            "(both number partitions in the order they run)"), out


def _cpu_nodes(ort, cpu: np.ndarray, n_steady: int, total: float) -> list[OrtCpuNode]:
    idx = np.flatnonzero(cpu)
    if idx.size == 0:
        return []
    names, first_at, inv = np.unique(ort.node_name[idx].astype(str), return_index=True, return_inverse=True)
    calls, p50, mean, share = _group_stats(inv, ort.node_dur_us[idx], len(names), n_steady, total)
    top = np.argsort(-share, kind="stable")[:MAX_CPU_NODES]
    return [OrtCpuNode(op=str(ort.node_op[idx[first_at[g]]]), name=str(names[g]), calls_per_run=float(calls[g]),
                       p50_us=float(p50[g]), mean_us=float(mean[g]), share=float(share[g])) for g in top]
