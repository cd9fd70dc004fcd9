"""Compare two profiles: noise-aware latency change, per-op changes matched by an identity that
survives re-export, and placement changes (ops that moved between a delegate and the CPU).

Statistics: one statistic for every view, the p50 over the steady runs (leading warm-up runs
dropped). The whole-run change is the ratio of p50 latencies with a bootstrap 95% confidence
interval (over sessions and runs when a side has several sessions); per-op changes use a rank test
(Mann-Whitney U, normal approximation with tie correction) on the per-run values. A change is
significant only when the interval excludes zero (whole run) or p < 0.01 (ops) *and* it is larger
than ``min_effect``. With one session per side the interval cannot hold the session-to-session
spread, so :mod:`etscope.analysis.diff.noise` decides between a verdict and ``inconclusive``.

The result is typed (:mod:`etscope.analysis.diff.result`), built once here and never changed after;
the statistics live in ``intervals``, the samples in ``samples``, the per-part, per-op and per-QNN
partition changes in ``changes``.
"""
from __future__ import annotations
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from etscope import units
from etscope.arrays import nanmedian
from etscope.analysis.diff import attribution as diff_attribution
from etscope.analysis.diff import axes as diff_axes
from etscope.analysis.diff import noise as diff_noise
from etscope.analysis.diff import placement as diff_placement
from etscope.analysis.diff.changes import OP_ALPHA, breakdown_change, op_changes, qnn_changes
from etscope.analysis.diff.intervals import (  # noqa: F401 (the statistics, where callers found them)
    BOOTSTRAP_RESAMPLES, bootstrap_median_ratio, bootstrap_medians, mann_whitney_p, session_interval, t975,
)
from etscope.analysis.diff.phases import SCHEMA, compare_sides
from etscope.analysis.diff.result import (
    Axis, Comparison, Diff, Gate, Latency, OpShift, PlacementChange, ProgramIdentity, SessionNoise, Sides,
)
from etscope.analysis.diff.samples import op_samples, steady_latency_ms, steady_samples  # noqa: F401

STATISTIC = "p50 over the steady runs (warm-up runs dropped), pooled over each side's sessions"
NOT_COMPARABLE = "not_comparable"
__all__ = ["compare", "compare_runs", "NOT_COMPARABLE", "OP_ALPHA", "STATISTIC"]


def compare(base, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
            fail_on_fallback: bool = False, session_allowance_pct: float | None = None,
            phase: str | None = None, llm_options=None, clocks: dict | None = None,
            inputs: Sides | None = None) -> Diff:
    """Compare two runs like with like. ``base`` and ``new``: Profiles or ``Results``, or lists of
    them (repeated sessions of one program). When either side's runs form several phases (an
    LLM's prefill and decode), each phase is compared with its namesake on the other side and the
    verdict comes from the phases, never from pooled runs (:mod:`etscope.analysis.diff.phases`:
    ``phases``, ``verdict_phase``); else :func:`compare_runs`. ``phase``: that phase only
    (``--phase``; ``all``: every run pooled). ``llm_options``: ``api.llm_options`` for the LLM
    analysis that finds the phases (one dict, or a (base, new) pair). ``clocks``: the HTP clock
    measured per side ({"base": MHz, "new": MHz, "source": "runtrace"}, from ``--runtrace-base/
    --runtrace-new``) for the environment axis; else the estimates of the QNN levels. ``inputs``:
    the files given per side, as the result states them."""
    d = compare_sides(base, new, compare_runs, phase=phase, llm_options=llm_options,
                      min_effect_pct=min_effect_pct, fail_on_regression_pct=fail_on_regression_pct,
                      fail_on_fallback=fail_on_fallback, session_allowance_pct=session_allowance_pct,
                      clocks=clocks)
    return d if inputs is None else replace(d, inputs=inputs)


def compare_runs(base, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
                 fail_on_fallback: bool = False, session_allowance_pct: float | None = None,
                 clocks: dict | None = None) -> Comparison:
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
        verdict = session_noise.verdict
    latency = Latency(base_p50_ms=base_p50, new_p50_ms=float(nanmedian(ln)) if ln.size else None,
                      change_pct=change, ci_pct=(lo, hi), base_runs=int(lb.size), new_runs=int(ln.size),
                      base_sessions=len(bases), new_sessions=len(news),
                      warmup_runs_dropped=Sides(tuple(x[1] for x in sb), tuple(x[1] for x in sn)),
                      significant=significant, session_allowance_pct=allowance,
                      method=how + f"; significant when the interval excludes 0 and |change| ≥ {min_effect_pct:g}%")
    placement_changes = diff_placement.placement_changes(base, new, samples_b, samples_n)
    reasons = _latency_reasons(verdict, change, lo, hi, allowance, session_noise, shifts, program)
    moved_off = [c for c in placement_changes if c.kind == "moved_to_cpu"]
    if moved_off:
        reasons.append(f"{sum(c.count for c in moved_off)} op(s) moved from a delegate to the CPU")
    undecided = [c for c in placement_changes if getattr(c, "undecided", None)]
    if undecided:
        reasons.append(f"{sum(c.count for c in undecided)} new CPU op(s) may have come off a delegate: "
                       "the ETRecords (--etrecord-base/--etrecord-new) are needed to tell")
    gate = _gate(verdict, change, lo, hi, fail_on_regression_pct, fail_on_fallback, moved_off, undecided)
    breakdown = breakdown_change(bases, news, [x[1] for x in sb], [x[1] for x in sn])
    ops = op_changes(samples_b, samples_n, min_effect_pct)
    qnn = qnn_changes(base, new)
    # Each axis of change with its own verdict; the headline names every axis that changed.
    axes = diff_axes.axes(verdict, latency, placement_changes, program, qnn, base, new, clocks)
    out = Comparison(
        schema=SCHEMA, verdict=verdict, reasons=tuple(reasons), statistic=STATISTIC, latency=latency,
        program=program, op_shifts=shifts, session_noise=session_noise, breakdown=breakdown,
        placement_changes=placement_changes, ops=ops, qnn=qnn, gate=gate,
        warnings=tuple(f"base: {w}" for w in base.warnings) + tuple(f"new: {w}" for w in new.warnings),
        axes=axes, changed_axes=diff_axes.changed_axes(axes), headline=diff_axes.headline(verdict, axes),
        attribution=diff_attribution.attribute(latency, ops, placement_changes, breakdown, qnn),
        comparable=diff_axes.comparability(base, new))
    return _not_comparable(out) if out.comparable.comparable is False else out


def _not_comparable(out: Comparison) -> Comparison:
    """Two different programs (a CNN and a ViT): said first; latency stays as a fact, without a
    verdict, and nothing per op, per placement or per part is judged (matching ops of two graphs
    would pair unrelated ops)."""
    lat = out.latency
    change = lat.change_pct
    fact = (f"p50 {units.fmt_ms(lat.base_p50_ms)} → {units.fmt_ms(lat.new_p50_ms)}"
            + (f" ({change:+.1f}%)" if isinstance(change, float) and math.isfinite(change) else ""))
    why = out.comparable.basis
    # Each side's op values stay (what each file says); no row is judged against the other side.
    ops = tuple(replace(o, status="not_compared", change_pct=None, p_value=None, significant=None) for o in out.ops)
    axes = replace(out.axes,
                   latency=Axis(verdict=NOT_COMPARABLE, summary=fact + " (a fact: different programs)", facts=()),
                   placement=Axis(verdict=diff_axes.UNKNOWN, summary="not compared: different programs", facts=()),
                   program=replace(out.axes.program, verdict=diff_axes.CHANGED, summary="different programs: " + why))
    gated = out.gate.why
    return replace(out, verdict=NOT_COMPARABLE, latency=replace(lat, significant=False),
                   reasons=(f"not comparable: different programs ({why}); latency compared as a fact only: {fact}",),
                   headline=f"not comparable: different programs; latency {fact} as a fact only",
                   ops=ops, op_shifts=(), placement_changes=(), attribution=None, session_noise=None,
                   axes=axes, changed_axes=diff_axes.changed_axes(axes),
                   gate=Gate(fail=False, why=("not gated: different programs (" + why + ")",) if gated else ()))


def _latency_reasons(verdict: str, change: float, lo: float, hi: float, allowance: float,
                     noise: SessionNoise | None, shifts: tuple[OpShift, ...], program: ProgramIdentity) -> list[str]:
    ci = f"p50 {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%)"
    band = 1 + allowance / 100
    if verdict == "no_change" and not (np.isfinite(lo) and np.isfinite(hi)):
        return [f"no interval for the whole-run change (p50 {change:+.1f}%): too few runs or sessions"]
    if verdict == "no_change":
        return [f"no significant whole-run change: {ci}"]
    if noise is None:
        return [f"whole-run {ci}, the interval including the spread between sessions"]
    if noise.beyond_allowance:
        return [f"whole-run {ci}: beyond the ×{1 / band:.2f} to ×{band:.2f} two sessions of one unchanged "
                "program can differ by (one session per side)"]
    if noise.localised:
        return [f"whole-run {ci}, localised: {', '.join(noise.localised_ops)} changed far more than the "
                f"other ops ({diff_noise.shift_text(shifts)})"]
    source = ("measured on a shared 2-core test VM, see BENCHMARKS.md; --session-allowance sets it for a device"
              if allowance == diff_noise.SESSION_ALLOWANCE_PCT else "--session-allowance")
    out = [f"inconclusive: whole-run {ci} within one session each, but two sessions of one unchanged program "
           f"may differ by up to ×{band:.2f} (between-session allowance, {source}); give several sessions per "
           "side (--base-also/--new-also) to measure that spread"]
    if noise.uniform_shift and program.identical is not False:
        sure = ("the programs are identical (" + program.basis + ")" if program.identical
                else "the ETDumps show the same instructions and delegate events (the delegate blobs are not in "
                     "an ETDump: --pte-base/--pte-new compare them)")
        out.append(f"every op shifted alike ({diff_noise.shift_text(shifts)}) and {sure}: that is an "
                   "environment change (clock, thermal state, load, core placement), not a program change")
    return out


def _gate(verdict: str, change: float, lo: float, hi: float, fail_on_regression_pct: float | None,
          fail_on_fallback: bool, moved_off: list[PlacementChange], undecided: list[PlacementChange]) -> Gate:
    fail, why = False, []
    if fail_on_regression_pct is not None:
        if verdict == "regression" and np.isfinite(lo) and lo > fail_on_regression_pct:
            fail = True
            why.append(f"p50 latency got worse by {change:+.1f}% and even the low end of its 95% CI "
                       f"({lo:+.1f}%) exceeds the {fail_on_regression_pct:g}% threshold")
        elif verdict == "inconclusive":
            why.append(f"p50 change {change:+.1f}% is within what two sessions of one program differ "
                       "by; not gated (give more sessions per side to decide)")
        else:
            why.append(f"p50 change {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%) is not significantly "
                       f"worse than the {fail_on_regression_pct:g}% threshold")
    if fail_on_fallback and moved_off:
        fail = True
        why.append(f"{sum(c.count for c in moved_off)} op(s) moved off the delegate to the CPU")
    elif fail_on_fallback and undecided:
        why.append(f"{sum(c.count for c in undecided)} new CPU op(s) could not be checked for a "
                   "fallback: pass the ETRecords (--etrecord-base/--etrecord-new)")
    return Gate(fail=fail, why=tuple(why))
