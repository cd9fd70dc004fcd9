"""One Profile: the ETDump's events (with their units and roles), the Execute runs, and what each
instruction is (backend or CPU kernel, op type, source location), joined from ETRecord / .pte.

Built by :func:`load`. Analysis lives in ``etscope.analysis``; this module only joins inputs.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
from dataclasses import dataclass, field

import numpy as np

from etscope import units
from etscope.arrays import unique
from etscope.errors import MismatchError
from etscope.formats import etdump as etdump_format
from etscope.hashing import mix64, sum_u64

# Event roles (column ``role``): what an event is in the runtime's hierarchy.
(ROLE_OTHER, ROLE_METHOD, ROLE_DELEGATE_CALL, ROLE_OPERATOR_CALL, ROLE_KERNEL,
 ROLE_DELEGATE_INTERNAL, ROLE_DEBUG, ROLE_ALLOCATION) = range(8)
ROLE_NAMES = ("framework", "method_execute", "delegate_call", "operator_call", "kernel",
              "delegate_internal", "debug", "allocation")

METHOD_EXECUTE = "Method::execute"
DELEGATE_CALL = "DELEGATE_CALL"
OPERATOR_CALL = "OPERATOR_CALL"

CPU = "cpu"
UNKNOWN_DELEGATE = "delegate"


@dataclass
class Instruction:
    """One instruction of the executed method, as far as the inputs tell."""

    id: int
    kind: str                      # "delegate" | "cpu"
    backend: str                   # backend id (e.g. "XnnpackBackend", "QnnBackend"), or "cpu"
    kernel: str | None = None      # kernel event name, e.g. "native_call_cumsum.out"
    operator: str | None = None    # operator from the .pte, e.g. "aten::cumsum.out"
    op_types: list[str] = field(default_factory=list)   # graph targets, e.g. ["aten.cumsum.default"]
    source: str | None = None      # "file.py:LINE" of the first graph node
    nodes: list[str] = field(default_factory=list)      # graph node names
    sources: list[str] = field(default_factory=list)    # "file.py:LINE" of every node, in order
    debug_handles: list[int] = field(default_factory=list)
    backend_from: str = "event names"   # which input told the backend

    @property
    def op_type(self) -> str | None:
        if self.op_types:
            return self.op_types[0] if len(self.op_types) == 1 else ", ".join(self.op_types[:3]) + (
                f" (+{len(self.op_types) - 3})" if len(self.op_types) > 3 else "")
        if self.operator:
            return self.operator.replace("::", ".")
        if self.kernel:
            return guess_op_from_kernel(self.kernel)
        return None


@dataclass
class Profile:
    etdump: etdump_format.EtdumpData
    strings: list[str]
    events: dict[str, np.ndarray]
    runs: dict[str, np.ndarray]          # one row per Execute run
    instructions: dict[int, Instruction]
    method: str | None
    etrecord: object | None = None
    pte: object | None = None
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cache: dict = field(default_factory=dict, repr=False)   # analysis results computed once
    # Set when the ETDump holds runs of several methods with different instructions: this profile
    # then holds only its method's runs (see MethodSplit).
    method_split: "MethodSplit | None" = field(default=None, repr=False)
    # Set when a backend's events accumulated across executes and the older copies were removed.
    accumulation: "Accumulation | None" = None

    def __repr__(self) -> str:
        """One line (the generated repr printed every array: 100 kB for a small model)."""
        ev = self.events.get("value")
        return (f"Profile({self.sources.get('etdump') or 'ETDump'!r}, method={self.method!r}, runs={self.n_runs}, "
                f"instructions={len(self.instructions)}, events={0 if ev is None else len(ev)}, "
                f"warnings={len(self.warnings)})")

    # ---- small accessors -----------------------------------------------------------------------
    @property
    def n_runs(self) -> int:
        return int(self.runs["etdump_run"].shape[0])

    def name_of(self, code: int) -> str:
        return self.strings[code] if code >= 0 else ""

    def names(self, codes: np.ndarray) -> list[str]:
        return [self.strings[c] if c >= 0 else "" for c in codes]

    def backends(self) -> list[str]:
        seen = []
        for ins in sorted(self.instructions.values(), key=lambda i: i.id):
            if ins.kind == "delegate" and ins.backend not in seen:
                seen.append(ins.backend)
        return seen


@dataclass
class Accumulation:
    """Delegate events that accumulated across executes (execute k of a delegate logging the events
    of its executes 1..k, oldest first, as QNN's profiler can), and what was removed so every view
    sees each execute's own events once."""

    events_removed: dict[int, int]       # per delegate instruction id: older copies removed
    file_events: int                     # events of the profile before the removal

    @property
    def total_removed(self) -> int:
        return int(sum(self.events_removed.values()))

    def warning(self) -> str:
        ids = ", ".join(str(i) for i in sorted(self.events_removed))
        # Short enough for one line of the summary's warnings (cut at 200 characters).
        return (f"delegate instruction(s) {ids}: backend events accumulate across executes (execute k "
                f"repeats executes 1..k-1); {self.total_removed:,} older copies of {self.file_events:,} "
                "events removed, each run keeps its own")


@dataclass
class MethodSplit:
    """Runs of several methods of one program (different instruction sequences) in one ETDump.

    The ETDump does not record which method a run executed (every run is an "Execute" RunData),
    so each run is matched on the instructions it executed: the (instruction id, delegate call or
    not) it logged must exist as such in the method. Each method gets its own Profile holding only
    its runs, joined to its own instructions.
    """

    names: list[str]                    # methods that ran, in the order of their first run
    of_run: np.ndarray                  # per Execute run of the ETDump: index into names
    profiles: dict[str, "Profile"]      # one Profile per method (only that method's runs)
    note: str = ""                      # what the profile load() returned says about the others
    explicit: bool = False              # --method chose that profile's method (else: most runs)
    file_events: int = 0                # events in the whole ETDump (each profile holds its own)

    def runs_of(self, name: str) -> np.ndarray:
        """Indices, among all Execute runs of the ETDump, of the runs of method ``name``."""
        return np.nonzero(self.of_run == self.names.index(name))[0]


_KERNEL_RE = re.compile(r"^native_call_(?P<op>.+?)(?:\.(?P<overload>[A-Za-z0-9_]+))?$")


def guess_op_from_kernel(kernel: str) -> str:
    """``native_call_cumsum.out`` -> ``aten.cumsum.out`` (a guess: the kernel name drops the namespace)."""
    m = _KERNEL_RE.match(kernel)
    if not m:
        return kernel.replace("::", ".")
    op, overload = m.group("op"), m.group("overload")
    return f"aten.{op}" + (f".{overload}" if overload else "")


# ---- building ------------------------------------------------------------------------------------
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
    return build(etdump, etrecord, pte, method, sources)


def build(data: etdump_format.EtdumpData, etrecord=None, pte=None, method=None, sources=None) -> Profile:
    strings = list(data.strings)
    ev = data.events
    role = _roles(strings, ev)
    execute_runs = _execute_runs(data, ev, role, strings)
    warnings: list[str] = []

    run_to_execute = np.full(len(data.runs), -1, dtype=np.int32)
    run_to_execute[execute_runs] = np.arange(len(execute_runs), dtype=np.int32)
    execute = run_to_execute[ev["run"]] if len(ev["run"]) else np.zeros(0, np.int32)

    value, unit = _values_and_units(strings, ev, role)
    events = dict(ev)
    events.update(role=role, execute=execute, value=value, unit=unit)

    runs = _run_table(data, events, execute_runs, warnings)
    profile = Profile(etdump=data, strings=strings, events=events, runs=runs, instructions={},
                      method=None, etrecord=etrecord, pte=pte, sources=dict(sources or {}),
                      warnings=warnings)
    _join_instructions(profile, etrecord, pte, method)
    for p in (profile.method_split.profiles.values() if profile.method_split else (profile,)):
        _remove_accumulated_copies(p)
    return profile


def _roles(strings: list[str], ev) -> np.ndarray:
    n = len(ev["run"])
    role = np.full(n, ROLE_OTHER, dtype=np.uint8)
    kind = ev["kind"]
    role[kind == etdump_format.DEBUG] = ROLE_DEBUG
    role[kind == etdump_format.ALLOCATION] = ROLE_ALLOCATION
    prof = kind == etdump_format.PROFILE
    code_of = {s: i for i, s in enumerate(strings)}
    name = ev["name"]

    def is_name(s):
        c = code_of.get(s)
        return (name == c) if c is not None else np.zeros(n, dtype=bool)

    # Delegate-internal events have no name (or an empty one) but a delegate debug id.
    empty = code_of.get("")
    unnamed = (name < 0) | ((name == empty) if empty is not None else False)
    has_delegate_id = (ev["delegate_id_str"] >= 0) | (ev["delegate_id_int"] >= 0)
    role[prof & unnamed & has_delegate_id] = ROLE_DELEGATE_INTERNAL
    role[prof & is_name(METHOD_EXECUTE)] = ROLE_METHOD
    role[prof & is_name(DELEGATE_CALL)] = ROLE_DELEGATE_CALL
    role[prof & is_name(OPERATOR_CALL)] = ROLE_OPERATOR_CALL
    # A named event attached to an instruction (chain set) that is neither call wrapper is a kernel.
    kernel = prof & ~unnamed & (ev["chain"] >= 0) & (role == ROLE_OTHER) & (ev["instruction_id"] >= 0)
    role[kernel] = ROLE_KERNEL
    return role


def _execute_runs(data, ev, role, strings) -> np.ndarray:
    """RunData indices that are executions: those holding Method::execute, else non-'Default' runs."""
    has_method = np.zeros(len(data.runs), dtype=bool)
    if len(ev["run"]):
        has_method[unique(ev["run"][role == ROLE_METHOD])] = True
    if has_method.any():
        return np.nonzero(has_method)[0]
    names = np.array([r.name != "Default" and r.event_count > 0 for r in data.runs], dtype=bool)
    return np.nonzero(names)[0]


def _values_and_units(strings, ev, role):
    """Each event's value in its true unit.

    Interval events (start > 0) are durations in the runtime clock's ticks (ns on Linux/Android).
    Value events (delegate events with start_time == 0, as QNN writes them) carry the value in
    ``end_time`` and their unit in the name suffix.
    """
    n = len(ev["run"])
    # Same bits as astype(int64), without copies (10M events: 160 MB less).
    start = _as_int64(ev["start"]) if n else np.zeros(0, np.int64)
    end = _as_int64(ev["end"]) if n else np.zeros(0, np.int64)
    value = np.empty(n, dtype=np.float64)
    np.subtract(end, start, out=value, dtype=np.int64, casting="unsafe")
    unit = np.full(n, units.UNKNOWN, dtype=np.uint8)
    is_prof = ev["kind"] == etdump_format.PROFILE
    unit[is_prof] = units.NS
    value_style = (role == ROLE_DELEGATE_INTERNAL) & (start == 0)
    if value_style.any():
        np.copyto(value, end, where=value_style, casting="unsafe")
        codes = np.where(ev["name"] >= 0, ev["name"], ev["delegate_id_str"])
        # Unit per string code (the last entry serves code -1).
        lut = np.array([units.unit_from_suffix(s) for s in strings] + [units.UNKNOWN], dtype=np.uint8)
        np.copyto(unit, lut[codes], where=value_style)
    alloc = ev["kind"] == etdump_format.ALLOCATION
    value[alloc] = ev["allocation_size"][alloc].astype(np.float64)
    unit[alloc] = units.BYTES
    debug = ev["kind"] == etdump_format.DEBUG
    value[debug] = np.nan
    return value, unit


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
        np.maximum.at(hi, events["execute"][sel], events["end"][sel].astype(np.int64))
        ok = missing & (hi > 0)
        latency[ok] = (hi - lo)[ok]
        start[ok] = lo[ok]
        warnings.append(f"{int(missing.sum())} run(s) have no Method::execute event; their latency "
                        "is the span of their events (an estimate)")
    return {"etdump_run": np.asarray(execute_runs, dtype=np.int64), "start_ns": start,
            "latency_ns": latency, "event_count": np.array([data.runs[r].event_count for r in execute_runs],
                                                           dtype=np.int64)}


# ---- instructions: what ran where ------------------------------------------------------------------
def _join_instructions(profile: Profile, etrecord, pte, method_hint):
    assigned = _assign_methods(profile, etrecord, pte)
    if assigned is None:
        _join_method(profile, etrecord, pte, method_hint)
    else:
        _split_by_method(profile, etrecord, pte, method_hint, *assigned)


def _join_method(profile: Profile, etrecord, pte, method_hint):
    """Instructions of the profile's runs (all of one method), joined to .pte and ETRecord."""
    ev = profile.events
    in_exec = ev["execute"] >= 0
    role = ev["role"]
    instr = ev["instruction_id"]
    found: dict[int, Instruction] = {}

    def ids(mask):
        return _unique_chunked(lambda sl: instr[sl][mask[sl] & in_exec[sl] & (instr[sl] >= 0)], len(instr))

    delegate_ids = ids(role == ROLE_DELEGATE_CALL)
    cpu_ids = ids((role == ROLE_OPERATOR_CALL) | (role == ROLE_KERNEL))
    inner = _delegate_internal_names(profile) if len(delegate_ids) else {}
    for i in delegate_ids:
        found[int(i)] = Instruction(int(i), "delegate", _guess_backend(profile, int(i), inner.get(int(i), [])))
    for i in cpu_ids:
        if int(i) in found:
            profile.warnings.append(f"instruction {int(i)} has both DELEGATE_CALL and operator events")
            continue
        found[int(i)] = Instruction(int(i), "cpu", CPU)
    # Kernel names (the kernel event nested in OPERATOR_CALL).
    kmask = (role == ROLE_KERNEL) & in_exec
    if kmask.any():
        # (instruction, name) pairs in sorted order; kernel events have both >= 0, so one packed key.
        packed = _unique_chunked(lambda sl: (instr[sl][kmask[sl]].astype(np.int64) << 32)
                                 | ev["name"][sl][kmask[sl]].astype(np.int64), len(instr))
        for i, code in zip((packed >> 32).tolist(), (packed & 0xFFFFFFFF).tolist()):
            ins = found.get(int(i))
            if ins is not None and ins.kind == "cpu" and ins.kernel is None:
                ins.kernel = profile.strings[int(code)]

    profile.instructions = found
    profile.method = _choose_method(profile, etrecord, pte, method_hint)
    if pte is not None:
        _join_pte(profile, pte)
    if etrecord is not None:
        _join_etrecord(profile, etrecord)


_XNNPACK_HINT = re.compile(r"\((?:N[CDH]|ND|NHWC|NCHW)[^()]*\)|#\d+$")
_QNN_HINT = re.compile(r"\((?:us|cycles|bytes|count)\)$|OpId_\d+|^QNN ")


def _unique_chunked(values, n: int, chunk: int = 1 << 20) -> np.ndarray:
    """np.unique of ``values(slice)`` over slices of ``range(n)``: bounded temporaries when the
    selected values are many and the distinct ones few."""
    parts = [unique(values(slice(a, a + chunk))) for a in range(0, n, chunk)]
    return unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _delegate_internal_names(profile: Profile) -> dict[int, list[int]]:
    """Per instruction id, the distinct delegate_debug_id_str codes of its delegate-internal events
    (sorted, -1 = none), computed for all instructions in one pass."""
    ev = profile.events
    role = ev["role"]
    n = len(role)
    parts = []
    # In chunks: QNN files are mostly delegate-internal events (10M events: 400 MB of temporaries
    # in one go); the distinct pairs are few.
    for a in range(0, n, 1 << 20):
        sel = role[a:a + (1 << 20)] == ROLE_DELEGATE_INTERNAL
        if not sel.any():
            continue
        instr = (ev["instruction_id"][a:a + (1 << 20)][sel].astype(np.int64) + (1 << 31)).astype(np.uint64)
        code = (ev["delegate_id_str"][a:a + (1 << 20)][sel].astype(np.int64) + 1).astype(np.uint64)  # -1 -> 0
        parts.append(unique((instr << np.uint64(32)) | code))
    if not parts:
        return {}
    packed = unique(np.concatenate(parts))
    ids = (packed >> np.uint64(32)).astype(np.int64) - (1 << 31)
    codes = (packed & np.uint64(0xFFFFFFFF)).astype(np.int64) - 1
    out: dict[int, list[int]] = {}
    for i, c in zip(ids.tolist(), codes.tolist()):
        out.setdefault(i, []).append(c)
    return out


def _guess_backend(profile: Profile, instruction_id: int, codes: list[int] | None = None) -> str:
    """Without ETRecord or .pte, tell the backend from the names of its internal events."""
    if codes is None:
        codes = _delegate_internal_names(profile).get(instruction_id, [])
    names = [profile.strings[c] for c in codes[:50] if c >= 0]
    if any(_QNN_HINT.search(n) for n in names):
        return "QnnBackend"
    if any(_XNNPACK_HINT.search(n) for n in names):
        return "XnnpackBackend"
    return UNKNOWN_DELEGATE


def _method_names(obj) -> list[str]:
    if obj is None:
        return []
    methods = getattr(obj, "methods", None) or []
    return [m if isinstance(m, str) else m.name for m in methods]


def _require_method(profile: Profile, names: list[str], hint: str):
    if names and hint not in names:
        raise MismatchError(f"method {hint!r} not found (available: {', '.join(names)})",
                            profile.sources.get("pte") or profile.sources.get("etrecord"))


def _choose_method(profile: Profile, etrecord, pte, hint) -> str | None:
    names = _method_names(pte) or _method_names(etrecord)
    if hint:
        _require_method(profile, names, hint)
        return hint
    if not names:
        return None
    if pte is not None and len(names) > 1:
        codes = np.array(sorted(i.id * 2 + (i.kind == "delegate") for i in profile.instructions.values()),
                         dtype=np.int64)
        plans = _method_plans(None, pte)
        fitting = [name for name, plan in plans.items() if _fits_plan(codes, plan)]
        if len(fitting) >= 1:
            if len(fitting) > 1:
                profile.warnings.append(
                    f"several methods fit the ETDump ({', '.join(fitting)}); using {fitting[0]} (pass --method)")
            return fitting[0]
    if "forward" in names:
        return "forward"
    return names[0]


def _pte_method(pte, name):
    for m in pte.methods:
        if m.name == name:
            return m
    return None


# ---- runs of several methods in one ETDump -----------------------------------------------------------
def _assign_methods(profile: Profile, etrecord, pte) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Method per Execute run when no single method of the .pte (or ETRecord) fits every run:
    (method index per run, method names in order of first run, notes on ambiguous runs). None
    when one method fits all runs, when some run fits no method (the join reports the mismatch)
    or when the program has one method."""
    program_methods = _method_names(pte) if pte is not None else _method_names(etrecord)
    if profile.n_runs == 0:
        return None
    if not program_methods:
        return _methods_without_program(profile)
    if len(program_methods) < 2:
        return None
    group_of_run, group_codes = _instruction_sets(profile)
    plans = _method_plans(etrecord, pte)
    names = list(plans)
    fits = np.array([[_fits_plan(codes, plans[m]) for m in names] for codes in group_codes], dtype=bool)
    if fits.all(axis=0).any() or not fits.any(axis=1).all():
        return None
    runs_per_group = np.bincount(group_of_run, minlength=len(group_codes))
    choice = _fewest_methods(fits, runs_per_group)
    method_of_run = choice[group_of_run]
    notes = []
    for g in np.nonzero(fits.sum(axis=1) > 1)[0]:
        alike = [names[m] for m in np.nonzero(fits[g])[0]]
        runs = np.nonzero(group_of_run == g)[0]
        notes.append(f"run(s) {_run_list(runs)} fit methods {', '.join(alike)} alike; "
                     f"counted as {names[choice[g]]}")
    method_of_run, used = _in_order_of_first_run(method_of_run, len(names))
    return method_of_run, [names[m] for m in used], notes


def _in_order_of_first_run(method_of_run: np.ndarray, n_methods: int) -> tuple[np.ndarray, np.ndarray]:
    """Methods renumbered in the order of their first run: (new index per run, old index of
    each new one)."""
    _, first = np.unique(method_of_run, return_index=True)
    used = method_of_run[np.sort(first)]
    rank = np.full(n_methods, -1, dtype=np.int64)
    rank[used] = np.arange(len(used))
    return rank[method_of_run].astype(np.int16), used


MAX_INSTRUCTION_SETS = 256     # more distinct sets than this: not told apart without the program


def _methods_without_program(profile: Profile) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Without .pte or ETRecord: runs that contradict each other (an instruction id that is a
    delegate call in some runs and a CPU operator in others) executed different methods. Groups
    of runs with the same instructions, most runs first, join the first method they agree with;
    the methods, unnamed, are numbered in the order of their first run. None when all agree.
    Methods whose instructions agree in kind (e.g. the same graph exported for two shapes) stay
    together: only the program can tell them apart."""
    if not _some_id_of_both_kinds(profile):        # cheap test first: most ETDumps hold one method
        return None
    group_of_run, group_codes = _instruction_sets(profile)
    if len(group_codes) < 2 or len(group_codes) > MAX_INSTRUCTION_SETS:
        return None
    runs_per_group = np.bincount(group_of_run, minlength=len(group_codes))
    first_run = np.unique(group_of_run, return_index=True)[1]
    methods: list[tuple[np.ndarray, np.ndarray]] = []      # per method: its delegate ids, its CPU ids
    method_of_group = np.zeros(len(group_codes), dtype=np.int64)
    conflict = None
    for g in np.lexsort((first_run, -runs_per_group)):
        codes = group_codes[g]
        delegate, cpu = codes[(codes & 1) == 1] >> 1, codes[(codes & 1) == 0] >> 1
        for k, (m_delegate, m_cpu) in enumerate(methods):
            clash = np.union1d(np.intersect1d(delegate, m_cpu), np.intersect1d(cpu, m_delegate))
            if clash.size == 0:
                methods[k] = (np.union1d(m_delegate, delegate), np.union1d(m_cpu, cpu))
                method_of_group[g] = k
                break
            conflict = conflict if conflict is not None else (int(clash[0]), int(g))
        else:
            methods.append((delegate, cpu))
            method_of_group[g] = len(methods) - 1
    if len(methods) < 2:
        return None
    method_of_run, _ = _in_order_of_first_run(method_of_group[group_of_run], len(methods))
    instr, g = conflict
    where = np.nonzero(group_of_run == g)[0]
    note = (f"without the .pte or ETRecord the methods are unnamed (pass either to name them and join "
            f"their operators); told apart because instruction {instr} is a delegate call in some runs "
            f"and a CPU operator in others (e.g. run(s) {_run_list(where, 4)})")
    return method_of_run, [f"method #{k + 1}" for k in range(len(methods))], [note]


def _some_id_of_both_kinds(profile: Profile) -> bool:
    """Whether some instruction id is a DELEGATE_CALL in one place and a CPU operator in another."""
    ev = profile.events
    role, instr, execute = ev["role"], ev["instruction_id"], ev["execute"]

    def ids(sl, delegate: bool):
        r = role[sl]
        kind = (r == ROLE_DELEGATE_CALL) if delegate else ((r == ROLE_OPERATOR_CALL) | (r == ROLE_KERNEL))
        return instr[sl][kind & (execute[sl] >= 0) & (instr[sl] >= 0)]

    delegate = _unique_chunked(lambda sl: ids(sl, True), len(role))
    cpu = _unique_chunked(lambda sl: ids(sl, False), len(role))
    return bool(np.intersect1d(delegate, cpu).size)


def _instruction_sets(profile: Profile) -> tuple[np.ndarray, list[np.ndarray]]:
    """Runs grouped by the set of instructions they executed: group per run, and per group the
    sorted codes ``instruction_id * 2 + (1 if a DELEGATE_CALL else 0)``."""
    ev = profile.events
    role, instr, execute = ev["role"], ev["instruction_id"], ev["execute"]
    n = profile.n_runs

    def run_and_code(sl):
        r = role[sl]
        sel = ((r == ROLE_DELEGATE_CALL) | (r == ROLE_OPERATOR_CALL) | (r == ROLE_KERNEL)) & (
            execute[sl] >= 0) & (instr[sl] >= 0)
        code = instr[sl][sel].astype(np.int64) * 2 + (r[sel] == ROLE_DELEGATE_CALL)
        return (execute[sl][sel].astype(np.int64) << 32) | code

    pairs = _unique_chunked(run_and_code, len(role))      # sorted by run, then code
    run = pairs >> 32
    code = pairs & 0xFFFFFFFF
    signature = sum_u64(run, mix64(code.astype(np.uint64)), n) ^ mix64(np.bincount(run, minlength=n))
    _, first, group = np.unique(signature, return_index=True, return_inverse=True)
    bounds = np.searchsorted(run, np.arange(n + 1))
    return group.reshape(-1), [code[bounds[r]:bounds[r + 1]] for r in first]


def _method_plans(etrecord, pte) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Per method: the ids of its delegate calls and of all its instructions (sorted). From the
    .pte, else from the ETRecord's delegate map, which lists only the delegate calls (all
    instruction ids are then unknown: None)."""
    if pte is not None:
        return {m.name: (np.array(sorted(i.index for i in m.instructions if i.kind == "delegate"), dtype=np.int64),
                         np.array(sorted(i.index for i in m.instructions), dtype=np.int64))
                for m in pte.methods}
    dmaps = getattr(etrecord, "delegate_map", None) or {}
    return {name: (np.array(sorted(int(i) for i in dmaps.get(name, {})), dtype=np.int64), None)
            for name in _method_names(etrecord)}


def _fits_plan(codes: np.ndarray, plan: tuple[np.ndarray, np.ndarray | None]) -> bool:
    """Whether instructions (codes ``id * 2 + (1 if a DELEGATE_CALL)``, as in _instruction_sets)
    exist in a method as such: the id is one of the method's, and a delegate call there exactly
    when it is one in the ETDump."""
    delegate_ids, all_ids = plan
    ids, delegate = codes >> 1, (codes & 1).astype(bool)
    if all_ids is not None and not np.isin(ids, all_ids).all():
        return False
    return bool((np.isin(ids, delegate_ids) == delegate).all())


def _fewest_methods(fits: np.ndarray, runs_per_group: np.ndarray) -> np.ndarray:
    """Method per group of runs (fits: groups x methods), using as few methods as possible:
    repeatedly the method fitting most of the runs still unassigned (ties: program order)."""
    choice = np.full(fits.shape[0], -1, dtype=np.int64)
    while (choice < 0).any():
        open_runs = np.where(choice < 0, runs_per_group, 0)
        m = int(np.argmax(open_runs @ fits))
        choice[(choice < 0) & fits[:, m]] = m
    return choice


def _run_list(runs: np.ndarray, limit: int = 8) -> str:
    shown = ", ".join(str(int(r)) for r in runs[:limit])
    return shown + (f" (+{len(runs) - limit} more)" if len(runs) > limit else "")


def _split_by_method(profile: Profile, etrecord, pte, hint, method_of_run, names, notes):
    """Make ``profile`` hold the runs of one method (``hint``, else the one with most runs) and
    build one Profile per other method; all share a MethodSplit."""
    counts = np.bincount(method_of_run, minlength=len(names))
    if hint is None:
        chosen = names[int(np.argmax(counts))]          # ties: the method that ran first
    else:
        _require_method(profile, _method_names(pte) or _method_names(etrecord), hint)
        if hint not in names:
            raise MismatchError(f"no run of the ETDump executed method {hint!r} (its runs executed: "
                                + ", ".join(f"{n} ({c})" for n, c in zip(names, counts)) + ")",
                                profile.sources.get("pte") or profile.sources.get("etrecord"))
        chosen = hint
    split = MethodSplit(names, method_of_run, dict.fromkeys(names), explicit=hint is not None,
                        file_events=profile.etdump.event_count)
    split.note = (f"the ETDump holds the runs of {len(names)} methods with different instructions, told "
                  "apart by the instructions each run executed (the ETDump does not name the method): "
                  + ", ".join(f"{n} {c} run(s)" for n, c in zip(names, counts))
                  + f"; this shows {chosen!r} only" + (" (most runs)" if hint is None else "")
                  + "; pass --method " + " or --method ".join(shlex.quote(n) for n in names if n != chosen)
                  + " for the others (etscope llm without --method reads them all)"
                  + "".join(f"; {t}" for t in notes))
    for k, name in enumerate(names):
        if name == chosen:
            continue
        data, events, runs = _run_subset(profile, method_of_run == k)
        sub = Profile(etdump=data, strings=profile.strings, events=events, runs=runs, instructions={},
                      method=None, etrecord=etrecord, pte=pte, sources=dict(profile.sources),
                      warnings=list(profile.warnings), method_split=split)
        _join_method(sub, etrecord, pte, name)
        split.profiles[name] = sub
    # The chosen method's runs last: the others were cut from the whole profile.
    data, events, runs = _run_subset(profile, method_of_run == names.index(chosen))
    profile.etdump = data
    profile.events = events
    profile.runs = runs
    profile.method_split = split
    _join_method(profile, etrecord, pte, chosen)
    profile.warnings.append(split.note)
    split.profiles[chosen] = profile


def select_runs(profile: Profile, keep) -> Profile:
    """A Profile of the Execute runs where ``keep`` (bool per run) is true, joined again to the
    profile's method, .pte and ETRecord; events outside the runs (load, init) stay."""
    data, events, runs = _run_subset(profile, np.asarray(keep, dtype=bool))
    sub = Profile(etdump=data, strings=profile.strings, events=events, runs=runs, instructions={},
                  method=None, etrecord=profile.etrecord, pte=profile.pte, sources=dict(profile.sources),
                  warnings=[])
    _join_method(sub, profile.etrecord, profile.pte, profile.method)
    sub.accumulation = profile.accumulation     # its events are the de-duplicated ones
    return sub


def _run_subset(profile: Profile, keep: np.ndarray):
    """The profile's ETDump data, events and runs restricted to the Execute runs where ``keep``
    is true (events outside the runs, such as load and init, stay): boolean selection, so only
    the kept events are copied. RunData of dropped runs stay listed, with no events."""
    ev = profile.events
    execute = ev["execute"]
    keep_event = np.append(keep, True)[execute]           # execute -1 (outside runs) -> True
    renumber = np.append(np.where(keep, np.cumsum(keep) - 1, -1), -1)
    data, events = _event_subset(profile, keep_event)
    events["execute"] = renumber[events["execute"]].astype(execute.dtype)
    runs = {k: np.asarray(v)[keep] for k, v in profile.runs.items()}
    return data, events, runs


def _event_subset(profile: Profile, keep_event: np.ndarray):
    """The profile's ETDump data and events where ``keep_event``; each RunData's first event and
    count follow. Events keep their index in the file (column ``file_event``, added on the first
    subset: until then an event's position is its index)."""
    ev = profile.events
    events = {k: _select(v, keep_event) for k, v in ev.items()}
    if "file_event" not in events:
        events["file_event"] = np.flatnonzero(keep_event).astype(np.int64)
    data = profile.etdump
    counts = np.bincount(events["run"], minlength=len(data.runs)) if len(events["run"]) else \
        np.zeros(len(data.runs), np.int64)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    run_data = [dataclasses.replace(r, first_event=int(f), event_count=int(c))
                for r, f, c in zip(data.runs, firsts, counts)]
    data = dataclasses.replace(data, runs=run_data, events={k: events[k] for k in data.events})
    return data, events


# ---- events accumulating across executes ---------------------------------------------------------
_CHUNK = 1 << 20


def _remove_accumulated_copies(profile: Profile) -> None:
    """Keep one copy of each delegate execute's events where the backend logged them accumulated.

    QNN's profiler may hand back every event since its profile handle was created, so execute k of
    a delegate logs the events of its executes 1..k, oldest first (whether it does is not settled
    in ExecuTorch's source: it is detected here). Such a delegate is recognised by all of: in its
    j-th run (j = 1, 2, ...) each event name occurs j times as often as in its first run, and
    the older copies repeat the values the earlier runs logged as their own. Each run then keeps
    its newest copy (the last occurrences of each name). Anything less regular is left alone."""
    ev = profile.events
    n_runs, n = profile.n_runs, len(ev["run"])
    ids = np.array(sorted(i for i, ins in profile.instructions.items() if ins.kind == "delegate"),
                   dtype=np.int64)
    if n_runs < 2 or not ids.size:
        return
    role, execute, instr = ev["role"], ev["execute"], ev["instruction_id"]
    # Cheap first test: delegate-internal events per (instruction, run) growing 1x, 2x, 3x, ...
    # Counted sparsely (pairs that occur), in chunks: memory follows the events, not ids x runs.
    keys, counts = [], []
    for a in range(0, n, _CHUNK):
        sl = slice(a, a + _CHUNK)
        m = (role[sl] == ROLE_DELEGATE_INTERNAL) & (execute[sl] >= 0)
        if not m.any():
            continue
        i = instr[sl][m].astype(np.int64)
        k = np.minimum(np.searchsorted(ids, i), len(ids) - 1)
        ok = ids[k] == i
        u, c = np.unique(k[ok] * n_runs + execute[sl][m][ok], return_counts=True)
        keys.append(u)
        counts.append(c)
    if not keys:
        return
    pair, inv = np.unique(np.concatenate(keys), return_inverse=True)
    count = np.bincount(inv.reshape(-1), weights=np.concatenate(counts)).astype(np.int64)
    bounds = np.searchsorted(pair // n_runs, np.arange(len(ids) + 1))
    keep = None
    removed: dict[int, int] = {}
    for row, iid in enumerate(ids.tolist()):
        c = count[bounds[row]:bounds[row + 1]]           # per run holding its events, in run order
        present = pair[bounds[row]:bounds[row + 1]] % n_runs
        if present.size < 2 or not (c == c[0] * np.arange(1, present.size + 1)).all():
            continue
        idx = np.flatnonzero((role == ROLE_DELEGATE_INTERNAL) & (execute >= 0) & (instr == iid))
        drop = _older_copies(ev, idx, present)
        if drop is None:
            profile.warnings.append(
                f"the backend events of delegate instruction {iid} grow by one copy per execute, but "
                "the older copies do not repeat the earlier runs' values: kept as logged, not de-duplicated")
            continue
        if keep is None:
            keep = np.ones(n, dtype=bool)
        keep[idx[drop]] = False
        removed[iid] = int(drop.sum())
    if keep is None:
        return
    record = Accumulation(events_removed=removed, file_events=n)
    data, events = _event_subset(profile, keep)
    runs = dict(profile.runs)
    runs["event_count"] = np.array([data.runs[r].event_count for r in runs["etdump_run"]], dtype=np.int64)
    profile.etdump = data
    profile.events = events
    profile.runs = runs
    profile.cache.clear()
    profile.accumulation = record
    profile.warnings.append(record.warning())


def _older_copies(ev, idx: np.ndarray, present: np.ndarray) -> np.ndarray | None:
    """For the delegate-internal events ``idx`` of one delegate (runs ``present`` hold its events;
    the j-th of them j copies): which are older copies. None when a copy's name counts or values
    differ from those the earlier run logged as its own."""
    run = ev["execute"][idx].astype(np.int64)
    ds = ev["delegate_id_str"][idx]
    _, code = np.unique(np.where(ds >= 0, ds, ev["name"][idx]), return_inverse=True)   # dense names
    code = code.reshape(-1).astype(np.int64)
    value = ev["value"][idx]
    rank = np.searchsorted(present, run)                  # 0 for the first run holding events
    width = int(code.max()) + 1
    key = rank * width + code                             # (run, name), in run order
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    sizes = np.diff(np.append(starts, ks.size))
    group = np.cumsum(np.r_[True, ks[1:] != ks[:-1]]) - 1
    occ = np.empty(idx.size, dtype=np.int64)
    occ[order] = np.arange(idx.size) - starts[group]
    count = np.empty(idx.size, dtype=np.int64)
    count[order] = sizes[group]
    per_copy = np.bincount(code[rank == 0], minlength=width)[code]   # occurrences per copy
    if not (count == (rank + 1) * per_copy).all():
        return None
    copy = occ // np.maximum(per_copy, 1)                 # which execute's copy (0 = first run's)
    newest = copy == rank
    # Each older copy must repeat what the run it came from logged as its own newest copy.
    depth = int(per_copy.max())
    slot = (copy * width + code) * depth + occ - copy * per_copy     # (execute copy, name, index)
    own_slot = slot[newest]
    by_slot = np.argsort(own_slot)
    at = np.searchsorted(own_slot[by_slot], slot)
    found = at < own_slot.size
    found[found] = own_slot[by_slot[at[found]]] == slot[found]
    if not found.all():
        return None
    if not np.array_equal(value[newest][by_slot[at]], value, equal_nan=True):
        return None
    return ~newest


def _select(column: np.ndarray, keep: np.ndarray) -> np.ndarray:
    # Columns holding one value everywhere are zero-stride views (see formats.etdump): keep them so.
    if column.ndim == 1 and column.strides[0] == 0 and len(column):
        return np.broadcast_to(column[:1], (int(keep.sum()),))
    return column[keep]


# Events the runtime logs for its own instructions (method.cpp), by the .pte instruction kind.
_RUNTIME_CALL = {"JF_CALL": "jump", "MOVE_CALL": "move", "FREE_CALL": "free"}


def _join_pte(profile: Profile, pte):
    method = _pte_method(pte, profile.method) if profile.method else None
    if method is None:
        raise MismatchError(f"the .pte has no method {profile.method!r}", profile.sources.get("pte"))
    by_index = {ins.index: ins for ins in method.instructions}
    bad = []
    for ins in profile.instructions.values():
        p = by_index.get(ins.id)
        if p is None:
            bad.append(f"instruction {ins.id} not in method {method.name!r} "
                       f"({len(method.instructions)} instructions)")
            continue
        if ins.kind == "delegate":
            if p.kind != "delegate":
                bad.append(f"instruction {ins.id} is a DELEGATE_CALL in the ETDump but a {p.kind} in the .pte")
                continue
            if p.backend_id:
                ins.backend, ins.backend_from = p.backend_id, ".pte"
        else:
            if p.kind != "kernel" and _RUNTIME_CALL.get(ins.kernel) != p.kind:
                bad.append(f"instruction {ins.id} is a CPU operator in the ETDump but a {p.kind} in the .pte")
                continue
            ins.operator = p.operator
    if bad:
        raise MismatchError("the .pte does not match the ETDump: " + "; ".join(bad[:3])
                            + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""),
                            profile.sources.get("pte"))


def _join_etrecord(profile: Profile, etrecord):
    method = profile.method or "forward"
    dmap = (getattr(etrecord, "delegate_map", None) or {}).get(method, {})
    hmap = (getattr(etrecord, "debug_handle_map", None) or {}).get(method, {})
    graph = (getattr(etrecord, "graphs", None) or {}).get(method)
    by_instruction, cut = (etrecord.nodes_by_instruction(method, profile.instructions) if graph is not None
                           else ({}, None))
    if hasattr(etrecord, "lowering_input"):
        etrecord.lowering_input(method)  # decoded now, so what it lacks is in the warnings below
    profile.warnings.extend([*getattr(etrecord, "warnings", ()), *([cut] if cut else [])])
    if not hmap and not dmap and profile.instructions:
        profile.warnings.append(f"the ETRecord has no debug handle or delegate map for method {method!r}")
        return
    bad = []
    no_handles = []
    for ins in profile.instructions.values():
        info = dmap.get(ins.id)
        if ins.kind == "delegate":
            if info is not None:
                name = info.name if hasattr(info, "name") else info.get("name")
                if name:
                    ins.backend, ins.backend_from = name, "ETRecord"
            elif dmap:
                bad.append(f"DELEGATE_CALL instruction {ins.id} is not a delegate in the ETRecord")
        elif info is not None:
            bad.append(f"instruction {ins.id} is a CPU operator in the ETDump but a delegate in the ETRecord")
        handles = hmap.get(ins.id)
        if handles is None:
            if hmap and ins.kind == "cpu":
                no_handles.append(ins.id)
            continue
        ins.debug_handles = [int(h) for h in handles]
        if graph is not None:
            nodes = by_instruction.get(ins.id, [])
            if ins.kind == "cpu":
                nodes = _nodes_for_kernel(nodes, ins)
            ins.nodes = [n.name for n in nodes]
            if ins.kind == "cpu":
                ins.op_types = list(dict.fromkeys(n.target for n in nodes if n.target))
            else:
                ins.op_types = list(dict.fromkeys(
                    n.target for n in nodes if n.target and "executorch_call_delegate" not in n.target))
            ins.sources = list(dict.fromkeys(n.source for n in nodes if n.source))
            ins.source = ins.sources[0] if ins.sources else None
    if no_handles:
        # Prim ops (sym_size, views) and the runtime's own moves have no graph node behind them.
        profile.warnings.append(_no_handles_warning([profile.instructions[i] for i in sorted(no_handles)]))
    if bad:
        raise MismatchError("the ETRecord does not match the ETDump: " + "; ".join(bad[:3])
                            + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""),
                            profile.sources.get("etrecord"))


def _no_handles_warning(instructions: list[Instruction]) -> str:
    """What CPU instructions without debug handles lack: always the source line (only the graph
    has it); the op type only when neither the .pte's operator nor a kernel name gives one."""
    def ids(group):
        return ", ".join(str(i.id) for i in group[:6]) + (f" and {len(group) - 6} more" if len(group) > 6 else "")

    groups = [([i for i in instructions if i.operator], "op type from the .pte"),
              ([i for i in instructions if not i.operator and i.kernel], "op type guessed from the kernel name"),
              ([i for i in instructions if not i.operator and not i.kernel], "no op type")]
    groups = [(g, what) for g, what in groups if g]
    text = f"{len(instructions)} CPU instruction(s) have no debug handles in the ETRecord: no source line for them"
    if len(groups) == 1:
        return f"{text}, {groups[0][1]} ({ids(instructions)})"
    return text + "; " + ", ".join(f"{what} for {len(g)} ({ids(g)})" for g, what in groups)


def _op_base(name: str) -> str:
    """'aten.index_put.default' / 'aten::index_put.out' / 'native_call_index_put.out' -> 'index_put'."""
    name = name.replace("::", ".")
    if name.startswith("native_call_"):
        name = name[len("native_call_"):]
        return name.split(".")[0]
    parts = name.split(".")
    return parts[1] if len(parts) >= 2 else parts[0]


def _nodes_for_kernel(nodes: list, ins: Instruction) -> list:
    """Debug handles can be shared by several graph nodes; keep those whose op is this kernel's op."""
    want = {_op_base(x) for x in (ins.kernel, ins.operator) if x}
    if not want or len(nodes) <= 1:
        return nodes
    matching = [n for n in nodes if n.target and _op_base(n.target) in want]
    return matching or nodes
