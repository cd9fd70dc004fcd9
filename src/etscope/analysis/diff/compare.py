"""Compare two profiles: noise-aware latency change, per-op changes matched by an identity that
survives re-export, and placement changes (ops that moved between a delegate and the CPU).

Statistics: one statistic for every view, the p50 over the steady runs (leading warm-up runs
dropped). The whole-run change is the ratio of p50 latencies with a bootstrap 95% confidence
interval (over sessions and runs when a side has several sessions); per-op changes use a rank test
(Mann-Whitney U, normal approximation with tie correction) on the per-run values. A change is
significant only when the interval excludes zero (whole run) or p < 0.01 (ops) *and* it is larger
than ``min_effect``. With one session per side the interval cannot hold the session-to-session
spread, so :mod:`etscope.analysis.diff.noise` decides between a verdict and ``inconclusive``.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from etscope.arrays import median, nanmedian
from etscope import profile as P
from etscope import units
from etscope.analysis.diff import axes as diff_axes
from etscope.analysis.diff import attribution as diff_attribution
from etscope.analysis.diff import noise as diff_noise
from etscope.analysis.diff import placement as diff_placement
from etscope.analysis.ops import per_op as ops_analysis
from etscope.analysis.ops import placement
from etscope.analysis.diff.phases import SCHEMA, compare_sides
from etscope.analysis.stats import leading_warmup
from etscope.formats.qnn_names import parse_qnn_event_name

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
        out[start:start + k] = median(values[rng.integers(0, n, (k, n))], axis=1)
    return out


def bootstrap_median_ratio(base: np.ndarray, new: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                           seed: int = 0) -> tuple[float, float, float]:
    """(change %, lo %, hi %) of median(new)/median(base) - 1, bootstrap percentile 95% interval."""
    base = base[~np.isnan(base)]
    new = new[~np.isnan(new)]
    if base.size == 0 or new.size == 0:
        return float("nan"), float("nan"), float("nan")
    point = median(new) / median(base) - 1 if median(base) else float("nan")
    if base.size < 2 or new.size < 2:       # one run has no spread to resample: no interval
        return float(point * 100), float("nan"), float("nan")
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


# Student t 97.5% quantiles for 1..30 degrees of freedom; beyond, the Cornish-Fisher expansion.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def session_interval(base: list[np.ndarray], new: list[np.ndarray], prior_sd: float = 0.0,
                     prior_df: float = 0.0) -> tuple[float, float, float]:
    """(change %, lo %, hi %) for repeated sessions: the change is the ratio of the pooled p50s; the
    95% interval is a pooled-variance t interval on the sessions' log p50s, so its width is the
    between-session spread measured from the sessions given (one session on a side borrows the
    other side's spread). Few sessions give a wide interval, as they should (t with
    n_base + n_new - 2 degrees of freedom). ``prior_sd``/``prior_df``: a prior session SD counted
    as that many extra degrees of freedom (scaled inverse chi-square)."""
    base = [s[np.isfinite(s)] for s in base]
    new = [s[np.isfinite(s)] for s in new]
    base, new = [s for s in base if s.size], [s for s in new if s.size]
    if not base or not new or len(base) + len(new) + prior_df < 3:
        return float("nan"), float("nan"), float("nan")
    pb, pn = median(np.concatenate(base)), median(np.concatenate(new))
    if not (pb > 0 and pn > 0):
        return float("nan"), float("nan"), float("nan")
    lb = np.log([median(s) for s in base])
    ln = np.log([median(s) for s in new])
    df = len(lb) + len(ln) - 2
    ss = float(((lb - lb.mean()) ** 2).sum() + ((ln - ln.mean()) ** 2).sum())
    ss, df = ss + prior_df * prior_sd ** 2, df + prior_df
    se = math.sqrt(ss / df * (1 / len(lb) + 1 / len(ln)))
    centre = math.log(pn / pb)
    half = t975(int(round(df))) * se
    return (float((pn / pb - 1) * 100), float((math.exp(centre - half) - 1) * 100),
            float((math.exp(centre + half) - 1) * 100))


def steady_latency_ms(profile: P.Profile) -> tuple[np.ndarray, int]:
    """Per-run Method::execute in ms without the leading warm-up runs, and how many were dropped."""
    lat = units.ns_to_ms(profile.runs["latency_ns"])
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
    runs_values = _sparse_samples(profile, rows)
    ident = _instruction_identities(profile)
    out: dict[tuple, dict] = {}
    for r, (runs, v) in zip(rows, runs_values):
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
                    "placement": ins.backend if ins else None, "runs": runs, "values": v}
    return out


def _sparse_samples(profile: P.Profile, rows: list[dict]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per row, (runs holding it, its value in each), in run order: what ``ops.samples``' (rows x
    runs) matrix holds without its NaN cells. Memory is a multiple of the events, not rows x runs
    (every run calling its own instruction made that matrix 8000 x 8000: 1.2 GB for a 1.2 MB
    file). The same values: a run that logs a signature twice keeps the last, as the matrix did."""
    execute, value, inv, n_groups = ops_analysis.event_table(profile).groups()
    want = np.full(n_groups, -1, dtype=np.int64)
    for i, r in enumerate(rows):
        want[r["group"]] = i
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


# ---- comparison -------------------------------------------------------------------------------------
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


def compare(base, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
            fail_on_fallback: bool = False, session_allowance_pct: float | None = None,
            phase: str | None = None, llm_options=None, clocks: dict | None = None) -> dict:
    """Compare two runs like with like. ``base`` and ``new``: Profiles or ``Results``, or lists of
    them (repeated sessions of one program). When either side's runs form several phases (an
    LLM's prefill and decode), each phase is compared with its namesake on the other side and the
    verdict comes from the phases, never from pooled runs (:mod:`etscope.analysis.diff.phases`:
    ``phases``, ``verdict_phase``); else :func:`compare_runs`. ``phase``: that phase only
    (``--phase``; ``all``: every run pooled). ``llm_options``: ``api.llm_options`` for the LLM
    analysis that finds the phases (one dict, or a (base, new) pair). ``clocks``: the HTP clock
    measured per side ({"base": MHz, "new": MHz, "source": "runtrace"}, from ``--runtrace-base/
    --runtrace-new``) for the environment axis; else the estimates of the QNN levels."""
    return compare_sides(base, new, compare_runs, phase=phase, llm_options=llm_options,
                         min_effect_pct=min_effect_pct, fail_on_regression_pct=fail_on_regression_pct,
                         fail_on_fallback=fail_on_fallback, session_allowance_pct=session_allowance_pct,
                         clocks=clocks)


def compare_runs(base, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
                 fail_on_fallback: bool = False, session_allowance_pct: float | None = None,
                 clocks: dict | None = None) -> dict:
    """Compare two sets of runs as one phase. ``base`` and ``new`` are Profiles, or lists of Profiles of repeated
    sessions of the same program (the first one of each side gives op and placement identities).

    One statistic throughout: p50 over the steady runs (leading warm-up runs dropped, the same
    runs for the verdict, the breakdown and the ops), pooled over a side's sessions.
    ``session_allowance_pct``: how far two sessions of one program may differ (default: measured,
    :data:`diff_noise.SESSION_ALLOWANCE_PCT`); used when each side has one session."""
    bases = list(base) if isinstance(base, (list, tuple)) else [base]
    news = list(new) if isinstance(new, (list, tuple)) else [new]
    base, new = bases[0], news[0]
    allowance = diff_noise.SESSION_ALLOWANCE_PCT if session_allowance_pct is None else session_allowance_pct
    sb = [steady_latency_ms(p) for p in bases]
    sn = [steady_latency_ms(p) for p in news]
    lb, ln = np.concatenate([x[0] for x in sb]), np.concatenate([x[0] for x in sn])
    samples_b = steady_samples(bases, [x[1] for x in sb])
    samples_n = steady_samples(news, [x[1] for x in sn])
    several = max(len(bases), len(news)) >= 2
    if several:
        change, lo, hi = session_interval([x[0] for x in sb], [x[0] for x in sn],
                                          diff_noise.session_sd(allowance), diff_noise.PRIOR_DF)
        how = (f"ratio of pooled p50 latencies; 95% interval from the spread of the sessions' p50s (pooled-"
               f"variance t on their logs, {len(bases)} base and {len(news)} new session(s), plus the "
               f"between-session allowance ±{allowance:g}% as a prior worth {diff_noise.PRIOR_DF} degrees of "
               "freedom)")
    else:
        change, lo, hi = bootstrap_median_ratio(lb, ln)
        how = (f"ratio of p50 latencies, bootstrap 95% interval over runs ({BOOTSTRAP_RESAMPLES} resamples); "
               f"one session per side, so the interval holds run-to-run noise only: a change is called only "
               f"beyond the between-session allowance (±{allowance:g}%, as a ratio) or when localised")
    significant = bool(np.isfinite(lo) and (lo > 0 or hi < 0) and abs(change) >= min_effect_pct)
    base_p50 = float(nanmedian(lb)) if lb.size else None
    shifts = diff_noise.op_shifts(samples_b, samples_n, base_p50 or 0.0, mann_whitney_p)
    program = diff_noise.program_identity(base, new, samples_b, samples_n)
    session_noise = None
    verdict = "no_change"
    if significant and several:
        verdict = "regression" if change > 0 else "improvement"
    elif significant:
        session_noise = diff_noise.judge_one_session_each(change, lo, hi, shifts, allowance)
        verdict = session_noise["verdict"]
    latency = {"base_p50_ms": base_p50,
               "new_p50_ms": float(nanmedian(ln)) if ln.size else None,
               "change_pct": change, "ci_pct": [lo, hi], "base_runs": int(lb.size), "new_runs": int(ln.size),
               "base_sessions": len(bases), "new_sessions": len(news),
               "warmup_runs_dropped": {"base": [x[1] for x in sb], "new": [x[1] for x in sn]},
               "significant": significant, "session_allowance_pct": allowance,
               "method": how + f"; significant when the interval excludes 0 and |change| ≥ {min_effect_pct:g}%"}
    placement_changes = diff_placement.placement_changes(base, new, samples_b, samples_n)
    reasons = _latency_reasons(verdict, change, lo, hi, allowance, session_noise, shifts, program)
    moved_off = [c for c in placement_changes if c["kind"] == "moved_to_cpu"]
    if moved_off:
        reasons.append(f"{sum(c['count'] for c in moved_off)} op(s) moved from a delegate to the CPU")
    undecided = [c for c in placement_changes if c.get("undecided")]
    if undecided:
        reasons.append(f"{sum(c['count'] for c in undecided)} new CPU op(s) may have come off a delegate: "
                       "the ETRecords (--etrecord-base/--etrecord-new) are needed to tell")
    gate = _gate(verdict, change, lo, hi, fail_on_regression_pct, fail_on_fallback, moved_off, undecided)
    out = {
        "schema": SCHEMA,
        "verdict": verdict,
        "reasons": reasons,
        "statistic": "p50 over the steady runs (warm-up runs dropped), pooled over each side's sessions",
        "latency": latency,
        "program": program,
        "op_shifts": shifts,
        "session_noise": session_noise,
        "breakdown": _breakdown_change(bases, news, [x[1] for x in sb], [x[1] for x in sn]),
        "placement_changes": placement_changes,
        "ops": _op_changes(samples_b, samples_n, min_effect_pct),
        "qnn": _qnn_changes(base, new),
        "gate": gate,
        "warnings": [f"base: {w}" for w in base.warnings] + [f"new: {w}" for w in new.warnings],
    }
    # Each axis of change with its own verdict; the headline names every axis that changed.
    out["axes"] = diff_axes.axes(out, base, new, clocks)
    out["changed_axes"] = diff_axes.changed_axes(out["axes"])
    out["headline"] = diff_axes.headline(verdict, out["axes"])
    out["attribution"] = diff_attribution.attribute(out, latency["base_p50_ms"], latency["new_p50_ms"])
    out["comparable"] = diff_axes.comparability(base, new)
    if out["comparable"]["comparable"] is False:
        _not_comparable(out)
    return out


NOT_COMPARABLE = "not_comparable"


def _not_comparable(out: dict) -> None:
    """Two different programs (a CNN and a ViT): said first; latency stays as a fact, without a
    verdict, and nothing per op, per placement or per part is judged (matching ops of two graphs
    would pair unrelated ops)."""
    lat = out["latency"]
    change = lat["change_pct"]
    fact = (f"p50 {units.fmt_ms(lat['base_p50_ms'])} → {units.fmt_ms(lat['new_p50_ms'])}"
            + (f" ({change:+.1f}%)" if isinstance(change, float) and math.isfinite(change) else ""))
    why = out["comparable"]["basis"]
    out["verdict"] = NOT_COMPARABLE
    out["latency"]["significant"] = False
    out["reasons"] = [f"not comparable: different programs ({why}); latency compared as a fact only: {fact}"]
    out["headline"] = f"not comparable: different programs; latency {fact} as a fact only"
    # Each side's op values stay (what each file says); no row is judged against the other side.
    for o in out["ops"]:
        o.update(status="not_compared", change_pct=None, p_value=None, significant=None)
    out["op_shifts"], out["placement_changes"], out["attribution"] = [], [], None
    out["session_noise"] = None
    out["axes"]["latency"] = {"verdict": NOT_COMPARABLE, "summary": fact + " (a fact: different programs)", "facts": []}
    out["axes"]["placement"] = {"verdict": diff_axes.UNKNOWN, "summary": "not compared: different programs", "facts": []}
    out["axes"]["program"] = {**out["axes"]["program"], "verdict": diff_axes.CHANGED,
                              "summary": "different programs: " + why}
    out["changed_axes"] = diff_axes.changed_axes(out["axes"])
    gated = out["gate"]["why"]
    out["gate"] = {"fail": False, "why": ["not gated: different programs (" + why + ")"] if gated else []}


def _latency_reasons(verdict, change, lo, hi, allowance, noise, shifts, program) -> list[str]:
    ci = f"p50 {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%)"
    band = 1 + allowance / 100
    if verdict == "no_change" and not (np.isfinite(lo) and np.isfinite(hi)):
        return [f"no interval for the whole-run change (p50 {change:+.1f}%): too few runs or sessions"]
    if verdict == "no_change":
        return [f"no significant whole-run change: {ci}"]
    if noise is None:
        return [f"whole-run {ci}, the interval including the spread between sessions"]
    if noise["beyond_allowance"]:
        return [f"whole-run {ci}: beyond the ×{1 / band:.2f} to ×{band:.2f} two sessions of one unchanged "
                "program can differ by (one session per side)"]
    if noise["localised"]:
        return [f"whole-run {ci}, localised: {', '.join(noise['localised_ops'])} changed far more than the "
                f"other ops ({diff_noise.shift_text(shifts)})"]
    source = ("measured on a shared 2-core test VM, see BENCHMARKS.md; --session-allowance sets it for a device"
              if allowance == diff_noise.SESSION_ALLOWANCE_PCT else "--session-allowance")
    out = [f"inconclusive: whole-run {ci} within one session each, but two sessions of one unchanged program "
           f"may differ by up to ×{band:.2f} (between-session allowance, {source}); give several sessions per "
           "side (--base-also/--new-also) to measure that spread"]
    if noise["uniform_shift"] and program["identical"] is not False:
        sure = ("the programs are identical (" + program["basis"] + ")" if program["identical"]
                else "the ETDumps show the same instructions and delegate events (the delegate blobs are not in "
                     "an ETDump: --pte-base/--pte-new compare them)")
        out.append(f"every op shifted alike ({diff_noise.shift_text(shifts)}) and {sure}: that is an "
                   "environment change (clock, thermal state, load, core placement), not a program change")
    return out


def _gate(verdict, change, lo, hi, fail_on_regression_pct, fail_on_fallback, moved_off, undecided) -> dict:
    gate = {"fail": False, "why": []}
    if fail_on_regression_pct is not None:
        if verdict == "regression" and np.isfinite(lo) and lo > fail_on_regression_pct:
            gate["fail"] = True
            gate["why"].append(f"p50 latency got worse by {change:+.1f}% and even the low end of its 95% CI "
                               f"({lo:+.1f}%) exceeds the {fail_on_regression_pct:g}% threshold")
        elif verdict == "inconclusive":
            gate["why"].append(f"p50 change {change:+.1f}% is within what two sessions of one program differ "
                               "by; not gated (give more sessions per side to decide)")
        else:
            gate["why"].append(f"p50 change {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%) is not significantly "
                               f"worse than the {fail_on_regression_pct:g}% threshold")
    if fail_on_fallback and moved_off:
        gate["fail"] = True
        gate["why"].append(f"{sum(c['count'] for c in moved_off)} op(s) moved off the delegate to the CPU")
    elif fail_on_fallback and undecided:
        gate["why"].append(f"{sum(c['count'] for c in undecided)} new CPU op(s) could not be checked for a "
                           "fallback: pass the ETRecords (--etrecord-base/--etrecord-new)")
    return gate


def _breakdown_change(bases: list[P.Profile], news: list[P.Profile], drop_b: list[int], drop_n: list[int]) -> list[dict]:
    """Per part of Method::execute (each delegate backend, CPU ops, framework overhead): p50 per
    run over the same steady runs as the verdict. Parts' p50s need not add up to the latency p50."""
    def parts_of(profiles, drops):
        cols: dict[str, list[np.ndarray]] = defaultdict(list)
        for p, n in zip(profiles, drops):
            parts = placement.per_run_parts(p)
            ok = ~np.isnan(parts["latency"])
            ok[:n] = False
            for b in p.backends():
                cols[("delegate", b)].append(parts[f"delegate:{b}"][ok])
                cols[("calls", b)].append(parts[f"calls:{b}"][ok])
            for kind in ("cpu_ops", "framework_overhead"):
                cols[(kind, None)].append(parts[kind][ok])
            cols[("calls", "cpu")].append(parts["calls:cpu"][ok])
        return {k: np.concatenate(v) for k, v in cols.items()}

    a, b = parts_of(bases, drop_b), parts_of(news, drop_n)
    out = []
    for key in dict.fromkeys([k for k in list(a) + list(b) if k[0] != "calls"]):
        calls_key = ("calls", key[1] if key[0] == "delegate" else "cpu")
        x, y = _p50(a.get(key, [])), _p50(b.get(key, []))
        xs = _ms(x) if x is not None else None
        ys = _ms(y) if y is not None else None
        out.append({"kind": key[0], "backend": key[1], "base_p50_ms": xs, "new_p50_ms": ys,
                    "base_calls_per_run": _p50(a[calls_key]) if key[0] != "framework_overhead" and calls_key in a else None,
                    "new_calls_per_run": _p50(b[calls_key]) if key[0] != "framework_overhead" and calls_key in b else None,
                    "change_ms": (ys or 0.0) - (xs or 0.0)})
    return out


def _ms(ns: float) -> float:
    return units.ns_to_ms(float(ns))


def _op_changes(a: dict, b: dict, min_effect_pct: float) -> list[dict]:
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
            # Not significant is "same" only when the p50 barely moved; a large move the test cannot
            # confirm (few runs, spread) is "uncertain", never "same".
            moved = change is None or abs(change) >= min_effect_pct
            row.update(status=("slower" if change > 0 else "faster") if sig else ("uncertain" if moved else "same"),
                       base_p50=pb, new_p50=pn, change_pct=change, p_value=p, significant=sig)
        rows.append(row)
    rank = {"new": 0, "removed": 1, "slower": 2, "faster": 3, "uncertain": 4, "same": 5, "not_compared": 6}
    return sorted(rows, key=lambda r: (rank[r["status"]], -abs(r["change_pct"] or 0)))


def _p50(v) -> float | None:
    v = np.asarray(v, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(median(v)) if v.size else None


def _qnn_changes(base: P.Profile, new: P.Profile) -> list[dict] | None:
    from etscope.analysis import qnn

    if not qnn.qnn_instructions(base) and not qnn.qnn_instructions(new):
        return None
    ra, rb = qnn.qnn_report(base), qnn.qnn_report(new)
    out = []
    by_k: dict = defaultdict(dict)
    for side, rep in (("base", ra), ("new", rb)):
        for k, p in enumerate(rep.partitions):
            by_k[k][side] = p
    for k, sides in sorted(by_k.items()):
        pa, pb = sides.get("base"), sides.get("new")
        row = {"partition": k}
        for f in ("accel_cycles", "clock_mhz_est", "accel_us", "qnn_execute_us", "delegate_call_ms"):
            va, vb = (getattr(pa, f) if pa else None), (getattr(pb, f) if pb else None)
            row[f] = {"base": va, "new": vb,
                      "change_pct": ((vb / va - 1) * 100) if va and vb is not None else None}
        ops_a = {_strip_qnn(o.qnn_name): o for o in (pa.ops if pa else ())}
        ops_b = {_strip_qnn(o.qnn_name): o for o in (pb.ops if pb else ())}
        changes = []
        for name in dict.fromkeys(list(ops_a) + list(ops_b)):
            oa, ob = ops_a.get(name), ops_b.get(name)
            ca = oa.cycles_p50 if oa else None
            cb = ob.cycles_p50 if ob else None
            changes.append({"op": name, "base_cycles_p50": ca, "new_cycles_p50": cb,
                            "change_cycles": (cb or 0) - (ca or 0),
                            "status": "new" if oa is None else "removed" if ob is None else "both"})
        row["ops"] = sorted(changes, key=lambda c: -abs(c["change_cycles"]))
        out.append(row)
    return out
