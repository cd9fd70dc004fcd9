"""Which phase every run of a profile belongs to (an LLM's prefill and decode, or one phase), found
once, by the rules of ``etscope llm`` (``analysis.llm``), so every view reads the same runs.

A view never pools the phases of an LLM: it shows one phase (``--phase``, or the runs of a
look-alike ``--method``) or each phase on its own (``Results.by_phase``). The runs of a phase are
a Profile of their own (``profile.select_runs``), so summary, ops, qnn, report, trace, export and
sql of a phase read exactly its runs: its p50, its cold runs, its warm-up.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope import profile as P
from etscope.analysis.stats import steady_runs

ALL = "all"          # --phase all: every run together (pooled on purpose)


@dataclass(frozen=True)
class RunPhases:
    """Per run of the profile, its phase; per phase, its name and method."""

    names: tuple[str, ...]            # in the order of their first run ("prefill", "decode")
    methods: tuple[str | None, ...]   # the program method of each phase, when known
    of_run: np.ndarray                # int64 per run: index into names
    warmup: np.ndarray                # bool per run: a warm-up run of its phase (judged within it)
    how: str                          # how the phases were told apart, in plain words

    @property
    def split(self) -> bool:
        """Whether the runs form several phases (then no view pools them)."""
        return len(self.names) > 1

    def runs_of(self, name: str) -> np.ndarray:
        return np.nonzero(self.of_run == self.names.index(name))[0]

    def phase_of(self, name: str) -> P.PhaseSelection:
        k = self.names.index(name)
        return P.PhaseSelection(name=name, method=self.methods[k], runs=tuple(int(r) for r in self.runs_of(name)),
                                of_runs=int(len(self.of_run)), how=self.how)

    def to_dict(self) -> dict:
        return {"phases": [{"name": n, "method": m, "runs": [int(r) for r in self.runs_of(n)]}
                           for n, m in zip(self.names, self.methods)],
                "warmup_runs": [int(r) for r in np.nonzero(self.warmup)[0]], "how": self.how}


def one_phase(profile: P.Profile) -> RunPhases:
    """Every run in one phase (not an LLM, or its phases could not be told apart); its warm-up runs
    are the leading ones ``stats.steady_runs`` leaves out, as ``etscope llm`` judges one phase."""
    n = profile.n_runs
    return RunPhases(names=(ALL,), methods=(profile.method,), of_run=np.zeros(n, dtype=np.int64),
                     warmup=~steady_runs(profile), how="one phase")


def run_phases(profile: P.Profile, report) -> RunPhases:
    """The phases of the profile's runs from the LLM analysis of that profile (``Results.llm``, an
    ``analysis.llm.result.LlmReport``: its per-run series, in the profile's run order); one phase
    when it found none."""
    if report is None or profile.n_runs == 0:
        return one_phase(profile)
    llm = report.llm
    phase = llm.series.phase
    if len(phase) != profile.n_runs:       # the LLM analysis read other runs (all methods): not ours
        return one_phase(profile)
    names = tuple(p.name for p in llm.phases)
    index = {n: k for k, n in enumerate(names)}
    if len(index) != len(names) or any(x not in index for x in phase):
        return one_phase(profile)
    methods = tuple(p.method or profile.method for p in llm.phases)
    split = llm.phase_split
    how = " ".join(x for x in (split.by, f"({split.evidence})" if split.evidence else "") if x)
    return RunPhases(names=names, methods=methods, of_run=np.array([index[x] for x in phase], dtype=np.int64),
                     warmup=np.asarray(llm.series.warmup, dtype=bool), how=how or "the LLM analysis")


class PhaseChoiceError(ValueError):
    """A ``--phase`` / ``--method`` that names no phase of these runs."""


def choose(phases: RunPhases, phase: str | None = None, method: str | None = None) -> str | None:
    """The phase name ``--phase`` or a look-alike ``--method`` selects; None: all runs (one phase,
    or ``--phase all``)."""
    if phase is not None:
        if phase == ALL:
            return None
        if phase not in phases.names:
            known = ", ".join(n for n in phases.names if n != ALL)
            raise PhaseChoiceError(f"--phase {phase}: the runs have " + (
                f"phases {known} (or all)" if known else "no prefill/decode phases (one phase: use --phase all)"))
        return phase
    if method is not None and phases.split:
        hits = [n for n, m in zip(phases.names, phases.methods) if m == method]
        if len(hits) == 1:
            return hits[0]
        raise PhaseChoiceError(
            f"--method {method}: the runs of the look-alike methods cannot be told apart by method name here "
            f"(phases: {', '.join(f'{n} = {m or chr(63)}' for n, m in zip(phases.names, phases.methods))}); "
            "use --phase " + " or --phase ".join(phases.names))
    return None


@dataclass(frozen=True)
class PhaseRow:
    """One phase side by side with the others: its runs (indices among the Execute runs) and their latency
    (Method::execute over its steady runs, as that phase's summary gives it)."""

    name: str
    method: str | None
    runs: tuple[int, ...]
    warmup_runs: tuple[int, ...]      # of those, the warm-up runs of the phase (``etscope llm``'s)
    p50_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None

    def to_dict(self) -> dict:
        return {"name": self.name, "method": self.method, "runs": list(self.runs),
                "warmup_runs": list(self.warmup_runs), "latency_ms": {
                    "p50": self.p50_ms, "mean": self.mean_ms, "min": self.min_ms, "max": self.max_ms}}


def phase_rows(phases: RunPhases, parts: list[tuple[str, P.Profile, object]]) -> list[PhaseRow]:
    """Per phase (name, its profile, its summary: ``analysis.views.summary_result.Summary``), the row that sets it beside the others."""
    rows = []
    for name, profile, summary in parts:
        k = phases.names.index(name)
        lat = summary.runs.latency_ms
        runs = phases.runs_of(name)
        rows.append(PhaseRow(name=name, method=phases.methods[k], runs=tuple(int(x) for x in runs),
                             warmup_runs=tuple(int(x) for x in runs[phases.warmup[runs]]),
                             p50_ms=lat.p50 if lat else None, mean_ms=lat.mean if lat else None,
                             min_ms=lat.min if lat else None, max_ms=lat.max if lat else None))
    return rows
