"""Plain-language reading guide built from a summary (``analysis.views.summary_result``; shared by
the text and HTML views)."""
from __future__ import annotations

from etscope.render.warmup_text import warmup_sentence
from etscope.units import fmt_ms, us_to_ms


def reading_guide(s, qnn=None) -> list[str]:  # noqa: C901 - one sentence per fact
    """``s``: a ``Summary`` (or ``FilesSummary``); ``qnn``: the QNN report when the view has one
    (the report): the guide then says which QNN files were given instead of asking for them."""
    if s.qnn_only:       # QNN files without an ETDump (analysis.qnn.files_alone)
        return _qnn_only_guide(s.qnn_only)
    lines: list[str] = []
    runs = s.runs
    lat = runs.latency_ms
    if not lat:
        return ["No Execute runs with timing were found in this ETDump."]
    method = f" ({s.method})" if s.method else ""
    ph = s.phase
    of = f" of the {ph.name} phase ({ph.of_runs - len(ph.runs)} other run(s) left out)" if ph else ""
    warm = warmup_sentence(runs.warmup)
    steady = f"{runs.count - runs.warmup.count} steady run(s)" if warm else f"{runs.count} run(s)"
    lines.append(
        f"Method::execute{method}: {fmt_ms(lat.p50)} p50 over {steady}{of} "
        f"(mean {fmt_ms(lat.mean)}, min {fmt_ms(lat.min)}, max {fmt_ms(lat.max)})"
        + (f"; {warm}." if warm else "."))
    parts = []
    for b in s.breakdown:
        if b.kind == "delegate":
            calls = b.calls_per_run
            parts.append(f"{_num(calls)} {b.backend} delegate call{'s' if calls != 1 else ''} "
                         f"({fmt_ms(b.mean_ms)}, {b.share:.0%})")
        elif b.kind == "cpu_ops":
            calls = b.calls_per_run or 0
            tops = s.top_fallback_op_types
            detail = ""
            if tops:
                bits = []
                for t in tops[:3]:
                    where = f" at {compact_sources(t.sources)}" if t.sources else ""
                    bits.append(f"{t.op_type} ×{t.instructions}{where}")
                detail = ": " + ", ".join(bits) + (f" and {len(tops) - 3} more" if len(tops) > 3 else "")
            parts.append(f"{_num(calls)} CPU kernel call{'s' if calls != 1 else ''} "
                         f"({fmt_ms(b.mean_ms)}, {b.share:.0%}{detail})")
        else:
            parts.append(f"{fmt_ms(b.mean_ms)} framework overhead ({b.share:.0%})")
    lines.append("Per run on average it contains " + "; ".join(parts) + ".")
    lines.append(
        "How to read this: Method::execute wraps the whole call. Each DELEGATE_CALL is timed by "
        "ExecuTorch around one call into a backend (one per partition); the backend's own events "
        "(per-op rows, QNN's accelerator time and cycles) are nested inside it, not added to it. "
        "OPERATOR_CALL rows are kernels that ran on the CPU (fallback, not delegated). Framework "
        "overhead is Method::execute minus all of those.")
    for q in s.qnn or ():
        if q.delegate_call_ms is not None:
            where = (f"at instruction {q.instruction_id}" if q.instruction_id is not None
                     else "not tied to an instruction")
            bits = [f"QNN partition {where}: DELEGATE_CALL {fmt_ms(q.delegate_call_ms)} p50"]
            contains = "contains"
        else:       # from a QNN profile file given beside the ETDump: no DELEGATE_CALL around it
            bits = [f"QNN partition from the QNN profile file ({q.runs or 0} execute(s), no DELEGATE_CALL)"]
            contains = "QNN (execute) p50"
        if q.qnn_execute_us is not None:
            qnn_execute = fmt_ms(us_to_ms(q.qnn_execute_us))
            bits.append(f"contains QNN (execute) {qnn_execute}" if contains == "contains" else f"{contains} {qnn_execute}")
        if q.accel_us is not None:
            bits.append(f"which contains the HTP accelerator {fmt_ms(us_to_ms(q.accel_us))} (waits included)")
        if q.accel_cycles is not None:
            bits.append(f"= {q.accel_cycles:,.0f} cycles, the sum of its {q.ops} per-op rows")
        line = ", ".join(bits) + "."
        clock = _clock_words(q)
        if clock:
            line += " " + clock
        if q.cold_runs:
            line += f" Run(s) {list(q.cold_runs)} were cold (HTP power-up)."
        if q.checks_failed:
            line += " Failed checks: " + "; ".join(q.checks_failed) + "."
        lines.append(line)
    qc = s.qnn_compile
    if qc:
        vtcm = f", {qc.vtcm_bytes / 2**20:g} MiB VTCM" if qc.vtcm_bytes else ""
        lines.append(f"The .pte was compiled for {qc.soc_model} (HTP {qc.htp_arch}{vtcm}) with "
                     f"QNN profile level '{qc.profile_level}' (per-op rows need 'detailed' or 'optrace').")
    if s.qnn:
        lines.append("These QNN levels are nested, not added: Method::execute ⊇ DELEGATE_CALL ⊇ QNN (execute) "
                     "⊇ Accelerator (execute) time; cycles are cycles, not ms. " + qnn_files_sentence(qnn))
    mem = s.memory
    if mem is not None and mem.planned_bytes is not None:
        from etscope.units import fmt_bytes

        lines.append(f"Planned activation memory (from the .pte): {fmt_bytes(mem.planned_bytes)} "
                     f"in {len(mem.planned_buffers)} buffer(s).")
    return lines


def qnn_files_sentence(qnn) -> str:
    """Where HMX/HVX use, VTCM and utilisation come from, naming the QNN files given and asking only
    for the missing ones."""
    given = [k for k, v in (("qhas", qnn.qhas), ("optrace", qnn.optrace), ("runtrace", qnn.runtrace)) if v] \
        if qnn is not None else []
    missing = [k for k in ("qhas", "optrace") if k not in given]
    words = {"qhas": "QHAS", "optrace": "optrace", "runtrace": "runtrace"}
    text = "HMX/HVX use, VTCM and NPU utilisation come from QHAS/optrace"
    if given:
        text += "; given here: " + ", ".join(words[k] for k in given) + " (see the QNN section)"
    if missing:
        flags = " ".join(f"--{k} ..." for k in missing)
        text += ("; not given: " if given else ": ") + f"add `{flags}` (to `etscope qnn` or `report`) for "
        text += "per-op HMX/HVX and VTCM" if "qhas" in missing else "the HMX/HVX timeline"
    return text + "."


def _clock_words(q) -> str:
    """The HTP clock with its basis named, so the numbers beside it can be checked by division."""
    est = q.clock_mhz_est
    if est is None:
        return ""
    basis = q.clock_basis or "?"
    lo, hi = q.clock_mhz_bounds or (None, None)
    excl = q.accel_excl_wait_us
    excl_txt = fmt_ms(us_to_ms(excl)) if excl is not None else "?"
    if q.clock_bound == "between":
        words = (f"≈{est:,.0f} MHz estimated = p50 of cycles ÷ '{basis}' ({excl_txt} p50), an upper "
                 f"bound; cycles ÷ the time with waits is the lower bound: the clock lies in "
                 f"{lo:,.0f}–{hi:,.0f} MHz")
    elif q.clock_bound == "lower":
        words = (f"≥ {lo:,.0f} MHz: p50 of cycles ÷ '{basis}' ({est:,.0f} MHz) is a lower bound only (that "
                 "time includes waits; ±0.5 µs rounding allowed for)")
    elif q.clock_bound == "upper":
        words = f"≤ {est:,.0f} MHz estimated = p50 of cycles ÷ '{basis}', an upper bound"
    else:
        words = (f"{est:,.0f} MHz = p50 of cycles ÷ '{basis}', an effective rate above any HTP core clock "
                 "(cycles summed over parallel threads)")
    if q.clock_source == "runtrace" and q.clock_mhz_measured is not None:
        return f"HTP clock {q.clock_mhz_measured:,.0f} MHz measured (runtrace); from this profile alone: {words}."
    return f"HTP clock {words}."


def compact_sources(sources: list[str]) -> str:
    """Every source line, grouped by file, each file named once, three or more consecutive lines as
    a range: ['m.py:34', 'm.py:30', 'u.py:5', 'm.py:31', 'm.py:32'] -> 'm.py:30–32, :34, u.py:5'.
    Entries that are not FILE:LINE are kept as they are, first."""
    lines: dict[str, list[int]] = {}
    other = []
    for src in sources:
        file, sep, line = src.rpartition(":")
        if sep and file and line.isdigit():
            lines.setdefault(file, []).append(int(line))
        else:
            other.append(src)
    out = list(dict.fromkeys(other))
    for file in sorted(lines):
        nums = sorted(set(lines[file]))
        runs, start = [], nums[0]
        for prev, cur in zip(nums, nums[1:] + [None]):
            if cur is None or cur != prev + 1:
                # Three or more consecutive lines as a range; two stay two.
                runs += [f"{start}–{prev}"] if prev - start >= 2 else [str(n) for n in range(start, prev + 1)]
                start = cur
        out.append(f"{file}:{runs[0]}")
        out.extend(f":{r}" for r in runs[1:])
    return ", ".join(out)


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


def _qnn_only_guide(only) -> list[str]:
    """The reading guide of QNN files alone (``analysis.qnn.files_alone.QnnOnly``): what each file
    shows here, then what is missing."""
    f = only.facts
    lines = ["Only QNN files were given (" + ", ".join(only.files) + "): the views show what they hold."]
    for p in f.partitions:
        bits = [f"{p.key}: {p.runs} execute(s)"]
        if p.qnn_execute_us is not None:
            bits.append(f"QNN (execute) {p.qnn_execute_us:,.0f} µs p50")
        if p.accel_us is not None:
            bits.append(f"HTP accelerator {p.accel_us:,.0f} µs (waits included)")
        if p.accel_cycles is not None:
            bits.append(f"{p.accel_cycles:,.0f} cycles over {p.per_op_rows} per-op rows")
        lines.append(", ".join(bits) + ".")
    if f.optrace:
        lines.append(f"optrace: {f.optrace.ops} op events on {f.optrace.busy_tracks} busy HTP unit "
                     "track(s), in cycles.")
    if f.qhas:
        lines.append(f"QHAS: NPU utilisation {f.qhas.utilization_pct:.1f}% of {f.qhas.timeline_cycles:,.0f} "
                     "timeline cycles (first inference).")
    if f.runtrace_clock_mhz:
        lines.append(f"runtrace: HTP clock {f.runtrace_clock_mhz:,.0f} MHz measured (p50 of its Graph Execute spans).")
    return lines + ["Missing: " + g + "." for g in only.missing]
