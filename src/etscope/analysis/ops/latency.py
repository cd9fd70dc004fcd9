"""Method::execute latency over the steady runs of a profile, and the warm-up runs left out of it
(``stats.steady_runs``: the rule of `etscope llm` and `etscope diff`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.stats import describe, steady_or_default


@dataclass(frozen=True)
class LatencyMs:
    """Method::execute latency over the runs with timing, in ms."""
    p10: float | None
    p50: float
    p90: float | None
    p99: float | None
    mean: float
    min: float
    max: float
    total: float | None


@dataclass(frozen=True)
class WarmupLeftOut:
    """The leading warm-up runs left out of every statistic over runs (``stats.steady_runs``, the
    rule of `etscope llm` and `etscope diff`): which runs, each one's latency and how many times
    the steady runs' p50 it is. The per-run series still show them."""
    count: int
    runs: tuple[int, ...]
    latency_ms: tuple[float, ...]
    times_steady_p50: tuple[float | None, ...]


@dataclass(frozen=True)
class RunLatency:
    """How many Execute runs, and their latency over the steady runs (None when no run has timing);
    ``warmup``: the warm-up runs left out (absent when none was)."""
    count: int
    latency_ms: LatencyMs | None
    warmup: WarmupLeftOut | None = field(default=None, metadata={"omit_none": True})


def latency_summary(profile: P.Profile, steady: np.ndarray | None = None) -> RunLatency:
    """Method::execute over the steady runs (``steady``: bool per run; default ``stats.steady_runs``)."""
    lat_all = profile.runs["latency_ns"]
    steady = steady_or_default(profile, steady)
    lat = lat_all[~np.isnan(lat_all) & steady]
    if lat.size == 0:
        return RunLatency(profile.n_runs, None)
    s = describe(units.ns_to_ms(lat))
    return RunLatency(profile.n_runs, LatencyMs(**{k: s[k] for k in ("p10", "p50", "p90", "p99", "mean", "min",
                                                                    "max", "total")}),
                      warmup=warmup_left_out(lat_all, steady, s["p50"], profile.phase))


def warmup_left_out(latency_ns: np.ndarray, steady: np.ndarray, steady_p50_ms: float,
                    phase: P.PhaseSelection | None = None) -> WarmupLeftOut | None:
    """The runs ``steady`` leaves out, each with its latency and its ratio to the steady p50 (None
    when none is left out); ``runs`` are the file's run numbers (``phase``: the runs these are), as
    `etscope llm` numbers them."""
    runs = np.flatnonzero(~steady)
    if runs.size == 0:
        return None
    ms = [units.ns_to_ms(float(latency_ns[r])) for r in runs]
    numbers = [int(phase.runs[r]) if phase is not None and r < len(phase.runs) else int(r) for r in runs]
    return WarmupLeftOut(count=int(runs.size), runs=tuple(numbers), latency_ms=tuple(ms),
                         times_steady_p50=tuple(m / steady_p50_ms if steady_p50_ms else None for m in ms))
