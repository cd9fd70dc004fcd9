"""What ran where: Method::execute split into delegate calls (per backend), CPU kernels and framework
overhead, per run; and the list of CPU-fallback kernels.

Per run: latency = Σ DELEGATE_CALL + Σ OPERATOR_CALL + overhead, where overhead is what
Method::execute measured outside any instruction event (argument setup, memory planning, moves,
the profiler itself). The three parts add up to the latency by construction; the parts are
measured, the overhead is the remainder.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.memo import per_profile
from etscope.analysis.stats import column_stats, grouped, steady_or_default
from etscope.arrays import isin, median, unique, unique_inverse
from etscope.profile.repeats import identical_runs


def instruction_times(profile: P.Profile, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per (run, instruction): wall time in ns of its instruction-level events and their count.

    For CPU instructions the OPERATOR_CALL event is the instruction's time; when a build logs only
    the kernel event, that is used instead. ``rows``: some of :func:`instruction_rows` (default:
    all). The columns are the caller's own: only the rows are kept per profile (on 10M events
    16 MB, where keeping the four columns held 70 MB through the whole command), and gathering
    them by position is cheaper than the boolean selection they came from."""
    ev = profile.events
    if rows is None:
        rows = instruction_rows(profile)
    return {"execute": ev["execute"][rows].astype(np.int32, copy=False),
            "instruction_id": ev["instruction_id"][rows].astype(np.int32, copy=False),
            "ns": ev["value"][rows], "is_delegate": ev["role"][rows] == P.ROLE_DELEGATE_CALL}


@per_profile
def instruction_rows(profile: P.Profile) -> np.ndarray:
    """Positions of the instruction-level events of the Execute runs, in file order (int32 when
    the profile's events fit). When every run logged the same events, those of the first run
    repeated at each run's offset."""
    ev = profile.events
    template = _run_template(profile)
    if template is not None:
        return _template_rows(profile, template, template.at)
    wide = np.int32 if profile.n_events <= np.iinfo(np.int32).max else np.int64
    return np.flatnonzero(_instruction_level(ev["role"], ev["instruction_id"], ev["execute"] >= 0)).astype(wide)


class _RunTemplate:
    """Identical runs' instruction-level events as positions in a run (each run's events lie ``k``
    after the last run's, from ``start``), with each one's role (a delegate call or not) and
    instruction: per-run sums and tables read the runs' (runs x k) value matrix at these columns
    instead of an index of every event."""

    __slots__ = ("start", "k", "at", "is_call", "instr")

    def __init__(self, start: int, k: int, at: np.ndarray, is_call: np.ndarray, instr: np.ndarray):
        self.start, self.k, self.at, self.is_call, self.instr = start, k, at, is_call, instr

    def runs(self, profile: P.Profile) -> np.ndarray:
        """The runs' values as a (runs x k) view of the value column."""
        n = profile.n_runs
        return profile.events["value"][self.start:self.start + self.k * n].reshape(n, self.k)

    def values(self, profile: P.Profile, cols: np.ndarray) -> np.ndarray:
        """(runs x len(cols)): the value of each run's events at positions ``cols``."""
        return np.take(self.runs(profile), cols, axis=1)


@per_profile
def _run_template(profile: P.Profile) -> _RunTemplate | None:
    """The :class:`_RunTemplate` when the Execute runs are identical (``identical_runs``), else None."""
    first = identical_runs(profile)
    if first is None or profile.n_runs == 0:
        return None
    ev = profile.events
    at = np.flatnonzero(_instruction_level(ev["role"][first], ev["instruction_id"][first], None))
    return _RunTemplate(first.start, first.stop - first.start, at,
                        ev["role"][first.start + at] == P.ROLE_DELEGATE_CALL, ev["instruction_id"][first.start + at])


def _template_rows(profile: P.Profile, template: _RunTemplate, cols: np.ndarray) -> np.ndarray:
    """The events at positions ``cols`` of every run, in file order (as :func:`instruction_rows`)."""
    wide = np.int32 if profile.n_events <= np.iinfo(np.int32).max else np.int64
    starts = template.start + template.k * np.arange(profile.n_runs, dtype=np.int64)
    return (starts[:, None] + np.asarray(cols, dtype=np.int64)[None, :]).reshape(-1).astype(wide)


def _instruction_level(role: np.ndarray, instr: np.ndarray, in_exec: np.ndarray | None) -> np.ndarray:
    """Which events are instruction-level (``in_exec``: inside Execute runs; None: all are)."""
    op_call = role == P.ROLE_OPERATOR_CALL
    dcall = role == P.ROLE_DELEGATE_CALL
    if in_exec is not None:
        op_call &= in_exec
        dcall &= in_exec
    # Instructions that have an OPERATOR_CALL anywhere use it; others fall back to their kernel event.
    with_op_call = unique(instr[op_call])
    sel = op_call
    sel |= dcall
    del dcall
    kern_mask = role == P.ROLE_KERNEL
    if in_exec is not None:
        kern_mask &= in_exec
    kern = np.nonzero(kern_mask)[0]
    del kern_mask
    if kern.size:
        sel[kern[~isin(instr[kern], with_op_call)]] = True
    return sel


def cpu_rows(profile: P.Profile) -> np.ndarray:
    """The :func:`instruction_rows` of CPU instructions (not delegate calls)."""
    rows = instruction_rows(profile)
    return rows[profile.events["role"][rows] != P.ROLE_DELEGATE_CALL]


def per_run_parts(profile: P.Profile) -> dict[str, np.ndarray]:
    """Per-run ns: latency, one column per delegate backend, CPU ops, overhead, and call counts.
    Computed once per profile (a copy of the dict each call)."""
    return dict(_per_run_parts(profile))


@per_profile
def _per_run_parts(profile: P.Profile) -> dict[str, np.ndarray]:
    n = profile.n_runs
    ev = profile.events
    template = _run_template(profile)
    if template is not None:        # identical runs: one run's events say which columns to add
        calls, ids = template.at[template.is_call], template.instr[template.is_call]
        cpu = template.at[~template.is_call]
        totals = functools.partial(_template_totals, profile, template)
    else:
        rows = instruction_rows(profile)
        is_call = ev["role"][rows] == P.ROLE_DELEGATE_CALL
        calls, ids, cpu = rows[is_call], ev["instruction_id"][rows[is_call]], rows[~is_call]
        totals = functools.partial(_run_totals, profile)
    parts: dict[str, np.ndarray] = {"latency": profile.runs["latency_ns"].astype(np.float64)}
    backend_of = {i.id: i.backend for i in profile.instructions.values()}
    backends = profile.backends()
    inside = np.zeros(n)
    for b in backends:
        bid = np.array([i for i, bk in backend_of.items() if bk == b and profile.instructions[i].kind == "delegate"])
        parts[f"delegate:{b}"], parts[f"calls:{b}"] = totals(calls[isin(ids, bid)])
        inside += parts[f"delegate:{b}"]
    del calls, ids
    parts["cpu_ops"], parts["calls:cpu"] = totals(cpu)
    inside += parts["cpu_ops"]
    parts["framework_overhead"] = parts["latency"] - inside
    return parts


def _template_totals(profile: P.Profile, template: _RunTemplate, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_run_totals` of the events at positions ``cols`` of every (identical) run: their
    columns added one after the other when that is cheap, else the bincount over their rows."""
    n, per_run = profile.n_runs, len(cols)
    if not _added_by_columns(per_run, n):
        return _run_totals(profile, _template_rows(profile, template, cols))
    return _sum_in_file_order(template.values(profile, cols)), np.full(n, float(per_run))


# Above this many events per run the column-by-column sums of identical runs cost more than a bincount.
IDENTICAL_RUNS_MAX_PER_RUN = 4096


def _added_by_columns(per_run: int, n_runs: int) -> bool:
    """Whether identical runs' ``per_run`` events each are summed column by column (cheap), not by
    a bincount over every event."""
    return 0 < per_run <= min(IDENTICAL_RUNS_MAX_PER_RUN, n_runs)


def _sum_in_file_order(values: np.ndarray) -> np.ndarray:
    """Each row's sum, its values added one after the other (as the bincount over every event)."""
    total = np.zeros(values.shape[0])
    for j in range(values.shape[1]):
        total += values[:, j]
    return total


def _run_totals(profile: P.Profile, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run: the summed value of the events ``rows`` (some of :func:`instruction_rows`) and
    their count, as floats, by a bincount: it adds each run's values in file order, as
    :func:`_template_totals` does column by column (the same bits)."""
    ev = profile.events
    n = profile.n_runs
    execute = ev["execute"][rows]
    return (np.bincount(execute, weights=ev["value"][rows], minlength=n),
            np.bincount(execute, minlength=n).astype(np.float64))


@dataclass(frozen=True)
class DelegatePart:
    """A backend's delegate calls as a part of Method::execute: mean per run in ms, ``share`` of the
    mean latency."""
    kind: str                       # "delegate"
    backend: str
    calls_per_run: float
    mean_ms: float
    p50_ms: float
    share: float


@dataclass(frozen=True)
class LocalPart:
    """The CPU kernels ("cpu_ops", with their calls per run) or the framework overhead (the
    remainder, no calls) as a part of Method::execute."""
    kind: str                       # "cpu_ops" | "framework_overhead"
    mean_ms: float
    p50_ms: float
    share: float
    calls_per_run: float | None = field(default=None, metadata={"omit_none": True})
    backend: ClassVar[None] = None  # not a delegate: no backend


ExecutePart = DelegatePart | LocalPart


def breakdown(profile: P.Profile, steady: np.ndarray | None = None) -> tuple[ExecutePart, ...]:
    """Mean per run of each part of Method::execute, in ms, with its share of the mean latency, over
    the steady runs (``steady``: bool per run; default ``stats.steady_runs``)."""
    parts = per_run_parts(profile)
    lat = parts["latency"]
    ok = ~np.isnan(lat) & steady_or_default(profile, steady)
    mean_lat = float(lat[ok].mean()) if ok.any() else float("nan")
    rows: list[ExecutePart] = []
    for b in profile.backends():
        d = parts[f"delegate:{b}"][ok]
        rows.append(DelegatePart("delegate", b,
                                 calls_per_run=float(parts[f"calls:{b}"][ok].mean()) if ok.any() else 0.0,
                                 mean_ms=_ms(d.mean()) if ok.any() else 0.0,
                                 p50_ms=_ms(median(d)) if ok.any() else 0.0,
                                 share=float(d.mean() / mean_lat) if ok.any() and mean_lat else 0.0))
    for kind in ("cpu_ops", "framework_overhead"):
        d = parts[kind][ok]
        calls = None
        if kind == "cpu_ops":
            calls = float(parts["calls:cpu"][ok].mean()) if ok.any() else 0.0
        rows.append(LocalPart(kind, mean_ms=_ms(d.mean()) if ok.any() else 0.0,
                              p50_ms=_ms(median(d)) if ok.any() else 0.0,
                              share=float(d.mean() / mean_lat) if ok.any() and mean_lat else 0.0,
                              calls_per_run=calls))
    return tuple(rows)


@dataclass(frozen=True)
class FallbackOp:
    """One CPU-kernel instruction: its op type (and where that name came from), kernel, times in
    ms over the runs it ran in, ``share`` of the summed latency, and its source."""
    instruction_id: int
    op_type: str | None
    op_type_from: str | None
    kernel: str | None
    operator: str | None
    runs: int
    calls_per_run: float
    mean_ms: float
    p50_ms: float | None
    total_ms: float | None
    share: float
    source: str | None
    nodes: tuple = ()


def fallback_ops(profile: P.Profile, steady: np.ndarray | None = None) -> tuple[FallbackOp, ...]:
    """One entry per CPU-kernel instruction, in instruction order; its statistics (and calls per
    run) over the steady runs (``steady``: bool per run; default ``stats.steady_runs``)."""
    steady = steady_or_default(profile, steady)
    found = _cpu_stats_by_instruction(profile, steady)
    if found is None:
        return ()
    uniq, calls, st = found
    total_latency_ms = units.ns_to_ms(float(np.nansum(profile.runs["latency_ns"][steady])))
    rows = []
    for j, i in enumerate(uniq):
        ins = profile.instructions.get(int(i))
        rows.append(FallbackOp(
            instruction_id=int(i),
            op_type=ins.op_type if ins else None,
            op_type_from=_op_type_origin(ins),
            kernel=ins.kernel if ins else None,
            operator=ins.operator if ins else None,
            runs=int(st["count"][j]),
            calls_per_run=float(calls[j] / max(int(steady.sum()), 1)),
            mean_ms=float(st["mean"][j]), p50_ms=float(st["p50"][j]),
            total_ms=float(st["total"][j]),
            share=float(st["total"][j] / total_latency_ms) if total_latency_ms else 0.0,
            source=ins.source if ins else None,
            nodes=tuple(ins.nodes) if ins else (),
        ))
    return tuple(rows)


# A (runs x instructions) table of at most this many cells per call, or this many, replaces a sort.
DENSE_TABLE_FACTOR, DENSE_TABLE_MIN_CELLS = 4, 1 << 20


def _cpu_stats_by_instruction(profile: P.Profile, steady: np.ndarray):
    """The CPU instructions (ids, calls in the ``steady`` runs) and the statistics in ms
    (``stats.grouped``) of their totals per run, over the steady runs they ran in. None without CPU
    calls."""
    template = _run_template(profile)
    n_steady = int(steady.sum())
    if template is not None:
        if template.is_call.all():                      # no CPU call in any run
            return None
        found = identical_instruction_table(profile, cpu_only=True)
        if found is not None:
            uniq, calls, table = found
            if n_steady < profile.n_runs:
                table, calls = table[steady], calls // max(profile.n_runs, 1) * n_steady
            return uniq, calls, column_stats(table, transform=units.ns_to_ms, overwrite=True, quantiles=(50,),
                                             extremes=False)       # what fallback_ops shows
    found = _cpu_totals_by_instruction_and_run(profile, None if n_steady == profile.n_runs else steady)
    if found is None:
        return None
    uniq, calls, group, per_run = found
    return uniq, calls, grouped(group, per_run, len(uniq), transform=units.ns_to_ms, overwrite=True)


def _cpu_totals_by_instruction_and_run(profile: P.Profile, steady: np.ndarray | None = None):
    """The CPU instructions (ids, calls), and their totals per (instruction, run) over the pairs
    that occur, ordered by instruction then run: (instruction code, ns); None without CPU calls.
    ``steady`` (bool per run, None: every run): only those runs' calls.

    Each temporary has one value per call (~30 MB on 10M events) and goes once used; a dense
    (runs x instructions) table replaces the sort of the keys when it is not much larger."""
    ev = profile.events
    n = profile.n_runs
    rows = cpu_rows(profile)
    if steady is not None:
        rows = rows[steady[ev["execute"][rows]]]
    if rows.size == 0:
        return None
    uniq, key = unique_inverse(ev["instruction_id"][rows])
    k = len(uniq)
    calls = np.bincount(key, minlength=k)
    if n * k <= max(DENSE_TABLE_FACTOR * rows.size, DENSE_TABLE_MIN_CELLS):
        run_part = ev["execute"][rows].astype(np.int64)
        run_part *= k
        key += run_part                             # run-major: the table is (runs, instructions)
        del run_part
        weights = ev["value"][rows]
        del rows
        table = np.bincount(key, weights=weights, minlength=n * k)
        del weights
        seen = np.zeros(n * k, dtype=bool)
        seen[key] = True
        del key
        seen = seen.reshape(n, k).T                 # instruction-major, runs in order
        per_run = table.reshape(n, k).T[seen]
        del table
        return uniq, calls, np.repeat(np.arange(k, dtype=np.int64), seen.sum(axis=1)), per_run
    key *= n
    key += ev["execute"][rows]                      # instruction-major keys
    kuniq, kinv = unique_inverse(key)
    del key
    per_run = np.bincount(kinv, weights=ev["value"][rows])
    del kinv, rows
    kuniq //= n
    return uniq, calls, kuniq, per_run


# Past this many calls of one instruction per run, the sums per level of call cost more than a bincount.
IDENTICAL_RUNS_MAX_CALLS = 64


def identical_instruction_table(profile: P.Profile, cpu_only: bool = False):
    """When the runs are identical: the instructions of the instruction-level events (``cpu_only``:
    of the CPU ones, :func:`cpu_rows`), ascending, their calls, and their summed values per run
    (runs x instructions), each sum in file order as a bincount over every event adds it, read
    from one run's positions (no index of every event). None otherwise, or when that is not
    cheaper than the bincount."""
    template = _run_template(profile)
    if template is None:
        return None
    keep = ~template.is_call if cpu_only else np.ones(template.at.size, dtype=bool)
    cols = template.at[keep]
    if not _added_by_columns(cols.size, profile.n_runs):
        return None
    return _table_of_identical_runs(template.instr[keep], template.runs(profile), cols)


def _table_of_identical_runs(instr: np.ndarray, values: np.ndarray, cols: np.ndarray | None = None):
    """The instructions of identical runs (ids, calls) and their totals per run (runs x
    instructions): ``instr`` the instruction of each of a run's calls, ``values`` their
    values (runs x calls), or the runs' values (runs x events) with ``cols`` the calls'
    columns (taken from it once, in the table's order). Every instruction runs in every run; an
    instruction called several times per run adds its calls in file order, as the bincount over
    every call does. None when an instruction is called too often per run for that to be cheap."""
    n = values.shape[0]
    cols = np.arange(values.shape[1]) if cols is None else np.asarray(cols)
    uniq, key = unique_inverse(instr)
    k = len(uniq)
    calls = np.bincount(key, minlength=k)
    if calls.max() > IDENTICAL_RUNS_MAX_CALLS:
        return None
    order = np.argsort(key, kind="stable")           # by instruction, then file order
    starts = np.concatenate(([0], np.cumsum(calls)[:-1]))
    # take, not values[:, cols]: that one comes out column-major, which column sums would add pairwise.
    table = np.take(values, cols[order[starts]], axis=1)   # each instruction's first call
    for level in range(1, int(calls.max())):
        more = np.flatnonzero(calls > level)
        table[:, more] += np.take(values, cols[order[starts[more] + level]], axis=1)
    return uniq, calls * n, table


def _op_type_origin(ins) -> str | None:
    if ins is None:
        return None
    if ins.op_types:
        return "etrecord"
    if ins.operator:
        return "pte"
    if ins.kernel:
        return "kernel name (guess)"
    return None


def _ms(ns) -> float:
    return units.ns_to_ms(float(ns))
