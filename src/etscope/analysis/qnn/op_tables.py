"""Per-op and per-track tables from QHAS and optrace JSON (first inference of a separate
optrace-level run): HMX/HVX/DMA use, DRAM/VTCM bytes, busy cycles."""
from __future__ import annotations

from dataclasses import dataclass, field

from etscope.analysis.qnn.htp_timeline import unit_totals
from etscope.analysis.qnn.result import OPTIONAL


# QHAS values are the file's own (any JSON type: the views check before formatting).
@dataclass(frozen=True)
class QhasResource:
    """One HTP unit (thread) of QHAS's overall summary."""
    type: object
    tid: object
    utilization: object
    cycles_used: object
    timeline_cycles: object
    start_cycle: object
    end_cycle: object
    num_dominant_path_cycles: object


@dataclass(frozen=True)
class QhasOpType:
    """One QNN op type of QHAS: its HTP ops, cycles and bytes."""
    op: object
    num_htp_ops: object
    cycles: object
    percent_active_cycles: object
    dram_read: object
    dram_write: object
    vtcm_read: object
    vtcm_write: object


@dataclass(frozen=True)
class QhasSummary:
    """What a QHAS says of its one inference (a separate optrace-level run), against the SoC's VTCM."""
    path: str
    version: list | None
    note: str
    percent_utilization: object
    percent_idle: object
    time_us: object
    graph_execute_us: object
    inf_per_s: object
    timeline_cycles: object
    total_dram_read: object
    total_dram_write: object
    total_dram: object
    total_vtcm_read: object
    total_vtcm_write: object
    peak_vtcm_alloc: object
    soc: str | None
    vtcm_bytes: int | None
    peak_vtcm_share: float | None
    resources: tuple[QhasResource, ...]
    op_types: tuple[QhasOpType, ...]
    warnings: tuple[str, ...]
    per_call: tuple | None = field(default=None, metadata=OPTIONAL)   # analysis.qnn.report.PerCall


@dataclass(frozen=True)
class OptraceTrack:
    pid: int
    tid: int
    kind: str
    name: str | None
    ops: int
    busy_cycles: float


@dataclass(frozen=True)
class OptraceSummary:
    """Per track of an optrace: its ops and busy cycles (cycles, not µs), idle tracks included."""
    ops: int
    tracks: tuple[OptraceTrack, ...]
    unit: str = "cycles"


def qhas_op_table(qhas) -> dict[str, dict]:
    """Per QNN op name: cycles, DRAM/VTCM bytes, dominant-path cycles, and HMX/HVX/DMA use of the
    HTP ops it became (from htp_op_instances)."""
    out: dict[str, dict] = {}
    seen: dict[str, set] = {}
    for r in qhas.qnn_op_instances_nodes:
        name = r.get("qnn_op")
        if not isinstance(name, str):
            continue
        dp = next((v for k, v in r.items() if k.startswith("num_dominant_path_cycles")), None)
        out[name] = {"cycles": r.get("cycles"), "op_type": r.get("qnn_op_type"),
                     "dram_read": r.get("dram_read"), "dram_write": r.get("dram_write"),
                     "vtcm_read": r.get("vtcm_read"), "vtcm_write": r.get("vtcm_write"),
                     "dominant_path_cycles": dp, "hmx": None, "hvx": None, "dma": None, "htp_ops": []}
    for r in qhas.htp_op_instances:
        name = r.get("qnn_op")
        if not isinstance(name, str):
            continue
        o = out.setdefault(name, {"cycles": None, "op_type": r.get("qnn_op_type"), "dram_read": None,
                                  "dram_write": None, "vtcm_read": None, "vtcm_write": None,
                                  "dominant_path_cycles": None, "hmx": None, "hvx": None, "dma": None,
                                  "htp_ops": []})
        for flag in ("hmx", "hvx", "dma"):
            v = r.get(flag)
            if isinstance(v, bool):
                o[flag] = bool(o[flag]) or v
        htp = r.get("htp_op")
        if isinstance(htp, str) and htp not in seen.setdefault(name, set()):   # a set: one QNN op may
            seen[name].add(htp)                                               # hold 60k HTP ops
            o["htp_ops"].append(htp)
    return out


def optrace_op_table(trace) -> dict[str, dict]:
    """Per QNN op name from an optrace: HTP ops it became, their cycles and HMX/HVX/DMA flags."""
    out: dict[str, dict] = {}
    seen: dict[str, set] = {}
    ev = trace.events
    for i in trace.op_event_indices():
        args = ev.args[i] if isinstance(ev.args[i], dict) else {}
        name = args.get("QNN Op Name")
        if not isinstance(name, str):
            continue
        flags = [f for f in args.get("Flags") or [] if isinstance(f, str)]
        o = out.setdefault(name, {"cycles": 0.0, "op_type": args.get("QNN Op Type"), "dram_read": None,
                                  "dram_write": None, "vtcm_read": None, "vtcm_write": None,
                                  "dominant_path_cycles": None, "hmx": False, "hvx": False, "dma": False,
                                  "htp_ops": []})
        dur = ev.dur_cycles[i]
        o["cycles"] += float(dur) if dur == dur else 0.0
        o["hmx"] = o["hmx"] or any("hmx" in f for f in flags)
        o["hvx"] = o["hvx"] or any("hvx" in f for f in flags)
        o["dma"] = o["dma"] or any(f.startswith("dma") for f in flags)
        htp = args.get("HTP Op Type") or ev.name[i]
        if isinstance(htp, str) and htp not in seen.setdefault(name, set()):
            seen[name].add(htp)
            o["htp_ops"].append(htp)
    return out


def merge_op_tables(primary: dict | None, secondary: dict | None) -> dict | None:
    """QHAS first; optrace fills what QHAS lacks (e.g. trimmed QHAS without htp_op_instances)."""
    if not primary:
        return secondary
    if not secondary:
        return primary
    merged = {k: dict(v) for k, v in primary.items()}
    for name, o in secondary.items():
        m = merged.setdefault(name, dict(o))
        for k, v in o.items():
            if m.get(k) in (None, []):
                m[k] = v
    return merged


def qhas_summary(qhas, vtcm_bytes: int | None = None, soc: str | None = None,
                 per_call: tuple | None = None) -> QhasSummary:
    """``per_call``: beside QHAS's one inference, this ETDump's real calls (``analysis.qnn.report``)."""
    o = qhas.overall or {}
    resources = tuple(QhasResource(*(r.get(k) for k in QhasResource.__dataclass_fields__))
                      for r in o.get("htp_resources") or [] if isinstance(r, dict))
    peak = o.get("peak_vtcm_alloc")
    return QhasSummary(
        path=qhas.path, version=list(qhas.version) if qhas.version else None,
        note="QHAS describes the first inference of a separate optrace-level run only",
        percent_utilization=o.get("percent_utilization"), percent_idle=o.get("percent_idle"),
        time_us=o.get("time_us"), graph_execute_us=o.get("graph_execute_us"),
        inf_per_s=o.get("inf_per_s"), timeline_cycles=o.get("timeline_cycles"),
        total_dram_read=o.get("total_dram_read"), total_dram_write=o.get("total_dram_write"),
        total_dram=o.get("total_dram"), total_vtcm_read=o.get("total_vtcm_read"),
        total_vtcm_write=o.get("total_vtcm_write"), peak_vtcm_alloc=peak,
        soc=soc, vtcm_bytes=vtcm_bytes,
        peak_vtcm_share=(peak / vtcm_bytes) if isinstance(peak, (int, float)) and vtcm_bytes else None,
        resources=resources,
        op_types=tuple(QhasOpType(*(r.get(k) for k in QhasOpType.__dataclass_fields__)) for r in qhas.qnn_op_types),
        warnings=tuple(qhas.warnings), per_call=per_call)


def optrace_summary(trace) -> OptraceSummary:
    """Per-track ops and busy cycles from an optrace (cycles, not µs), idle tracks included."""
    totals = unit_totals(trace)
    tracks = []
    for (pid, tid), kind in sorted(trace.tracks.items()):
        ops, busy = totals.get((pid, tid), (0, 0.0))
        tracks.append(OptraceTrack(
            pid=int(pid), tid=int(tid), kind=kind,
            name=trace.thread_names.get((pid, tid)) if isinstance(trace.thread_names, dict) else None,
            ops=ops, busy_cycles=busy))
    return OptraceSummary(ops=sum(ops for ops, _ in totals.values()), tracks=tuple(tracks))


