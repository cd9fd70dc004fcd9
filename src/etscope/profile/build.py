"""Building a Profile: read the inputs, give each ETDump event its role, value and unit, find the
Execute runs, join the instructions (of one method, or split by method) and remove the events a
backend accumulated across executes."""
from __future__ import annotations

import os

import numpy as np

from etscope import units
from etscope.arrays import TWO_THREADS_MIN, in_two_threads, unique
from etscope.formats import etdump as etdump_format
from etscope.formats.etdump_repeats import copy_events
from etscope.profile.accumulation import remove_accumulated_copies
from etscope.profile.instructions import join_method
from etscope.profile.methods import assign_methods, split_by_method
from etscope.profile.model import (DELEGATE_CALL, METHOD_EXECUTE, OPERATOR_CALL, ROLE_ALLOCATION, ROLE_DEBUG,
                                   ROLE_DELEGATE_CALL, ROLE_DELEGATE_INTERNAL, ROLE_KERNEL, ROLE_METHOD,
                                   ROLE_OPERATOR_CALL, ROLE_OTHER, Profile, EXACT_IN_FLOAT, drop_end_times,
                                   drop_run_column, run_column_given_back)
from etscope.profile.repeats import columns_as_read

def load(etdump, etrecord=None, pte=None, method: str | None = None, progress=None) -> Profile:
    """Read and join the inputs. Each argument may be a path or an already-read object.

    ``progress(events_done, events_total)`` is called while the ETDump is read (big files)."""
    from etscope.paths import display

    sources = {}
    if not isinstance(etdump, etdump_format.EtdumpData):
        sources["etdump"] = display(etdump)   # as shown: escaped, valid UTF-8
        etdump = etdump_format.read_etdump(etdump, progress=progress)
    if etrecord is not None and isinstance(etrecord, (str, os.PathLike)):
        from etscope.formats.etrecord import read_etrecord

        sources["etrecord"] = display(etrecord)   # as shown: escaped, valid UTF-8
        etrecord = read_etrecord(etrecord)
    if pte is not None and isinstance(pte, (str, os.PathLike)):
        from etscope.formats.pte import read_pte

        sources["pte"] = display(pte)   # as shown: escaped, valid UTF-8
        pte = read_pte(pte)
    return build(etdump, etrecord, pte, method, sources, reuse_columns="etdump" in sources)   # read here: ours


def build(data: etdump_format.EtdumpData, etrecord=None, pte=None, method=None, sources=None,
          reuse_columns: bool = False) -> Profile:
    """The Profile of ``data`` (and the ETRecord / .pte). ``reuse_columns``: ``data`` is the
    caller's no longer (``load`` read it): the columns the profile does not keep (run, end) may
    become two it needs (execute, value) in place, where they give back what they replace."""
    strings = list(data.strings)
    ev = data.events
    role = _roles_of_repeated_runs(strings, ev, data)
    execute_runs = _execute_runs(data, ev, role, strings)
    warnings: list[str] = []

    run_to_execute = np.full(len(data.runs), -1, dtype=np.int32)
    run_to_execute[execute_runs] = np.arange(len(execute_runs), dtype=np.int32)
    dropped = set()
    run = ev["run"]
    if reuse_columns and len(run) and run.dtype == np.int32 and run.flags.writeable and \
            run_column_given_back(data, run):
        execute = _gathered_in_place(run_to_execute, run)
        dropped.add("run")
    else:
        execute = run_to_execute[run] if len(run) else np.zeros(0, np.int32)

    value = _values_over_end_times(ev) if reuse_columns else None
    if value is not None:
        dropped.add("end")
    value, unit = _values_and_units(strings, ev, role, value)
    events = {k: v for k, v in ev.items() if k not in dropped}
    events.update(role=role, execute=execute, value=value, unit=unit)

    runs = _run_table(data, events, execute_runs, warnings)
    # Columns other data give back are not kept (model.end_times, model.event_runs).
    if drop_end_times(events):
        dropped.add("end")
    if drop_run_column(data, events):
        dropped.add("run")
    if dropped:
        data = data.with_events({k: v for k, v in ev.items() if k not in dropped})
    profile = Profile(etdump=data, strings=strings, events=events, runs=runs, instructions={},
                      method=None, etrecord=etrecord, pte=pte, sources=dict(sources or {}),
                      warnings=warnings)
    columns_as_read(profile)
    _join_instructions(profile, etrecord, pte, method)
    for p in (profile.method_split.profiles.values() if profile.method_split else (profile,)):
        remove_accumulated_copies(p)
    return profile


def _join_instructions(profile: Profile, etrecord, pte, method_hint):
    assigned = assign_methods(profile, etrecord, pte)
    if assigned is None:
        join_method(profile, etrecord, pte, method_hint)
    else:
        split_by_method(profile, etrecord, pte, method_hint, *assigned)


_ROLE_INPUTS = ("kind", "name", "delegate_id_str", "delegate_id_int", "chain", "instruction_id")


def _roles_of_repeated_runs(strings: list[str], ev, data: etdump_format.EtdumpData) -> np.ndarray:
    """:func:`_roles` of every event, computed only for the runs the reader parsed: a run that
    repeats another (``data.repeats_of``) holds the same values in every column a role depends
    on, so its roles are copied row by row (10M events of repeated runs: ~0.1 s less)."""
    of = data.repeats_of
    if of is None or len(of) != len(data.runs):
        return _roles(strings, ev)
    counts, firsts = data.run_counts(), data.run_firsts()
    own = np.flatnonzero(of < 0)
    total = int(counts[own].sum())
    # the events of the runs read on their own: each run's first event, then the next ones
    rows = np.repeat(firsts[own] - (np.cumsum(counts[own]) - counts[own]), counts[own]) + np.arange(total)
    role = np.empty(len(ev["kind"]), dtype=np.uint8)
    role[rows] = _roles(strings, {k: ev[k][rows] for k in _ROLE_INPUTS})
    copy_events({"role": role}, of, firsts, counts, skip=())
    return role


def _roles(strings: list[str], ev) -> np.ndarray:
    """Each event's role, from per-string-code tables (one gather per column, not one comparison
    of every event per name: 10M events in a fraction of the passes)."""
    kind, name = ev["kind"], ev["name"]
    by_name = np.full(len(strings) + 1, ROLE_OTHER, dtype=np.uint8)   # the last entry serves code -1
    unnamed_code = np.zeros(len(strings) + 1, dtype=bool)
    unnamed_code[-1] = True
    code_of = {s: i for i, s in enumerate(strings)}
    for text, r in ((METHOD_EXECUTE, ROLE_METHOD), (DELEGATE_CALL, ROLE_DELEGATE_CALL), (OPERATOR_CALL, ROLE_OPERATOR_CALL)):
        if text in code_of:
            by_name[code_of[text]] = r
    if "" in code_of:
        unnamed_code[code_of[""]] = True
    role = by_name[name]
    # Delegate-internal events have no name (or an empty one) but a delegate debug id.
    unnamed = unnamed_code[name]
    has_delegate_id = _at_least_zero(ev["delegate_id_str"]) | _at_least_zero(ev["delegate_id_int"])
    role[unnamed & has_delegate_id] = ROLE_DELEGATE_INTERNAL
    # A named event attached to an instruction (chain set) that is neither call wrapper is a kernel.
    kernel = ~unnamed & (role == ROLE_OTHER) & _at_least_zero(ev["chain"]) & _at_least_zero(ev["instruction_id"])
    role[kernel] = ROLE_KERNEL
    if kind.any():                          # the roles above are those of profiling events (kind 0)
        role[kind == etdump_format.DEBUG] = ROLE_DEBUG
        role[kind == etdump_format.ALLOCATION] = ROLE_ALLOCATION
    return role


def _at_least_zero(col: np.ndarray) -> np.ndarray | bool:
    """``col >= 0``; a column the file does not use is one value repeated (a zero-stride view)."""
    if col.size and col.strides == (0,):
        return bool(col[0] >= 0)
    return col >= 0


def _execute_runs(data, ev, role, strings) -> np.ndarray:
    """RunData indices that are executions: those holding Method::execute, else non-'Default' runs."""
    has_method = np.zeros(len(data.runs), dtype=bool)
    if len(ev["run"]):
        has_method[unique(ev["run"][role == ROLE_METHOD])] = True
    if has_method.any():
        return np.nonzero(has_method)[0]
    names = np.array([r.name != "Default" and r.event_count > 0 for r in data.runs], dtype=bool)
    return np.nonzero(names)[0]


def _values_and_units(strings, ev, role, value=None):
    """Each event's value in its true unit (``value``: end - start of every event already, see
    ``_values_over_end_times``).

    Interval events (start > 0) are durations in the runtime clock's ticks (ns on Linux/Android).
    Value events (delegate events with start_time == 0, as QNN writes them) carry the value in
    ``end_time`` and their unit in the name suffix.
    """
    n = len(ev["kind"])
    # Same bits as astype(int64), without copies (10M events: 160 MB less).
    start = _as_int64(ev["start"]) if n else np.zeros(0, np.int64)
    end = None
    if value is None:
        end = _as_int64(ev["end"]) if n else np.zeros(0, np.int64)
        value = np.empty(n, dtype=np.float64)
        half = n // 2

        def subtract(parts) -> None:        # halves on two cores: the new column's pages are most of it
            for part in parts:
                np.subtract(end[part], start[part], out=value[part], dtype=np.int64, casting="unsafe")

        in_two_threads(subtract, [slice(0, half), slice(half, n)], n >= TWO_THREADS_MIN)
    kind = ev["kind"]
    other_kinds = bool(kind.any())          # allocation or debug events (profiling events are kind 0)
    unit = np.where(kind == etdump_format.PROFILE, np.uint8(units.NS), np.uint8(units.UNKNOWN)) if other_kinds \
        else np.full(n, units.NS, dtype=np.uint8)
    value_style = (role == ROLE_DELEGATE_INTERNAL) & (start == 0)
    if value_style.any():
        if end is not None:             # (end - 0 already: the same number)
            np.copyto(value, end, where=value_style, casting="unsafe")
        codes = np.where(ev["name"] >= 0, ev["name"], ev["delegate_id_str"])
        # Unit per string code (the last entry serves code -1).
        lut = np.array([units.unit_from_suffix(s) for s in strings] + [units.UNKNOWN], dtype=np.uint8)
        np.copyto(unit, lut[codes], where=value_style)
    if other_kinds:
        alloc = kind == etdump_format.ALLOCATION
        value[alloc] = ev["allocation_size"][alloc].astype(np.float64)
        unit[alloc] = units.BYTES
        value[kind == etdump_format.DEBUG] = np.nan
    return value, unit


def _gathered_in_place(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]`` written over ``index`` (same dtype), chunk by chunk on two cores: each
    chunk's gather is a temporary of a few MB the allocator hands back each time, not a new
    column (np.take with ``out=index`` was 3-4x slower)."""
    def gather(parts) -> None:
        for p in parts:
            index[p] = table[index[p]]

    in_two_threads(gather, _chunks(len(index)), len(index) >= TWO_THREADS_MIN)
    return index


_CONVERT_CHUNK = 1 << 20     # values converted at a time in place (numpy copies each chunk first: they overlap)


def _chunks(n: int) -> list[slice]:
    """``range(n)`` in slices of _CONVERT_CHUNK."""
    return [slice(a, min(n, a + _CONVERT_CHUNK)) for a in range(0, n, _CONVERT_CHUNK)]


def _values_over_end_times(ev) -> np.ndarray | None:
    """``end - start`` of every event as float64, written over the end times' own column: the
    value column without a new array (80 MB on 10M events), when the profile would not keep the
    end times anyway (``drop_end_times``: every profiling event's difference exact in a float,
    so ``model.end_times`` gives them back). Else None, the end times as they were."""
    start, end = ev["start"], ev["end"]
    if not (end.dtype == start.dtype == np.uint64 and end.flags.c_contiguous and end.flags.writeable
            and start.strides == end.strides and len(end) == len(start) and len(end)):
        return None
    e, s = end.view(np.int64), start.view(np.int64)
    n = len(e)
    halves = [slice(0, n // 2), slice(n // 2, n)]
    in_two_threads(lambda parts: [np.subtract(e[p], s[p], out=e[p]) for p in parts], halves, n >= TWO_THREADS_MIN)
    profiling = ev["kind"] == etdump_format.PROFILE
    lo = int(np.min(e, where=profiling, initial=0))
    hi = int(np.max(e, where=profiling, initial=0))
    if not (-EXACT_IN_FLOAT < lo and hi < EXACT_IN_FLOAT):       # kept: the end times back as they were
        in_two_threads(lambda parts: [np.add(e[p], s[p], out=e[p]) for p in parts], halves, n >= TWO_THREADS_MIN)
        return None
    value = end.view(np.float64)
    in_two_threads(lambda parts: [np.copyto(value[p], e[p], casting="unsafe") for p in parts], _chunks(n),
                   n >= TWO_THREADS_MIN)
    return value


def _as_int64(a: np.ndarray) -> np.ndarray:
    return a.view(np.int64) if a.dtype == np.uint64 and a.strides[0] == 8 else a.astype(np.int64)


def _run_table(data, events, execute_runs, warnings) -> dict[str, np.ndarray]:
    n = len(execute_runs)
    start = np.zeros(n, dtype=np.int64)
    latency = np.full(n, np.nan)
    is_method = (events["role"] == ROLE_METHOD) & (events["execute"] >= 0)
    ex = events["execute"][is_method]
    counts = np.bincount(ex, minlength=n)
    if (counts > 1).any():
        warnings.append(f"{int((counts > 1).sum())} run(s) hold several Method::execute events; "
                        "their durations are added")
    np.add.at(latency, ex, 0)  # NaN stays NaN: fill below
    lat = np.bincount(ex, weights=events["value"][is_method], minlength=n)
    latency = np.where(counts > 0, lat, np.nan)
    st = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(st, ex, events["start"][is_method].astype(np.int64))
    start = np.where(counts > 0, st, 0)
    missing = counts == 0
    if missing.any():
        # Without Method::execute, span the run's interval events instead (an estimate).
        sel = (events["execute"] >= 0) & (events["role"] != ROLE_DELEGATE_INTERNAL) & (
            events["kind"] == etdump_format.PROFILE) & (events["start"] > 0)
        lo = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.zeros(n, dtype=np.int64)
        np.minimum.at(lo, events["execute"][sel], events["start"][sel].astype(np.int64))
        ends = events["end"][sel].astype(np.int64) if "end" in events else \
            events["start"][sel].astype(np.int64) + events["value"][sel].astype(np.int64)   # model.end_times
        np.maximum.at(hi, events["execute"][sel], ends)
        ok = missing & (hi > 0)
        latency[ok] = (hi - lo)[ok]
        start[ok] = lo[ok]
        warnings.append(f"{int(missing.sum())} run(s) have no Method::execute event; their latency "
                        "is the span of their events (an estimate)")
    return {"etdump_run": np.asarray(execute_runs, dtype=np.int64), "start_ns": start,
            "latency_ns": latency, "event_count": data.run_counts()[np.asarray(execute_runs, dtype=np.int64)]}
