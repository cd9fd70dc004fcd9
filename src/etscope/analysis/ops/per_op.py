"""Per-event and per-op statistics over runs, every event kept.

An event's identity inside a run is (role, name, instruction id, occurrence), where occurrence
numbers events of the same name and instruction in file order. Unlike the Inspector, two events
with the same name in one run are two rows, never one overwriting the other.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.memo import per_profile
from etscope.analysis.stats import column_stats, grouped, runs_counted, steady_or_default
from etscope.formats import etdump as etdump_format
from etscope.profile.repeats import identical_runs


def effective_names(profile: P.Profile, rows: np.ndarray | None = None) -> np.ndarray:
    """Name code per event (or of the events ``rows``): ProfileEvent.name, or delegate_debug_id_str
    for unnamed delegate events."""
    ev = profile.events
    role, dstr, name = (ev["role"], ev["delegate_id_str"], ev["name"]) if rows is None else \
        (ev["role"][rows], ev["delegate_id_str"][rows], ev["name"][rows])
    return np.where(role == P.ROLE_DELEGATE_INTERNAL, np.where(dstr >= 0, dstr, name), name)


def occurrences(run: np.ndarray, instr: np.ndarray, name: np.ndarray) -> np.ndarray:
    """0-based index of each event among events with the same (run, instruction, name), file order."""
    n = run.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    keys = np.stack([run, instr, name])
    lo = keys.min(axis=1, keepdims=True)
    span = keys.max(axis=1) - lo[:, 0] + 1
    if float(np.prod(span.astype(np.float64))) < 2 ** 62:
        packed = ((run - lo[0]) * int(span[1]) + (instr - lo[1])) * int(span[2]) + (name - lo[2])
        order = np.argsort(packed, kind="stable")
    else:
        order = np.lexsort((np.arange(n), name, instr, run))
    r, i, m = run[order], instr[order], name[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (r[1:] != r[:-1]) | (i[1:] != i[:-1]) | (m[1:] != m[:-1])
    starts = np.nonzero(new)[0]
    group_start = starts[np.cumsum(new) - 1]
    occ_sorted = np.arange(n) - group_start
    occ = np.empty(n, dtype=np.int64)
    occ[order] = occ_sorted
    return occ


@dataclass(frozen=True, slots=True)
class EventStats:
    """One profile-event signature (block, role, name, instruction, occurrence, unit) and its
    values' statistics over the runs that hold it, in the event's own unit."""
    block: str                        # "Execute" (inside a run) or "Default" (load, init)
    role: str                         # profile.model.ROLE_NAMES
    name: str
    instruction_id: int | None        # None for framework events (Method::execute, ...)
    occurrence: int                   # k-th event of this name and instruction in a run
    unit: str                         # units.NAMES
    runs: int                         # runs holding it (events, outside Execute)
    calls_per_run: float | None       # None outside Execute
    group: int = field(metadata={"json": False})    # its row in EventTable.samples()
    p10: float
    p50: float
    p90: float
    mean: float
    min: float
    max: float
    total: float

    @property
    def is_time(self) -> bool:
        return self.unit == units.NAMES[units.NS]

    def in_ms(self, stat: str) -> float | None:
        """One of the statistics (``p10`` ... ``total``) in ms; None for a unit that is not time."""
        return units.ns_to_ms(getattr(self, stat)) if self.is_time else None

    @property
    def p50_ms(self) -> float | None:
        return self.in_ms("p50")

    @property
    def mean_ms(self) -> float | None:
        return self.in_ms("mean")

    @property
    def total_ms(self) -> float | None:
        return self.in_ms("total")


@dataclass(frozen=True, slots=True)
class OpRow:
    """One row of the per-op table: an instruction's call (level 0: a DELEGATE_CALL or a CPU
    kernel) or an event inside it (level 1: a kernel, a delegate's per-op event)."""
    instruction_id: int
    level: int
    role: str
    name: str
    occurrence: int
    op_type: str | None               # level 0 only
    placement: str | None             # backend id, "cpu", or None without a plan
    runs: int
    calls_per_run: float | None
    unit: str
    p50: float
    mean: float
    total: float | None               # None for counters: a sum over runs means nothing
    min: float
    max: float
    p50_ms: float | None              # time units only
    mean_ms: float | None
    total_ms: float | None
    share: float | None               # total over the sum of Method::execute (time units only)
    source: str | None                # level 0 only: the op's source line (ETRecord)

    @property
    def is_time(self) -> bool:
        return self.unit == units.NAMES[units.NS]


def unique_columns(keys: np.ndarray):
    """np.unique(keys, axis=1) with first index and inverse, via one packed int64 key when it fits."""
    lo = keys.min(axis=1, keepdims=True)
    span = keys.max(axis=1) - lo[:, 0] + 1
    if float(np.prod(span.astype(np.float64))) < 2 ** 62:
        shifted = keys - lo
        packed = np.zeros(keys.shape[1], dtype=np.int64)
        for row, n in zip(shifted, span):
            packed = packed * int(n) + row
        _, first, inv = np.unique(packed, return_index=True, return_inverse=True)
        return keys[:, first], first, inv.reshape(-1)
    uniq, first, inv = np.unique(keys, axis=1, return_index=True, return_inverse=True)
    return uniq, first, inv.reshape(-1)


class EventTable:
    """What ``event_stats`` computes: its rows, and for ``samples`` each profile event's (execute
    run, value, row group) and the number of groups, built on first use (the fast path needs them
    only when per-run samples are asked for). A plain class: a dataclass costs ~0.4 ms to define
    at every start (issue 20)."""

    __slots__ = ("rows", "_build_groups", "_groups")

    def __init__(self, rows: list[EventStats], build_groups: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray, int]]):
        self.rows = rows
        self._build_groups = build_groups
        self._groups: tuple[np.ndarray, np.ndarray, np.ndarray, int] | None = None

    def groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        if self._groups is None:
            self._groups = self._build_groups()
        return self._groups

    def samples(self, rows: list[EventStats], n_runs: int) -> np.ndarray:
        """Per-run values of the given rows of this table: array (rows, runs), NaN where a run lacks it."""
        execute, value, inv, n_groups = self.groups()
        out = np.full((len(rows), n_runs), np.nan)
        want = np.full(n_groups, -1, dtype=np.int64)
        for i, r in enumerate(rows):
            want[r.group] = i
        row_of = want[inv]
        m = (row_of >= 0) & (execute >= 0)
        out[row_of[m], execute[m]] = value[m]
        return out


def event_stats(profile: P.Profile, execute_only: bool = False,
                steady: np.ndarray | None = None) -> list[EventStats]:
    """Statistics of every profile event signature over the steady runs holding it (see
    ``event_table``).

    Values are in their true unit; time values (ns) are also given in ms. Rows come in order of
    first appearance. Computed once per profile (``event_table`` is memoised).
    """
    rows = event_table(profile, steady).rows
    return [r for r in rows if r.block == "Execute"] if execute_only else rows


def event_table(profile: P.Profile, steady: np.ndarray | None = None) -> EventTable:
    """The event table of the profile: one row per event signature of every run; its statistics
    over the steady runs (``steady``: bool per run; default ``stats.steady_runs``): the warm-up
    runs are left out, as ``etscope llm`` and ``etscope diff`` leave them out. Computed once per
    profile and set of runs."""
    steady = steady_or_default(profile, steady)
    tables = _tables_by_runs(profile)
    key = np.packbits(steady).tobytes() + steady.size.to_bytes(8, "little")
    if key not in tables:
        tables[key] = _event_table_over(profile, steady)
    return tables[key]


@per_profile
def _tables_by_runs(profile: P.Profile) -> dict[bytes, EventTable]:
    """The profile's event tables, by the runs their statistics are over (a view of several
    phases pooled counts each phase's steady runs; each phase's own profile, its own)."""
    return {}


def _event_table_over(profile: P.Profile, steady: np.ndarray) -> EventTable:
    """The fast path when every Execute run logged the same event sequence, else the general path
    (both give the same rows)."""
    fast = template_event_table(profile, steady)
    return fast if fast is not None else general_event_table(profile, steady)


def general_event_table(profile: P.Profile, steady: np.ndarray | None = None) -> EventTable:
    """``event_table`` by sorting the signature keys of every profile event (any profile);
    statistics over the ``steady`` runs (default ``stats.steady_runs``)."""
    steady = steady_or_default(profile, steady)
    ev = profile.events
    sel = ev["kind"] == etdump_format.PROFILE
    idx = np.nonzero(sel)[0]
    if idx.size == 0:   # no profiling event at all: samples() finds no groups
        groups = (ev["execute"][idx], ev["value"][idx], np.zeros(0, np.int64), 0)
        return EventTable([], lambda: groups)
    uniq, first, inv, st = _signature_stats(profile, idx, steady)
    groups = (ev["execute"][idx], ev["value"][idx], inv, uniq.shape[1])
    rows = []
    n_exec = runs_counted(profile, steady)
    for j in np.argsort(first, kind="stable"):
        rows.append(_stats_row(profile, uniq[:, j], st, j, int(j), n_exec))
    return EventTable(rows, lambda: groups)


def _signature_stats(profile: P.Profile, idx: np.ndarray, steady: np.ndarray | None = None):
    """Signatures (block, role, name, instruction, occurrence, unit) of the events ``idx`` and
    statistics of their values, those of Execute runs over the ``steady`` runs only (None: every
    run): (signatures, first index into idx, inverse, stats)."""
    ev = profile.events
    name = effective_names(profile, idx).astype(np.int64)
    run = P.event_runs(profile, idx).astype(np.int64)
    instr = ev["instruction_id"][idx].astype(np.int64)
    role = ev["role"][idx].astype(np.int64)
    # Instruction id is meaningless for framework events (chain -1): keep it out of the identity.
    instr_key = np.where(ev["chain"][idx] >= 0, instr, -1)
    occ = occurrences(run, instr_key, name)
    block = (ev["execute"][idx] >= 0).astype(np.int64)
    keys = np.stack([block, role, name, instr_key, occ, ev["unit"][idx].astype(np.int64)])
    uniq, first, inv = unique_columns(keys)
    if steady is None or steady.all():
        st = grouped(inv, ev["value"][idx], uniq.shape[1])
    else:
        execute = ev["execute"][idx]
        keep = np.ones(idx.size, dtype=bool)
        inside = execute >= 0
        keep[inside] = steady[execute[inside]]
        st = grouped(inv[keep], ev["value"][idx[keep]], uniq.shape[1])
    return uniq, first, inv, st


ROW_QUANTILES = (10, 50, 90)     # the percentiles an event row shows (with min, max, mean, total)
_ROW_STATS = (*(f"p{q}" for q in ROW_QUANTILES), "mean", "min", "max", "total")


def _stats_row(profile: P.Profile, key, st: dict, j: int, group: int, n_exec: int) -> EventStats:
    b, rl, nm, ins, oc, un = (int(x) for x in key)
    return EventStats(
        block="Execute" if b else "Default", role=P.ROLE_NAMES[rl], name=profile.name_of(nm),
        instruction_id=ins if ins >= 0 else None, occurrence=oc, unit=units.NAMES[un],
        runs=int(st["count"][j]), calls_per_run=float(st["count"][j] / n_exec) if b else None, group=group,
        **{k: float(st[k][j]) for k in _ROW_STATS})


def template_event_table(profile: P.Profile, steady: np.ndarray | None = None) -> EventTable | None:
    """Fast path of ``event_table`` when every Execute run logged the same event sequence (a
    static graph: the common case). Each position of the first run is then one signature and its
    values over the runs are one column of a (runs x events) matrix: no sorting of signature
    keys, memory of one value per event. Same rows as the general path; None when it does not apply.
    Statistics over the ``steady`` runs (default ``stats.steady_runs``).
    """
    ev = profile.events
    n_runs = profile.n_runs
    if n_runs < 2:
        return None
    steady = steady_or_default(profile, steady)
    counts = np.asarray(profile.runs["event_count"], dtype=np.int64)
    k = int(counts[0])
    if k == 0 or (counts != k).any():
        return None
    ex_runs = np.asarray(profile.runs["etdump_run"], dtype=np.int64)
    firsts = profile.etdump.run_firsts()[ex_runs]
    # Blocks of consecutive Execute runs: their events are one contiguous slice.
    cuts = np.nonzero(np.diff(ex_runs) != 1)[0] + 1
    blocks = np.split(np.arange(n_runs), cuts)
    t0 = int(firsts[0])
    tmpl = slice(t0, t0 + k)
    prof = ev["kind"][tmpl] == etdump_format.PROFILE    # debug/allocation events interleave
    if not prof.any():
        return None
    # Equal (role, name, delegate id string) per position means equal effective names.
    chain_ok = ev["chain"] >= 0
    checks = [chain_ok, ev["unit"]]
    if identical_runs(profile) is None:      # else these five were checked once for the profile
        checks += [ev["kind"], ev["role"], ev["name"], ev["delegate_id_str"], ev["instruction_id"]]
    templates = [c[tmpl] for c in checks]
    for blk in blocks:
        a = int(firsts[blk[0]])
        b = a + k * len(blk)
        for c, t in zip(checks, templates):
            if not (c[a:b].reshape(-1, k) == t).all():
                return None
    all_prof = bool(prof.all())
    at = np.nonzero(prof)[0]                           # profile positions within a run
    kp = len(at)
    shared = all_prof and len(blocks) == 1
    if shared:                                          # the runs' values as they lie: no copy
        values = ev["value"][t0:t0 + k * n_runs].reshape(n_runs, k)
    else:
        values = np.empty((n_runs, kp), dtype=np.float64)
        for blk in blocks:
            a = int(firsts[blk[0]])
            v = ev["value"][a:a + k * len(blk)].reshape(-1, k)
            values[blk] = v if all_prof else v[:, at]
    # Signature keys from the template run.
    t = at + t0
    role_t = ev["role"][t].astype(np.int64)
    dstr_t = ev["delegate_id_str"][t]
    name_t = np.where(role_t == P.ROLE_DELEGATE_INTERNAL, np.where(dstr_t >= 0, dstr_t, ev["name"][t]),
                      ev["name"][t]).astype(np.int64)
    instr_key_t = np.where(chain_ok[t], ev["instruction_id"][t].astype(np.int64), -1)
    occ_t = occurrences(np.zeros(kp, dtype=np.int64), instr_key_t, name_t)
    unit_t = ev["unit"][t].astype(np.int64)
    keys = np.stack([np.ones(kp, dtype=np.int64), role_t, name_t, instr_key_t, occ_t, unit_t])
    counted = _steady_rows(values, steady)
    # The profile's own values (shared) are never reordered; a copy of ours may be.
    st = column_stats(counted, overwrite=not (shared and np.may_share_memory(counted, values)),
                      quantiles=ROW_QUANTILES)
    del values, counted
    # Events outside the Execute runs (Program::load_method, Method::init): the general path.
    other = np.nonzero((ev["kind"] == etdump_format.PROFILE) & (ev["execute"] < 0))[0]
    entries = [(int(t[j]), keys[:, j], st, j, j) for j in range(kp)]
    n_groups = kp
    other_inv = None
    if other.size:
        uniq, first, other_inv, st2 = _signature_stats(profile, other)
        entries += [(int(other[first[j]]), uniq[:, j], st2, j, kp + j) for j in range(uniq.shape[1])]
        n_groups += uniq.shape[1]

    def groups():
        # (execute, value, signature) of every profile event, for samples(); built on demand.
        # Holds the event columns, not the profile (memoised results must not: see analysis.memo).
        idx = np.nonzero(ev["kind"] == etdump_format.PROFILE)[0]
        inv = np.full(idx.size, -1, dtype=np.int64)
        run_firsts = np.concatenate([firsts[b[0]] + k * np.arange(len(b), dtype=np.int64) for b in blocks])
        pos = np.searchsorted(idx, (run_firsts[:, None] + at[None, :]).reshape(-1))
        inv[pos] = np.tile(np.arange(kp, dtype=np.int64), n_runs)
        if other.size:
            inv[np.searchsorted(idx, other)] = kp + other_inv
        return ev["execute"][idx], ev["value"][idx], inv, n_groups

    entries.sort(key=lambda e: e[0])
    n_exec = runs_counted(profile, steady)
    return EventTable([_stats_row(profile, key, s, j, g, n_exec) for _, key, s, j, g in entries], groups)


def _steady_rows(values: np.ndarray, steady: np.ndarray | None) -> np.ndarray:
    """The rows of the (runs x events) ``values`` of the steady runs: ``values`` itself when every
    run is, a view when the warm-up runs lead (one phase), else a copy."""
    if steady is None or steady.all():
        return values
    first = int(np.argmax(steady))
    if steady[first:].all():
        return values[first:]
    return values[steady]


def samples(profile: P.Profile, rows: list[EventStats]) -> np.ndarray:
    """Per-run values of the given event_stats rows: array (rows, runs), NaN where a run lacks it."""
    return event_table(profile).samples(rows, profile.n_runs)


def op_table(profile: P.Profile, steady: np.ndarray | None = None) -> list[OpRow]:
    """The per-op table: each instruction (delegate call or CPU kernel), then what it contains.

    Statistics over the steady runs (``steady``: bool per run; default ``stats.steady_runs``);
    ``share`` is the op's total time over the sum of Method::execute in the same runs (time
    units only).
    """
    stats = event_stats(profile, execute_only=True, steady=steady)
    counted = steady_or_default(profile, steady)
    total_ns = float(np.nansum(profile.runs["latency_ns"][counted]))
    by_instr: dict[int, list[EventStats]] = {}
    for s in stats:
        if s.instruction_id is not None and s.role in (
                "delegate_call", "operator_call", "kernel", "delegate_internal"):
            by_instr.setdefault(s.instruction_id, []).append(s)
    rows = []
    for iid in sorted(by_instr):
        ins = profile.instructions.get(iid)
        group = by_instr[iid]
        top = [s for s in group if s.role in ("delegate_call", "operator_call")]
        if not top:
            # No call wrapper (a build logging only kernel events, or the runtime's own JF_CALL):
            # each kernel event is a call of the instruction, not something inside the first one.
            top = [s for s in group if s.role == "kernel"]
        in_top = {id(s) for s in top}      # identity, not value equality: O(1) per row
        kernel_rows = [s for s in group if s.role == "kernel" and id(s) not in in_top]
        inner = [s for s in group if s.role == "delegate_internal"]
        for s in top:
            rows.append(_row(s, ins, level=0, total_ns=total_ns))
        for s in kernel_rows + inner:
            rows.append(_row(s, ins, level=1, total_ns=total_ns))
    return rows


def _row(s: EventStats, ins, level: int, total_ns: float) -> OpRow:
    placement = ins.backend if ins else None
    if s.role == "delegate_call":
        name = f"DELEGATE_CALL ({placement})" if placement else "DELEGATE_CALL"
    elif s.role == "operator_call":
        name = (ins.kernel or ins.operator) if ins and (ins.kernel or ins.operator) else "OPERATOR_CALL"
    else:   # a delegate event may have neither name nor string id (only an integer debug id)
        name = s.name or (ins.kernel if ins else None) or (
            "(unnamed delegate event)" if s.role == "delegate_internal" else "")
    return OpRow(
        instruction_id=s.instruction_id, level=level, role=s.role, name=name, occurrence=s.occurrence,
        op_type=ins.op_type if ins and level == 0 else None, placement=placement, runs=s.runs,
        calls_per_run=s.calls_per_run, unit=s.unit, p50=s.p50, mean=s.mean,
        # A counter's sum over runs means nothing ("HVX threads used": 4 per run, not 12 in all).
        total=None if s.unit == "count" else s.total, min=s.min, max=s.max,
        p50_ms=s.p50_ms, mean_ms=s.mean_ms, total_ms=s.total_ms,
        share=(s.total / total_ns) if s.is_time and total_ns else None,
        source=ins.source if ins and level == 0 else None)


def inner_rows_by_call(ops: list[OpRow]) -> dict[tuple[int, int], list[OpRow]]:
    """Level-1 rows (kernels, delegate-internal events) under the level-0 row (instruction id,
    occurrence) that holds them: the k-th call of an instruction in a run holds the k-th event of
    each name inside it (occurrences beyond the last call go to the last call). Each row is listed
    under one call only: an instruction called K times per run gives K calls, not K x K rows."""
    calls: dict[int, int] = {}
    for r in ops:
        if r.level == 0:
            calls[r.instruction_id] = max(calls.get(r.instruction_id, 0), r.occurrence + 1)
    out: dict[tuple[int, int], list[OpRow]] = {}
    for r in ops:
        if r.level == 1:
            iid = r.instruction_id
            out.setdefault((iid, min(r.occurrence, calls.get(iid, 1) - 1)), []).append(r)
    return out

