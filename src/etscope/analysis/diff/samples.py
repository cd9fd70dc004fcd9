"""The samples `etscope diff` compares: each side's steady ``Method::execute`` latency, and per op
(matched by an identity that survives re-export) its per-run values over the steady runs."""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections import Counter

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.ops import per_op as ops_analysis
from etscope.analysis.stats import steady_runs
from etscope.formats.qnn_names import parse_qnn_event_name


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import EventStats


def steady_latency_ms(profile: P.Profile) -> tuple[np.ndarray, int]:
    """Per-run Method::execute in ms without the leading warm-up runs (``stats.steady_runs``, the
    runs the single-file views' statistics are over), and how many were dropped."""
    lat = units.ns_to_ms(profile.runs["latency_ns"])
    n = int(np.count_nonzero(~steady_runs(profile)))
    return lat[n:], n


def _instruction_identities(profile: P.Profile) -> dict[int, tuple]:
    """Instruction id -> identity that survives re-export.

    CPU kernels: (cpu, op type, source, k-th such op). Delegate calls: (delegate, backend, k-th call
    of that backend). Instruction ids themselves shift whenever the graph changes.
    """
    counters: Counter = Counter()
    out = {}
    for ins in sorted(profile.instructions.values(), key=lambda i: i.id):
        if ins.kind == "cpu":
            base = ("cpu", ins.op_type or ins.kernel or "?", ins.source or "")
        else:
            base = ("delegate", ins.backend)
        out[ins.id] = base + (counters[base],)
        counters[base] += 1
    return out


def strip_qnn(name: str) -> str:
    parsed = parse_qnn_event_name(name)
    if parsed.op_id is None:
        return name
    base = parsed.base or "op"
    return base + (f"_token_{parsed.token}" if parsed.token is not None else "")


def op_samples(profile: P.Profile) -> dict[tuple, dict]:
    """Identity -> row info and per-run values, for instruction rows and what they contain."""
    rows = [r for r in ops_analysis.event_stats(profile, execute_only=True)
            if r.role in ("delegate_call", "operator_call", "delegate_internal") and r.instruction_id is not None]
    # Instructions with only a kernel event (no OPERATOR_CALL) are represented by the kernel.
    have_top = {r.instruction_id for r in rows if r.role in ("delegate_call", "operator_call")}
    rows += [r for r in ops_analysis.event_stats(profile, execute_only=True)
             if r.role == "kernel" and r.instruction_id not in have_top]
    runs_values = _sparse_samples(profile, rows)
    ident = _instruction_identities(profile)
    out: dict[tuple, dict] = {}
    for r, (runs, v) in zip(rows, runs_values):
        iid = r.instruction_id
        parent = ident.get(iid, ("instruction", iid))
        ins = profile.instructions.get(iid)
        where = f"{parent[1]} #{parent[-1] + 1}" if parent[0] == "delegate" else None
        if r.role == "delegate_internal":
            key = parent + ("internal", strip_qnn(r.name), r.occurrence)
            name = f"{r.name} (in {where})" if where else r.name
        else:
            key = parent + ("call", r.occurrence)
            name = (ins.kernel or ins.op_type) if ins and ins.kind == "cpu" else f"DELEGATE_CALL {where}"
        out[key] = {"identity": key, "name": name, "role": r.role, "unit": r.unit,
                    "op_type": ins.op_type if ins and r.role != "delegate_internal" else None,
                    "source": ins.source if ins and r.role != "delegate_internal" else None,
                    "placement": ins.backend if ins else None, "runs": runs, "values": v}
    return out


def _sparse_samples(profile: P.Profile, rows: list[EventStats]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per row, (runs holding it, its value in each), in run order: what ``ops.samples``' (rows x
    runs) matrix holds without its NaN cells. Memory is a multiple of the events, not rows x runs
    (every run calling its own instruction made that matrix 8000 x 8000: 1.2 GB for a 1.2 MB
    file). The same values: a run that logs a signature twice keeps the last, as the matrix did."""
    execute, value, inv, n_groups = ops_analysis.event_table(profile).groups()
    want = np.full(n_groups, -1, dtype=np.int64)
    for i, r in enumerate(rows):
        want[r.group] = i
    row_of = want[inv] if inv.size else np.zeros(0, dtype=np.int64)
    m = (row_of >= 0) & (execute >= 0)
    row_m, run_m = row_of[m], np.asarray(execute[m], dtype=np.int64)
    val_m = np.asarray(value[m], dtype=np.float64)
    order = np.lexsort((run_m, row_m))                      # by row, then run; stable
    row_s, run_s, val_s = row_m[order], run_m[order], val_m[order]
    last = np.ones(row_s.size, dtype=bool)                  # the last of each (row, run) wins
    last[:-1] = (row_s[1:] != row_s[:-1]) | (run_s[1:] != run_s[:-1])
    row_s, run_s, val_s = row_s[last], run_s[last], val_s[last]
    present = ~np.isnan(val_s)
    row_s, run_s, val_s = row_s[present], run_s[present], val_s[present]
    bounds = np.searchsorted(row_s, np.arange(len(rows) + 1)).tolist()
    return [(run_s[a:b], val_s[a:b]) for a, b in zip(bounds, bounds[1:])]


def steady_samples(profiles: list[P.Profile], dropped: list[int]) -> dict[tuple, dict]:
    """:func:`op_samples` of the sessions of one side, without their warm-up runs, pooled over the
    sessions by identity (the first session's identities)."""
    pooled: dict[tuple, dict] = {}
    for p, n in zip(profiles, dropped):
        for key, info in op_samples(p).items():
            v = info["values"][info["runs"] >= n]
            if key in pooled:
                pooled[key]["values"] = np.concatenate([pooled[key]["values"], v])
            elif p is profiles[0]:
                pooled[key] = {k: x for k, x in info.items() if k != "runs"} | {"values": v}
    return pooled

