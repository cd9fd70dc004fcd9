"""Inside the HTP: what each QNN op really ran, HTP op by HTP op, from QHAS (``htp_op_instances``,
``dominant_path_htp_<N>``) or, without them, from an optrace's op events.

Every HTP op gets a unit and a category from **its own flags** (QHAS booleans ``hmx``, ``hvx``,
``dma``, ``dma_wait``, ``dma_set``, ``sync``, ``fmt_change``, ``ref_op``; optrace ``Flags``
strings ``uses_hmx``, ``uses_hvx``, ``dma``, ...), never from its name:

- unit: HMX (``hmx``), HVX (``hvx``), DMA (``dma``/``dma_wait``/``dma_set``), sync (``sync``);
  several units, or none, is an unknown combination and is shown as such (``hmx+hvx``, ``none``);
- category: ``layout`` (``fmt_change`` on one unit: a layout conversion, e.g. flat <-> crouton),
  ``hmx`` / ``hvx`` (compute on that unit), ``dma`` (data movement: transfers, waits for them and
  DMA checkpoints), ``sync`` (synchronisation), ``unknown`` (any other combination; its label
  names the flags).

Idle on the dominant path: QHAS's ``dominant_path_htp_0`` lists the critical path op by op with
rows that are no HTP op instance ("Accumulated Idle", op id 0x0: recognised by their op id matching
no instance, not by name); each such gap is counted against the QNN op of the next op on the path
(the op the HTP waited to start). The optrace has no such rows: idle stays unknown there.

Cycles are QHAS's own (first inference of a separate optrace-level run). Bytes (DRAM/VTCM read and
write) come from QHAS only; the optrace carries none, and no ``fmt_change`` flag in the real files
(its layout conversions then show as HVX compute: said in ``notes``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

# Category order: the stacked bars' order, left to right.
CATEGORIES = ("hmx", "hvx", "layout", "dma", "sync", "unknown", "idle")
CATEGORY_LABELS = {
    "hmx": "compute on HMX", "hvx": "compute on HVX", "layout": "layout conversion",
    "dma": "data movement (DMA)", "sync": "synchronisation", "unknown": "unknown flag combination",
    "idle": "idle on the dominant path",
}
_UNIT_OF_FLAG = {"hmx": "HMX", "hvx": "HVX", "dma": "DMA", "dma_wait": "DMA", "dma_set": "DMA", "sync": "sync"}
_CATEGORY_OF_UNIT = {"HMX": "hmx", "HVX": "hvx", "DMA": "dma", "sync": "sync"}
QHAS_FLAGS = ("hmx", "hvx", "dma", "dma_wait", "dma_set", "sync", "fmt_change", "ref_op")
# optrace Flags strings -> the QHAS flag names (same meaning; seen in the real SM8650 optrace).
_OPTRACE_FLAGS = {"uses_hmx": "hmx", "uses_hvx": "hvx", "dma": "dma", "dma_wait": "dma_wait",
                  "dma_set": "dma_set", "sync": "sync", "fmt_change": "fmt_change", "format_change": "fmt_change",
                  "ref_op": "ref_op", "reference_op": "ref_op"}
BYTE_FIELDS = ("dram_read", "dram_write", "vtcm_read", "vtcm_write")
# A QHAS / optrace can hold tens of thousands of HTP ops: per QNN op at most this many are kept as
# rows (the largest by cycles); the totals always cover all of them.
MAX_HTP_OPS_PER_QNN_OP = 64


def classify(flags) -> tuple[str, str, str]:
    """(unit, category, label) of an HTP op from the set of its flags."""
    flags = set(flags)
    units = sorted({_UNIT_OF_FLAG[f] for f in flags if f in _UNIT_OF_FLAG})
    unit = units[0] if len(units) == 1 else "+".join(units) if units else "none"
    if len(units) == 1 and "fmt_change" in flags:
        category = "layout"
    elif len(units) == 1:
        category = _CATEGORY_OF_UNIT[unit]
    else:
        category = "unknown"
    label = CATEGORY_LABELS[category]
    if category == "unknown":
        label = f"unknown: flags {'+'.join(sorted(flags)) or 'none set'}"
    return unit, category, label


@dataclass(frozen=True)
class HtpOp:
    """One HTP op instance of a QNN op (cycles of the first inference)."""
    qnn_op: str
    htp_op: str
    op_id: str | None
    unit: str                 # HMX | HVX | DMA | sync | none | a+b (unknown combination)
    category: str             # one of CATEGORIES but idle
    label: str                # the category in words (unknown: the flags)
    flags: tuple[str, ...]    # flags set, QHAS names
    thread: int | None        # tid (HMX 256, HVX 512/514 on SM8650)
    cycles: float
    dominant_path_cycles: float | None
    dram_read: float | None
    dram_write: float | None
    vtcm_read: float | None
    vtcm_write: float | None
    start_cycle: float | None


@dataclass(frozen=True)
class CategoryCycles:
    """Cycles of one category (``CATEGORIES``) of a QNN op."""
    category: str
    cycles: float


@dataclass(frozen=True)
class GraphCategory:
    """Cycles of one category of the whole graph, in words, with its share (of the active cycles;
    idle: of the timeline; None: unknown)."""
    category: str
    label: str
    cycles: float
    share: float | None


@dataclass(frozen=True)
class QnnOpHtp:
    """One QNN op: its HTP ops, cycles per category, bytes, and the graph node it was joined to."""
    qnn_op: str
    qnn_op_type: str | None
    cycles: float                              # sum of its HTP ops' cycles (QHAS: = qnn_op_instances_nodes)
    dominant_path_cycles: float | None
    idle_cycles: float | None                  # dominant-path idle before its ops (None: unknown)
    by_category: tuple[CategoryCycles, ...]    # in CATEGORIES order, idle included
    dram_read: float | None
    dram_write: float | None
    vtcm_read: float | None
    vtcm_write: float | None
    htp_ops: tuple[HtpOp, ...]
    htp_ops_total: int                         # all of them (htp_ops keeps MAX_HTP_OPS_PER_QNN_OP)
    node: str | None = None                    # ETRecord node, when the QNN op joined the graph
    source: str | None = None                  # its source line
    # Its dominant-path cycles per category (what its latency waited on; a DMA wait that overlaps
    # other work counts here only for its part on the path); None without dominant-path cycles.
    dominant_by_category: tuple[CategoryCycles, ...] | None = None

    def category_cycles(self, category: str) -> float:
        return next((x.cycles for x in self.by_category if x.category == category), 0.0)

    @property
    def dram_bytes(self) -> float | None:
        return _sum_known(self.dram_read, self.dram_write)

    @property
    def vtcm_bytes(self) -> float | None:
        return _sum_known(self.vtcm_read, self.vtcm_write)


@dataclass(frozen=True)
class HtpBreakdown:
    """Every QNN op of one QHAS / optrace file, and the whole graph's split by category."""
    path: str
    source: str                                 # "qhas" | "optrace"
    partition: str | None                       # the partition key it describes (None: not joined)
    ops: tuple[QnnOpHtp, ...]                   # by cycles, largest first
    by_category: tuple[GraphCategory, ...]      # the graph's active cycles per category (+ idle)
    active_cycles: float                        # sum of every HTP op's cycles
    timeline_cycles: float | None               # QHAS timeline (= the dominant path's cycles)
    idle_cycles: float | None                   # dominant-path idle (None: unknown)
    notes: tuple[str, ...] = ()
    # Derived, written in the JSON for the views: the answer in one sentence, the category labels, the unit.
    headline: str = field(init=False)
    category_labels: dict = field(init=False)
    unit: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "headline", self._headline())
        object.__setattr__(self, "category_labels", dict(CATEGORY_LABELS))
        object.__setattr__(self, "unit", "cycles")

    def category_cycles(self, category: str) -> float:
        return next((x.cycles for x in self.by_category if x.category == category), 0.0)

    def share(self, category: str) -> float | None:
        """A category's share of the active cycles (idle: of the timeline)."""
        return _share(category, self.category_cycles(category), self.active_cycles, self.idle_cycles,
                      self.timeline_cycles)

    def op(self, qnn_op: str) -> QnnOpHtp | None:
        return next((o for o in self.ops if o.qnn_op == qnn_op), None)

    def _headline(self) -> str:
        """The answer in one sentence: where the active cycles go, and what the largest op is."""
        cats = sorted(((x.category, x.cycles) for x in self.by_category if x.category != "idle"),
                      key=lambda cv: -cv[1])
        parts = ", ".join(f"{CATEGORY_LABELS[c]} {self.share(c):.1%}" for c, _ in cats if self.share(c) is not None)
        out = f"Of {self.active_cycles:,.0f} active HTP cycles: {parts or 'none'}."
        top = next((o for o in self.ops if o.cycles), None)
        if top is not None:
            c, v = max(((x.category, x.cycles) for x in top.by_category if x.category != "idle"),
                       key=lambda cv: cv[1])
            out += (f" The largest QNN op, {top.qnn_op} ({top.cycles:,.0f} cycles), is {v / top.cycles:.0%} "
                    f"{CATEGORY_LABELS[c]}.")
        if self.idle_cycles and self.share("idle") is not None:
            out += (f" The dominant path idles {self.idle_cycles:,.0f} of {self.timeline_cycles:,.0f} timeline "
                    f"cycles ({self.share('idle'):.1%}).")
        elif self.idle_cycles:       # a QHAS without timeline_cycles: the idle, not its share
            out += f" The dominant path idles {self.idle_cycles:,.0f} cycles (the file gives no timeline length)."
        return out


def _share(category: str, cycles: float, active: float, idle: float | None, timeline: float | None) -> float | None:
    """A category's share of the active cycles (idle: of the timeline; None: unknown)."""
    if category == "idle":
        return idle / timeline if idle is not None and timeline else None
    return cycles / active if active else None


def _sum_known(*vals) -> float | None:
    known = [v for v in vals if v is not None]
    return float(sum(known)) if known else None


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


# ---- from QHAS ------------------------------------------------------------------------------------
def from_qhas(qhas, partition: str | None = None) -> HtpBreakdown | None:
    """The breakdown of a QHAS (None when its ``htp_op_instances`` table is empty, e.g. trimmed)."""
    rows = [r for r in qhas.htp_op_instances if isinstance(r.get("qnn_op"), str)]
    if not rows:
        return None
    ops = []
    for r in rows:
        flags = tuple(f for f in QHAS_FLAGS if r.get(f) is True or r.get(f) == 1)
        unit, category, label = classify(flags)
        ops.append(HtpOp(
            qnn_op=r["qnn_op"], htp_op=str(r.get("htp_op") or "?"), op_id=r.get("op_id"), unit=unit,
            category=category, label=label, flags=flags,
            thread=r.get("tid") if isinstance(r.get("tid"), int) else None,
            cycles=_num(r.get("cycles")) or 0.0, dominant_path_cycles=_num(r.get("num_dominant_path_cycles")),
            **{k: _num(r.get(k)) for k in BYTE_FIELDS}, start_cycle=_num(r.get("start_cycle"))))
    types = {r.get("qnn_op"): r.get("qnn_op_type") for r in qhas.qnn_op_instances_nodes}
    for r in rows:
        types.setdefault(r["qnn_op"], r.get("qnn_op_type"))
    idle = _dominant_idle(qhas.dominant_path_htp_0, {o.op_id for o in ops if o.op_id})
    timeline = _num((qhas.overall or {}).get("timeline_cycles"))
    return _breakdown(qhas.path, "qhas", partition, ops, types, idle, timeline, ())


def _dominant_idle(path_rows: list[dict], op_ids: set) -> dict[str, float] | None:
    """Idle cycles on the dominant path per QNN op (the op of the next HTP op on the path); None
    when the file has no dominant path."""
    rows = sorted((r for r in path_rows if _num(r.get("start_cycle")) is not None), key=lambda r: r["start_cycle"])
    if not rows:
        return None
    out: dict[str, float] = {}
    pending = 0.0
    for r in rows:
        cyc = _num(r.get("dp_cycles"))
        if cyc is None:
            cyc = _num(r.get("cycles")) or 0.0
        if r.get("op_id") not in op_ids:           # no HTP op instance: a gap on the path
            pending += cyc
            continue
        if pending and isinstance(r.get("qnn_op"), str):
            out[r["qnn_op"]] = out.get(r["qnn_op"], 0.0) + pending
            pending = 0.0
    if pending:                                    # idle after the last op: the graph's end
        out["(after the last op)"] = out.get("(after the last op)", 0.0) + pending
    return out


# ---- from optrace ---------------------------------------------------------------------------------
def from_optrace(trace, partition: str | None = None) -> HtpBreakdown | None:
    """The breakdown of an optrace's executed op events (None without any)."""
    ev = trace.events
    ops = []
    types: dict[str, str | None] = {}
    unknown_flags: set[str] = set()
    for i in trace.op_event_indices():
        args = ev.args[i] if isinstance(ev.args[i], dict) else {}
        name = args.get("QNN Op Name")
        if not isinstance(name, str):
            continue
        raw = [f for f in args.get("Flags") or [] if isinstance(f, str)]
        unknown_flags |= {f for f in raw if f not in _OPTRACE_FLAGS}
        flags = tuple(sorted({_OPTRACE_FLAGS[f] for f in raw if f in _OPTRACE_FLAGS}, key=QHAS_FLAGS.index))
        unit, category, label = classify(flags)
        dur = _num(ev.dur_cycles[i])
        tid = int(ev.tid[i])
        ops.append(HtpOp(
            qnn_op=name, htp_op=str(args.get("HTP Op Type") or ev.name[i]), op_id=args.get("ID") if isinstance(
                args.get("ID"), str) else None, unit=unit, category=category, label=label, flags=flags,
            thread=tid if tid >= 0 else None, cycles=dur or 0.0,
            dominant_path_cycles=_num(args.get("Dominant Path Cycles")),
            dram_read=None, dram_write=None, vtcm_read=None, vtcm_write=None,
            start_cycle=_num(args.get("Start Cycle"))))
        types.setdefault(name, args.get("QNN Op Type") if isinstance(args.get("QNN Op Type"), str) else None)
    if not ops:
        return None
    notes = ["from the optrace: no DRAM/VTCM bytes and no dominant-path idle (QHAS has them)"]
    if not any("fmt_change" in o.flags for o in ops):
        notes.append("the optrace flags no layout conversion (fmt_change): conversions on HVX show as HVX "
                     "compute; QHAS tells them apart")
    if unknown_flags:
        notes.append("optrace flags not known here, ignored: " + ", ".join(sorted(unknown_flags)[:8]))
    return _breakdown(trace.path, "optrace", partition, ops, types, None, None, tuple(notes))


# ---- shared -------------------------------------------------------------------------------------
def _breakdown(path, source, partition, ops: list[HtpOp], types: dict, idle: dict | None,
               timeline: float | None, notes: tuple) -> HtpBreakdown:
    by_op: dict[str, list[HtpOp]] = {}
    for o in ops:
        by_op.setdefault(o.qnn_op, []).append(o)
    rows = []
    for name, its in by_op.items():
        cats = {c: 0.0 for c in CATEGORIES}
        for o in its:
            cats[o.category] += o.cycles
        op_idle = None if idle is None else idle.get(name, 0.0)
        cats["idle"] = op_idle or 0.0
        dp = [o.dominant_path_cycles for o in its if o.dominant_path_cycles is not None]
        dp_cats = None
        if dp:
            acc = {c: 0.0 for c in CATEGORIES}
            for o in its:
                acc[o.category] += o.dominant_path_cycles or 0.0
            dp_cats = tuple(CategoryCycles(c, acc[c]) for c in CATEGORIES if acc[c])
        kept = tuple(sorted(its, key=lambda o: -o.cycles)[:MAX_HTP_OPS_PER_QNN_OP]) if len(its) > MAX_HTP_OPS_PER_QNN_OP \
            else tuple(its)
        rows.append(QnnOpHtp(
            qnn_op=name, qnn_op_type=types.get(name), cycles=float(sum(o.cycles for o in its)),
            dominant_path_cycles=float(sum(dp)) if dp else None, idle_cycles=op_idle,
            by_category=tuple(CategoryCycles(c, cats[c]) for c in CATEGORIES if cats[c]),
            **{k: _sum_known(*(getattr(o, k) for o in its)) for k in BYTE_FIELDS},
            htp_ops=kept, htp_ops_total=len(its), dominant_by_category=dp_cats))
    if idle:
        for name, cyc in idle.items():          # idle before no op of this file's (end of graph)
            if name not in by_op:
                rows.append(QnnOpHtp(qnn_op=name, qnn_op_type=None, cycles=0.0, dominant_path_cycles=None,
                                     idle_cycles=cyc, by_category=(CategoryCycles("idle", cyc),), dram_read=None,
                                     dram_write=None, vtcm_read=None, vtcm_write=None, htp_ops=(), htp_ops_total=0))
    rows.sort(key=lambda o: -(o.cycles + (o.idle_cycles or 0.0)))
    total = {c: 0.0 for c in CATEGORIES}
    for o in ops:
        total[o.category] += o.cycles
    idle_total = None if idle is None else float(sum(idle.values()))
    total["idle"] = idle_total or 0.0
    active = float(sum(o.cycles for o in ops))
    return HtpBreakdown(path=str(path), source=source, partition=partition, ops=tuple(rows),
                        by_category=tuple(GraphCategory(c, CATEGORY_LABELS[c], total[c],
                                                        _share(c, total[c], active, idle_total, timeline))
                                          for c in CATEGORIES if total[c]),
                        active_cycles=active, timeline_cycles=timeline, idle_cycles=idle_total, notes=notes)


def joined(b: HtpBreakdown, partition) -> HtpBreakdown:
    """``b`` as the breakdown of ``partition`` (``analysis.qnn.partition_result.Partition``): its
    key, and each QNN op joined to the partition's per-op row (ETRecord node and source line) by
    base name (``MatMul_0`` of ``MatMul_0:OpId_18 (cycles)``)."""
    by_base = {}
    for r in partition.ops:
        if r.base and r.node:
            by_base.setdefault(r.base, r)
    ops = tuple(replace(o, node=by_base[o.qnn_op].node, source=by_base[o.qnn_op].source)
                if o.qnn_op in by_base else o for o in b.ops)
    return replace(b, partition=partition.key, ops=ops)


def breakdown(qhas=None, optrace=None, partition: str | None = None) -> HtpBreakdown | None:
    """QHAS's breakdown when it has HTP op instances, else the optrace's, else None."""
    b = from_qhas(qhas, partition) if qhas is not None else None
    if b is None and optrace is not None:
        b = from_optrace(optrace, partition)
    return b
