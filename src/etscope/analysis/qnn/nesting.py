"""The nesting of one QNN partition's times, outside in, and its one-line headline.

Method::execute ⊇ DELEGATE_CALL ⊇ QNN (execute) ⊇ RPC (execute) ⊇ QNN accelerator (execute) ⊇
Accelerator (execute) ⊇ Accelerator (execute excluding wait): each band is the p50 over runs of
that level, and what it adds over the level inside it is the p50 of the per-run difference (so the
bands need not subtract exactly: p50s of differences are not differences of p50s). Levels a
profile does not log are left out; the next one inside is then compared with the one outside.

The headline is chosen by rules (``RULES``), each tested: which share of the call the HTP computes
for, and which level adds the most. Plain data in, a typed :class:`Nesting` out (part of a partition's typed result, written
field by field by ``render.json``); renderers draw it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope.analysis import glossary
from etscope.arrays import median
from etscope.units import fmt_us

METHOD = glossary.METHOD_EXECUTE.event
DELEGATE_CALL = glossary.DELEGATE_CALL.event
ACCEL = glossary.ACCELERATOR.event
ACCEL_EXCL_WAIT = glossary.ACCELERATOR_EXCL_WAIT.event

# Level name -> (label, what this level adds over the next one inside it), and the innermost
# level's own words: the glossary's (one name and one description per level).
LEVEL_WORDS = {name: (lv.label, lv.adds or lv.meaning) for name, lv in glossary.BY_EVENT.items()}
INNERMOST_WORDS = {name: lv.meaning for name, lv in glossary.BY_EVENT.items()}

# Which statistic the headline's figures are: `llm` gives per-run means of the same levels (its
# shard table adds up), so each view says which it shows.
P50_SAID = " (p50 of each level over the runs)"

# Past this ratio of the largest to the smallest band, the picture uses a log axis.
LOG_SCALE_RATIO = 30.0

RULES = {
    "no_qnn_times": "QNN logged no execute time (µs) inside the call",
    "no_accelerator_time": "QNN logged no accelerator time: compute cannot be told from transport",
    "overhead_dominates": "the HTP computes for less than half of the call: name the level adding most",
    "compute_dominates": "the HTP computes for at least half of the call: name its share and the largest overhead",
}


@dataclass(frozen=True)
class Band:
    """One level of the nesting: its p50 (µs) and what it adds over the next level inside."""
    name: str                  # the event's name (QNN identifier) or Method::execute / DELEGATE_CALL
    label: str                 # short label for pictures
    us_p50: float
    adds_us_p50: float | None  # p50 over runs of (this level - the next one inside); None innermost
    adds: str                  # what the difference is, in plain words (innermost: what the level is)
    share_of_outer: float      # us_p50 ÷ the outermost band's us_p50


@dataclass(frozen=True)
class Nesting:
    """The bands of one partition, the cycles and the clock they are read with, and the headline."""
    bands: tuple[Band, ...]
    scale: str                         # "log" | "linear": how a picture should draw the bands
    cycles_p50: float | None           # Accelerator (execute) time (cycles), p50
    clock_mhz: float | None            # the clock used for cycles -> µs
    clock_source: str | None           # "runtrace" (measured) | "estimate" | "effective" (an
                                       # effective rate above any core clock) | None
    clock_bounds_mhz: tuple[float | None, float | None] | None
    cycles_us: float | None            # cycles_p50 ÷ clock_mhz
    headline: str
    headline_rule: str                 # a key of RULES


def _p50(a: np.ndarray) -> float | None:
    a = a[~np.isnan(a)]
    return float(median(a)) if a.size else None


def nesting(levels: list[tuple[str, np.ndarray]], cycles: np.ndarray | None = None,
            clock_mhz: float | None = None, clock_source: str | None = None,
            clock_bounds_mhz: tuple | None = None) -> Nesting:
    """``levels``: (name, µs per run) outside in, NaN where a run lacks the level; levels absent
    from every run are dropped. ``cycles``: the accelerator cycles per run."""
    kept = [(n, np.asarray(v, dtype=np.float64)) for n, v in levels
            if v is not None and not np.isnan(np.asarray(v, dtype=np.float64)).all()]
    bands: list[Band] = []
    outer = _p50(kept[0][1]) if kept else None
    for i, (name, v) in enumerate(kept):
        label, words = LEVEL_WORDS.get(name, (name, ""))
        adds = _p50(v - kept[i + 1][1]) if i + 1 < len(kept) else None
        if adds is None:
            words = INNERMOST_WORDS.get(name, label)
        p50 = _p50(v)
        bands.append(Band(name=name, label=label, us_p50=p50, adds_us_p50=adds, adds=words,
                          share_of_outer=(p50 / outer) if outer else 0.0))
    positive = [b.us_p50 for b in bands if b.us_p50 > 0]
    scale = "log" if positive and max(positive) / min(positive) > LOG_SCALE_RATIO else "linear"
    cyc = _p50(np.asarray(cycles, dtype=np.float64)) if cycles is not None else None
    text, rule = headline(bands)
    return Nesting(bands=tuple(bands), scale=scale, cycles_p50=cyc, clock_mhz=clock_mhz,
                   clock_source=clock_source,
                   clock_bounds_mhz=tuple(clock_bounds_mhz) if clock_bounds_mhz else None,
                   cycles_us=(cyc / clock_mhz) if cyc is not None and clock_mhz else None,
                   headline=text, headline_rule=rule)


def headline(bands: list[Band] | tuple[Band, ...]) -> tuple[str, str]:
    """The partition's finding in one line, and the rule (a key of ``RULES``) that chose it."""
    by = {b.name: b for b in bands}
    qnn = [b for b in bands if b.name not in (METHOD, DELEGATE_CALL)]
    if not qnn:
        dc = by.get(DELEGATE_CALL)
        took = f"The call takes {fmt_us(dc.us_p50)}; " if dc else ""
        return took + "QNN logged no execute times inside it (QNN profile level off?).", "no_qnn_times"
    compute = by.get(ACCEL_EXCL_WAIT) or by.get(ACCEL)
    outer = by.get(DELEGATE_CALL) or qnn[0]
    if compute is None:
        return (f"The {outer.label} takes {fmt_us(outer.us_p50)}; QNN logged no accelerator time, so HTP "
                "compute cannot be told from transport (QNN profile level basic?)."), "no_accelerator_time"
    waits = by.get(ACCEL) if compute.name == ACCEL_EXCL_WAIT else None
    what = fmt_us(compute.us_p50) + (f" ({fmt_us(waits.us_p50)} with waits)" if waits else " (waits included)")
    # Overheads: every band from the outer one in to the one around compute, each adding its part.
    inside = [b for b in bands[bands.index(outer):bands.index(compute)] if b.adds_us_p50 is not None]
    largest = max(inside, key=lambda b: b.adds_us_p50, default=None)
    share = compute.us_p50 / outer.us_p50 if outer.us_p50 > 0 else 0.0
    call = f"a {fmt_us(outer.us_p50)} {outer.label}" if outer is not compute else "the call"
    if share < 0.5:
        text = f"The NPU computes for {what} of {call}"
        if largest is not None and largest.adds_us_p50 > 0:
            part = largest.adds_us_p50 / outer.us_p50
            text += f"; {fmt_us(largest.adds_us_p50)} ({part:.0%}) is {largest.adds}"
        return text + P50_SAID + ".", "overhead_dominates"
    pct = f"{share:.1%}" if 0.995 <= share < 1 else f"{share:.0%}"   # 99.8 %, not a rounded 100 %
    text = f"The NPU computes for {what} of {call} ({pct})"
    if largest is not None and largest.adds_us_p50 > 0:
        text += f"; the largest overhead is {largest.adds}: {fmt_us(largest.adds_us_p50)}"
    return text + P50_SAID + ".", "compute_dominates"
