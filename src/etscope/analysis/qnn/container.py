"""QNN per-op times as shares of the measured time that contains them (issue 34: containers never
overflow). The one place the views' per-op QNN times come from (modules, graph nodes, op types,
"Where time goes").

QNN logs per-op *cycles*; a time per op needs a clock, which QNN does not log (it is derived, or
measured by a separate runtrace run). Cycles ÷ clock can add up to more than the call that ran
them (a clock from another session, values pooled over runs of different sizes), and a view that
adds them would put 21 ms of ops inside a 5 ms DELEGATE_CALL. So, run by run:

    op time = op cycles / the partition's cycles × the measured container time

where the container is the innermost QNN time level logged around the ops (``CONTAINER_LEVELS``:
'Accelerator (execute excluding wait) time' first, the span the cycles were counted in; then
'Accelerator (execute) time', waits included, ...), never more than the run's DELEGATE_CALL (the
QNN levels sit inside it). The partition's cycles are the larger of the per-op sum and the
accelerator total, so the ops never add up to more than the container. The views show the mean
per run over the partition's runs (an op absent from a run counts 0 there), as they show
Method::execute's other parts.

The raw estimate (cycles ÷ the clock used) is kept beside it. The ops ran within the widest
accelerator time (``BOUND_LEVELS``, waits included: cycles ÷ it is the clock's lower bound), so
raw estimates adding up to more than that mean a clock below what the measured time allows: a
finding (``analysis.findings``, kind ``ops_exceed_container``), not something the scaling hides.
(Above the excluding-wait time alone they are not: a measured clock is normally below cycles ÷
that time, the clock's upper bound, and QNN's whole-µs values move it.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope import units
from etscope.analysis.qnn.model import (ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, QNN_ACCEL, QNN_EXECUTE,
                                        RPC_EXECUTE, QnnSeries, as_list, p50)
from etscope.analysis import glossary
from etscope.analysis.stats import quiet_nansum
from etscope.analysis.qnn.partition_result import LevelMean, OpTimes

# Innermost first: the first level the partition logs holds the ops' shares.
CONTAINER_LEVELS = tuple((lv.event, lv.unit) for lv in reversed(glossary.QNN_TIME_LEVELS))
# What the raw estimates must fit in: the accelerator time with its waits (the clock's lower bound).
BOUND_LEVELS = CONTAINER_LEVELS[CONTAINER_LEVELS.index(ACCEL_US):]
DELEGATE_CALL = glossary.DELEGATE_CALL.event
# Raw estimates above the container by more than this (QNN's µs values are whole µs) are a finding.
OVER_REL, OVER_US = 0.01, 1.0


@dataclass(frozen=True)
class OpShares:
    """Per-op times of one partition, per run (µs): shares of the measured container."""
    container: str              # the QNN level (or DELEGATE_CALL) the ops are shares of
    container_us: np.ndarray    # per run, at most every level around it (NaN: not logged)
    clipped_runs: int           # runs that logged a level longer than the one around it (capped)
    bound: str                  # the level the raw estimates must fit in (waits included)
    bound_us: np.ndarray        # per run, at most every level around it
    levels: tuple               # (QNN level, per-run µs) outside in, each at most the one around it;
                                # the last one is the container
    op_us: np.ndarray           # (ops, runs): each op's share; 0 where the op or the container is absent
    ops_us: np.ndarray          # per run: the ops' shares added up (NaN: no per-op cycles or no container)
    ops_raw_us: np.ndarray      # per run: cycles ÷ the clock used, added up (NaN: no clock or no cycles)
    cycles: np.ndarray          # per run: the partition's cycles (the shares' denominator)

    @property
    def estimate(self) -> str:
        return f"estimate: share of measured {self.container}"


def op_shares(s: QnnSeries, clock_used: np.ndarray) -> OpShares:
    """The per-run shares of ``s``'s cycle rows in its measured container (see the module doc).
    ``clock_used``: the clock (MHz) per run that the raw estimates divide by."""
    n = len(s.runs)
    call_us = units.ns_to_us(np.asarray(s.delegate_call_ns, dtype=np.float64)) if s.delegate_call_ns is not None \
        else np.full(n, np.nan)
    levels, clipped = _nested_levels(s, call_us)
    name, cont = levels[-1] if levels else (DELEGATE_CALL, _no_negative(call_us.copy()))
    bound_name, bound = next(((k[0], v) for k in BOUND_LEVELS for nm, v in levels if nm == k[0]), (name, cont))
    is_cyc = np.array([u == "cycles" for u in s.node_unit], dtype=bool)
    vals = s.node_values[is_cyc] if s.node_values.size and is_cyc.any() else np.zeros((0, n))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        present = ~np.isnan(vals)
        cyc = np.where(present & np.isfinite(vals) & (vals > 0), vals, 0.0)
        op_sum = quiet_nansum(cyc, axis=0) if cyc.size else np.zeros(n)
        accel = s.roots.get(ACCEL_CYCLES)
        accel = np.where(np.isfinite(accel) & (accel > 0), accel, 0.0) if accel is not None else np.zeros(n)
        total = np.maximum(op_sum, accel)
        has_ops = present.any(axis=0) if vals.size else np.zeros(n, dtype=bool)
        ok = has_ops & (total > 0) & ~np.isnan(cont)
        frac = np.where(ok, cont / np.where(total > 0, total, 1.0), 0.0)
        op_us = cyc * frac[None, :]
        # Shares add up to at most 1 by construction; in floating point they may pass the container
        # by an ulp, and a container is a container.
        ops_us = quiet_nansum(op_us, axis=0) if op_us.size else np.zeros(n)
        fix = ok & (ops_us > cont)
        if fix.any():
            op_us[:, fix] *= (cont[fix] / ops_us[fix])[None, :]
            ops_us = quiet_nansum(op_us, axis=0)
        clock = np.asarray(clock_used, dtype=np.float64)
        clock_ok = np.isfinite(clock) & (clock > 0)
        raw = np.where(has_ops & clock_ok, op_sum / np.where(clock_ok, clock, 1.0), np.nan)
    return OpShares(container=name, container_us=cont, clipped_runs=clipped, bound=bound_name, bound_us=bound,
                    levels=tuple(levels), op_us=op_us,
                    ops_us=np.where(ok, ops_us, np.nan), ops_raw_us=raw, cycles=np.where(has_ops, total, np.nan))


def _nested_levels(s: QnnSeries, call_us: np.ndarray) -> tuple[list[tuple[str, np.ndarray]], int]:
    """The QNN time levels the partition logs, outside in (DELEGATE_CALL ⊇ QNN execute ⊇ RPC ⊇ QNN
    accelerator ⊇ Accelerator ⊇ Accelerator excluding wait), per run (µs), each at most the one
    around it and the first at most the run's DELEGATE_CALL; and how many runs logged a level longer
    than what holds it (capped). From an ETDump, a run without the DELEGATE_CALL has none (nothing
    holds the ops' time there)."""
    out: list[tuple[str, np.ndarray]] = []
    outer = call_us
    clipped = np.zeros(len(call_us), dtype=bool)
    for key in reversed(CONTAINER_LEVELS):
        v = s.roots.get(key)
        if v is None or np.isnan(v).all():
            continue
        v = _no_negative(np.asarray(v, dtype=np.float64).copy())
        with np.errstate(invalid="ignore"):
            clipped |= v > outer
        v = np.where(np.isnan(v), np.nan, np.fmin(v, outer))     # NaN around: the level's own value
        if s.delegate_call_ns is not None:
            v[np.isnan(call_us)] = np.nan
        out.append((key[0], v))
        outer = np.where(np.isnan(v), outer, v)   # a level missing in a run: the one around it still holds
    return out, int(clipped.sum())


def _no_negative(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        v[~(v >= 0) | ~np.isfinite(v)] = np.nan
    return v


def op_mean_us(shares: OpShares, s: QnnSeries) -> list[float | None]:
    """Per row of ``s`` (all units): its mean share per run over the partition's runs, None for
    rows not in cycles."""
    n = max(len(s.runs), 1)
    out: list[float | None] = []
    k = 0
    for unit in s.node_unit:
        if unit == "cycles" and shares.op_us.shape[0] > k:
            out.append(float(quiet_nansum(shares.op_us[k])) / n)
            k += 1
        else:
            out.append(None)
    return out


def summary_fields(shares: OpShares, clock_used: np.ndarray, n_runs: int) -> OpTimes:
    """The partition's ``op_times`` object: what the per-op times are shares of, the means per run
    of the nested QNN levels (``levels``, outside in, the last the container), the shares and the
    raw estimates, and the runs where the raw estimates exceed the bound, the accelerator time with
    its waits (with the clock that would have fitted)."""
    n = max(n_runs, 1)
    cont, raw, ops, bound = shares.container_us, shares.ops_raw_us, shares.ops_us, shares.bound_us
    both = ~np.isnan(raw) & ~np.isnan(bound)
    with np.errstate(invalid="ignore", divide="ignore"):
        over = both & (raw > bound * (1 + OVER_REL) + OVER_US)
        fit_mhz = np.where(over & (bound > 0), shares.cycles / np.where(bound > 0, bound, 1.0), np.nan)
    clock = np.asarray(clock_used, dtype=np.float64)
    return OpTimes(
        estimate=shares.estimate,
        how=(f"each op's share of the partition's cycles × the measured {shares.container} of the same run"
             + ("" if shares.container == DELEGATE_CALL else ", at most the run's DELEGATE_CALL")
             + "; mean per run"),
        container=shares.container,
        levels=tuple(LevelMean(name=nm, us_mean=_mean(v, n)) for nm, v in shares.levels),
        container_us_mean=_mean(cont, n),
        ops_us_mean=_mean(ops, n),
        ops_raw_us_mean=_mean(raw, n),
        container_clipped_runs=shares.clipped_runs,
        bound=shares.bound,
        bound_us_mean=_mean(bound, n),
        runs_compared=int(both.sum()),
        runs_over=int(over.sum()),
        over_runs=[int(i) for i in np.flatnonzero(over)[:32]],
        over_raw_us_mean=_mean(np.where(over, raw, np.nan), max(int(over.sum()), 1)) if over.any() else None,
        over_bound_us_mean=_mean(np.where(over, bound, np.nan), max(int(over.sum()), 1)) if over.any() else None,
        over_clock_mhz_used=p50(np.where(over, clock, np.nan)) if over.any() else None,
        over_clock_mhz_to_fit=p50(fit_mhz) if over.any() else None,
    )


def per_run_fields(shares: OpShares) -> dict:
    """The per-run series of the shares (fields of ``PerRun``)."""
    return {"container_us": as_list(shares.container_us), "ops_share_us": as_list(shares.ops_us),
            "ops_raw_us": as_list(shares.ops_raw_us)}


def _mean(a: np.ndarray, n: int) -> float | None:
    """Sum of the non-NaN values ÷ ``n`` (the runs): the mean per run, absent runs counting 0."""
    a = np.asarray(a, dtype=np.float64)
    if np.isnan(a).all():
        return None
    return float(quiet_nansum(a)) / n
