"""QNN files without an ETDump (issue 15 item 4): what they tell, what they cannot, and a summary
shaped like ``analysis.views.summary``'s so every view (report, trace, export, sql) works from them.

Each QNN file answers part of the user's questions:
- QNN profile (``--qnn-csv``: qnn-profile-viewer CSV/text/JSON): per execute, the nested QNN times
  and per-op cycles (profile level detailed) of each graph;
- optrace: one inference, op by op on the HMX/HVX/DMA units, in cycles;
- QHAS: that inference summarised: per-op cycles and memory, unit utilisation, VTCM, DRAM;
- runtrace: per execute, the measured HTP clock and its spans in µs.
None has ExecuTorch's own events: Method::execute, DELEGATE_CALL, CPU fallback kernels.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from etscope.analysis.qnn.result import QnnReport

KINDS = ("qnn_csv", "optrace", "qhas", "runtrace")


def missing(have: set[str]) -> list[str]:
    """What the given QNN inputs cannot show, in plain words (``have``: the kinds of KINDS given)."""
    out = ["no ETDump: no Method::execute, DELEGATE_CALL or CPU fallback (OPERATOR_CALL) times, no events, "
           "ops or runs tables; give the run's ETDump for those"]
    if "qnn_csv" not in have:
        out.append("no QNN profile (--qnn-csv): no per-execute QNN/RPC/accelerator times")
    if not have & {"qhas", "optrace"}:
        out.append("no QHAS/optrace: HMX/HVX use, VTCM and DRAM traffic per op are unknown")
    elif "qnn_csv" not in have:
        out.append("QHAS/optrace cover one inference of a separate optrace-level run")
    if "runtrace" not in have and "qnn_csv" not in have:
        out.append("no runtrace or QNN profile: no HTP clock, so cycles stay cycles (no µs)")
    return out


QNN_GRAPH_IO_TYPES = ("Input", "Output")     # QNN's op types of a graph's input / output pseudo-ops


def op_findings(rows: list[dict]) -> list[str]:
    """Per-op findings from per-op rows (``analysis.qnn.tables`` qnn_ops rows): where the cycles go
    and which ops ran without HMX (the matrix unit)."""
    timed = [r for r in rows if isinstance(r.get("cycles"), (int, float)) and r["cycles"] > 0]
    if not timed:
        return []
    total = sum(r["cycles"] for r in timed)
    top = max(timed, key=lambda r: r["cycles"])
    out = [f"{len(rows)} QNN ops, {total:,.0f} cycles in all; the largest is {top['qnn_name']} "
           f"({top['cycles']:,.0f} cycles, {top['cycles'] / total:.0%})."]
    # Ops that compute (HMX or HVX flagged), QNN's graph I/O pseudo-ops left out: those (QNN op types
    # Input/Output: slices, DMA, layout) and pure data movement / sync never use HMX, so counting them
    # "without HMX" would be a finding true by construction.
    known = [r for r in timed if r.get("hmx") is not None and r.get("op_type") not in QNN_GRAPH_IO_TYPES
             and (r["hmx"] or r.get("hvx"))]
    if known:
        no_hmx = [r for r in known if not r["hmx"]]
        share = sum(r["cycles"] for r in no_hmx) / total
        if no_hmx:
            out.append(f"{len(known) - len(no_hmx)} of {len(known)} computing ops used HMX (matrix unit); the "
                       f"{len(no_hmx)} on HVX only take {share:.0%} of the cycles, largest "
                       f"{max(no_hmx, key=lambda r: r['cycles'])['qnn_name']}.")
        else:
            out.append(f"All {len(known)} computing ops used HMX (matrix unit); QNN's Input/Output and "
                       "data-movement ops are left out (they never use it).")
    return out


def unit_findings(rows: list[dict], optrace_shown: bool = False) -> list[str]:
    """Per-unit findings from ``qnn_units`` rows: the busy units (idle tracks are not listed). QHAS
    and optrace describe the same inference: with both, QHAS's rows (with utilisation) are used.
    ``optrace_shown``: the view already lists the optrace's units (the HTP units table, from
    ``analysis.qnn.htp_timeline``), so its rows are not repeated here as sentences."""
    if optrace_shown or any(r.get("file") == "qhas" for r in rows):
        rows = [r for r in rows if r.get("file") == "qhas"]
    out = []
    for r in rows:
        busy = r.get("busy_cycles")
        if not isinstance(busy, (int, float)) or busy <= 0:
            continue
        what = f"{r.get('unit')} (tid {r.get('tid')}"
        what += f", pid {r['pid']})" if r.get("pid") is not None else ")"
        if r.get("utilization_pct") is not None:
            out.append(f"QHAS: {what} busy {busy:,.0f} cycles, {r['utilization_pct']:.1f}% of its timeline.")
        else:
            out.append(f"optrace: {what} busy {busy:,.0f} cycles over {r.get('ops') or 0} op(s).")
    idle = sum(1 for r in rows if not r.get("busy_cycles"))
    if idle:
        out.append(f"{idle} unit track(s) had no ops (not listed).")
    return out


@dataclass(frozen=True)
class PartitionFacts:
    """One partition of the QNN files: executes, nested totals (p50) and per-op rows."""
    key: str
    runs: int
    qnn_execute_us: float | None
    accel_us: float | None
    accel_cycles: float | None
    per_op_rows: int


@dataclass(frozen=True)
class OptraceFacts:
    ops: int
    busy_tracks: int


@dataclass(frozen=True)
class QhasFacts:
    utilization_pct: float
    timeline_cycles: float


@dataclass(frozen=True)
class FileFacts:
    """What each given QNN file shows here, as numbers (``render.guide`` says it in words)."""
    partitions: tuple[PartitionFacts, ...]
    optrace: OptraceFacts | None
    qhas: QhasFacts | None
    runtrace_clock_mhz: float | None


@dataclass(frozen=True)
class QnnOnly:
    """Which QNN files were given (no ETDump), what they cannot show, and what each shows."""
    files: tuple[str, ...]
    missing: tuple[str, ...]
    facts: FileFacts


def qnn_only(qnn: QnnReport | None, inputs: dict[str, str]) -> QnnOnly:
    """The ``qnn_only`` part of the summary of QNN files alone (``analysis.views.summary``)."""
    have = {k for k in KINDS if k in inputs}
    return QnnOnly(files=tuple(sorted(have)), missing=tuple(missing(have)), facts=facts(qnn, have))


def facts(qnn: QnnReport | None, have: set[str]) -> FileFacts:
    """What each given QNN file shows here, as numbers (``render.guide`` says it in words)."""
    ot, q, rt = (qnn.optrace, qnn.qhas, qnn.runtrace) if qnn is not None else (None, None, None)
    return FileFacts(
        partitions=tuple(PartitionFacts(key=p.key, runs=p.runs, qnn_execute_us=p.qnn_execute_us, accel_us=p.accel_us,
                                        accel_cycles=p.accel_cycles, per_op_rows=len(p.ops))
                         for p in (qnn.partitions if qnn is not None else ())),
        optrace=None if not ot else OptraceFacts(ops=ot.ops, busy_tracks=sum(1 for t in ot.tracks if t.busy_cycles)),
        qhas=None if not q or q.percent_utilization is None else QhasFacts(
            utilization_pct=q.percent_utilization, timeline_cycles=q.timeline_cycles or 0),
        runtrace_clock_mhz=(rt.clock_mhz or None) if rt is not None else None,
    )


@dataclass(frozen=True)
class FileOp:
    """One QNN op of QHAS/optrace alone (one inference): its cycles, share and units."""
    partition: None
    instruction_id: None
    from_: str = field(metadata={"json": "from"})
    qnn_name: str = ""
    op_type: str | None = None
    runs: int = 1
    cycles: float | None = None
    share: float | None = None
    htp_ops: str | None = None
    hmx: bool | None = None
    hvx: bool | None = None
    dma: bool | None = None
    dram_read: float | None = None
    dram_write: float | None = None
    vtcm_read: float | None = None
    vtcm_write: float | None = None


@dataclass(frozen=True)
class FilesView:
    """What ``etscope qnn`` shows of QNN files with no partition to join to."""
    from_: str = field(metadata={"json": "from"})
    ops: tuple[FileOp, ...] = ()
    findings: tuple[str, ...] = ()       # per-op and per-unit sentences of what the files hold
    missing: tuple[str, ...] = ()


def files_view(qnn: QnnReport, file_ops: dict | None, source: str, have: set[str]) -> FilesView:
    """What ``etscope qnn`` shows of QNN files that have no partition to join to (no ETDump and no
    QNN profile): per-op rows and findings from QHAS/optrace, per-unit findings, what is missing."""
    from etscope.analysis.qnn.tables import file_op_rows, unit_rows

    ops = file_op_rows(file_ops, source)
    findings = op_findings(ops) + unit_findings(unit_rows(qnn), optrace_shown=True)
    rt = qnn.runtrace
    if rt is not None and rt.clock_mhz:
        per = [f"{m:,.0f}" for m in rt.clock_mhz_per_execute or []]
        findings.append(f"runtrace: HTP clock {rt.clock_mhz:,.0f} MHz measured (p50 of its Graph Execute spans"
                        + (f"; per execute {', '.join(per)} MHz" if per else "") + ").")
    return FilesView(from_=source or ", ".join(sorted(have)),
                     ops=tuple(FileOp(**{("from_" if k == "from" else k): v for k, v in o.items()}) for o in ops),
                     findings=tuple(findings), missing=tuple(missing(have)))
