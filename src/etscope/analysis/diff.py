"""Compare two profiles: noise-aware latency change, per-op changes matched by an identity that
survives re-export, and placement changes (ops that moved between a delegate and the CPU).

Statistics: the whole-run change is the ratio of p50 latencies with a bootstrap 95% confidence
interval over runs; per-op changes use a rank test (Mann-Whitney U, normal approximation with tie
correction) on the per-run values. A change is reported as significant only when the interval
excludes zero (whole run) or p < 0.01 (ops) *and* the change is larger than ``min_effect``.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from etscope import profile as P
from etscope.analysis import ops as ops_analysis
from etscope.analysis import placement
from etscope.analysis.stats import leading_warmup
from etscope.formats.qnn_names import parse_qnn_event_name

SCHEMA = "etscope.diff/1"
BOOTSTRAP_RESAMPLES = 2000
OP_ALPHA = 0.01


# ---- statistics -------------------------------------------------------------------------------------
BOOTSTRAP_CHUNK_VALUES = 1 << 21   # resampled values held at once (16 MB of float64), whatever the run count


def bootstrap_medians(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``values``, drawn a block of resamples at a
    time so memory stays at BOOTSTRAP_CHUNK_VALUES values (a resamples x runs matrix of 40k runs
    would be 1.3 GB)."""
    n = values.size
    out = np.empty(resamples)
    rows = max(1, BOOTSTRAP_CHUNK_VALUES // max(n, 1))
    for start in range(0, resamples, rows):
        k = min(rows, resamples - start)
        out[start:start + k] = np.median(values[rng.integers(0, n, (k, n))], axis=1)
    return out


def bootstrap_median_ratio(base: np.ndarray, new: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                           seed: int = 0) -> tuple[float, float, float]:
    """(change %, lo %, hi %) of median(new)/median(base) - 1, bootstrap percentile 95% interval."""
    base = base[~np.isnan(base)]
    new = new[~np.isnan(new)]
    if base.size == 0 or new.size == 0:
        return float("nan"), float("nan"), float("nan")
    point = np.median(new) / np.median(base) - 1 if np.median(base) else float("nan")
    rng = np.random.default_rng(seed)
    mb = bootstrap_medians(base, resamples, rng)
    mn = bootstrap_medians(new, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = mn / mb - 1
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return point * 100, float("nan"), float("nan")
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(point * 100), float(lo * 100), float(hi * 100)


def hierarchical_bootstrap_ratio(base: list[np.ndarray], new: list[np.ndarray],
                                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """Like :func:`bootstrap_median_ratio` for repeated sessions: each resample draws sessions with
    replacement, then runs within each drawn session, so the interval carries the
    session-to-session noise (load, clocks, memory placement) that one session cannot show.

    A side with a single session borrows the other side's session-to-session spread: its resampled
    median is multiplied by a randomly drawn session factor (session median ÷ pooled median) of
    the side that has several sessions.
    """
    rng = np.random.default_rng(seed)
    base = [s[~np.isnan(s)] for s in base if np.isfinite(s).any()]
    new = [s[~np.isnan(s)] for s in new if np.isfinite(s).any()]
    if not base or not new:
        return float("nan"), float("nan"), float("nan")
    donor = base if len(base) >= len(new) else new
    pooled = np.median(np.concatenate(donor))
    factors = np.array([np.median(s) / pooled for s in donor]) if pooled else np.ones(1)

    def draw(sessions):
        meds = np.empty(resamples)
        for b in range(resamples):
            pick = rng.integers(0, len(sessions), len(sessions))
            runs = [sessions[i][rng.integers(0, sessions[i].size, sessions[i].size)] for i in pick]
            meds[b] = np.median(np.concatenate(runs))
        if len(sessions) == 1:
            meds *= factors[rng.integers(0, factors.size, resamples)]
        return meds, np.median(np.concatenate(sessions))

    mb, pb = draw(base)
    mn, pn = draw(new)
    point = pn / pb - 1 if pb else float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = mn / mb - 1
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = np.percentile(ratios, [2.5, 97.5]) if ratios.size else (float("nan"), float("nan"))
    return float(point * 100), float(lo * 100), float(hi * 100)


def steady_latency_ms(profile: P.Profile) -> tuple[np.ndarray, int]:
    """Per-run Method::execute in ms without the leading warm-up runs, and how many were dropped."""
    lat = profile.runs["latency_ns"] / 1e6
    n = leading_warmup(lat)
    return lat[n:], n


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    a = a[~np.isnan(a)]
    b = b[~np.isnan(b)]
    n1, n2 = a.size, b.size
    if n1 < 2 or n2 < 2:
        return float("nan")
    allv = np.concatenate([a, b])
    order = np.argsort(allv, kind="mergesort")
    ranks = np.empty(allv.size)
    sorted_v = allv[order]
    # Average ranks for ties.
    _, first, counts = np.unique(sorted_v, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    tie = (counts ** 3 - counts).sum()
    sigma2 = n1 * n2 / 12.0 * ((n + 1) - tie / (n * (n - 1)))
    if sigma2 <= 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(sigma2)
    return float(math.erfc(max(z, 0.0) / math.sqrt(2)))


# ---- identities -------------------------------------------------------------------------------------
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


def _strip_qnn(name: str) -> str:
    parsed = parse_qnn_event_name(name)
    if parsed.op_id is None:
        return name
    base = parsed.base or "op"
    return base + (f"_token_{parsed.token}" if parsed.token is not None else "")


def op_samples(profile: P.Profile) -> dict[tuple, dict]:
    """Identity -> row info and per-run values, for instruction rows and what they contain."""
    rows = [r for r in ops_analysis.event_stats(profile, execute_only=True)
            if r["role"] in ("delegate_call", "operator_call", "delegate_internal") and r["instruction_id"] is not None]
    # Instructions with only a kernel event (no OPERATOR_CALL) are represented by the kernel.
    have_top = {r["instruction_id"] for r in rows if r["role"] in ("delegate_call", "operator_call")}
    rows += [r for r in ops_analysis.event_stats(profile, execute_only=True)
             if r["role"] == "kernel" and r["instruction_id"] not in have_top]
    values = ops_analysis.samples(profile, rows)
    ident = _instruction_identities(profile)
    out: dict[tuple, dict] = {}
    for r, v in zip(rows, values):
        iid = r["instruction_id"]
        parent = ident.get(iid, ("instruction", iid))
        ins = profile.instructions.get(iid)
        where = f"{parent[1]} #{parent[-1] + 1}" if parent[0] == "delegate" else None
        if r["role"] == "delegate_internal":
            key = parent + ("internal", _strip_qnn(r["name"]), r["occurrence"])
            name = f"{r['name']} (in {where})" if where else r["name"]
        else:
            key = parent + ("call", r["occurrence"])
            name = (ins.kernel or ins.op_type) if ins and ins.kind == "cpu" else f"DELEGATE_CALL {where}"
        out[key] = {"identity": key, "name": name, "role": r["role"], "unit": r["unit"],
                    "op_type": ins.op_type if ins and r["role"] != "delegate_internal" else None,
                    "source": ins.source if ins and r["role"] != "delegate_internal" else None,
                    "placement": ins.backend if ins else None, "values": v}
    return out


# ---- comparison -------------------------------------------------------------------------------------
def compare(base, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
            fail_on_fallback: bool = False) -> dict:
    """Compare two runs. ``base`` and ``new`` are Profiles, or lists of Profiles of repeated
    sessions of the same program (the first one of each side is used for op and placement
    identities)."""
    bases = base if isinstance(base, (list, tuple)) else [base]
    news = new if isinstance(new, (list, tuple)) else [new]
    base, new = bases[0], news[0]
    sb = [steady_latency_ms(p) for p in bases]
    sn = [steady_latency_ms(p) for p in news]
    lb, ln = np.concatenate([x[0] for x in sb]), np.concatenate([x[0] for x in sn])
    if max(len(bases), len(news)) >= 2:
        change, lo, hi = hierarchical_bootstrap_ratio([x[0] for x in sb], [x[0] for x in sn])
        how = (f"ratio of p50 latencies, hierarchical bootstrap 95% interval over {len(bases)} base and "
               f"{len(news)} new session(s) ({BOOTSTRAP_RESAMPLES} resamples; a single session borrows the "
               "other side's session-to-session spread)")
    else:
        change, lo, hi = bootstrap_median_ratio(lb, ln)
        how = (f"ratio of p50 latencies, bootstrap 95% interval over runs ({BOOTSTRAP_RESAMPLES} resamples); "
               "one session per side, so session-to-session noise is not in the interval")
    significant = bool(np.isfinite(lo) and (lo > 0 or hi < 0) and abs(change) >= min_effect_pct)
    verdict = "no_change"
    if significant:
        verdict = "regression" if change > 0 else "improvement"
    latency = {"base_p50_ms": float(np.nanmedian(lb)) if lb.size else None,
               "new_p50_ms": float(np.nanmedian(ln)) if ln.size else None,
               "change_pct": change, "ci_pct": [lo, hi], "base_runs": int(lb.size), "new_runs": int(ln.size),
               "base_sessions": len(bases), "new_sessions": len(news),
               "warmup_runs_dropped": {"base": [x[1] for x in sb], "new": [x[1] for x in sn]},
               "significant": significant,
               "method": how + f"; significant when the interval excludes 0 and |change| ≥ {min_effect_pct:g}%"}
    placement_changes = _placement_changes(base, new)
    op_rows = _op_changes(base, new, min_effect_pct)
    breakdown = _breakdown_change(base, new)
    reasons = []
    if significant:
        reasons.append(f"whole-run p50 latency {change:+.1f}% (95% CI {lo:+.1f}% … {hi:+.1f}%)")
    else:
        reasons.append(f"no significant whole-run change: p50 {change:+.1f}% (95% CI {lo:+.1f}% … {hi:+.1f}%)")
    moved_off = [c for c in placement_changes if c["kind"] == "moved_to_cpu"]
    if moved_off:
        reasons.append(f"{len(moved_off)} op(s) moved from a delegate to the CPU")
    gate = {"fail": False, "why": []}
    if fail_on_regression_pct is not None and np.isfinite(lo) and lo > fail_on_regression_pct:
        gate["fail"] = True
        gate["why"].append(f"p50 latency got worse by {change:+.1f}% and even the low end of its 95% CI "
                           f"({lo:+.1f}%) exceeds the {fail_on_regression_pct:g}% threshold")
    elif fail_on_regression_pct is not None:
        gate["why"].append(f"p50 change {change:+.1f}% (95% CI {lo:+.1f}% … {hi:+.1f}%) is not significantly "
                           f"worse than the {fail_on_regression_pct:g}% threshold")
    if fail_on_fallback and moved_off:
        gate["fail"] = True
        gate["why"].append(f"{len(moved_off)} op(s) moved off the delegate to the CPU")
    return {
        "schema": SCHEMA,
        "verdict": verdict,
        "reasons": reasons,
        "latency": latency,
        "breakdown": breakdown,
        "placement_changes": placement_changes,
        "ops": op_rows,
        "qnn": _qnn_changes(base, new),
        "gate": gate,
        "warnings": [f"base: {w}" for w in base.warnings] + [f"new: {w}" for w in new.warnings],
    }


def _breakdown_change(base: P.Profile, new: P.Profile) -> list[dict]:
    def as_map(p):
        return {(b["kind"], b.get("backend")): b for b in placement.breakdown(p)}

    a, b = as_map(base), as_map(new)
    out = []
    for key in list(dict.fromkeys(list(a) + list(b))):
        x, y = a.get(key), b.get(key)
        out.append({"kind": key[0], "backend": key[1],
                    "base_mean_ms": x["mean_ms"] if x else None, "new_mean_ms": y["mean_ms"] if y else None,
                    "base_calls_per_run": x.get("calls_per_run") if x else None,
                    "new_calls_per_run": y.get("calls_per_run") if y else None,
                    "change_ms": (y["mean_ms"] if y else 0.0) - (x["mean_ms"] if x else 0.0)})
    return out


def _delegated_op_types(profile: P.Profile) -> Counter:
    c: Counter = Counter()
    for ins in profile.instructions.values():
        if ins.kind == "delegate":
            for t in ins.op_types:
                c[(t, ins.backend)] += 1
    return c


def _delegated_sources(profile: P.Profile) -> dict[str, str]:
    """Source line -> backend, for graph nodes inside delegate calls. An op that moves to the CPU
    often changes type (linear delegated, addmm + permute on the CPU) but keeps its source line."""
    out: dict[str, str] = {}
    for ins in profile.instructions.values():
        if ins.kind == "delegate":
            for src in ins.sources:
                out.setdefault(src, ins.backend)
    return out


def _cpu_ops(profile: P.Profile) -> Counter:
    return Counter((ins.op_type or ins.kernel or "?", ins.source or "") for ins in profile.instructions.values()
                   if ins.kind == "cpu")


def _placement_changes(base: P.Profile, new: P.Profile) -> list[dict]:
    """Ops that moved between a delegate and the CPU, and partitions that split or merged."""
    out = []
    cb, cn = _cpu_ops(base), _cpu_ops(new)
    delegated_base = {t for t, _ in _delegated_op_types(base)}
    delegated_new = {t for t, _ in _delegated_op_types(new)}
    backend_of_base = {t: b for t, b in _delegated_op_types(base)}
    backend_of_new = {t: b for t, b in _delegated_op_types(new)}
    src_base, src_new = _delegated_sources(base), _delegated_sources(new)
    for key in sorted(set(cb) | set(cn)):
        nb, nn = cb.get(key, 0), cn.get(key, 0)
        op_type, source = key
        if nn > nb:
            frm = backend_of_base.get(op_type) if op_type in delegated_base else src_base.get(source)
            out.append({"kind": "moved_to_cpu" if frm else "new_cpu_op", "op_type": op_type,
                        "source": source or None, "count": nn - nb, "from": frm, "to": "cpu",
                        "matched_by": ("op type" if op_type in delegated_base else "source line") if frm else None})
        elif nb > nn:
            to = backend_of_new.get(op_type) if op_type in delegated_new else src_new.get(source)
            out.append({"kind": "moved_to_delegate" if to else "removed_cpu_op", "op_type": op_type,
                        "source": source or None, "count": nb - nn, "from": "cpu", "to": to,
                        "matched_by": ("op type" if op_type in delegated_new else "source line") if to else None})
    calls_b = Counter(i.backend for i in base.instructions.values() if i.kind == "delegate")
    calls_n = Counter(i.backend for i in new.instructions.values() if i.kind == "delegate")
    for backend in sorted(set(calls_b) | set(calls_n)):
        if calls_b.get(backend, 0) != calls_n.get(backend, 0):
            a, b = calls_b.get(backend, 0), calls_n.get(backend, 0)
            out.append({"kind": "partitions_changed", "backend": backend, "base_partitions": a,
                        "new_partitions": b, "detail": ("split" if b > a else "merged") if a and b else
                        ("added" if b else "removed")})
    # Moved-to-CPU first: it is what people look for.
    order = {"moved_to_cpu": 0, "partitions_changed": 1, "moved_to_delegate": 2, "new_cpu_op": 3, "removed_cpu_op": 4}
    return sorted(out, key=lambda c: order[c["kind"]])


def _op_changes(base: P.Profile, new: P.Profile, min_effect_pct: float) -> list[dict]:
    a, b = op_samples(base), op_samples(new)
    rows = []
    for key in list(dict.fromkeys(list(a) + list(b))):
        x, y = a.get(key), b.get(key)
        ref = y or x
        row = {"identity": [str(k) for k in key], "name": ref["name"], "role": ref["role"], "unit": ref["unit"],
               "op_type": ref["op_type"], "source": ref["source"],
               "placement_base": x["placement"] if x else None, "placement_new": y["placement"] if y else None}
        if x is None or y is None:
            row.update(status="new" if x is None else "removed",
                       base_p50=_p50(x["values"]) if x else None, new_p50=_p50(y["values"]) if y else None,
                       change_pct=None, p_value=None, significant=None)
        else:
            pb, pn = _p50(x["values"]), _p50(y["values"])
            change = (pn / pb - 1) * 100 if pb else (0.0 if pn == 0 else None)
            p = mann_whitney_p(x["values"], y["values"])
            sig = bool(p == p and p < OP_ALPHA and change is not None and abs(change) >= min_effect_pct)
            row.update(status=("slower" if change > 0 else "faster") if sig else "same",
                       base_p50=pb, new_p50=pn, change_pct=change, p_value=p, significant=sig)
        rows.append(row)
    rank = {"new": 0, "removed": 1, "slower": 2, "faster": 3, "same": 4}
    return sorted(rows, key=lambda r: (rank[r["status"]], -abs(r["change_pct"] or 0)))


def _p50(v) -> float | None:
    v = np.asarray(v, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(np.median(v)) if v.size else None


def _qnn_changes(base: P.Profile, new: P.Profile) -> list[dict] | None:
    from etscope.analysis import qnn

    if not qnn.qnn_instructions(base) and not qnn.qnn_instructions(new):
        return None
    ra, rb = qnn.qnn_report(base), qnn.qnn_report(new)
    out = []
    by_k: dict = defaultdict(dict)
    for side, rep in (("base", ra), ("new", rb)):
        for k, p in enumerate(rep["partitions"]):
            by_k[k][side] = p
    for k, sides in sorted(by_k.items()):
        pa, pb = sides.get("base"), sides.get("new")
        row = {"partition": k}
        for f in ("accel_cycles", "clock_mhz_est", "accel_us", "qnn_execute_us", "delegate_call_ms"):
            va, vb = (pa or {}).get(f), (pb or {}).get(f)
            row[f] = {"base": va, "new": vb,
                      "change_pct": ((vb / va - 1) * 100) if va and vb is not None else None}
        ops_a = {_strip_qnn(o["qnn_name"]): o for o in (pa or {}).get("ops", [])}
        ops_b = {_strip_qnn(o["qnn_name"]): o for o in (pb or {}).get("ops", [])}
        changes = []
        for name in dict.fromkeys(list(ops_a) + list(ops_b)):
            oa, ob = ops_a.get(name), ops_b.get(name)
            ca = oa["cycles_p50"] if oa else None
            cb = ob["cycles_p50"] if ob else None
            changes.append({"op": name, "base_cycles_p50": ca, "new_cycles_p50": cb,
                            "change_cycles": (cb or 0) - (ca or 0),
                            "status": "new" if oa is None else "removed" if ob is None else "both"})
        row["ops"] = sorted(changes, key=lambda c: -abs(c["change_cycles"]))
        out.append(row)
    return out
