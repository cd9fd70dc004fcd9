"""Plain-language findings of ``etscope llm``.

Each sentence says what it rests on (runs or instances, and their spread); effects are stated only
past the tests in ``drift.first_decode`` / ``drift.decode_drift``; causes are offered as possibilities.
"""
from __future__ import annotations

from etscope import units
from etscope.analysis.llm.drift import DRIFT_MIN_POSITIONS, FIRST_DECODE_HINT_RATIO, FIRST_DECODE_MIN_INSTANCES
from etscope.analysis.llm.partitions import overhead_finding
from etscope.analysis.stats import WARMUP_FACTOR


def plain_findings(phases, tps, ttft, drift, warm_notes, split, tokens_unknown=None,
                   file_names: list[str] | None = None) -> tuple[str, ...]:
    """The findings (``result`` objects in, sentences out); ``file_names`` (several inputs) names
    the input of each warm-up run."""
    out = []
    by_name = {ph.name: ph for ph in phases}
    if split and split.by not in (None, "none"):
        out.append(f"Phases found by {split.by}: {split.evidence}.")
    for w in warm_notes:
        if file_names and w.file is not None:     # judged within its file: say which, and against what
            where = f"{file_names[w.file]} run {w.file_run}, {w.phase}"
            later = f"the phase's {w.later_runs} later runs in that file"
        else:
            where, later = w.phase, f"the phase's {w.later_runs} later runs"
        out.append(f"Run {w.run} ({where}) is warm-up: {w.latency_ms:.3f} ms, "
                   f"{w.ratio:.1f}x the median of {later} (rule: over "
                   f"{WARMUP_FACTOR:g}x; their IQR {w.later_iqr_ms[0]:.3f}–{w.later_iqr_ms[1]:.3f} ms); "
                   "left out of the steady-state numbers.")
    if ttft is not None:
        out.append(f"Time to first token (prefill latency, p50): {ttft:.3f} ms"
                   + _basis(by_name.get("prefill")) + ".")
    dec = by_name.get("decode")
    if tps is not None:
        given = f"; {dec.tokens_per_run:g} token(s) per run from {dec.tokens_from}" if dec and dec.tokens_from else ""
        out.append(f"Decode: {tps:,.1f} tokens/s (1000 / p50 ms per token" + _basis(dec, ", ") + given + ").")
    elif dec is not None and dec.runs_per_s:
        out.append(f"Decode: {dec.runs_per_s:,.1f} runs/s ({dec.latency_ms.p50:.3f} ms per run, p50"
                   + _basis(dec, ", ") + "); tokens per run unknown.")
    if tokens_unknown:
        n = sum(len(by_name[name].runs) for name in tokens_unknown.phases)
        logged = tokens_unknown.runs_with_logged_tokens
        why = (f"logged tensor shapes give the count for only {logged} of them: not every ETDump logged them; "
               "no count given" if logged else "no logged tensor shapes, no count given")
        out.append(f"Tokens per run unknown for the {n} run(s) of {', '.join(tokens_unknown.phases)} ({why}): "
                   f"rates are per run. To give them: {tokens_unknown.how}.")
    for ph in phases:
        cpu = next((b for b in ph.breakdown if b.kind == "cpu_ops" and b.backend is None), None)
        if cpu and cpu.share >= 0.1:
            tops = ph.fallback_op_types[:3]
            detail = ", ".join(f"{t.op_type} x{len(t.instructions)} ({t.share:.0%})" for t in tops)
            kv = any("index_put" in t.op_type or "update_cache" in t.op_type for t in tops)
            n = ph.steady_runs
            basis = (f"over {n} steady runs; per run p10–p90 {cpu.p10_ms:.3f}–{cpu.p90_ms:.3f} ms" if n > 1
                     else "in its one steady run")
            msg = (f"{ph.name}: CPU fallback kernels take {cpu.share:.0%} of the mean run "
                   f"({cpu.mean_ms:.3f} ms {basis})"
                   + (f"; largest: {detail}" if detail else ""))
            if kv:
                msg += " (index_put in an LLM is most likely the KV-cache update, here on the CPU)"
            out.append(msg + ".")
    out.extend(m for m in map(overhead_finding, phases) if m)
    first = drift.first_decode_after_prefill if drift else None
    if first:
        out.extend(_first_decode_finding(first))
    if drift:
        out.append(_drift_finding(drift))
    if tps is None and len(phases) == 1 and phases[0].latency_ms and phases[0].latency_ms.p50:
        lat = phases[0].latency_ms
        p50 = lat.p50     # 0 when Method::execute lasted 0 ns: no rate
        msg = (f"No prefill/decode split was found: {units.per_s_from_ms(p50):,.1f} runs/s (p50 {p50:.3f} ms per run over "
               f"{phases[0].steady_runs} runs; tokens per run unknown; use --prompt-runs to name the "
               "prefill runs).")
        if lat.p99 is not None and lat.p99 >= NOISY_P99_OVER_P50 * p50:
            msg += (f" The runs' latency varies widely (p90 {lat.p90 / p50:.1f}x, p99 {lat.p99 / p50:.0f}x the p50): "
                    "runs slowed several times over (contention, throttling) can show part of a prefill's "
                    "pattern and hide it; a capture on a quieter device may tell the phases apart.")
        out.append(msg)
    return tuple(out)


# Steady runs whose p99 is this many times their p50 vary far more than token counts explain (a
# prefill of a few tokens costs ~2-4x a decode, and prefills are a few % of the runs).
NOISY_P99_OVER_P50 = 5.0


def _basis(ph, sep: str = " (") -> str:
    """' (n steady runs, p10–p90 a–b ms)' for a phase (``result.Phase``); '' without one."""
    if ph is None or not ph.latency_ms:
        return ""
    lat = ph.latency_ms
    n = ph.steady_runs
    if n == 1:
        return f"{sep}one run" + (")" if sep == " (" else "")
    return f"{sep}{n} steady runs, range {lat.min:.3f}–{lat.max:.3f} ms" + (")" if sep == " (" else "")


def _first_decode_finding(f) -> list[str]:
    others = (f"other decodes p50 {f.others_p50_ms:.3f} ms (IQR {f.others_iqr_ms[0]:.3f}–"
              f"{f.others_iqr_ms[1]:.3f} ms, {f.others_runs} runs)")
    lo, hi = f.range_ms
    if f.slower:
        return [f"The first decode after a prefill is slower: p50 {f.p50_ms:.3f} ms, {f.ratio:.1f}x the "
                f"{others}; above their upper quartile in {f.above_upper_quartile} of {f.instances} "
                f"prefill→decode transitions (range {lo:.3f}–{hi:.3f} ms). A possible cause: the delegates "
                "re-planning for the new input shape."]
    if (f.ratio or 0) <= FIRST_DECODE_HINT_RATIO:
        return []
    if f.instances < FIRST_DECODE_MIN_INSTANCES:
        return [f"Too few prefill→decode transitions ({f.instances}; {FIRST_DECODE_MIN_INSTANCES} needed) to "
                f"tell whether the first decode after a prefill is slower: first decodes {lo:.3f}–{hi:.3f} ms "
                f"(p50 {f.p50_ms:.3f}), {others}."]
    return [f"The first decode after a prefill is not consistently slower: above the other decodes' upper "
            f"quartile in {f.above_upper_quartile} of {f.instances} transitions (first decodes p50 "
            f"{f.p50_ms:.3f} ms, range {lo:.3f}–{hi:.3f}; {others})."]


def _drift_finding(d) -> str:
    lo, hi = d.positions
    ci = d.slope_ci95_ms_per_100_tokens
    ci_text = f"95% interval {ci[0]:+.3f}..{ci[1]:+.3f}" if ci else "no interval: too few positions"
    basis = (f"{d.x} {lo}..{hi}, {d.runs} runs; slope {d.slope_ms_per_100_tokens:+.3f} ms per 100 "
             f"tokens, {ci_text}; change over the range {d.change_over_range_ms:.3f} ms, run-to-run spread "
             f"(IQR around the fit) {d.spread_ms:.3f} ms")
    if hi - lo < DRIFT_MIN_POSITIONS:
        return f"Decode positions {lo}..{hi} are too few to tell a drift with position ({basis})."
    if d.drift_shown:
        rel = d.relative_per_100_tokens
        return (f"Decode latency drifts by {d.slope_ms_per_100_tokens:+.3f} ms"
                + (f" ({rel:+.0%})" if rel is not None else "") + f" per 100 tokens ({basis}; fit on the "
                "median latency per position).")
    return f"No drift of decode latency with position is shown ({basis})."

