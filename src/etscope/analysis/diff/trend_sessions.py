"""Sessions of a trend: each collected file's p50 over its steady runs, the builds' order, and the
rows of each series (model x SoC x phase), in numpy without per-row Python work."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from etscope.arrays import median
from etscope.analysis.diff.trend_result import ALL_PHASES
from etscope.analysis.stats import leading_warmup


# ---- strings without fixed-width copies ----------------------------------------------------------------
def text(a) -> np.ndarray:
    """Values as an object array of ``str`` (``astype(str)`` would make a fixed-width array as
    wide as the longest value, times every row: one long model name and millions of rows)."""
    a = np.asarray(a)
    if a.dtype.kind == "U":
        return a.astype(object)
    if a.dtype.kind == "O":
        return np.frompyfunc(str, 1, 1)(a).astype(object, copy=False) if a.size else a.astype(object)
    return a.astype(str).astype(object)


def factorize(a: np.ndarray) -> tuple[np.ndarray, list]:
    """(codes, distinct values in order of first appearance) of an array, comparing only
    neighbours and each run's first value in Python (rows of one file or series come in runs)."""
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(0, np.int64), []
    starts = np.r_[0, np.flatnonzero(a[1:] != a[:-1]) + 1]
    index: dict = {}
    seg = np.fromiter((index.setdefault(v, len(index)) for v in a[starts].tolist()), np.int64, starts.size)
    return np.repeat(seg, np.diff(np.r_[starts, a.size])), list(index)


# ---- sessions --------------------------------------------------------------------------------------
def session_p50s(file_hash: np.ndarray, execute: np.ndarray, latency_ms: np.ndarray) -> dict[str, tuple[float, int]]:
    """{file: (p50 ms over its steady runs, runs used)}: each file's runs in execute order, leading
    warm-up runs dropped (``stats.leading_warmup``, the rule of ``diff`` and ``llm``)."""
    out = {}
    codes, names = factorize(text(file_hash))
    order = np.lexsort((execute, codes))
    fc, lat = codes[order], latency_ms[order]
    if fc.size == 0:
        return out
    cuts = np.flatnonzero(fc[1:] != fc[:-1]) + 1
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, fc.size]):
        one = _steady_p50(lat[lo:hi])
        if one is not None:
            out[names[fc[lo]]] = one
    return out


def _steady_p50(lat: np.ndarray) -> tuple[float, int, float, float] | None:
    """(p50, runs, first quartile, third quartile) of the steady runs (ms); None without one."""
    x = lat[np.isfinite(lat)]
    x = x[leading_warmup(x):]
    if x.size and median(x) > 0:
        q1, q3 = np.quantile(x, [0.25, 0.75])
        return float(median(x)), int(x.size), float(q1), float(q3)
    return None


def session_p50(execute: np.ndarray, latency_ms: np.ndarray) -> tuple[float, int] | None:
    """One file's (p50 ms over its steady runs, runs used), None without a timed run: the rule of
    :func:`session_p50s` for one file, so a reader can summarise each file as it reads it."""
    one = session_summary(execute, latency_ms)
    return None if one is None else one[:2]


def session_summary(execute: np.ndarray, latency_ms: np.ndarray) -> tuple[float, int, float, float] | None:
    """:func:`session_p50` and the quartiles of the same steady runs (the build table's IQR)."""
    order = np.argsort(np.asarray(execute, np.int64), kind="stable")
    return _steady_p50(np.asarray(latency_ms, np.float64)[order])


@dataclass(frozen=True)
class Session:
    """One collected file of a series, summarised: its p50 over steady runs (None: no timed run)."""
    file: str
    model: str
    soc: str
    build: str
    order_key: str
    p50_ms: float | None
    runs: int
    phase: str = ALL_PHASES              # the file's runs of this phase only
    q1_ms: float | None = None           # quartiles of its steady runs (None: not summarised)
    q3_ms: float | None = None
    also_builds: tuple = ()              # other build labels of the same bytes (collect --also-label)
    facts: tuple = ()                    # sorted (name, value) strings the dataset stores about the file


def build_order(keys_by_build: dict[str, list[str]]) -> list[str]:
    """Builds ordered by their smallest order key: numerically when every key is a number."""
    def num(s):
        try:
            v = float(s)
            return v if math.isfinite(v) else None
        except (TypeError, ValueError):
            return None

    numeric = all(num(k) is not None for ks in keys_by_build.values() for k in ks)
    first = {b: min(ks, key=num) if numeric else min(ks) for b, ks in keys_by_build.items()}
    return sorted(first, key=lambda b: ((num(first[b]) if numeric else first[b]), b))


def phase_values(cols: dict, n: int) -> np.ndarray:
    """The rows' phase (object array): ``cols["phase"]`` with null as ``all``; all rows ``all``
    without the column (rows collected before phases were columns)."""
    if "phase" not in cols:
        return np.full(n, ALL_PHASES, object)
    a = np.asarray(cols["phase"], object)
    return np.where(np.equal(a, None), ALL_PHASES, text(a)).astype(object) if a.size else a


def series_rows(cols: dict) -> dict[tuple[str, str, str], np.ndarray]:
    """{(model, soc, phase): row indices}, grouped by codes (no per-series scan of every row)."""
    m_codes, models = factorize(text(cols["model"]))
    s_codes, socs = factorize(text(cols["soc"]))
    p_codes, phases = factorize(phase_values(cols, m_codes.size))
    order = np.lexsort((p_codes, s_codes, m_codes))      # stable: rows keep their order within a series
    if not order.size:
        return {}
    m_o, s_o, p_o = m_codes[order], s_codes[order], p_codes[order]
    bounds = np.r_[0, np.flatnonzero((m_o[1:] != m_o[:-1]) | (s_o[1:] != s_o[:-1]) | (p_o[1:] != p_o[:-1])) + 1,
                   order.size]
    return {(models[m_codes[order[lo]]], socs[s_codes[order[lo]]], phases[p_codes[order[lo]]]): order[lo:hi]
            for lo, hi in zip(bounds[:-1], bounds[1:])}
