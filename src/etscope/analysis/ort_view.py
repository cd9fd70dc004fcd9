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

CPU_NODES_SHOWN = 20


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

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def ort_view(ort, qnn_report: dict | None = None) -> OrtView:
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
    qnn_parts = [p for p in (qnn_report or {}).get("partitions") or [] if p.get("source") != "etdump"]
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


def _stats(dur: np.ndarray, n_steady: int, total: float) -> tuple[float, float, float, float]:
    """(calls per run, p50, mean, share of model_run) of one node's durations over steady runs."""
    s = float(np.nansum(dur))
    return (len(dur) / n_steady if n_steady else 0.0, float(median(dur)) if dur.size else float("nan"),
            float(np.nanmean(dur)) if dur.size else float("nan"), s / total if total > 0 else 0.0)


def _partitions(ort, qnn: np.ndarray, n_steady: int, total: float) -> list[OrtPartition]:
    """QNN partitions in the order a run first calls them."""
    idx = np.flatnonzero(qnn)
    key = ort.node_op[idx]
    key = np.where(key == "", ort.node_name[idx], key)
    order = sorted(set(key.tolist()), key=lambda k: float(ort.node_start_us[idx[key == k]].min()))
    by_first_run = _order_in_a_run(ort, idx, key, order)
    out = []
    for k, name in enumerate(by_first_run):
        calls, p50, mean, share = _stats(ort.node_dur_us[idx[key == name]], n_steady, total)
        out.append(OrtPartition(order=k, name=name, calls_per_run=calls, p50_us=p50, mean_us=mean, share=share,
                                qnn_graph=None, qnn_execute_us=None, accel_us=None))
    return out


def _order_in_a_run(ort, idx, key, names: list[str]) -> list[str]:
    """Partition names in the order the first run holding all of them calls them."""
    runs = ort.node_run[idx]
    for r in np.unique(runs):
        in_run = key[runs == r]
        if set(in_run.tolist()) == set(names):
            return list(dict.fromkeys(in_run[np.argsort(ort.node_start_us[idx[runs == r]], kind="stable")].tolist()))
    return names


def _join(partitions: list[OrtPartition], qnn_parts: list[dict]) -> tuple[str, list[OrtPartition]]:
    if not qnn_parts:
        return "no QNN profile given (--qnn-csv): the QNN levels inside each partition are not known", partitions
    if len(qnn_parts) != len(partitions):
        return (f"not joined: ORT ran {len(partitions)} QNN partition(s), the QNN profile has {len(qnn_parts)} "
                "graph(s)"), partitions
    out = []
    for p, q in zip(partitions, qnn_parts):
        out.append(OrtPartition(**{**p.__dict__, "qnn_graph": str(q.get("key")),
                                   "qnn_execute_us": q.get("qnn_execute_us"), "accel_us": q.get("accel_us")}))
    return ("joined by execution order: ORT's k-th QNN partition of a run is the QNN profile's graph k "
            "(both number partitions in the order they run)"), out


def _cpu_nodes(ort, cpu: np.ndarray, n_steady: int, total: float) -> list[OrtCpuNode]:
    idx = np.flatnonzero(cpu)
    out = []
    for name in dict.fromkeys(ort.node_name[idx].tolist()):
        sel = idx[ort.node_name[idx] == name]
        calls, p50, mean, share = _stats(ort.node_dur_us[sel], n_steady, total)
        out.append(OrtCpuNode(op=str(ort.node_op[sel[0]]), name=str(name), calls_per_run=calls, p50_us=p50,
                              mean_us=mean, share=share))
    return sorted(out, key=lambda c: -c.share)
