"""One QNN partition analysed: its nesting levels with what each adds, consistency checks, per-op
rows joined to the ETRecord graph and to QHAS/optrace, cold runs, and the clock."""
from __future__ import annotations

import dataclasses

import numpy as np

from etscope.arrays import nanmedian
from etscope.analysis.stats import finite_mean, quiet_nansum, ratio_of_sums

from etscope import units
from etscope.analysis.qnn.nesting import METHOD as METHOD_EXECUTE
from etscope.analysis.qnn.nesting import nesting as nesting_of
from etscope.analysis.qnn.clock import clock_estimate, clock_fields
from etscope.analysis.qnn.container import op_mean_us, op_shares, per_run_fields, summary_fields
from etscope.analysis.qnn.model import (ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, LEVELS, POWER_ON,
                                        QNN_ACCEL, QNN_EXECUTE, RPC_EXECUTE, VTCM_ACQUIRE, WELL_KNOWN, QnnSeries,
                                        as_list, p50)
from etscope.analysis.qnn.partition_result import (BusyShare, Check, CyclesLevel, OpRow, OtherEvent, Partition,
                                                   PerRun, SumCheck, TimeLevel)
from etscope.formats.qnn_names import fx_node_candidates, parse_qnn_event_name


def _busy_per_call(s: QnnSeries) -> BusyShare | None:
    """The NPU's busy share of a real call: Accelerator (execute) time ÷ DELEGATE_CALL per run, p50
    over the warm runs (cold runs paid power-up): what a QHAS utilisation, which describes one
    inference of a separate optrace run, does not say."""
    dc = _delegate_call_us(s)
    acc = s.roots.get(ACCEL_US)
    if dc is None or acc is None:
        return None
    dc, acc = np.asarray(dc, dtype=np.float64), np.asarray(acc, dtype=np.float64)
    warm = np.ones(len(dc), dtype=bool)
    cold = set(cold_runs(s))
    warm[[i for i, r in enumerate(s.runs) if int(r) in cold]] = False
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(dc > 0, acc / dc, np.nan)[warm]
    share = share[np.isfinite(share)]
    if share.size == 0:
        return None
    return BusyShare(p50=float(np.median(share)), runs=int(share.size),
                     basis="Accelerator (execute) time ÷ DELEGATE_CALL per run, p50 over the warm runs")


def cold_runs(s: QnnSeries) -> list[int]:
    """Runs that paid HTP power-up: 'Time for HVX + HMX power on and acquire' far above the rest."""
    power = s.roots.get(POWER_ON)
    if power is None or np.isnan(power).all():
        return []
    base = nanmedian(power)
    # Well above the typical run, by ratio and by at least a millisecond of absolute time.
    cold = np.nonzero((power > 1.5 * base) & (power > base + 1000))[0]
    return [int(s.runs[i]) for i in cold]


def analyse_series(s: QnnSeries, graph=None, qhas_ops: dict | None = None, measured: dict | None = None,
                   method_us: np.ndarray | None = None, backend: str | None = None,
                   steady: np.ndarray | None = None) -> Partition:
    """One partition analysed. ``method_us``: Method::execute per Execute run (µs), read at ``s.runs``
    (ETDump only), the outermost band of the nesting; ``backend``: the backend the ETDump's
    instruction names (None without an ETDump: the key is left out). ``steady`` (bool, aligned on
    ``s.runs``; None: every run): the runs its statistics are over (the ETDump's runs without their
    warm-up, ``stats.steady_runs``); the run count, per-run series, cold runs and checks keep every run."""
    if steady is not None and 0 < np.count_nonzero(steady) < len(s.runs):
        whole = analyse_series(s, graph, qhas_ops, measured, method_us, backend)
        part = analyse_series(_columns(s, steady), graph, qhas_ops, measured, method_us, backend)
        return dataclasses.replace(part, runs=whole.runs, per_run=whole.per_run, cold_runs=whole.cold_runs,
                                   checks=whole.checks, notes=whole.notes,
                                   warmup_runs_left_out=int(len(s.runs) - np.count_nonzero(steady)))
    clock = clock_estimate(s)
    fields, clock_used = clock_fields(s, clock, measured)
    n = len(s.runs)
    accel = s.roots.get(ACCEL_CYCLES)
    node_sum = quiet_nansum(s.node_values, axis=0) if s.node_values.size else np.zeros(n)
    has_nodes = ~np.isnan(s.node_values).all(axis=0) if s.node_values.size else np.zeros(n, bool)
    levels = _levels(s)
    checks = _checks(s, node_sum, has_nodes, levels)
    rows = _ops(s, dict(clock, clock_mhz=clock_used), accel, graph, qhas_ops)
    used_p50 = fields["clock_mhz_used"]
    # What the views show per op: its share of the measured container, per run (analysis.qnn.container).
    shares = op_shares(s, clock_used)
    ops = tuple(OpRow(**o, est_us_at_clock=_at_clock(o, used_p50), us_in_container=us)
                for o, us in zip(rows, op_mean_us(shares, s)))
    nest = _nesting(s, method_us, accel, fields)
    dc = p50(s.delegate_call_ns)
    return Partition(
        key=s.key, instruction_id=s.instruction_id, source=s.source,
        runs=int(n),
        delegate_call_ms=units.ns_to_ms(dc) if dc is not None else None,
        qnn_execute_us=p50(s.roots.get(QNN_EXECUTE)),
        rpc_us=p50(s.roots.get(RPC_EXECUTE)),
        qnn_accel_us=p50(s.roots.get(QNN_ACCEL)),
        accel_us=p50(s.roots.get(ACCEL_US)),
        accel_excl_wait_us=p50(s.roots.get(ACCEL_EXCL_WAIT_US)),
        accel_cycles=p50(accel),
        clock_mhz_est=p50(clock["clock_mhz"]),
        clock_mhz_est_range=(p50(clock["lo"]), p50(clock["hi"])),
        clock_basis=clock["basis"],
        clock_is_estimate=True,
        **fields,
        clock_warning=clock["warning"],
        cold_runs=tuple(cold_runs(s)),
        npu_busy_per_call=_busy_per_call(s),
        accumulating=s.accumulating,
        levels=levels,
        counts={k[0]: p50(v) for k, v in s.roots.items() if k[1] == "count"},
        bytes={k[0]: p50(v) for k, v in s.roots.items() if k[1] == "bytes"},
        other_events=tuple(OtherEvent(name=k[0], unit=k[1], p50=p50(v)) for k, v in s.roots.items()
                           if k not in WELL_KNOWN and k[1] not in ("count", "bytes")),
        per_run=PerRun(
            delegate_call_us=as_list(_delegate_call_us(s)),
            qnn_execute_us=as_list(s.roots.get(QNN_EXECUTE)),
            accel_us=as_list(s.roots.get(ACCEL_US)),
            accel_excl_wait_us=as_list(s.roots.get(ACCEL_EXCL_WAIT_US)),
            accel_cycles=as_list(accel),
            node_cycles_sum=as_list(np.where(has_nodes, node_sum, np.nan)),
            clock_mhz_est=as_list(clock["clock_mhz"]),
            clock_mhz_used=as_list(clock_used),
            power_on_us=as_list(s.roots.get(POWER_ON)),
            vtcm_acquire_us=as_list(s.roots.get(VTCM_ACQUIRE)),
            **per_run_fields(shares),
        ),
        op_times=summary_fields(shares, clock_used, n),
        ops=ops,
        ops_matched_to_graph=sum(1 for o in ops if o.node),
        ops_named=sum(1 for o in ops if o.graph_op),
        unmatched_ops=tuple(o.qnn_name for o in ops if o.graph_op and not o.node) if graph is not None else (),
        checks=tuple(checks),
        notes=tuple(s.notes),
        nesting=nest,
        headline=nest.headline,
        backend=backend)


def _columns(s: QnnSeries, keep: np.ndarray) -> QnnSeries:
    """The series of the runs ``keep`` (bool, aligned on ``s.runs``) only."""
    return dataclasses.replace(
        s, runs=s.runs[keep], roots={k: np.asarray(v)[keep] for k, v in s.roots.items()},
        node_values=s.node_values[:, keep],
        delegate_call_ns=None if s.delegate_call_ns is None else np.asarray(s.delegate_call_ns)[keep],
        copies_per_run=None if s.copies_per_run is None else np.asarray(s.copies_per_run)[keep],
        notes=list(s.notes))


def _at_clock(o: dict, used_p50: float | None) -> float | None:
    """The one per-op time the text shows: cycles p50 ÷ the clock stated above it."""
    return (o["cycles_p50"] / used_p50 if o["unit"] == "cycles" and used_p50
            and o["cycles_p50"] is not None else None)


def _delegate_call_us(s: QnnSeries) -> np.ndarray | None:
    """DELEGATE_CALL per run in µs (ExecuTorch measures it in ns; QNN's levels are in µs)."""
    return None if s.delegate_call_ns is None else units.ns_to_us(s.delegate_call_ns)


def _nesting(s: QnnSeries, method_us, accel, fields: dict):
    """The partition's nesting picture (analysis.qnn.nesting) from its per-run levels."""
    levels = [(METHOD_EXECUTE, None if method_us is None else np.asarray(method_us, dtype=np.float64)[s.runs])]
    for key, _, _ in LEVELS:
        if key == "DELEGATE_CALL":
            levels.append(("DELEGATE_CALL", _delegate_call_us(s)))
        else:
            levels.append((key[0], s.roots.get(key)))
    lo, hi = fields["clock_mhz_bounds"]
    # Above any core clock (cycles summed over parallel threads): an effective rate, which no time bounds.
    effective = fields["clock_source"] == "estimate" and fields["clock_bound"] == "effective"
    return nesting_of(levels, accel, fields["clock_mhz_used"],
                      "effective" if effective else fields["clock_source"],
                      (lo, hi) if (lo is not None or hi is not None) and not effective else None)



def _levels(s: QnnSeries) -> tuple[TimeLevel | CyclesLevel, ...]:
    """The nesting with the p50 of each level and what it adds over the next one inside it."""
    rows = []
    values = []
    for key, what, adds in LEVELS:
        if key == "DELEGATE_CALL":
            v = _delegate_call_us(s)
            name, unit = "DELEGATE_CALL", "us"
        else:
            v = s.roots.get(key)
            name, unit = key[0], key[1]
        if v is None or np.isnan(v).all():
            continue
        values.append(v)
        rows.append((name, unit, p50(v), what, adds))
    out: list[TimeLevel | CyclesLevel] = [
        TimeLevel(name=name, unit=unit, p50_us=p, what=what, adds_over_next=adds,
                  adds_us_p50=p50(values[i] - values[i + 1]) if i + 1 < len(rows) else None)
        for i, (name, unit, p, what, adds) in enumerate(rows)]
    cyc = s.roots.get(ACCEL_CYCLES)
    if cyc is not None:
        out.append(CyclesLevel(name=ACCEL_CYCLES[0], unit="cycles", p50_cycles=p50(cyc),
                               what="HTP cycles of the graph execution; the per-op rows below add up to it"))
    return tuple(out)


def _checks(s: QnnSeries, node_sum, has_nodes, levels) -> list[Check]:
    checks = []
    accel = s.roots.get(ACCEL_CYCLES)
    if accel is not None and has_nodes.any():
        ok_runs = has_nodes & ~np.isnan(accel)
        diff = np.abs(node_sum[ok_runs] - accel[ok_runs])
        rel = diff / np.maximum(accel[ok_runs], 1)
        bad = int((rel > 0.001).sum())
        checks.append(SumCheck(check="sum of per-op cycles = Accelerator (execute) time (cycles)",
                               ok=bad == 0, runs_checked=int(ok_runs.sum()), runs_failing=bad,
                               max_rel_diff=float(rel.max()) if rel.size else None))
    vals = []
    for key, _, _ in LEVELS:
        v = _delegate_call_us(s) if key == "DELEGATE_CALL" else s.roots.get(key)
        if v is not None and not np.isnan(v).all():
            vals.append(((key if isinstance(key, str) else key[0]), v))
    for (outer_name, outer), (inner_name, inner) in zip(vals, vals[1:]):
        both = ~np.isnan(outer) & ~np.isnan(inner)
        # Whole-µs values: allow 1 µs of rounding.
        bad = both & (inner > outer + 1.0)
        checks.append(Check(check=f"{inner_name} ≤ {outer_name}", ok=not bad.any(),
                            runs_checked=int(both.sum()), runs_failing=int(bad.sum())))
    if s.accumulating:
        checks.append(Check(check="QNN events accumulate across executes (detected, de-duplicated)",
                            ok=True, runs_checked=int(len(s.runs)), runs_failing=0))
    return checks


def _ops(s: QnnSeries, clock, accel, graph, qhas_ops) -> list[dict]:
    """Per QNN op, the fields of its ``OpRow`` but those that need the whole partition."""
    mhz = clock["clock_mhz"]
    total_accel = float(quiet_nansum(accel)) if accel is not None else None
    rows = []
    by_name = getattr(graph, "by_name", None) or {}
    for i, name in enumerate(s.node_names):
        vals = s.node_values[i]
        original = name.split(" #")[0]
        parsed = parse_qnn_event_name(original)
        base = parsed.base
        node = None
        candidates = fx_node_candidates(original)
        for cand in candidates:
            if cand in by_name:
                node = by_name[cand]
                break
        with np.errstate(divide="ignore", invalid="ignore"):
            est_us = vals / mhz if s.node_unit[i] == "cycles" else np.full(vals.shape, np.nan)
        q = (qhas_ops or {}).get(base) if base else None
        row = {
            "qnn_name": name, "base": base or None, "op_id": parsed.op_id, "token": parsed.token,
            "graph_op": bool(candidates),   # False for QNN's own Input/Output/nameless rows
            "unit": s.node_unit[i],
            "node": node.name if node else None,
            "op_type": node.target if node else None,
            "source": getattr(node, "source", None) if node else None,
            "module": _module(node),
            "runs": int((~np.isnan(vals)).sum()),
            "cycles_p50": p50(vals), "cycles_mean": finite_mean(vals),
            "est_us_p50": p50(est_us), "est_is_estimate": True,
            "share": ratio_of_sums(vals, accel) if total_accel else None,
            "hmx": q["hmx"] if q else None, "hvx": q["hvx"] if q else None, "dma": q["dma"] if q else None,
            "htp_ops": q["htp_ops"] if q else None,
            "dram_read": q["dram_read"] if q else None, "dram_write": q["dram_write"] if q else None,
            "vtcm_read": q["vtcm_read"] if q else None, "vtcm_write": q["vtcm_write"] if q else None,
            "dominant_path_cycles": q["dominant_path_cycles"] if q else None,
            "qhas_cycles": q["cycles"] if q else None,
        }
        rows.append(row)
    return rows


def _module(node) -> str | None:
    if node is None:
        return None
    stack = getattr(node, "nn_module_stack", None) or ()
    if not stack:
        return None
    try:
        path, typ = stack[-1][1]
        return f"{path} ({typ.rsplit('.', 1)[-1]})" if path else typ
    except (TypeError, ValueError, IndexError):
        return None


# ---- QHAS / optrace ----------------------------------------------------------------------------------
