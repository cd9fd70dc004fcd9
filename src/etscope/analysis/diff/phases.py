"""`etscope diff` of LLM runs: like with like, phase by phase.

An LLM's prefill runs (a prompt of many tokens) and decode runs (one token) differ by 10x or more
in latency; pooled, their p50 is whichever phase has more runs and the interval spans both, so a
pooled verdict can say "no change" while one phase doubled. Here each side's phases are found on
its own runs (``analysis.llm.run_phases``, the rules of ``etscope llm``: ``Results.phases``), every
session of a side on its own; phases are paired by name (prefill with prefill, decode with
decode); each pair is compared by ``diff.compare_runs`` on that phase's runs only (a Profile of
its own, ``Results.for_phase``), so its verdict, interval, warm-up, breakdown and per-op changes
are the phase's. A phase found on one side only is listed as such, not compared.

The headline verdict of a split comparison is never a pooled one: it is the most significant
phase verdict (regression, then improvement, then inconclusive, then no change; the larger
change first among equals), and says which phase it is. Files that are one phase on both sides
get exactly ``compare_runs`` (no ``phases`` key).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from etscope import profile as P
from etscope.arrays import median
from etscope.analysis.diff.result import (
    Change, Gate, LlmFigures, NoPhaseOnBoth, PhaseComparison, PhaseNotCompared, PhasedComparison, Sides, judged,
)
from etscope.analysis.llm.run_phases import ALL, PhaseChoiceError

SCHEMA = "etscope.diff/2"        # of every diff result (analysis.diff.compare takes it from here: one way)

# Which phase verdict leads the headline: the worst / most significant one.
VERDICT_RANK = {"not_comparable": 4, "regression": 3, "improvement": 2, "inconclusive": 1, "no_change": 0}
NOT_COMPARED = "not_compared"      # a phase found on one side only (said as "not compared")


def _sessions(side) -> list:
    return list(side) if isinstance(side, (list, tuple)) else [side]


def _as_results(x, llm_options: dict | None):
    """A side's session as ``analysis.results.Results`` (its phases found on its own runs)."""
    from etscope.analysis.results import Results

    if isinstance(x, Results):
        return x
    if isinstance(x, P.Profile):
        return Results(x, llm_options=llm_options)
    # A notebook's profile (``api.NotebookProfile``, a layer above): its own analyses and token counts.
    results = getattr(x, "results", None)
    if isinstance(results, Results):
        return results
    raise TypeError(f"expected a Profile or Results, got {type(x).__name__}")


def compare_sides(base, new, compare_runs, phase: str | None = None, llm_options=None, **options):
    """``diff.compare`` for Profiles or Results (or lists of them, one per session): one phase on
    both sides -> ``compare_runs`` as it always was; several -> each phase compared with its
    namesake (``phases``) and a headline verdict from the phases, never pooled. ``phase``: compare
    that phase only (``--phase``; ``all``: every run together, pooled on purpose).
    ``llm_options``: ``api.llm_options`` of the base and new sides, as a (base, new) pair or one
    dict for both (the token counts and constant methods the LLM analysis reads).
    ``PhaseChoiceError`` when ``phase`` names no phase of a side."""
    opt_b, opt_n = llm_options if isinstance(llm_options, tuple) else (llm_options, llm_options)
    rb = [_as_results(x, opt_b) for x in _sessions(base)]
    rn = [_as_results(x, opt_n) for x in _sessions(new)]
    split = any(r.phases.split for r in rb + rn)
    from etscope.analysis.diff.axes import comparability

    if comparability(rb[0].profile, rn[0].profile).comparable is False:
        # Different programs: their phases are not namesakes either; every run compared as a
        # fact (compare_runs says "not comparable" first and judges nothing per op).
        return compare_runs([r.profile for r in rb], [r.profile for r in rn], **options)
    if phase == ALL or (phase is None and not split):
        out = compare_runs([r.profile for r in rb], [r.profile for r in rn], **options)
        if split:
            out = replace(out, phases_pooled="--phase all: prefill and decode runs compared together on purpose; "
                                             "the latency, interval and op changes mix the phases",
                          reasons=("every run pooled (--phase all): the phases are not compared apart",) + out.reasons)
        return out
    if phase is not None:
        for side, rs in (("base", rb), ("new", rn)):
            for r in rs:
                if phase not in r.phases.names:
                    known = ", ".join(n for n in r.phases.names if n != ALL) or "none (one phase: use --phase all)"
                    raise PhaseChoiceError(f"--phase {phase}: the {side} runs have no {phase} phase "
                                           f"(their phases: {known})")
        names = [phase]
    else:
        names = list(dict.fromkeys(n for r in rb + rn for n in r.phases.names))
    entries = [_phase_entry(name, rb, rn, compare_runs, options) for name in names]
    return _headline(entries, rb, rn, options, chosen=phase)


def _phase_sessions(name: str, results: list) -> list:
    """The sessions of a side that have phase ``name``: (its Results, its phase's Results, the
    phase's runs: indices among the Execute runs of the session's profile, i.e. of its file
    unless the profile given was one phase's runs already)."""
    out = []
    for r in results:
        if name in r.phases.names:
            if r.phases.split:
                sub = r.for_phase(name)
                runs = [int(x) for x in r.phases.runs_of(name)]
            else:
                sub, runs = r, list(range(r.profile.n_runs))
            out.append((r, sub, runs))
    return out


def _runs_per_session(name: str, results: list) -> list[list[int]]:
    """Per session of a side (all of them, in order), the runs of phase ``name`` ([] without it)."""
    return [next((runs for _, _, runs in _phase_sessions(name, [r])), []) for r in results]


def _method(name: str, results: list) -> str | None:
    for r in results:
        if name in r.phases.names:
            return r.phases.methods[r.phases.names.index(name)]
    return None


def _phase_entry(name: str, rb: list, rn: list, compare_runs, options: dict) -> PhaseComparison | PhaseNotCompared:
    sb, sn = _phase_sessions(name, rb), _phase_sessions(name, rn)
    mb, mn = _method(name, rb), _method(name, rn)
    head = dict(name=name, method=mb or mn, methods=Sides(mb, mn),
                on="both" if sb and sn else ("base" if sb else "new"),
                runs=Sides(*(tuple(map(tuple, _runs_per_session(name, side))) for side in (rb, rn))))
    if not (sb and sn):
        missing = "new" if sb else "base"
        return PhaseNotCompared(**head, verdict=NOT_COMPARED,
                                reasons=(f"{name}: only the {'base' if sb else 'new'} runs have this phase ({missing}: "
                                         f"{_phase_names(rn if sb else rb)}); not compared",))
    d = compare_runs([s.profile for _, s, _ in sb], [s.profile for _, s, _ in sn], **options)
    verdict, reasons, gate = _untested(d, options.get("min_effect_pct", 2.0), options.get("fail_on_regression_pct"))
    reasons = list(reasons)
    if mb and mn and mb != mn:
        reasons.append(f"{name} runs executed method {mb} in base and {mn} in new")
    llm = _llm_figures(name, [r for r, _, _ in sb], [r for r, _, _ in sn])
    tokens = llm.tokens_per_run
    if tokens is not None and tokens.base and tokens.new and tokens.base != tokens.new:
        reasons.append(f"{name}: {tokens.base:g} tokens per run in base, {tokens.new:g} in new: the "
                       "latency per run is not like for like (compare ms per token)")
    return PhaseComparison(**head, **(judged(d) | dict(verdict=verdict, reasons=tuple(reasons), gate=gate)), llm=llm)


def _untested(d, min_effect_pct: float, fail_on_regression_pct: float | None) -> tuple[str, tuple, Gate]:
    """A phase whose p50 moved by at least the minimum effect is ``no_change`` only when its
    interval includes 0 *and* rules out a change larger than two sessions of one program differ
    by. When it cannot (too few runs for any interval, as a prefill of one or two runs, or an
    interval reaching past the between-session allowance: +94%, 95% CI -15% to +615%) the phase is
    ``inconclusive``: a headline would else say "no change" over a prefill that doubled. Applied
    to phases only: the verdicts of one-phase diffs stay as they were. Returns the phase's (verdict,
    reasons, gate) from its comparison ``d``."""
    lat = d.latency
    lo, hi = lat.ci_pct
    change = lat.change_pct
    if d.verdict != "no_change" or not math.isfinite(change) or abs(change) < min_effect_pct:
        return d.verdict, d.reasons, d.gate     # the p50 did not move (identical files among them): no change
    band = 1 + float(lat.session_allowance_pct or 0.0) / 100
    if not (math.isfinite(lo) and math.isfinite(hi)):
        why = (f"inconclusive: p50 {change:+.1f}% but too few steady runs to test it ({lat.base_runs} base, "
               f"{lat.new_runs} new; an interval needs 2 a side): record more runs of this phase")
        gate = f"p50 change {change:+.1f}% has no interval (too few runs); not gated (record more runs of this phase)"
    elif 1 + lo / 100 < 1 / band or 1 + hi / 100 > band:
        why = (f"inconclusive: p50 {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%): the interval includes 0 but also "
               f"changes beyond the ×{1 / band:.2f} to ×{band:.2f} two sessions of one program differ by; record "
               "more runs or sessions of this phase")
        gate = (f"p50 change {change:+.1f}% (95% CI {lo:+.1f}% to {hi:+.1f}%) is too uncertain to gate; record more "
                "runs of this phase")
    else:
        return d.verdict, d.reasons, d.gate
    if fail_on_regression_pct is not None and d.gate.why:   # the latency line of diff._gate comes first
        return "inconclusive", (why,), replace(d.gate, why=(gate,) + d.gate.why[1:])
    return "inconclusive", (why,), d.gate


def _phase_names(results: list) -> str:
    names = list(dict.fromkeys(n for r in results for n in r.phases.names))
    if names == [ALL]:
        return "one phase, no prefill/decode split (all)"
    return "phases " + ", ".join(names) if names else "no runs"


def _llm_figures(name: str, base: list, new: list) -> LlmFigures:
    """What ``etscope llm`` says of this phase on each side (median over a side's sessions): time
    to first token for the prefill, tokens/s (or runs/s when the tokens per run are unknown) for
    the decode, and per phase tokens per run, ms per token and runs/s. Empty when neither side's
    LLM analysis found the phase."""
    def figures(results: list) -> dict:
        vals: dict[str, list[float]] = {}
        for r in results:
            llm = r.llm.llm if r.llm is not None else None
            row = llm.phase(name) if llm is not None else None
            if row is None:
                continue
            got = {"tokens_per_run": row.tokens_per_run, "ms_per_token": row.ms_per_token,
                   "runs_per_s": row.runs_per_s}
            if name == "prefill":
                got["ttft_ms"] = llm.ttft_ms
            if name == "decode":
                got["tokens_per_s"] = llm.decode_tokens_per_s
            for k, v in got.items():
                if isinstance(v, (int, float)) and math.isfinite(v):
                    vals.setdefault(k, []).append(float(v))
        return {k: float(median(np.asarray(v))) for k, v in vals.items()}

    fb, fn = figures(base), figures(new)
    out = {}
    for k in ("ttft_ms", "tokens_per_s", "runs_per_s", "ms_per_token", "tokens_per_run"):
        if k in fb or k in fn:
            a, b = fb.get(k), fn.get(k)
            out[k] = Change(a, b, (b / a - 1) * 100 if a and b is not None else None)
    if out:
        out["source"] = ("etscope llm of each side (median over its sessions); TTFT = p50 latency of the prefill's "
                         "steady runs, tokens/s = tokens per decode run / its p50")
    return LlmFigures(**out)


def _headline(entries: list, rb: list, rn: list, options: dict, chosen: str | None):
    """The top level of a phase-split comparison: the leading phase's comparison (latency,
    breakdown, ops, placement of that phase) under a verdict from every phase, and ``phases``."""
    compared = [e for e in entries if e.verdict != NOT_COMPARED]
    # Most significant: the worst verdict; among equals a tested change (with an interval) before
    # an untested one, then the larger change.
    lead = max(compared, key=lambda e: (VERDICT_RANK.get(e.verdict, 0), all(map(math.isfinite, e.latency.ci_pct)),
                                        abs(_num(e.latency.change_pct))), default=None)
    if lead is None:
        # No phase on both sides: nothing like for like; the whole runs are not pooled instead.
        return NoPhaseOnBoth(
            schema=SCHEMA, verdict="inconclusive", verdict_phase=None,
            verdict_basis="no phase was found on both sides, so nothing could be compared like with like",
            headline="inconclusive: no phase on both sides (" + ", ".join(
                f"{e.name} in {e.on} only" for e in entries) + ")",
            reasons=tuple(r for e in entries for r in e.reasons), phases=tuple(entries),
            breakdown=(), placement_changes=(), ops=(), qnn=None, gate=Gate(fail=False, why=()),
            warnings=_warnings(rb, rn))
    if chosen is not None:
        basis = f"the {lead.name} phase only (--phase {chosen})"
    else:
        basis = (f"the {lead.name} phase's: the most significant of the {len(compared)} compared "
                 "phases' verdicts (regression, then improvement, inconclusive, no change); the top "
                 f"level's latency, breakdown, placement and ops are the {lead.name} phase's")
    return PhasedComparison(
        schema=SCHEMA, **(judged(lead) | dict(
            reasons=tuple(_phase_line(e) for e in entries), gate=_gate(compared), warnings=_warnings(rb, rn),
            headline=_with_axes(headline(lead.verdict, lead.name, entries), lead.verdict, compared))),
        statistic=("per phase: p50 over the phase's steady runs (its warm-up runs dropped), pooled over each "
                   "side's sessions; phases are never pooled"),
        verdict_phase=lead.name, verdict_basis=basis, phases=tuple(entries))


def headline(verdict: str, lead: str, entries: list) -> str:
    """"regression in decode (prefill: no change)": the verdict, the phase it is from, the others."""
    others = [f"{e.name}: {e.verdict.replace('_', ' ')}" for e in entries if e.name != lead]
    if verdict == "no_change" and all(e.verdict in ("no_change", NOT_COMPARED) for e in entries):
        names = [e.name for e in entries if e.verdict == "no_change"]
        more = [o for e, o in zip([e for e in entries if e.name != lead], others) if e.verdict == NOT_COMPARED]
        return (f"no change in {'any phase (' + ', '.join(names) + ')' if len(names) > 1 else names[0]}"
                + (f" ({'; '.join(more)})" if more else ""))
    return f"{verdict.replace('_', ' ')} in {lead}" + (f" ({'; '.join(others)})" if others else "")


def merged_axes(compared: list) -> dict:
    """The axes of the compared phases by name: an axis is the first phase's, or the first phase's
    where it changed (the placement and program axes are the program's, the same in each phase; a
    clock may move in one phase only)."""
    from etscope.analysis.diff import axes as diff_axes

    merged: dict = {}
    for e in compared:
        for name, axis in e.axes.named():
            if name not in merged or (axis.verdict == diff_axes.CHANGED and merged[name].verdict != diff_axes.CHANGED):
                merged[name] = axis
    return merged


def _with_axes(text: str, verdict: str, compared: list) -> str:
    """The phase headline and every non-latency axis that changed in any compared phase (the
    placement and program axes are the program's, the same in each phase; a clock may move in
    one phase only): never "no change" alone while an axis changed."""
    from etscope.analysis.diff import axes as diff_axes

    merged = merged_axes(compared)
    if verdict == "not_comparable":
        return "not comparable: different programs; " + text
    lead = text
    if verdict == "no_change" and any(a in merged and merged[a].verdict == diff_axes.CHANGED
                                      for a in diff_axes.AXES[1:]):
        lead = text.replace("no change", "no latency change", 1) + ", but"
    return diff_axes.headline(verdict, merged, latency_part=lead)


def _num(x) -> float:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else 0.0


def _phase_line(e) -> str:
    """One line per phase for the headline's reasons."""
    if e.verdict == NOT_COMPARED:
        return e.reasons[0]
    lat = e.latency
    lo, hi = lat.ci_pct
    ci = f" (95% CI {lo:+.1f}% to {hi:+.1f}%)" if math.isfinite(lo) and math.isfinite(hi) else " (no interval)"
    return f"{e.name}: {e.verdict.replace('_', ' ')}, p50 {lat.change_pct:+.1f}%{ci}"


def _gate(compared: list) -> Gate:
    """The gates of the phases together: fails when any phase's fails; each reason names its phase."""
    return Gate(fail=any(e.gate.fail for e in compared),
                why=tuple(f"{e.name}: {w}" for e in compared for w in e.gate.why))


def _warnings(rb: list, rn: list) -> tuple[str, ...]:
    return tuple(f"base: {w}" for w in rb[0].profile.warnings) + tuple(f"new: {w}" for w in rn[0].profile.warnings)
