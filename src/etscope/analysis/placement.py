"""What ran where: Method::execute split into delegate calls (per backend), CPU kernels and framework
overhead, per run; and the list of CPU-fallback kernels.

Per run: latency = Σ DELEGATE_CALL + Σ OPERATOR_CALL + overhead, where overhead is what
Method::execute measured outside any instruction event (argument setup, memory planning, moves,
the profiler itself). The three parts add up to the latency by construction; the parts are
measured, the overhead is the remainder.
"""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.memo import per_profile
from etscope.analysis.stats import describe, grouped
from etscope.arrays import isin, median, unique, unique_inverse


def instruction_times(profile: P.Profile) -> dict[str, np.ndarray]:
    """Per (run, instruction): wall time in ns of its instruction-level events and their count.

    For CPU instructions the OPERATOR_CALL event is the instruction's time; when a build logs only
    the kernel event, that is used instead. Computed once per profile (a copy of the dict each call).
    """
    return dict(_instruction_times(profile))


@per_profile
def _instruction_times(profile: P.Profile) -> dict[str, np.ndarray]:
    ev = profile.events
    ex = ev["execute"]
    role = ev["role"]
    in_exec = ex >= 0
    op_call = (role == P.ROLE_OPERATOR_CALL) & in_exec
    dcall = (role == P.ROLE_DELEGATE_CALL) & in_exec
    instr = ev["instruction_id"]
    # Instructions that have an OPERATOR_CALL anywhere use it; others fall back to their kernel event.
    with_op_call = unique(instr[op_call])
    sel = op_call | dcall
    kern = np.nonzero((role == P.ROLE_KERNEL) & in_exec)[0]
    if kern.size:
        sel[kern[~isin(instr[kern], with_op_call)]] = True
    # Selected by the mask itself, not through an index of the selected events (on 10M events
    # that index alone was 33 MB); the int32 columns are not copied twice.
    return {"execute": ex[sel].astype(np.int32, copy=False), "instruction_id": instr[sel].astype(np.int32, copy=False),
            "ns": ev["value"][sel], "is_delegate": dcall[sel]}


def per_run_parts(profile: P.Profile) -> dict[str, np.ndarray]:
    """Per-run ns: latency, one column per delegate backend, CPU ops, overhead, and call counts.
    Computed once per profile (a copy of the dict each call)."""
    return dict(_per_run_parts(profile))


@per_profile
def _per_run_parts(profile: P.Profile) -> dict[str, np.ndarray]:
    n = profile.n_runs
    it = instruction_times(profile)
    parts: dict[str, np.ndarray] = {"latency": profile.runs["latency_ns"].astype(np.float64)}
    backend_of = {i.id: i.backend for i in profile.instructions.values()}
    backends = profile.backends()
    ids = it["instruction_id"]
    inside = np.zeros(n)
    for b in backends:
        bid = np.array([i for i, bk in backend_of.items() if bk == b and profile.instructions[i].kind == "delegate"])
        m = it["is_delegate"] & isin(ids, bid)
        parts[f"delegate:{b}"] = np.bincount(it["execute"][m], weights=it["ns"][m], minlength=n)
        parts[f"calls:{b}"] = np.bincount(it["execute"][m], minlength=n).astype(np.float64)
        inside += parts[f"delegate:{b}"]
    cpu = ~it["is_delegate"]
    parts["cpu_ops"] = np.bincount(it["execute"][cpu], weights=it["ns"][cpu], minlength=n)
    parts["calls:cpu"] = np.bincount(it["execute"][cpu], minlength=n).astype(np.float64)
    inside += parts["cpu_ops"]
    parts["framework_overhead"] = parts["latency"] - inside
    return parts


def breakdown(profile: P.Profile) -> list[dict]:
    """Mean per run of each part of Method::execute, in ms, with its share of the mean latency."""
    parts = per_run_parts(profile)
    lat = parts["latency"]
    ok = ~np.isnan(lat)
    mean_lat = float(lat[ok].mean()) if ok.any() else float("nan")
    rows = []
    for b in profile.backends():
        d = parts[f"delegate:{b}"][ok]
        rows.append({"kind": "delegate", "backend": b,
                     "calls_per_run": float(parts[f"calls:{b}"][ok].mean()) if ok.any() else 0.0,
                     "mean_ms": _ms(d.mean()) if ok.any() else 0.0,
                     "p50_ms": _ms(median(d)) if ok.any() else 0.0,
                     "share": float(d.mean() / mean_lat) if ok.any() and mean_lat else 0.0})
    for kind in ("cpu_ops", "framework_overhead"):
        d = parts[kind][ok]
        row = {"kind": kind, "mean_ms": _ms(d.mean()) if ok.any() else 0.0,
               "p50_ms": _ms(median(d)) if ok.any() else 0.0,
               "share": float(d.mean() / mean_lat) if ok.any() and mean_lat else 0.0}
        if kind == "cpu_ops":
            row["calls_per_run"] = float(parts["calls:cpu"][ok].mean()) if ok.any() else 0.0
        rows.append(row)
    return rows


def latency_summary(profile: P.Profile) -> dict:
    lat = profile.runs["latency_ns"]
    lat = lat[~np.isnan(lat)]
    if lat.size == 0:
        return {"count": profile.n_runs, "latency_ms": None}
    s = describe(units.ns_to_ms(lat))
    return {"count": profile.n_runs,
            "latency_ms": {k: s[k] for k in ("p10", "p50", "p90", "p99", "mean", "min", "max", "total")}}


def fallback_ops(profile: P.Profile) -> list[dict]:
    """One entry per CPU-kernel instruction, in instruction order."""
    it = instruction_times(profile)
    cpu = ~it["is_delegate"]
    ids = it["instruction_id"][cpu]
    if ids.size == 0:
        return []
    uniq, inv = unique_inverse(ids)
    del ids
    calls = np.bincount(inv, minlength=len(uniq))
    # Per (instruction, run) totals, then statistics over the runs that executed it. Each
    # temporary has one value per call (~30 MB on 10M events): each goes as soon as it is used.
    key = inv * profile.n_runs
    del inv
    key += it["execute"][cpu]
    kuniq, kinv = unique_inverse(key)      # a table over the keys' span when it is small
    del key
    per_run = np.bincount(kinv, weights=it["ns"][cpu])
    del kinv, cpu, it
    group = kuniq // profile.n_runs
    del kuniq
    st = grouped(group, per_run, len(uniq), transform=units.ns_to_ms)
    del group, per_run
    total_latency_ms = units.ns_to_ms(float(np.nansum(profile.runs["latency_ns"])))
    rows = []
    for j, i in enumerate(uniq):
        ins = profile.instructions.get(int(i))
        rows.append({
            "instruction_id": int(i),
            "op_type": ins.op_type if ins else None,
            "op_type_from": _op_type_origin(ins),
            "kernel": ins.kernel if ins else None,
            "operator": ins.operator if ins else None,
            "runs": int(st["count"][j]),
            "calls_per_run": float(calls[j] / max(profile.n_runs, 1)),
            "mean_ms": float(st["mean"][j]), "p50_ms": float(st["p50"][j]),
            "total_ms": float(st["total"][j]),
            "share": float(st["total"][j] / total_latency_ms) if total_latency_ms else 0.0,
            "source": ins.source if ins else None,
            "nodes": ins.nodes if ins else [],
        })
    return rows


def _op_type_origin(ins) -> str | None:
    if ins is None:
        return None
    if ins.op_types:
        return "etrecord"
    if ins.operator:
        return "pte"
    if ins.kernel:
        return "kernel name (guess)"
    return None


def _ms(ns) -> float:
    return units.ns_to_ms(float(ns))
