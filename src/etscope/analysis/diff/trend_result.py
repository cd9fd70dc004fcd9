"""The result of ``etscope trend`` (``analysis.diff.trend``): a tree of frozen dataclasses, written
field by field in declared order by ``render.json`` (schema ``etscope.trend/1``; the field order is
the JSON's key order)."""
from __future__ import annotations

from dataclasses import dataclass

SCHEMA = "etscope.trend/1"
ALL_PHASES = "all"           # the phase of rows whose runs are one phase (or with no phase column)
NOT_TESTED = "not tested"    # a build's verdict when the baseline was too small or it restarted there


@dataclass(frozen=True)
class BuildPoint:
    """One build of a series: its p50 latency with a 95% interval and its test against the baseline."""
    build: str
    order_key: str
    sessions: int
    runs: int
    p50_ms: float
    lo_ms: float                         # NaN: no spread known (written as null)
    hi_ms: float
    change_pct: float | None             # vs the baseline (builds since the last change); None: not tested
    p_value: float | None
    verdict: str                         # not tested / no change / regression / improvement
    q1_ms: float                         # quartiles of the build's steady runs (one session: its own;
    q3_ms: float                         # several: the median over its sessions of each quartile); NaN: none


@dataclass(frozen=True)
class Change:
    """A change point of a series' latency: the first build of the new level."""
    build: str
    previous_build: str
    change_pct: float
    p_value: float
    verdict: str                         # regression / improvement
    significant_at: str                  # the build whose test first crossed the threshold
    lo_pct: float | None                 # 95% interval of the step
    hi_pct: float | None


@dataclass(frozen=True)
class OpChange:
    """An op whose p50 changed significantly at ``build`` (first build of the change)."""
    op: str
    placement: str | None
    build: str
    previous_build: str
    change_pct: float
    p_value: float
    verdict: str
    significant_at: str                  # the build whose test first crossed the threshold


@dataclass(frozen=True)
class Moved:
    """An op whose backend differs between two builds; None: absent in that build."""
    op: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class PlacementChange:
    """Ops whose backend differs between two consecutive builds."""
    build: str
    previous_build: str
    moved: tuple[Moved, ...]             # the first MAX_MOVED by name
    counts_before: dict[str, int]        # ops per backend ("none": no backend), by backend name
    counts_after: dict[str, int]
    moved_total: int                     # ops that moved (moved lists the first MAX_MOVED by name)


@dataclass(frozen=True)
class FactDiff:
    """A stored fact (metadata key, the HTP clock) that differs; None: not recorded for that build."""
    name: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class FactChange:
    """Stored facts about the program or environment (metadata keys, the HTP clock) that differ
    between two consecutive builds (each as its first file in order)."""
    build: str
    previous_build: str
    changed: tuple[FactDiff, ...]


@dataclass(frozen=True)
class Series:
    """One model x SoC x phase over its builds, in build order."""
    model: str
    soc: str
    builds: tuple[BuildPoint, ...]
    session_sd_pct: float | None         # between-session spread measured from the series (log SD as %)
    session_sd_df: int
    tests: int                           # m of the Bonferroni correction (latency)
    changes: tuple[Change, ...]
    op_changes: tuple[OpChange, ...]
    placement_changes: tuple[PlacementChange, ...]
    notes: tuple[str, ...]
    phase: str                           # the runs' phase (prefill / decode; all: one phase)
    fact_changes: tuple[FactChange, ...]


@dataclass(frozen=True)
class Trend:
    series: tuple[Series, ...]
    alpha: float
    min_effect_pct: float
    schema: str = SCHEMA
