"""The QNN analysis as tables (pyarrow), beside events/ops/runs: what the QNN inputs hold, with or
without an ETDump (issue 15 item 4). Built from the ``analysis.qnn.qnn_report`` dict and the files it
read; column meanings in :data:`QNN_COLUMNS`.

- ``qnn_ops``: one row per QNN op. From the partitions (ETDump or QNN profile: per-run cycles, p50)
  when there are any, else from QHAS/optrace (their one inference): cycles, HMX/HVX/DMA, memory.
- ``qnn_units``: one row per HTP unit (HMX, HVX thread, ...) of QHAS (utilisation) and optrace (busy
  cycles, ops); the file it came from in ``file``.
- ``qnn_partitions``: one row per QNN partition (graph): the nested p50 times and the clock.
- ``qnn_runtrace``: one row per runtrace span (measured µs, cycles and clock per execute).
- ``htp_ops``: one row per HTP op of each QNN op (QHAS/optrace, ``analysis.qnn.htp_ops``): unit and
  category from its flags, cycles, bytes, and its QNN op's bound and achieved DRAM GB/s.

The rows of the ETDump's partitions (``qnn_ops``, ``qnn_partitions``) are p50s over runs: when the
runs are several phases (an LLM's prefill and decode) they are one block per phase, each from that
phase's own QNN analysis, with a ``phase`` column (never pooled).
"""
from __future__ import annotations

import math

import pyarrow as pa

from etscope.analysis.qnn.result import QnnReport

QNN_COLUMNS: dict[str, dict[str, str]] = {
    "qnn_ops": {
        "partition": "QNN partition (e.g. 'instruction 0', 'graph 0'); null for QHAS/optrace-only rows",
        "instruction_id": "delegate instruction of the partition (ETDump), null otherwise",
        "from": "what the row's cycles come from: etdump, qnn_profile (per run, p50) or qhas/optrace "
                "(one inference)",
        "qnn_name": "QNN op name as the file writes it",
        "op_id": "QNN OpId when the name carries one",
        "node": "graph node (ETRecord) the op was joined to",
        "op_type": "edge op type of that node, else the QNN op type from QHAS/optrace",
        "runs": "runs with a value (1 for QHAS/optrace)",
        "cycles": "HTP cycles: p50 over runs (partitions) or the one inference (QHAS/optrace)",
        "est_us": "cycles / the partition's clock (p50; estimated unless clock_source is runtrace); null "
                  "without a clock",
        "share": "the op's cycles over the accelerator's (partitions) or over all ops' (QHAS/optrace)",
        "hmx": "the op used HMX (matrix unit), from QHAS/optrace; null when unknown",
        "hvx": "the op used HVX (vector unit), from QHAS/optrace; null when unknown",
        "dma": "the op used DMA, from QHAS/optrace; null when unknown",
        "htp_ops": "HTP ops the QNN op became (QHAS/optrace), ' | '-separated",
        "dram_read": "bytes read from DRAM (QHAS)", "dram_write": "bytes written to DRAM (QHAS)",
        "vtcm_read": "bytes read from VTCM (QHAS)", "vtcm_write": "bytes written to VTCM (QHAS)",
        "phase": "the phase whose runs the partition rows summarise (prefill / decode; 'all': one phase); "
                 "null for QHAS/optrace-only rows",
    },
    "qnn_units": {
        "file": "qhas or optrace",
        "partition": "the partition the file was joined to (several QHAS/optrace files), else null",
        "unit": "HMX, HVX, DMA, ... (the file's type)",
        "pid": "optrace process id (null for QHAS)",
        "tid": "thread id of the unit",
        "name": "the file's name for the track (optrace)",
        "ops": "op events on the unit (optrace)",
        "busy_cycles": "cycles the unit was busy: optrace sum of op durations, QHAS cycles_used",
        "timeline_cycles": "cycles of the unit's timeline (QHAS)",
        "utilization_pct": "busy share of the timeline in % (QHAS)",
    },
    "qnn_partitions": {
        "partition": "partition key", "instruction_id": "delegate instruction (ETDump), null otherwise",
        "from": "etdump or the QNN profile's kind (qnn_csv, qnn_text, qnn_json)",
        "runs": "executes analysed", "delegate_call_ms": "DELEGATE_CALL p50, ms (ETDump)",
        "qnn_execute_us": "QNN (execute) time p50, µs", "rpc_us": "RPC (execute) time p50, µs",
        "qnn_accel_us": "QNN accelerator (execute) time p50, µs",
        "accel_us": "Accelerator (execute) time p50, µs (waits included)",
        "accel_excl_wait_us": "Accelerator (execute excluding wait) time p50, µs",
        "accel_cycles": "Accelerator (execute) time p50, cycles",
        "clock_mhz": "clock the µs estimates use (MHz)", "clock_source": "runtrace (measured) or estimate",
        "clock_mhz_low": "lower bound of the clock from this profile (MHz)",
        "clock_mhz_high": "upper bound of the clock from this profile (MHz)",
        "cold_runs": "runs that paid HTP power-on / VTCM acquire", "ops": "per-op rows",
        "phase": "the phase whose runs the row summarises (prefill / decode; 'all': one phase); null for "
                 "QNN files alone",
    },
    "htp_ops": {
        "partition": "the partition the QHAS/optrace file was joined to, else null",
        "file": "the QHAS/optrace file", "from": "qhas or optrace",
        "qnn_op": "the QNN op the HTP op belongs to", "qnn_op_type": "its QNN op type",
        "node": "graph node (ETRecord) the QNN op was joined to", "source": "that node's source line",
        "htp_op": "the HTP op (QHAS htp_op / optrace HTP Op Type)",
        "unit": "HMX, HVX, DMA, sync from its flags; none or a+b: an unknown combination",
        "category": "hmx, hvx (compute), layout (fmt_change), dma (data movement), sync, unknown",
        "flags": "its flags as the file sets them (QHAS names), ' | '-separated",
        "thread": "HTP thread (tid)", "cycles": "its cycles (first inference of the optrace run)",
        "dominant_path_cycles": "of them, cycles on the dominant path",
        "dram_read": "bytes read from DRAM (QHAS)", "dram_write": "bytes written to DRAM (QHAS)",
        "vtcm_read": "bytes read from VTCM (QHAS)", "vtcm_write": "bytes written to VTCM (QHAS)",
        "qnn_op_dram_gbps": "the QNN op's DRAM bytes ÷ its cycles at the stated clock, GB/s",
        "qnn_op_bound": "what bounds the QNN op, from its cycles split and DRAM GB/s",
        "clock_mhz": "the clock of those rates (MHz)",
    },
    "qnn_runtrace": {
        "execute": "index of the 'QNN DSP Execute' span (0-based), null before the first",
        "name": "span name (QNN DSP Execute, VTCM Acquire, Resource Power On, Graph Execute)",
        "graph": "graph name", "time_us": "measured duration, µs", "cycles": "HTP cycles over the span",
        "clock_mhz": "measured clock over the span (MHz)",
    },
}
HTP_OP_COLUMNS = tuple(QNN_COLUMNS["htp_ops"])      # the htp_ops table's columns, in order (p.qnn().htp_ops())

_TYPES = {"partition": pa.string(), "instruction_id": pa.int64(), "from": pa.string(), "qnn_name": pa.string(),
          "op_id": pa.int64(), "node": pa.string(), "op_type": pa.string(), "runs": pa.int64(),
          "hmx": pa.bool_(), "hvx": pa.bool_(), "dma": pa.bool_(), "htp_ops": pa.string(), "file": pa.string(),
          "unit": pa.string(), "pid": pa.int64(), "tid": pa.int64(), "name": pa.string(), "ops": pa.int64(),
          "clock_source": pa.string(), "cold_runs": pa.int64(), "execute": pa.int64(), "graph": pa.string(),
          "qnn_op": pa.string(), "qnn_op_type": pa.string(), "source": pa.string(), "htp_op": pa.string(),
          "category": pa.string(), "flags": pa.string(), "thread": pa.int64(), "qnn_op_bound": pa.string(),
          "phase": pa.string()}


def _table(name: str, rows: list[dict]) -> pa.Table:
    schema = pa.schema([(c, _TYPES.get(c, pa.float64())) for c in QNN_COLUMNS[name]])
    cols = {c: [_value(r.get(c), schema.field(c).type) for r in rows] for c in schema.names}
    return pa.table(cols, schema=schema)


def _value(v, type_):
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, bool) and not pa.types.is_boolean(type_):
        return None
    if pa.types.is_floating(type_):
        if not isinstance(v, (int, float)):
            return None
        try:
            return float(v)
        except OverflowError:       # an integer past float64 (a file's value): not a number here
            return None
    if pa.types.is_integer(type_):
        if not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            return None
        i = int(v)
        return i if -(1 << 63) <= i < (1 << 63) else None     # an id past int64: unknown, not a crash
    if pa.types.is_boolean(type_):
        return bool(v) if isinstance(v, bool) else None
    return str(v)


def partition_op_rows(qnn: QnnReport | None) -> list[dict]:
    """Per-op rows of the partitions (ETDump or QNN profile)."""
    rows = []
    for p in (qnn.partitions if qnn is not None else ()):
        clock = p.clock_mhz_used
        src = "etdump" if p.instruction_id is not None else "qnn_profile"
        for o in p.ops:
            cyc = o.cycles_p50
            rows.append({"partition": p.key, "instruction_id": p.instruction_id, "from": src,
                         "qnn_name": o.qnn_name, "op_id": o.op_id, "node": o.node,
                         "op_type": o.op_type, "runs": o.runs, "cycles": cyc,
                         "est_us": cyc / clock if isinstance(cyc, (int, float)) and clock else None,
                         "share": o.share, "htp_ops": _joined(o.htp_ops),
                         "hmx": o.hmx, "hvx": o.hvx, "dma": o.dma, "dram_read": o.dram_read,
                         "dram_write": o.dram_write, "vtcm_read": o.vtcm_read, "vtcm_write": o.vtcm_write})
    return rows


def file_op_rows(file_ops: dict[str, dict] | None, source: str) -> list[dict]:
    """Per-op rows of QHAS/optrace alone (``analysis.qnn`` op tables keyed by QNN op name)."""
    ops = file_ops or {}
    total = sum(o["cycles"] for o in ops.values() if isinstance(o.get("cycles"), (int, float)))
    rows = []
    for name, o in ops.items():
        cyc = o.get("cycles")
        rows.append({"partition": None, "instruction_id": None, "from": source, "qnn_name": name,
                     "op_type": o.get("op_type"), "runs": 1, "cycles": cyc,
                     "share": cyc / total if isinstance(cyc, (int, float)) and total else None,
                     "htp_ops": _joined(o.get("htp_ops")),
                     **{k: o.get(k) for k in ("hmx", "hvx", "dma", "dram_read", "dram_write", "vtcm_read",
                                              "vtcm_write")}})
    return rows


def _joined(xs) -> str | None:
    return " | ".join(str(x) for x in xs) if xs else None


def unit_rows(qnn: QnnReport | None) -> list[dict]:
    """Units of the QHAS/optrace files: the report's own, then each shard's (with its partition)."""
    if qnn is None:
        return []
    sources = [(None, qnn.qhas, qnn.optrace)] + [
        (f.partition, f.qhas, f.optrace) for f in (qnn.shards.files if qnn.shards is not None else ())]
    rows = []
    for part, qhas, optrace in sources:
        for r in (qhas.resources if qhas is not None else ()):
            rows.append({"file": "qhas", "partition": part, "unit": r.type, "tid": r.tid,
                         "busy_cycles": r.cycles_used, "timeline_cycles": r.timeline_cycles,
                         "utilization_pct": r.utilization})
        for t in (optrace.tracks if optrace is not None else ()):
            rows.append({"file": "optrace", "partition": part, "unit": t.kind, "pid": t.pid,
                         "tid": t.tid, "name": t.name, "ops": t.ops, "busy_cycles": t.busy_cycles})
    return rows


def partition_rows(qnn: QnnReport) -> list[dict]:
    rows = []
    for p in qnn.partitions:
        lo, hi = (p.clock_mhz_bounds or (None, None))[:2]
        rows.append({"partition": p.key, "instruction_id": p.instruction_id, "from": p.source,
                     "clock_mhz": p.clock_mhz_used, "clock_source": p.clock_source or
                     ("estimate" if p.clock_mhz_used else None), "clock_mhz_low": lo, "clock_mhz_high": hi,
                     "cold_runs": len(p.cold_runs), "ops": len(p.ops),
                     "runs": p.runs, "delegate_call_ms": p.delegate_call_ms, "qnn_execute_us": p.qnn_execute_us,
                     "rpc_us": p.rpc_us, "qnn_accel_us": p.qnn_accel_us, "accel_us": p.accel_us,
                     "accel_excl_wait_us": p.accel_excl_wait_us, "accel_cycles": p.accel_cycles})
    return rows


def runtrace_rows(runtrace) -> list[dict]:
    if runtrace is None:
        return []
    return [{"execute": ex if ex >= 0 else None, "name": nm, "graph": g or None, "time_us": t, "cycles": c,
             "clock_mhz": m}
            for ex, nm, g, t, c, m in zip(runtrace.execute.tolist(), runtrace.name.tolist(), runtrace.graph.tolist(),
                                          runtrace.time_us.tolist(), runtrace.cycles.tolist(), runtrace.mhz.tolist())]


def qnn_tables(qnn: QnnReport | None, file_ops: dict | None = None, file_ops_source: str | None = None,
               runtrace=None, phases: list[tuple[str, QnnReport | None]] | None = None) -> dict[str, pa.Table]:
    """The QNN tables that have rows (a table of no rows is left out: the inputs do not hold it).
    ``file_ops``: the QHAS/optrace op table, used for ``qnn_ops`` when there are no partitions.
    ``phases``: [(phase name, that phase's QNN report)] for the partition rows (one block per
    phase; the one phase of a profile: [(its name, ``qnn``)]); None: QNN files alone (no phase)."""
    if qnn is None:
        return {}
    blocks = phases if phases is not None else [(None, qnn)]
    ops = _per_phase(partition_op_rows, blocks) or file_op_rows(file_ops, file_ops_source or "qhas/optrace")
    named = {"qnn_ops": ops, "qnn_units": unit_rows(qnn), "qnn_partitions": _per_phase(partition_rows, blocks),
             "qnn_runtrace": runtrace_rows(runtrace), "htp_ops": htp_op_rows(qnn)}
    return {name: _table(name, rows) for name, rows in named.items() if rows}


def _per_phase(rows_of, blocks: list[tuple[str | None, QnnReport | None]]) -> list[dict]:
    """The rows ``rows_of`` makes of each phase's QNN report, tagged with the phase, one block after the other."""
    return [dict(r, phase=name) for name, q in blocks if q is not None for r in rows_of(q)]


def htp_op_rows(qnn: QnnReport) -> list[dict]:
    """One row per HTP op of the report's HTP-op breakdowns (``htp_ops``)."""
    rows = []
    for h in qnn.htp_ops or ():
        b, lim = h.breakdown, h.limits
        limits = {x.qnn_op: x for x in lim.ops}
        for o in b.ops:
            x = limits.get(o.qnn_op)
            for op in o.htp_ops:
                rows.append({"partition": b.partition, "file": b.path, "from": b.source,
                             "qnn_op": o.qnn_op, "qnn_op_type": o.qnn_op_type, "node": o.node,
                             "source": o.source, "htp_op": op.htp_op, "unit": op.unit, "category": op.category,
                             "thread": op.thread, "cycles": op.cycles, "dominant_path_cycles": op.dominant_path_cycles,
                             "dram_read": op.dram_read, "dram_write": op.dram_write, "vtcm_read": op.vtcm_read,
                             "vtcm_write": op.vtcm_write, "flags": " | ".join(op.flags), "qnn_op_dram_gbps": x.dram_gbps if x else None,
                             "qnn_op_bound": x.bound if x else None, "clock_mhz": lim.clock_mhz})
    return rows
