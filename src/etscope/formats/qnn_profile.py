"""The one model the three QNN profile readers return (CSV in :mod:`qnn_csv`, the viewer's text
output in :mod:`qnn_text`, its ``QNN_PROFILE`` JSON in :mod:`qnn_json`): :class:`QnnProfile`, and
:class:`ProfileBuilder`, which each reader feeds event by event.

Blocks
------
QNN reports one group of events per API call: ``QNN (finalize) time`` (graph finalize, with
its optimisation steps as sub-events), ``QNN (execute) time`` (one execute of one graph),
``QNN (load binary) time`` (init from a context binary), ``QNN (deinit) time``. That ROOT comes
last in its group (only its own sub-events follow), so the events are cut into
:class:`QnnBlock` s after each such closing ROOT. A trailing group without one is kept with
``complete=False``.

The CSV names no graph. With several QNN partitions (graphs) there is one execute block per
execute per graph, in execution order, and finalize blocks may repeat (emulator ``vit_mixed_qdq``:
finalize g1, g1, g2: QNN hands back every graph finalized so far). Execute blocks are assigned to
graphs by their NODE name sets (``graph_index``, first seen = 0; ``graph_split = "node names"``).

Without NODE events (``basic`` profiling level) the only structure left is the order: the finalize
blocks say how many graphs were built (distinct finalize blocks, either each once or repeated as
g1 | g1 g2 | g1 g2 g3 ...), and each inference executes every graph once, in the same order. With
G > 1 graphs and a multiple of G execute blocks, block i goes to graph i mod G
(``graph_split = "execute order"``, with a warning saying so), unless the execute times say the
graphs ran one after the other instead (clean ranges by consecutive blocks, none by turn: then no
split and a warning). Otherwise the blocks keep
``graph_index = None`` and, when the finalize blocks name several graphs or the execute times
alternate with a period, a warning says the executes mix graphs and cannot be told apart.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from etscope.errors import FormatError

CSV_COLUMNS = ("Msg Timestamp", "Message", "Time", "Unit of Measurement", "Timing Source",
               "Event Level", "Event Identifier")
# The ROOT whose NODE sub-events are the per-op cycles (their sum equals its value in real data).
ACCEL_CYCLES = "Accelerator (execute) time (cycles)"

BLOCK_KINDS = ("execute", "finalize", "init", "deinit", "other")
_CLOSING_NAME = re.compile(r"^QNN \(([^()]*)\) time$")
_PHASE_KIND = {
    "execute": "execute", "finalize": "finalize", "load binary": "init", "init": "init",
    "create from binary": "init", "deinit": "deinit", "de-init": "deinit",
}
_TYPE_KIND = {"EXECUTE": "execute", "FINALIZE": "finalize", "INIT": "init", "DEINIT": "deinit"}
_MAX_WARNINGS = 50
_NAN_WORDS = {"", "unknown", "n/a", "na", "none", "null", "-"}


# ---- the model -------------------------------------------------------------------------------------

@dataclass
class QnnEventTable:
    """Every event of a QNN profile as columns, in file order (row i = i-th event).

    ``value`` is in ``unit`` (normalised: ``us``, ``cycles``, ``count``, ``bytes``, ``object``,
    other spellings lowercased); NaN where QNN wrote ``UNKNOWN`` or no value.
    ``type`` is the CSV ``Message`` column (FINALIZE, BACKEND, EXECUTE, NODE, UNKNOWN), the JSON
    ``type`` field, or for text ``NODE``/``""``. ``parent`` is the row of the ROOT (or outer
    sub-event) a SUB-EVENT belongs to, -1 for ROOTs. ``block`` indexes ``QnnProfile.blocks``.
    ``line`` is the 1-based source line (CSV, text) or -1 (JSON). ``extra`` holds format-specific
    columns (CSV: ``msg_timestamp`` float64, unit unknown; ``timing_source`` str).
    """

    name: np.ndarray       # object (str)
    value: np.ndarray      # float64
    unit: np.ndarray       # object (str)
    level: np.ndarray      # object: "ROOT" | "SUB-EVENT"
    type: np.ndarray       # object (str)
    parent: np.ndarray     # int64
    block: np.ndarray      # int64
    line: np.ndarray       # int64
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.name.shape[0])


@dataclass
class QnnBlock:
    """One QNN API call's events: a finalize, one execute of one graph, an init (load binary), ...

    ``roots`` maps ROOT name -> ``(value, unit)`` in file order (the first of a repeated name
    wins; all are in ``events``). ``node_names``/``node_cycles`` are the NODE sub-events in order
    (per-op cycles; NaN where the unit was not cycles), ``node_parent`` the ROOT holding them.
    ``sub_events`` are the other sub-events as ``(parent name, name, value, unit)``.
    """

    index: int
    kind: str                      # one of BLOCK_KINDS
    label: str                     # closing ROOT name, text section ("Execute Stat 2") or JSON method
    row_start: int                 # rows [row_start, row_stop) of QnnProfile.events
    row_stop: int
    complete: bool                 # ended by its closing ROOT "QNN (<phase>) time"
    roots: dict[str, tuple[float, str]]
    sub_events: list[tuple[str, str, float, str]]
    node_names: list[str]
    node_cycles: np.ndarray        # float64, cycles
    node_parent: str | None
    graph_index: int | None = None          # QNN graph (partition), from NODE names; None = unknown
    graph_execute_index: int | None = None  # 0-based execute number within its graph
    execute_index: int | None = None        # 0-based execute number among all execute blocks

    @property
    def accel_cycles(self) -> float | None:
        """``Accelerator (execute) time (cycles)`` of this block, or None."""
        v = self.roots.get(ACCEL_CYCLES)
        return None if v is None else v[0]

    def root_value(self, name: str, unit: str | None = None) -> float | None:
        """Value of ROOT ``name`` (optionally only if its unit is ``unit``), else None."""
        v = self.roots.get(name)
        if v is None or (unit is not None and v[1] != unit):
            return None
        return v[0]


@dataclass
class QnnProfile:
    """A QNN profile (CSV, viewer text or viewer JSON) as events and blocks. No analysis.

    ``graph_node_names[g]`` are the NODE names of graph ``g``'s first execute block.
    ``metadata``: text header lines / JSON ``metadata`` as strings. ``app_stats``: application-level
    numbers outside the backend events (viewer text ``NetRun``/summary lines, JSON ``APP_*``
    messages) as ``(section, name, value, unit)``.
    """

    source: str                    # "qnn_csv" | "qnn_text" | "qnn_json"
    path: str
    events: QnnEventTable
    blocks: list[QnnBlock]
    graph_node_names: list[list[str]]
    metadata: dict[str, str] = field(default_factory=dict)
    app_stats: list[tuple[str, str, float, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # How execute blocks were assigned to graphs: "node names", "execute order" (basic level,
    # graph count from the finalize blocks) or None (one graph, or not told apart).
    graph_split: str | None = None

    @property
    def n_graphs(self) -> int:
        """Graphs told apart (by NODE names, or by execute order at basic level; 0 when none)."""
        return len(self.graph_node_names)

    def execute_blocks(self, graph: int | None = None) -> list[QnnBlock]:
        """Execute blocks in order; with ``graph``, only those assigned to that graph."""
        return [b for b in self.blocks
                if b.kind == "execute" and (graph is None or b.graph_index == graph)]

    def blocks_of_kind(self, kind: str) -> list[QnnBlock]:
        return [b for b in self.blocks if b.kind == kind]


# ---- building a profile from events (shared by the CSV, text and JSON readers) --------------------

class ProfileBuilder:
    """Collects events in order, with optional forced section boundaries, then cuts blocks."""

    def __init__(self, source: str, path: str):
        self.source, self.path = source, path
        self.name: list[str] = []
        self.value: list[float] = []
        self.unit: list[str] = []
        self.level: list[str] = []
        self.type: list[str] = []
        self.parent: list[int] = []
        self.line: list[int] = []
        self.sections: dict[int, tuple[str | None, str]] = {}   # first row -> (kind, label)
        self.warnings: list[str] = []
        self._last_root = -1

    def _warn(self, msg: str) -> None:
        if len(self.warnings) < _MAX_WARNINGS:
            self.warnings.append(msg)
        elif len(self.warnings) == _MAX_WARNINGS:
            self.warnings.append("... further warnings suppressed")

    def section(self, kind: str | None, label: str) -> None:
        """Start a new block at the next event (text section / JSON message)."""
        self.sections[len(self.name)] = (kind, label)
        self._last_root = -1

    def add(self, name: str, value: float, unit: str, level: str, type_: str, line: int = -1,
            parent: int | None = None) -> int:
        row = len(self.name)
        if level == "SUB-EVENT":
            if parent is None:
                parent = self._last_root
            if parent < 0:
                self._warn(f"sub-event {name[:80]!r} (row {row}) has no ROOT before it; kept as ROOT")
                level, parent = "ROOT", -1
        else:
            parent = -1
        if level == "ROOT":
            self._last_root = row
        self.name.append(name)
        self.value.append(value)
        self.unit.append(unit)
        self.level.append(level)
        self.type.append(type_)
        self.parent.append(parent)
        self.line.append(line)
        return row

    def build(self, metadata=None, app_stats=None, extra=None) -> QnnProfile:
        n = len(self.name)
        table = QnnEventTable(
            name=np.array(self.name, dtype=object),
            value=np.array(self.value, dtype=np.float64),
            unit=np.array(self.unit, dtype=object),
            level=np.array(self.level, dtype=object),
            type=np.array(self.type, dtype=object),
            parent=np.array(self.parent, dtype=np.int64),
            block=np.full(n, -1, dtype=np.int64),
            line=np.array(self.line, dtype=np.int64),
            extra=extra or {},
        )
        blocks = self._cut(table)
        graph_names, split = _assign_graphs(blocks, self._warn)
        return QnnProfile(self.source, self.path, table, blocks, graph_names,
                          metadata=dict(metadata or {}), app_stats=list(app_stats or []),
                          warnings=self.warnings, graph_split=split)

    def _cut(self, t: QnnEventTable) -> list[QnnBlock]:
        blocks: list[QnnBlock] = []
        n = len(t)
        start = 0
        sec_kind: str | None = None
        sec_label = ""
        closing: tuple[str, str] | None = None   # (kind, label) of the closing ROOT seen

        def flush(stop: int) -> None:
            nonlocal start, closing
            if stop > start:
                blocks.append(self._block(t, len(blocks), start, stop, closing, sec_kind, sec_label))
            start, closing = stop, None

        level, name, type_ = self.level, self.name, self.type     # lists: fast per-item access
        sections = self.sections
        for i in range(n):
            if sections and i in sections:
                flush(i)
                sec_kind, sec_label = sections[i]
            elif closing is not None and level[i] == "ROOT":
                flush(i)
            if closing is None and level[i] == "ROOT":
                kind = _closing_kind(name[i], type_[i])
                if kind is not None:
                    closing = (kind, name[i])
        flush(n)
        return blocks

    def _block(self, tab, index, start, stop, closing, sec_kind, sec_label) -> QnnBlock:
        tab.block[start:stop] = index
        t = self                                   # per-item access on the builder's lists
        roots: dict[str, tuple[float, str]] = {}
        subs: list[tuple[str, str, float, str]] = []
        node_rows: list[int] = []
        for i in range(start, stop):
            if t.level[i] == "ROOT":
                roots.setdefault(t.name[i], (float(t.value[i]), t.unit[i]))
            elif t.type[i] == "NODE":
                node_rows.append(i)
            else:
                p = int(t.parent[i])
                subs.append((t.name[p] if p >= 0 else "", t.name[i], float(t.value[i]), t.unit[i]))
        cycles = np.array([t.value[i] if t.unit[i] == "cycles" else math.nan for i in node_rows],
                          dtype=np.float64)
        if any(t.unit[i] != "cycles" for i in node_rows):
            self._warn(f"block {index}: NODE events not in cycles (value set to NaN)")
        parents = {int(t.parent[i]) for i in node_rows}
        node_parent = None
        if len(parents) == 1:
            p = parents.pop()
            node_parent = t.name[p] if p >= 0 else None
        elif len(parents) > 1:
            node_parent = " | ".join(sorted({t.name[p] for p in parents if p >= 0}))
        if closing is not None:
            kind, label, complete = closing[0], closing[1], True
        else:
            kind = sec_kind or _guess_kind(roots)
            label, complete = sec_label, False
        if sec_label and closing is not None and sec_kind is not None:
            label = sec_label
        return QnnBlock(index=index, kind=kind, label=label, row_start=start, row_stop=stop,
                        complete=complete, roots=roots, sub_events=subs,
                        node_names=[t.name[i] for i in node_rows], node_cycles=cycles,
                        node_parent=node_parent)


def _closing_kind(name: str, type_: str) -> str | None:
    m = _CLOSING_NAME.match(name)
    if m:
        return _PHASE_KIND.get(m.group(1).strip().lower(), "other")
    return _TYPE_KIND.get(str(type_).upper())


def _guess_kind(roots: dict) -> str:
    for name in roots:
        for phase, kind in _PHASE_KIND.items():
            if f"({phase})" in name.lower():
                return kind
    return "other"


def _assign_graphs(blocks: list[QnnBlock], warn) -> tuple[list[list[str]], str | None]:
    """Set graph_index / graph_execute_index / execute_index; return the graphs' NODE names and
    how the graphs were told apart (see the module docstring)."""
    keys: dict[frozenset, int] = {}
    names: list[list[str]] = []
    count: dict[int, int] = {}
    executes = [b for b in blocks if b.kind == "execute"]
    for i, b in enumerate(executes):
        b.execute_index = i
        if not b.node_names:
            continue
        key = frozenset(b.node_names)
        g = keys.get(key)
        if g is None:
            g = keys[key] = len(names)
            names.append(list(b.node_names))
        b.graph_index = g
        b.graph_execute_index = count.get(g, 0)
        count[g] = b.graph_execute_index + 1
    if names:
        return names, "node names"
    if len(executes) < 2:
        return names, None
    n_graphs = _graphs_finalized(blocks)
    n = len(executes)
    if n_graphs is not None and n_graphs > 1:
        if n % n_graphs == 0 and _looks_sequential(executes, n_graphs):
            warn(f"{n_graphs} graphs finalized, but the execute times fall into {n_graphs} separate ranges "
                 f"by position in the file (first {n // n_graphs} blocks, next {n // n_graphs}, ...), not "
                 "by turn: which graph each execute belongs to is not certain, so they are not split and "
                 "their statistics mix the graphs")
            return names, None
        if n % n_graphs == 0:
            for i, b in enumerate(executes):
                b.graph_index, b.graph_execute_index = i % n_graphs, i // n_graphs
            warn(f"{n_graphs} graphs finalized and no per-op (NODE) events: the {n} execute blocks are "
                 f"assigned to graphs by their order (block i -> graph i mod {n_graphs}), assuming each "
                 "inference executes every graph once in the same order; the file names no graph")
            return [[] for _ in range(n_graphs)], "execute order"
        warn(f"{n_graphs} graphs finalized but {n} execute blocks (not a multiple of {n_graphs}), and no "
             "per-op (NODE) events: which graph each execute belongs to cannot be told, so their "
             "statistics mix the graphs")
        return names, None
    period = _alternation_period(executes)
    if period is not None:
        warn(f"execute times alternate with period {period} ({n} execute blocks): probably {period} "
             "graphs executed in turn, but the file names no graph, has no per-op (NODE) events and no "
             "finalize blocks to count them, so they cannot be split and their statistics mix the graphs")
    elif n_graphs is None:
        warn(f"no per-op (NODE) events and no finalize blocks: the file does not show how many graphs "
             f"ran; if the model has several, their {n} execute blocks are mixed here as one graph")
    return names, None


def _graphs_finalized(blocks: list[QnnBlock]) -> int | None:
    """Graphs built, from the finalize blocks: distinct ones each seen once, or repeated as QNN
    hands back every graph finalized so far (g1 | g1 g2 | g1 g2 g3). None: no finalize blocks, or
    a repeat pattern that says nothing certain."""
    seq = [(tuple(b.roots.items()), tuple(b.sub_events))
           for b in blocks if b.kind == "finalize"]
    if not seq:
        return None
    distinct = list(dict.fromkeys(seq))
    d = len(distinct)
    if d == len(seq):
        return d
    if len(seq) != d * (d + 1) // 2:          # checked first: the prefix list grows as d²
        return None
    prefixes = [k for j in range(1, d + 1) for k in distinct[:j]]
    return d if prefixes == seq else None


def _execute_times(executes: list[QnnBlock]) -> np.ndarray | None:
    """Each execute block's accelerator (else QNN execute) µs, or None if some block lacks it."""
    name = next((k for k in ("Accelerator (execute) time", "QNN (execute) time")
                 if all(k in b.roots for b in executes)), None)
    if name is None:
        return None
    v = np.array([b.roots[name][0] for b in executes], dtype=np.float64)
    return None if np.isnan(v).any() else v


def _separated(groups: list[np.ndarray]) -> bool:
    """True if the groups' value ranges do not overlap."""
    groups = sorted(groups, key=lambda g: float(g.min()))
    return all(float(a.max()) < float(b.min()) for a, b in zip(groups, groups[1:]))


def _alternation_period(executes: list[QnnBlock], max_period: int = 8) -> int | None:
    """Smallest period p > 1 (dividing the block count, >= 2 blocks per position) such that the
    blocks at each position mod p have execute times in ranges that do not overlap those of the
    other positions. None when there is no such period (or no time to compare)."""
    v = _execute_times(executes)
    if v is None:
        return None
    n = v.size
    for p in range(2, min(max_period, n // 2) + 1):
        if n % p == 0 and _separated([v[j::p] for j in range(p)]):
            return p
    return None


def _looks_sequential(executes: list[QnnBlock], g: int) -> bool:
    """True if the times separate cleanly into g consecutive runs of blocks but not by turn (i mod g):
    the graphs then probably executed one after the other, not in turn."""
    v = _execute_times(executes)
    if v is None or v.size < 2 * g:
        return False
    k = v.size // g
    return _separated([v[j * k:(j + 1) * k] for j in range(g)]) and not _separated([v[j::g] for j in range(g)])


def parse_number(raw: str, what: str, path: str) -> float:
    """QNN value text -> float; UNKNOWN/empty -> NaN; garbage -> FormatError."""
    s = raw.strip()
    if s.lower() in _NAN_WORDS:
        return math.nan
    try:
        return float(s)
    except ValueError:
        raise FormatError(f"{what}: value {s[:40]!r} is not a number", file=path) from None
