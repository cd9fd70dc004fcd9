"""Per phase, each QNN partition (shard) of the method the phase ran: its DELEGATE_CALL time, HTP
cycles and accelerator time per run, and the FastRPC / QNN overhead per run.

Numbers come from the events each run logged (``analysis.qnn.series_from_profile``), over the
phase's steady runs:

* **delegate call**: ExecuTorch's DELEGATE_CALL wall time of the shard's instruction (ns -> ms);
* **accelerator time**: ``Accelerator (execute) time`` (us, the HTP executing the graph, waits
  included): the quantity ``etscope qnn`` calls the accelerator (one name, one level); only when the
  runs did not log it, ``QNN accelerator (execute) time`` (QNN's DSP-side handling around it, a
  larger level); which one is said in ``accel_basis``;
* **overhead**: delegate call minus accelerator time, per run: everything between ExecuTorch's
  call and the HTP's execution (QNN host work, FastRPC transport, DSP-side scheduling);
* **cycles**: ``Accelerator (execute) time (cycles)``; per token when the phase's tokens per run
  are known.

Per-run values of a shard are averaged over all the phase's steady runs, a run that did not call
the shard counting 0, so the shards' means add up to the per-run totals' mean (``totals``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from etscope.arrays import median
from etscope import units
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis.glossary import ACCELERATOR, DELEGATE_CALL

OVERHEAD_DOMINATES = 0.5      # overhead share of the QNN delegate time said to dominate


@dataclass(frozen=True)
class PerRun:
    """A value per steady run of the phase: its mean and p50 over the runs that have it."""
    mean: float
    p50: float
    runs: int


@dataclass(frozen=True)
class Partition:
    """One QNN partition of the phase's method; per steady run: its DELEGATE_CALL, accelerator time,
    HTP cycles and the overhead between; ``share``: of the phase's QNN delegate time (means)."""
    instruction_id: int
    runs_called: int
    accel_basis: str | None        # which QNN event gave the accelerator time
    delegate_call_ms: PerRun | None
    accel_ms: PerRun | None
    accel_cycles: PerRun | None
    overhead_ms: PerRun | None
    cycles_per_token: float | None
    overhead_share: float | None
    share: float | None


@dataclass(frozen=True)
class PartitionTotals:
    """The partitions' values added per run, then their mean and p50."""
    delegate_call_ms: PerRun | None
    accel_ms: PerRun | None
    accel_cycles: PerRun | None
    overhead_ms: PerRun | None
    cycles_per_token: float | None
    overhead_share: float | None
    partitions: int = field(metadata={"json": "shards"})


@dataclass(frozen=True)
class PhasePartitions:
    """The phase's QNN partitions (JSON ``shards``: the LLM export's word), their totals per run."""
    partitions: tuple[Partition, ...] = field(metadata={"json": "shards"})
    totals: PartitionTotals
    accel_basis: str | None


def qnn_series_by_part(files) -> dict[int, list]:
    """Per part (``FileRuns.file_index``) with QNN partitions, its QnnSeries (one per partition)."""
    out = {}
    for f in files:
        if qnn_analysis.qnn_instructions(f.profile):
            out[f.file_index] = qnn_analysis.series_from_profile(f.profile)
    return out


def phase_shards(series_by_part: dict[int, list], steady_by_part: dict[int, list[int]],
                 tokens_per_run) -> PhasePartitions | None:
    """The QNN shards of one phase: per shard and in total per run; None without QNN partitions."""
    # A phase's runs may come from parts with different shards (several ETDumps, or methods): every
    # shard gets a value for every run of the phase, NaN (not called) in the parts without it.
    ids = sorted({int(s.instruction_id) for part in steady_by_part for s in series_by_part.get(part, [])})
    per_shard: dict[int, dict[str, list]] = {iid: {"call_ns": [], "accel_us": [], "cycles": [], "basis": set()}
                                             for iid in ids}
    n_runs = 0
    for part, rows in steady_by_part.items():
        rows = np.asarray(rows, dtype=np.int64)
        n_runs += rows.size
        mine = {int(s.instruction_id): s for s in series_by_part.get(part, [])}
        for iid, cols in per_shard.items():
            s = mine.get(iid)
            if s is None:
                for k in ("call_ns", "accel_us", "cycles"):
                    cols[k].append(np.full(rows.size, np.nan))
                continue
            dc = s.delegate_call_ns[rows] if s.delegate_call_ns is not None else np.full(rows.size, np.nan)
            accel, basis = _accel_us(s, rows)
            cols["call_ns"].append(dc)
            cols["accel_us"].append(accel)
            cols["cycles"].append(_root(s, qnn_analysis.ACCEL_CYCLES, rows))
            cols["basis"].update([basis] if basis else [])
    shards = [_shard(iid, cols) for iid, cols in sorted(per_shard.items())]
    shards = [s for s in shards if s is not None]
    if not shards or n_runs == 0:
        return None
    return _with_totals(shards, tokens_per_run)


def _accel_us(s, rows) -> tuple[np.ndarray, str | None]:
    for key in (qnn_analysis.ACCEL_US, qnn_analysis.QNN_ACCEL):
        v = _root(s, key, rows)
        if np.isfinite(v).any():
            return v, key[0]
    return np.full(len(rows), np.nan), None


def _root(s, key, rows) -> np.ndarray:
    arr = s.roots.get(key)
    return arr[rows].astype(np.float64) if arr is not None else np.full(len(rows), np.nan)


def _shard(iid: int, cols: dict) -> tuple[int, int, str | None, dict] | None:
    """One partition's (instruction, runs that called it, accelerator basis, per-run values)."""
    call_ms = units.to_ms(np.concatenate(cols["call_ns"]), units.NS)
    called = np.isfinite(call_ms)
    if not called.any():
        return None
    accel_ms = units.to_ms(np.concatenate(cols["accel_us"]), units.US)
    cycles = np.concatenate(cols["cycles"])
    overhead = call_ms - accel_ms
    per_run = {"delegate_call_ms": np.where(called, call_ms, 0.0), "accel_ms": np.where(called, accel_ms, 0.0),
               "accel_cycles": np.where(called, cycles, 0.0), "overhead_ms": np.where(called, overhead, 0.0)}
    return iid, int(called.sum()), " / ".join(sorted(cols["basis"])) or None, per_run


def _with_totals(shards: list[tuple], tokens_per_run) -> PhasePartitions:
    """Each partition's statistics and share, and the per-run totals over partitions (sum per run)."""
    keys = ("delegate_call_ms", "accel_ms", "accel_cycles", "overhead_ms")
    totals = {k: np.sum([s[3][k] for s in shards], axis=0) for k in keys}
    total_call = float(np.mean(totals["delegate_call_ms"]))
    rows = []
    for iid, runs_called, basis, per_run in shards:
        st = _stats(per_run, tokens_per_run)
        rows.append(Partition(instruction_id=iid, runs_called=runs_called, accel_basis=basis, **st,
                              share=st["delegate_call_ms"].mean / total_call if total_call else None))
    return PhasePartitions(partitions=tuple(rows),
                           totals=PartitionTotals(**_stats(totals, tokens_per_run), partitions=len(rows)),
                           accel_basis=" / ".join(sorted({b for s in rows if s.accel_basis
                                                          for b in s.accel_basis.split(" / ")})) or None)


def _stats(per_run: dict[str, np.ndarray], tokens_per_run) -> dict:
    """Mean and p50 per run of each value (NaN where a run lacks it: left out); cycles per token
    and the overhead's share of the delegate call from the means."""
    out = {}
    for k, v in per_run.items():
        ok = v[np.isfinite(v)]
        out[k] = PerRun(mean=float(ok.mean()), p50=float(median(ok)), runs=int(ok.size)) if ok.size else None
    cyc, call, ovh = out["accel_cycles"], out["delegate_call_ms"], out["overhead_ms"]
    out["cycles_per_token"] = cyc.mean / tokens_per_run if cyc and tokens_per_run else None
    out["overhead_share"] = ovh.mean / call.mean if ovh and call and call.mean else None
    return out


def overhead_finding(phase) -> str | None:
    """A sentence when the overhead is most of the phase's QNN delegate time (``phase``: a
    ``result.Phase``), with its basis."""
    q = phase.qnn
    tot = q.totals if q else None
    if not tot or tot.overhead_share is None or tot.overhead_share < OVERHEAD_DOMINATES:
        return None
    call, ovh, acc = tot.delegate_call_ms, tot.overhead_ms, tot.accel_ms
    where = f"{phase.name}" + (f" ({phase.method})" if isinstance(phase.method, str) else "")
    return (f"{where}: FastRPC / QNN overhead ({DELEGATE_CALL.label} minus {q.accel_basis}) is "
            f"{tot.overhead_share:.0%} of the QNN delegate time: {ovh.mean:.3f} of {call.mean:.3f} ms per "
            f"run over {tot.partitions} QNN shard(s), the {ACCELERATOR.label} {acc.mean:.3f} ms (means over "
            f"{call.runs} steady runs). For a small graph the per-call overhead dominates: fewer shards "
            "or more tokens per call would amortise it.")
