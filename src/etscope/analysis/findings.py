"""What the report says first: ranked findings, each with its evidence and the report section that
shows it.

Each rule below is one kind of finding, tested on its own (``tests/analysis/test_findings.py``):

- ``overhead_level``: in a QNN partition, a nesting level (transport, host work, waits ...) that
  adds at least ``OVERHEAD_SHARE`` of the call; the partition's headline.
- ``cpu_fallback``: an op type that ran on the CPU, by share of Method::execute, with its source.
- ``no_hmx``: graph ops (QNN's own Input/Output left out: they only move data, never use HMX) that
  did not use HMX (QHAS/optrace flags), by their share of HTP cycles.
- ``layout``, ``weights_to_vtcm``, ``mostly_dma``, ``idle``: from the HTP-op breakdown
  (``analysis.qnn.htp_findings``), ranked by the cycles at stake.
- ``vtcm``: peak VTCM (QHAS) against the SoC's VTCM (the .pte's compile spec), or unknown.
- ``cold_runs``: runs that paid HTP power-up.
- ``clock``: the HTP clock varying across runs, an effective rate above any core clock, or a
  runtrace clock outside the profile's bounds.
- ``ops_exceed_container``: a partition's per-op estimates (cycles ÷ the clock used) add up to more
  than the measured time that holds them (``analysis.qnn.container``): the views show shares of
  the measured time instead, and this says the clock is wrong and what clock would fit.

Ranked by severity (high, medium, info), then by time at stake per run (µs, when the finding has
one). Inputs are the analyses' plain results (summary, QNN report); nothing is re-measured here.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from etscope.analysis.qnn.partition_result import Partition
from etscope.units import fmt_bytes, fmt_us

OVERHEAD_SHARE = 0.10          # a level adding less than this share of its call is not a finding
FALLBACK_SHARE = 0.01          # CPU op types below this share of Method::execute are not listed
MAX_FALLBACKS = 5
VTCM_FULL = 0.90               # peak VTCM above this share of the SoC's VTCM: little headroom
EXCEED_MEDIUM = 1.10           # raw per-op estimates this far above their measured time: medium, else info
CLOCK_SPREAD = 1.5             # max / min clock over runs above this: the clock changed between runs
SEVERITY = ("high", "medium", "info")


@dataclass(frozen=True)
class Finding:
    kind: str                  # overhead_level | cpu_fallback | no_hmx | vtcm | cold_runs | clock | layout
                               # | weights_to_vtcm | mostly_dma | idle | ops_exceed_container
    severity: str              # high | medium | info
    text: str                  # the finding in one sentence
    evidence: str              # the numbers it rests on and where they come from
    section: str               # id of the report section that shows it
    us_per_run: float | None = None   # time at stake per run, the rank within a severity

    def to_dict(self) -> dict:
        return asdict(self)


def partition_anchor(i: int) -> str:
    return f"qnn-p{i}"


def findings(summary, qnn) -> list[Finding]:
    """The ranked findings of one set of inputs: ``summary`` (the ETDump's, None without one) and
    ``qnn`` (``analysis.qnn.result.QnnReport``, None without QNN partition or file). The one
    engine: ``summary``, ``qnn`` and ``report`` list what it returns for the same inputs."""
    out: list[Finding] = []
    parts = qnn.partitions if qnn is not None else ()
    for i, p in enumerate(parts):
        out += _overhead(i, p) + _no_hmx(i, p) + _cold(i, p, len(parts)) + _clock(i, p) + _ops_exceed(i, p)
    out += _fallbacks(summary.top_fallback_op_types if summary is not None else ())
    out += _vtcm(qnn.qhas if qnn is not None else None)
    if qnn is not None and qnn.htp_ops:
        from etscope.analysis.qnn.htp_findings import htp_findings

        out += htp_findings(qnn.htp_ops, Finding)
    return sorted(out, key=lambda f: (SEVERITY.index(f.severity), -(f.us_per_run or 0.0)))


def _name(p: Partition) -> str:
    iid = p.instruction_id
    return f"DELEGATE_CALL #{iid}" if iid is not None else str(p.key)


def _overhead(i: int, p: Partition) -> list[Finding]:
    n = p.nesting
    bands = n.bands
    outer = next((b for b in bands if b.name != "Method::execute"), None)
    levels = [b for b in bands if b.name != "Method::execute" and b.adds_us_p50 is not None]
    if outer is None or not levels or not outer.us_p50:
        return []
    top = max(levels, key=lambda b: b.adds_us_p50)
    inner = bands[bands.index(top) + 1]
    share = top.adds_us_p50 / outer.us_p50
    if share < OVERHEAD_SHARE:
        return []
    overlap = _levels_overlap(p, bands)
    return [Finding(
        kind="overhead_level", severity="high" if share >= 0.5 and not overlap else "medium",
        text=f"{_name(p)}: {n.headline or ''}".strip(),
        evidence=(f"{top.label} {fmt_us(top.us_p50)} contains {inner.label} {fmt_us(inner.us_p50)}; "
                  f"the difference, p50 over {p.runs} run(s): {fmt_us(top.adds_us_p50)}, {share:.0%} of "
                  f"{outer.label} {fmt_us(outer.us_p50)}. Basis: QNN's own levels, which exist only on runs "
                  "profiled by QNN; collecting the profile adds work inside them, so an unprofiled run spends "
                  "less here" + (f". {overlap}" if overlap else "")),
        section=partition_anchor(i), us_per_run=top.adds_us_p50)]


DSP_SIDE = "QNN accelerator (execute) time"       # the level that holds QNN's own DSP-side steps


def _levels_overlap(p: Partition, bands) -> str | None:
    """When QNN's sub-steps (initial VTCM acquire, HVX + HMX power-on; p50 over the warm runs) are
    larger than what the DSP-side level adds over the graph, QNN's levels do not nest strictly:
    say so (the split between levels is then approximate)."""
    dsp = next((b for b in bands if b.name == DSP_SIDE and b.adds_us_p50 is not None), None)
    if dsp is None:
        return None
    cold = set(p.cold_runs)
    for series, what in ((p.per_run.vtcm_acquire_us, "initial VTCM acquire"),
                         (p.per_run.power_on_us, "HVX + HMX power-on")):
        v = np.array([np.nan if x is None else x for k, x in enumerate(series or []) if k not in cold],
                     dtype=np.float64)
        if v.size and np.isfinite(v).any():
            step = float(np.nanmedian(v))
            if step > dsp.adds_us_p50:
                return (f"QNN's levels overlap here: its {what} ({fmt_us(step)} p50 over warm runs) is larger than "
                        f"the {fmt_us(dsp.adds_us_p50)} the DSP-side level adds around the graph, so the split "
                        "between levels is approximate")
    return None


def _no_hmx(i: int, p: Partition) -> list[Finding]:
    # Graph ops only: QNN's Input/Output rows move data and never use HMX (a finding by construction).
    ops = [o for o in p.ops if o.hmx is False and (o.cycles_p50 or 0) > 0 and o.graph_op]
    if not ops:
        return []
    total = sum(o.cycles_p50 or 0 for o in p.ops)
    cyc = sum(o.cycles_p50 for o in ops)
    share = cyc / total if total else 0.0
    us = sum(o.est_us_at_clock or 0.0 for o in ops) or None
    ops.sort(key=lambda o: -o.cycles_p50)
    names = ", ".join(f"{o.base or o.qnn_name} ({_units(o)})" for o in ops[:4])
    more = f" and {len(ops) - 4} more" if len(ops) > 4 else ""
    return [Finding(
        kind="no_hmx", severity="medium" if share >= 0.25 else "info",
        text=(f"{_name(p)}: {len(ops)} QNN op(s) ran without HMX, the matrix unit: {share:.0%} of the "
              f"partition's HTP cycles"),
        evidence=f"{names}{more}; flags from QHAS/optrace, cycles p50 {cyc:,.0f} of {total:,.0f}",
        section=f"qnn-ops-p{i}", us_per_run=us)]


def _units(o) -> str:
    used = [u for u, on in (("hvx", o.hvx), ("dma", o.dma)) if on]
    return " + ".join(u.upper() for u in used) if used else "no unit flagged"


def _cold(i: int, p: Partition, n_parts: int) -> list[Finding]:
    cold = list(p.cold_runs)          # a list: numpy indexes with it
    power = np.array([np.nan if v is None else v for v in p.per_run.power_on_us or []],
                     dtype=np.float64)
    if not cold or power.size == 0:
        return []
    warm = float(np.nanmedian(np.delete(power, cold))) if power.size > len(cold) else float("nan")
    worst = float(np.nanmax(power[cold]))
    runs = ", ".join(str(r) for r in cold[:8]) + (" …" if len(cold) > 8 else "")
    return [Finding(
        kind="cold_runs", severity="medium",
        text=(f"{_name(p)}: run(s) {runs} were cold: HVX + HMX power-on took up to {fmt_us(worst)}"
              + (f" against {fmt_us(warm)} warm" if warm == warm else "") + "; leave them out of steady-state numbers"),
        evidence="QNN's 'Time for HVX + HMX power on and acquire' per run",
        section=partition_anchor(i), us_per_run=(worst - warm) / max(p.runs or 1, 1) if warm == warm else None)]


def _clock(i: int, p: Partition) -> list[Finding]:
    out = []
    anchor = f"qnn-clock-p{i}"
    if p.clock_warning:
        out.append(Finding(kind="clock", severity="medium", text=f"{_name(p)}: {p.clock_warning}",
                           evidence="accelerator cycles ÷ accelerator µs", section=anchor))
    if p.clock_measured_within_bounds is False:
        lo, hi = p.clock_mhz_bounds or (None, None)
        out.append(Finding(
            kind="clock", severity="medium",
            text=(f"{_name(p)}: the runtrace's clock ({p.clock_mhz_measured:,.0f} MHz) lies outside what this "
                  "profile allows: the runtrace may come from another session"),
            evidence=f"profile bounds {_mhz(lo)}–{_mhz(hi)} MHz (cycles ÷ µs with and without waits)",
            section=anchor))
    per = [x for x in (p.clock_mhz_measured_per_execute or []) if x]
    what = "measured by the runtrace"
    if len(per) < 2:
        rng = p.clock_mhz_est_per_run_range
        per = list(rng) if rng else []
        what = "estimated per run (cycles ÷ µs)"
    if len(per) >= 2 and min(per) > 0 and max(per) / min(per) > CLOCK_SPREAD:
        out.append(Finding(
            kind="clock", severity="info",
            text=(f"{_name(p)}: the HTP clock changed between runs, {min(per):,.0f}–{max(per):,.0f} MHz "
                  "(power state / DCVS): compare runs by cycles, not µs"),
            evidence=f"clock {what}", section=anchor))
    return out


def _ops_exceed(i: int, p: Partition) -> list[Finding]:
    """Raw per-op estimates (cycles ÷ clock) above the measured time holding them: the clock used
    is below what that time allows (cycles ÷ it is the clock's lower bound)."""
    ot = p.op_times
    k = ot.runs_over or 0
    raw, cont = ot.over_raw_us_mean, ot.over_bound_us_mean
    if not k or raw is None or cont is None:
        return []
    used, fit = ot.over_clock_mhz_used, ot.over_clock_mhz_to_fit
    source = "the runtrace's" if p.clock_source == "runtrace" else "the estimated"
    clipped = ot.container_clipped_runs or 0
    return [Finding(
        # A clock a few % off in some runs (one p50 clock for runs that changed clock) is info.
        kind="ops_exceed_container", severity="medium" if raw >= cont * EXCEED_MEDIUM else "info",
        text=(f"{_name(p)}: per-op times from cycles ÷ {source} clock ({_mhz(used)} MHz) add up to {fmt_us(raw)} "
              f"per run, more than the measured {ot.bound} that holds them, {fmt_us(cont)}: the clock "
              f"must be at least {_mhz(fit)} MHz"
              + (" (an effective rate: cycles summed over parallel HVX/HMX threads)"
                 if p.clock_bound == "effective" else "")
              + (" (or the runtrace is from another session)" if p.clock_source == "runtrace" else "")),
        evidence=(f"in {k} of {ot.runs_compared} run(s), means over those runs; Σ per-op cycles ÷ "
                  f"{ot.bound} µs (waits included) gives the lowest clock that fits"
                  + (f"; {clipped} run(s) logged a QNN time longer than the one around it (DELEGATE_CALL ⊇ QNN "
                     "execute ⊇ … ⊇ Accelerator; capped)" if clipped else "")
                  + f". The views show each op's share of the measured time instead ({ot.estimate})"),
        section=f"qnn-clock-p{i}",
        us_per_run=(raw - cont) * k / max(p.runs or 1, 1))]


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"


def _fallbacks(tops) -> list[Finding]:
    """``tops``: the summary's CPU-fallback time per op type (``OpTypeTime``), largest first."""
    out = []
    for t in tops[:MAX_FALLBACKS]:
        if (t.share or 0) < FALLBACK_SHARE:
            continue
        srcs = [x for x in t.sources if x]
        where = (srcs[0] + (f" (+{len(srcs) - 1} more)" if len(srcs) > 1 else "")) if srcs else "source unknown (no ETRecord)"
        out.append(Finding(
            kind="cpu_fallback", severity="high" if t.share >= 0.2 else "medium",
            text=(f"CPU fallback: {t.op_type} ×{t.instructions} takes {fmt_us(t.mean_ms * 1e3)} per run, "
                  f"{t.share:.0%} of Method::execute"),
            evidence=f"not delegated (OPERATOR_CALL rows); source: {where}", section="placement",
            us_per_run=t.mean_ms * 1e3))
    return out


def _vtcm(q) -> list[Finding]:
    """``q``: the QHAS summary (``analysis.qnn.op_tables.QhasSummary``) or None."""
    if q is None or q.peak_vtcm_alloc is None:
        return []
    peak, size = q.peak_vtcm_alloc, q.vtcm_bytes
    if not size:
        return [Finding(kind="vtcm", severity="info",
                        text=f"Peak VTCM {fmt_bytes(peak)} (QHAS); the SoC's VTCM size is unknown (give the .pte)",
                        evidence="QHAS peak VTCM allocation, first inference of the optrace run", section="qnn-qhas")]
    share = peak / size
    full = share >= VTCM_FULL
    return [Finding(
        kind="vtcm", severity="high" if full else "info",
        text=(f"Peak VTCM {fmt_bytes(peak)} of {fmt_bytes(size)} on {q.soc or 'this SoC'} ({share:.0%}): "
              + ("little headroom, larger tiles would spill to DRAM" if full else
                 f"{fmt_bytes(size - peak)} headroom")),
        evidence="QHAS peak VTCM allocation against the VTCM size in the .pte's compile spec", section="qnn-qhas")]
