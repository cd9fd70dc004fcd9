"""The summary of one profile as plain data (the JSON of ``etscope summary --json``)."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from etscope import profile as P
from etscope.analysis.ops import per_op as ops_analysis
from etscope.analysis.ops import placement
from etscope.analysis.qnn.result import QnnReport

SCHEMA = "etscope.summary/1"


def summarize(profile: P.Profile, top: int = 10, runtrace=None) -> dict:
    """The summary, running the op table and (for QNN programs) the QNN analysis it needs."""
    from etscope.analysis import qnn

    report = qnn.qnn_report(profile, runtrace=runtrace) if qnn.qnn_instructions(profile) else None
    soc = None
    if profile.pte is not None:   # the compile-spec reader (~15 ms to import) only when there is a .pte
        from etscope.formats.qnn_compile_spec import soc_from_pte

        soc = soc_from_pte(profile.pte)
    return summary_of(profile, ops_analysis.op_table(profile), report, soc, top)


def summary_of(profile: P.Profile, ops: list[dict], qnn_report: dict | None, soc: dict | None,
               top: int = 10) -> dict:
    """The summary from analyses already made: the op table, the QNN report (None when the program
    has no QNN partition) and the QNN compile spec of the .pte (``soc_from_pte``)."""
    lat = placement.latency_summary(profile)
    rows = placement.breakdown(profile)
    fallback = placement.fallback_ops(profile)
    return {
        "schema": SCHEMA,
        "inputs": dict(profile.sources),
        "method": profile.method,
        "phase": phase_facts(profile),
        "etdump": _file_facts(profile),
        "runs": lat,
        "breakdown": rows,
        "fallback_ops": fallback,
        "top_fallback_op_types": _top_op_types(profile, fallback, top),
        "delegate_calls": delegate_calls(profile, ops),
        "load": load_events(profile),
        "memory": memory(profile),
        "qnn": qnn_brief(qnn_report),
        "qnn_compile": soc if profile.pte is not None else None,
        "warnings": list(profile.warnings),
    }


def phase_facts(profile: P.Profile) -> dict | None:
    """The phase these runs are, when the profile holds one phase's runs (``--phase``)."""
    ph = profile.phase
    if ph is None:
        return None
    return {"name": ph.name, "method": ph.method, "runs": list(ph.runs), "of_runs": ph.of_runs, "how": ph.how}


@dataclass(frozen=True)
class QnnBrief:
    """One QNN partition in the summary: its nested totals (p50), clock, and the nesting picture
    (``analysis.qnn.partition_result.Partition`` has every figure; ``etscope qnn`` details them)."""
    instruction_id: int | None
    runs: int
    delegate_call_ms: float | None
    qnn_execute_us: float | None
    accel_us: float | None
    accel_excl_wait_us: float | None
    accel_cycles: float | None
    clock_mhz_est: float | None
    clock_mhz_est_range: tuple
    cold_runs: tuple
    accumulating: bool
    clock_basis: str
    clock_bound: str | None
    clock_mhz_bounds: tuple
    clock_mhz_est_per_run_range: tuple | None
    clock_source: str | None
    clock_mhz_measured: float | None
    clock_mhz_used: float | None
    checks_failed: tuple
    ops: int
    headline: str
    nesting: object                 # analysis.qnn.nesting.Nesting


def qnn_brief(report: QnnReport | None) -> list[QnnBrief] | None:
    """Per QNN partition, the nested totals (p50): what `etscope qnn` details."""
    if report is None:
        return None
    copied = [f.name for f in fields(QnnBrief) if f.name not in ("checks_failed", "ops")]
    return [QnnBrief(**{k: getattr(p, k) for k in copied}, checks_failed=tuple(c.check for c in p.checks if not c.ok),
                     ops=len(p.ops)) for p in report.partitions]


def _file_facts(profile: P.Profile) -> dict:
    """The ETDump as a file; when it holds several methods' runs, also the events of this one's;
    when backend events accumulated across executes, how many older copies were removed."""
    data, split, acc = profile.etdump, profile.method_split, profile.accumulation
    removed = acc.total_removed if acc else 0
    out = {"version": data.version, "run_data": len(data.runs),
           "events": split.file_events if split else data.event_count + removed, "bytes": data.size_bytes,
           "events_analysed": data.event_count, "accumulated_copies_removed": removed}
    if split:
        out["events_of_method"] = data.event_count + removed
    return out


def delegate_calls(profile: P.Profile, table: list[dict]) -> list[dict]:
    """Each delegate instruction with its wall time and what is logged inside it (``table``: the
    op table)."""
    rows = []
    inner_of: dict[int, list[dict]] = {}     # grouped once: a scan of the table per call was calls x rows
    for x in table:
        if x["level"] == 1:
            inner_of.setdefault(x["instruction_id"], []).append(x)
    for r in table:
        if r["role"] != "delegate_call":
            continue
        inner = inner_of.get(r["instruction_id"], [])
        ins = profile.instructions.get(r["instruction_id"])
        rows.append({"instruction_id": r["instruction_id"], "backend": r["placement"],
                     "backend_from": ins.backend_from if ins else None,
                     "p50_ms": r["p50_ms"], "mean_ms": r["mean_ms"], "share": r["share"],
                     "inner_events": len(inner),
                     "inner_units": sorted({x["unit"] for x in inner}),
                     "op_types": ins.op_types if ins else []})
    return rows


def load_events(profile: P.Profile) -> list[dict]:
    """Events outside the Execute runs (Program::load_method, Method::init)."""
    out = []
    for s in ops_analysis.event_stats(profile):
        if s["block"] == "Default" and s["unit"] == "ns":
            out.append({"name": s["name"], "ms": s["total_ms"], "count": s["runs"]})
    return out


def memory(profile: P.Profile) -> dict:
    """Planned memory from the .pte and allocation events from the ETDump, in bytes."""
    out: dict = {"planned_bytes": None, "planned_buffers": None, "allocation_events": 0,
                 "allocated_bytes_per_run": None, "delegate_blob_bytes": None}
    pte = profile.pte
    if pte is not None and profile.method:
        for m in pte.methods:
            if m.name == profile.method:
                sizes = [int(s) for s in m.non_const_buffer_sizes]
                out["planned_buffers"] = sizes
                out["planned_bytes"] = int(sum(sizes))
                out["delegate_blob_bytes"] = {d.backend_id: 0 for d in m.delegates}
                for d in m.delegates:
                    out["delegate_blob_bytes"][d.backend_id] += int(d.blob_size or 0)
    ev = profile.events
    alloc = ev["role"] == P.ROLE_ALLOCATION
    out["allocation_events"] = int(alloc.sum())
    if alloc.any():
        in_exec = alloc & (ev["execute"] >= 0)
        if in_exec.any():
            per = np.bincount(ev["execute"][in_exec], weights=ev["value"][in_exec], minlength=profile.n_runs)
            out["allocated_bytes_per_run"] = float(per.mean())
    return out


def _top_op_types(profile: P.Profile, fallback: list[dict], top: int) -> list[dict]:
    """Fallback time per op type; ``sources`` lists every source line of its instructions' nodes."""
    agg: dict[str, dict] = {}
    for f in fallback:
        key = f["op_type"] or f["kernel"] or "?"
        a = agg.setdefault(key, {"op_type": key, "instructions": 0, "mean_ms": 0.0, "share": 0.0,
                                 "sources": []})
        a["instructions"] += 1
        a["mean_ms"] += f["mean_ms"] * f["runs"] / max(1, f["runs"])
        a["share"] += f["share"]
        ins = profile.instructions.get(f["instruction_id"])
        for src in (ins.sources if ins and ins.sources else [f["source"]]):
            if src and src not in a["sources"]:
                a["sources"].append(src)
    return sorted(agg.values(), key=lambda a: -a["share"])[:top]
