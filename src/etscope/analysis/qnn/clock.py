"""The HTP clock of a partition: estimated per run from cycles and µs (with its bounds), or measured
by a runtrace, and the warnings when the two disagree."""
from __future__ import annotations

import numpy as np

from etscope.arrays import median, nanmedian
from etscope.analysis.qnn.model import (ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, POWER_ON,
                                        VTCM_ACQUIRE, QnnSeries, p50)

# Above this, cycles ÷ µs cannot be one core's clock (HTP cores clock below ~2 GHz in the data we
# have: SM8650 runtrace 1.9 GHz warm); it means cycles were summed over parallel threads.
PLAUSIBLE_MAX_CLOCK_MHZ = 2500.0


def clock_estimate(s: QnnSeries) -> dict:
    """HTP clock per run = accelerator cycles ÷ accelerator µs (excluding wait when present).

    The two times bracket the clock: cycles ÷ 'Accelerator (execute) time' (waits included) is a
    lower bound, cycles ÷ 'Accelerator (execute excluding wait) time' an upper bound (SM8650 warm
    run: 1,040 … 2,174 MHz; its runtrace measured 1,868 MHz). The estimate is cycles ÷ the
    excluding-wait time (the upper bound) when present, else cycles ÷ the wait-inclusive time (the
    lower bound). ``bound_lo``/``bound_hi`` also allow ±0.5 µs for QNN's whole-µs values;
    ``lo``/``hi`` are that rounding alone around the estimate. Derived, never measured.
    """
    cycles = s.roots.get(ACCEL_CYCLES)
    basis = ACCEL_EXCL_WAIT_US if ACCEL_EXCL_WAIT_US in s.roots else ACCEL_US if ACCEL_US in s.roots else None
    n = len(s.runs)
    nan = np.full(n, np.nan)
    if cycles is None or basis is None:
        missing = [k[0] for k in (ACCEL_CYCLES, ACCEL_US) if k not in s.roots]
        return {"clock_mhz": nan, "lo": nan, "hi": nan, "bound_lo": nan, "bound_hi": nan,
                "basis": None, "bound": None,
                "warning": "no clock estimate: the profile lacks " + " and ".join(
                    f"'{m}'" for m in missing) + " (per-op times need QNN profile level 'detailed')"}
    us = s.roots[basis]
    with np.errstate(divide="ignore", invalid="ignore"):
        mhz = np.where(us > 0, cycles / us, np.nan)
        lo = np.where(us > 0, cycles / (us + 0.5), np.nan)
        hi = np.where(us > 0.5, cycles / (us - 0.5), np.nan)
        wait_us = s.roots.get(ACCEL_US)
        bound_lo = np.where(wait_us > 0, cycles / (wait_us + 0.5), np.nan) if wait_us is not None else nan
        excl = s.roots.get(ACCEL_EXCL_WAIT_US)
        bound_hi = np.where(excl > 0.5, cycles / (excl - 0.5), np.nan) if excl is not None else nan
    warning = None
    p50 = nanmedian(mhz) if (~np.isnan(mhz)).any() else np.nan
    if p50 > PLAUSIBLE_MAX_CLOCK_MHZ:
        warning = (f"cycles ÷ µs gives {p50:,.0f} MHz, more than an HTP core runs at: the per-op cycles "
                   "are summed over HVX/HMX threads that ran in parallel. The 'clock' is then an "
                   "effective rate, and per-op µs estimates share the measured accelerator time out in "
                   "proportion to cycles")
    # What the estimate is: "between" (both times: lower and upper bound known), "upper"/"lower"
    # (one time only), "effective" (above any core clock: cycles summed over parallel threads, so
    # neither time bounds a clock).
    bound = "effective" if warning else "between" if basis == ACCEL_EXCL_WAIT_US and wait_us is not None \
        else "upper" if basis == ACCEL_EXCL_WAIT_US else "lower"
    return {"clock_mhz": mhz, "lo": lo, "hi": hi, "bound_lo": bound_lo, "bound_hi": bound_hi,
            "basis": basis[0], "bound": bound, "warning": warning}


def measured_clock(runtrace) -> dict | None:
    """The HTP clock a runtrace measured: p50 over its 'Graph Execute' spans (all executes; the
    cold first one included, as in the profile's own p50 over runs)."""
    if runtrace is None:
        return None
    per = runtrace.graph_execute_mhz()
    if per.size == 0:
        return None
    from etscope.formats.runtrace import GRAPH_EXECUTE

    return {"mhz": float(median(per)), "per_execute": [float(x) for x in per],
            "path": runtrace.path, "graphs": runtrace.graphs,
            # per execute of the runtrace, to tie its executes to a profile's runs
            "graph_mhz": runtrace.per_execute(GRAPH_EXECUTE)[:, 1],
            "ticks": {VTCM_ACQUIRE: runtrace.per_execute("VTCM Acquire")[:, 0],
                      POWER_ON: runtrace.per_execute("Resource Power On")[:, 0]}}


def _runs_match(s: QnnSeries, measured: dict) -> bool:
    """Whether the runtrace recorded these very runs: one graph, as many executes as runs, and its
    VTCM-acquire / power-on tick counts equal to the profile's values of those events, run by run
    (they are the same counters; see formats/runtrace.py)."""
    if len(measured["graphs"]) != 1 or measured["graph_mhz"].size != len(s.runs):
        return False
    if np.isnan(measured["graph_mhz"]).any():
        return False
    compared = 0
    for key, ticks in measured["ticks"].items():
        v = s.roots.get(key)
        if v is None or np.isnan(v).any() or np.isnan(ticks).any():
            continue
        if not np.array_equal(v, ticks):
            return False
        compared += 1
    return compared > 0


def clock_fields(s: QnnSeries, clock: dict, measured: dict | None) -> tuple[dict, np.ndarray]:
    """The clock as reported per partition, and the per-run clock used for cycles -> µs (the
    runtrace's measured clock when given, else the per-run estimate)."""
    est = clock["clock_mhz"]
    ok = est[~np.isnan(est)]
    per_run = bool(measured) and _runs_match(s, measured)
    used = measured["graph_mhz"].copy() if per_run else np.full(len(s.runs), measured["mhz"]) if measured else est
    lo, hi = p50(clock["bound_lo"]), p50(clock["bound_hi"])
    out = {
        "clock_mhz_bounds": (lo, hi),
        "clock_bound": clock["bound"],
        "clock_mhz_est_per_run_range": (float(ok.min()), float(ok.max())) if ok.size else None,
        "clock_mhz_measured": measured["mhz"] if measured else None,
        "clock_mhz_measured_per_execute": tuple(measured["per_execute"]) if measured else None,
        "clock_source": "runtrace" if measured else ("estimate" if ok.size else None),
        "clock_mhz_used": p50(used),
        "clock_measured_within_bounds": None,
        # True: the runtrace holds these very runs (matched by VTCM-acquire / power-on ticks), so
        # each run's cycles are divided by that run's measured clock; False: by the runtrace's p50.
        "clock_measured_per_run": per_run if measured else None,
    }
    if measured and (lo is not None or hi is not None):
        m = measured["mhz"]
        out["clock_measured_within_bounds"] = bool((lo is None or m >= lo) and (hi is None or m <= hi))
    return out, used



def clock_warnings(partitions: list[dict], runtrace, measured) -> list[str]:
    out = []
    if runtrace is None:
        return out
    out += [f"runtrace: {w}" for w in runtrace.warnings]
    if measured is None:
        out.append("runtrace: no measured 'Graph Execute' clock; per-op µs use the estimate")
        return out
    if len(measured["graphs"]) > 1:
        out.append(f"runtrace: {len(measured['graphs'])} graphs; their executes' median clock is used for "
                   "every partition")
    for p in partitions:
        if p.clock_measured_within_bounds is False:
            lo, hi = p.clock_mhz_bounds
            out.append(f"{p.key}: the runtrace's {measured['mhz']:,.0f} MHz lies outside this profile's "
                       f"bounds ({_mhz(lo)}–{_mhz(hi)} MHz): the runtrace may come from another session, "
                       "or the cycles are summed over parallel HVX/HMX threads")
    return out


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"


