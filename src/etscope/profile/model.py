"""The Profile model: the ETDump's events as columns (each with its role and unit), one row per
Execute run, and what each instruction is (backend or CPU kernel, op type, source location).

Built by :func:`etscope.profile.load`; nothing here reads a file or joins inputs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from etscope.formats import etdump as etdump_format

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


@dataclass(frozen=True)
class SourceFiles:
    """The files a profile was read from, as shown (``paths.display``: escaped, valid UTF-8); None
    for one given already read. ``render.json`` writes only those given, in this order (the
    ``omit_none`` field metadata), as the ``sources`` mapping it is read from holds them."""
    etdump: str | None = field(default=None, metadata={"omit_none": True})
    etrecord: str | None = field(default=None, metadata={"omit_none": True})
    pte: str | None = field(default=None, metadata={"omit_none": True})


@dataclass(eq=False)   # one profile is one object: equal means the same (analysis memoises per profile)
class Profile:
    etdump: etdump_format.EtdumpData
    strings: list[str]
    events: dict[str, np.ndarray]
    runs: dict[str, np.ndarray]          # one row per Execute run
    instructions: dict[int, Instruction]
    method: str | None
    etrecord: object | None = None
    pte: object | None = None
    sources: dict[str, str] = field(default_factory=dict)   # by input kind; typed: ``source_files``
    warnings: list[str] = field(default_factory=list)
    # Set when the ETDump holds runs of several methods with different instructions: this profile
    # then holds only its method's runs (see MethodSplit).
    method_split: "MethodSplit | None" = field(default=None, repr=False)
    # Set when a backend's events accumulated across executes and the older copies were removed.
    accumulation: "Accumulation | None" = None
    # Set when this profile holds the runs of one phase (prefill / decode) of its file: which.
    phase: "PhaseSelection | None" = None

    def __repr__(self) -> str:
        """One line (the generated repr printed every array: 100 kB for a small model)."""
        ev = self.events.get("value")
        return (f"Profile({self.source_files.etdump or 'ETDump'!r}, method={self.method!r}, runs={self.n_runs}, "
                f"instructions={len(self.instructions)}, events={0 if ev is None else len(ev)}, "
                f"warnings={len(self.warnings)})")

    # ---- small accessors -----------------------------------------------------------------------
    @property
    def source_files(self) -> SourceFiles:
        """``sources`` typed: the ETDump, ETRecord and .pte as shown, each None when not read from a path."""
        s = self.sources
        return SourceFiles(etdump=s.get("etdump"), etrecord=s.get("etrecord"), pte=s.get("pte"))

    @property
    def n_runs(self) -> int:
        return int(self.runs["etdump_run"].shape[0])

    @property
    def n_events(self) -> int:
        return int(self.events["kind"].shape[0])

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


def run_ends(data: etdump_format.EtdumpData) -> np.ndarray:
    """Per RunData, the index one past its last event (int64): events lie run after run."""
    return np.cumsum(data.run_counts())


def event_runs(profile: Profile, rows: np.ndarray | None = None) -> np.ndarray:
    """The RunData index (int32) of every event, or of the events ``rows``.

    Events lie run after run (the reader's order, kept by every subset), so the runs' event counts
    give it; the build keeps no such column when they do (40 MB on 10M events, see
    ``drop_run_column``)."""
    ev = profile.events
    if "run" in ev:
        return ev["run"] if rows is None else ev["run"][rows]
    ends = run_ends(profile.etdump)
    if rows is None:
        return np.repeat(np.arange(len(ends), dtype=np.int32), np.diff(ends, prepend=0))
    return np.searchsorted(ends, rows, side="right").astype(np.int32)


def drop_run_column(data: etdump_format.EtdumpData, events: dict[str, np.ndarray], chunk: int = 1 << 20) -> bool:
    """Remove ``run`` from ``events`` when the RunData give it back (checked: each run's events
    start at its first event, one run after another, and the column changes only there)."""
    run = events.get("run")
    if run is None or not run_column_given_back(data, run, chunk):
        return False
    del events["run"]
    return True


def run_column_given_back(data: etdump_format.EtdumpData, run: np.ndarray, chunk: int = 1 << 20) -> bool:
    """Whether the RunData give ``run`` back (see ``drop_run_column``)."""
    ends = run_ends(data)
    counts = np.diff(ends, prepend=0)
    firsts = data.run_firsts()
    n = len(run)
    if (int(ends[-1]) if len(ends) else 0) != n or not np.array_equal(firsts, ends - counts):
        return False
    starts = firsts[counts > 0]
    if not np.array_equal(run[starts], np.flatnonzero(counts > 0)):
        return False
    changes = [np.flatnonzero(run[a + 1:b + 1] != run[a:b]) + a + 1
               for a, b in ((a, min(a + chunk, n - 1)) for a in range(0, n - 1, chunk))]
    return np.array_equal(np.concatenate(changes) if changes else starts[1:], starts[1:])


# Past this, an int64 difference is not exact as a float64 value, so the end times stay a column.
EXACT_IN_FLOAT = 1 << 53


def end_times(profile: Profile) -> np.ndarray:
    """Each event's raw ``end_time`` (uint64; 0 for allocation and debug events).

    The build drops the column when the values give it back exactly (see ``drop_end_times``):
    an interval event's value is ``end - start`` and a value event's (start 0) is ``end``, so
    ``start + value`` is the end of both, bit for bit, in uint64 arithmetic (timestamps past
    2**63 included). Only the trace and the event table read end times; the other commands never
    hold them (80 MB on 10M events)."""
    ev = profile.events
    if "end" in ev:
        return ev["end"]
    value = ev["value"]
    profiling = ev["kind"] == etdump_format.PROFILE
    if not profiling.all():
        value = np.where(profiling, value, 0.0)        # allocation sizes and NaNs give no end
    end = value.astype(np.int64).view(np.uint64)
    end += ev["start"]
    return end


def drop_end_times(events: dict[str, np.ndarray]) -> bool:
    """Remove ``end`` from ``events`` when :func:`end_times` gives it back exactly: every profiling
    event's value within (-2**53, 2**53) (checked, not assumed: a crafted or wrapped timestamp keeps it)."""
    if "end" not in events or not len(events["value"]):
        return False
    profiling = events["kind"] == etdump_format.PROFILE
    lo = float(np.min(events["value"], where=profiling, initial=0.0))
    hi = float(np.max(events["value"], where=profiling, initial=0.0))
    if not (-EXACT_IN_FLOAT < lo and hi < EXACT_IN_FLOAT):   # a rounded value is at least 2**53
        return False
    del events["end"]
    return True


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


@dataclass(frozen=True)
class PhaseSelection:
    """The runs of one phase of an ETDump (an LLM's prefill or decode runs), as ``--phase`` or a
    look-alike ``--method`` chose them: every view of this profile describes those runs only."""

    name: str                  # prefill | decode | the phase's name
    method: str | None         # the program method the phase's runs executed, when known
    runs: tuple[int, ...]      # its runs: indices among the Execute runs of the whole profile
    of_runs: int               # how many runs the whole file has
    how: str                   # how the phases were told apart (plain words)


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
