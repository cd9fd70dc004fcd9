"""The profile as three tables (events, ops, runs) in true units, built once from what ``profile``
and ``analysis`` hold (pyarrow Tables). ``render.export`` writes them as CSV / Parquet / JSON,
``render.sql`` queries them with DuckDB and the notebook API turns them into pandas DataFrames.
Column meanings are in :data:`COLUMNS` (also in the README).

Phases (``analysis.llm.run_phases``): every run row and every event of a run carries its phase and
that phase's method. The ops table aggregates over runs, so it never pools the phases of an LLM:
it is one block of rows per phase (each phase's own op table, ``Results.for_phase(name).ops``),
told apart by its ``phase`` column; one phase (or ``--phase all``, pooled on purpose) is one block.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from etscope import profile as P
from etscope import units
from etscope.analysis.qnn.result import QnnReport
from etscope.analysis.qnn.lookup import clock_mhz, qnn_name_keys, qnn_op_lookup, qnn_partitions
from etscope.analysis.llm.run_phases import ALL, RunPhases, one_phase
from etscope.analysis.views.timeline import first_timed_ns, since_origin, timed_mask


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

KIND_NAMES = ("profile", "allocation", "debug")

COLUMNS: dict[str, dict[str, str]] = {
    "events": {
        "event": "index of the event in the file (file order; events of other methods' runs and "
                 "older accumulated copies are not rows, so indices can skip)",
        "run": "RunData index in the ETDump",
        "run_name": "RunData name: 'Default' (load/init) or 'Execute' (one per execute())",
        "execute": "index of the Execute run (0-based), null for events outside the runs",
        "kind": "profile / allocation / debug",
        "role": "method_execute, delegate_call, operator_call, kernel, delegate_internal, framework, debug, allocation",
        "name": "event name (ProfileEvent.name, or delegate_debug_id_str for backend events)",
        "instruction_id": "instruction the event belongs to (null when absent)",
        "chain_index": "ProfileEvent chain_index (-1 for framework events)",
        "delegate_debug_id_int": "delegate debug id (int), null when absent",
        "delegate_debug_id_str": "delegate debug id (str), null when absent",
        "placement": "backend id of the instruction (e.g. QnnBackend, XnnpackBackend) or 'cpu'; null for framework events",
        "op_type": "edge op type of the instruction (or, for QNN per-op rows, of the graph node they ran)",
        "start_us": "start in µs from the first timed event of the file (timed events only)",
        "end_us": "end in µs from the first timed event of the file (timed events only)",
        "value": "the event's value in its true unit (duration, cycles, bytes, count)",
        "unit": "unit of value: ns, us, cycles, bytes, count, unknown",
        "dur_us": "duration in µs (time units only; null for cycles/bytes/counts)",
        "est_us": "QNN cycles rows (per-op and the accelerator total): cycles / the partition's clock "
                  "estimate for that run (from analysis.qnn; needs no ETRecord); null without a clock or "
                  "for other rows",
        "tensor_shape": "debug events: tensor shape, e.g. 1x8x64",
        "tensor_nbytes": "debug events: tensor bytes",
        "phase": "phase of the event's run (prefill / decode, or 'all' when the runs are one phase); "
                 "null for events outside the runs",
        "method": "program method of that phase (null when unknown, or for events outside the runs)",
    },
    "ops": {
        "instruction_id": "instruction id",
        "level": "0: the instruction (delegate_call / operator_call), 1: what is logged inside it",
        "role": "delegate_call, operator_call, kernel, delegate_internal",
        "name": "row name",
        "occurrence": "index among same-named events of that instruction in one run",
        "op_type": "edge op type (instruction rows)",
        "placement": "backend id or 'cpu'",
        "runs": "number of events over the steady runs (each phase's warm-up runs left out, as every statistic)",
        "calls_per_run": "events per steady Execute run",
        "unit": "unit of p50/mean/total/min/max",
        "p50": "median over events, in unit", "mean": "mean, in unit", "total": "sum, in unit",
        "min": "minimum, in unit", "max": "maximum, in unit",
        "p50_ms": "median in ms (time units only)", "mean_ms": "mean in ms (time units only)",
        "total_ms": "sum in ms (time units only)",
        "share": "total over the sum of Method::execute in the same runs (time units only)",
        "source": "file.py:LINE of the graph node (from the ETRecord)",
        "phase": "the phase whose runs the row aggregates: an LLM's ops are one block of rows per phase "
                 "(prefill, decode; never pooled); 'all' when the runs are one phase or --phase all pools them",
        "method": "program method of that phase (null when unknown or when several phases are pooled)",
    },
    "runs": {
        "execute": "index of the Execute run (0-based)",
        "etdump_run": "RunData index in the ETDump",
        "start_us": "start of Method::execute in µs from the first timed event of the file",
        "latency_ms": "Method::execute duration in ms",
        "event_count": "events in the RunData",
        "delegate_<Backend>_ms": "time in DELEGATE_CALLs of that backend in the run, ms",
        "delegate_<Backend>_calls": "DELEGATE_CALLs of that backend in the run",
        "cpu_ops_ms": "time in CPU kernel instructions (OPERATOR_CALL) in the run, ms",
        "cpu_ops_calls": "CPU kernel instructions executed in the run",
        "framework_overhead_ms": "latency minus delegate calls minus CPU kernels, ms",
        "phase": "phase of the run: prefill / decode (an LLM's, as etscope llm tells them), else 'all' (one phase)",
        "method": "program method of the run's phase (null when unknown)",
    },
}


# ---- helpers ----------------------------------------------------------------------------------------
def _dict_column(codes: np.ndarray, strings: list[str]) -> pa.Array:
    codes = np.asarray(codes, dtype=np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), pa.array(strings, pa.string()))


def _nullable(values: np.ndarray, mask: np.ndarray, type_=None) -> pa.Array:
    return pa.array(values, mask=mask, type=type_)


# ---- tables ------------------------------------------------------------------------------------------
def _run_name_column(profile: P.Profile) -> pa.Array:
    run_names = [r.name for r in profile.etdump.runs]
    uniq_names = sorted(set(run_names))
    name_code = {s: i for i, s in enumerate(uniq_names)}
    per_run = np.array([name_code[s] for s in run_names], dtype=np.int32)
    ev_run = P.event_runs(profile)
    return _dict_column(per_run[ev_run] if len(ev_run) else np.zeros(0, np.int32), uniq_names)


def _instruction_codes(profile: P.Profile, instr: np.ndarray, attached: np.ndarray):
    """Placement and op type codes per event (and their string lists), as dictionary columns need.
    Looked up by position among the known ids (searchsorted), not in an array indexed by id: ids come
    from the file (up to 2**31)."""
    ins_ids = np.array(sorted(profile.instructions), dtype=np.int64)
    placements = sorted({i.backend for i in profile.instructions.values()})
    op_types = sorted({i.op_type for i in profile.instructions.values() if i.op_type})
    pl_index = {p: i for i, p in enumerate(placements)}
    ot_index = {t: i for i, t in enumerate(op_types)}
    pl_code = np.full(len(ins_ids) + 1, -1, dtype=np.int32)     # last slot: not a known instruction
    ot_code = np.full(len(ins_ids) + 1, -1, dtype=np.int32)
    for k, iid in enumerate(ins_ids.tolist()):
        ins = profile.instructions[iid]
        pl_code[k] = pl_index[ins.backend]
        if ins.op_type:
            ot_code[k] = ot_index[ins.op_type]
    pos = np.searchsorted(ins_ids, instr)
    known = attached & (pos < len(ins_ids))
    known[known] = ins_ids[pos[known]] == instr[known]
    safe_instr = np.where(known, pos, len(ins_ids))
    return pl_code[safe_instr], placements, ot_code[safe_instr], op_types


def _qnn_op_types(qnn: QnnReport | None, strings: list[str], instr, names, sel, op_type, op_types):
    """QNN per-op rows (``sel``) take the op type of the graph node analysis.qnn joined them to."""
    lookup = qnn_op_lookup(qnn)
    if not lookup or sel.size == 0:
        return op_type, op_types
    extra_types = list(op_types)
    type_index = {t: i for i, t in enumerate(op_types)}
    codes, inv = np.unique(np.stack([instr[sel], names[sel].astype(np.int64)]), axis=1, return_inverse=True)
    inv = inv.reshape(-1)
    per_code_type = np.full(codes.shape[1], -1, dtype=np.int32)
    for j in range(codes.shape[1]):
        iid, nm = int(codes[0, j]), int(codes[1, j])
        op = lookup.get((iid, strings[nm])) or lookup.get((iid, qnn_name_keys(strings[nm])[-1]))
        if op is not None and op.op_type:
            t = str(op.op_type)
            if t not in type_index:
                type_index[t] = len(extra_types)
                extra_types.append(t)
            per_code_type[j] = type_index[t]
    found = per_code_type[inv] >= 0
    op_type[sel[found]] = per_code_type[inv][found]
    return op_type, extra_types


def _qnn_est_us(profile: P.Profile, qnn: QnnReport | None, cycles: np.ndarray) -> np.ndarray:
    """Estimated µs of every cycles row of a QNN partition (``cycles``: their indices), from its
    clock for that run: the clock comes from the ETDump's own events, with or without a graph to
    name the ops."""
    ev = profile.events
    est_us = np.full(profile.n_events, np.nan)
    instr, ex, value = ev["instruction_id"], ev["execute"], ev["value"]
    for iid, part in qnn_partitions(qnn).items():
        m = cycles[instr[cycles] == iid]
        if m.size == 0:
            continue
        clocks = np.array([clock_mhz(part, r) or np.nan for r in range(profile.n_runs)])
        est_us[m] = value[m] / clocks[ex[m]]
    return est_us


def events_table(profile: P.Profile, qnn: QnnReport | None = None, phases: RunPhases | None = None) -> pa.Table:
    """One row per event of the ETDump, in file order (see COLUMNS["events"]); ``phases``: the
    phase of each run (default: the runs are one phase)."""
    from etscope.analysis.ops.per_op import effective_names

    ev = profile.events
    n = profile.n_events
    strings = profile.strings
    names = effective_names(profile).astype(np.int32) if n else np.zeros(0, np.int32)
    instr = ev["instruction_id"].astype(np.int64)
    chain = ev["chain"].astype(np.int64)
    placement, placements, op_type, op_types = _instruction_codes(profile, instr, (chain >= 0) & (instr >= 0))
    role, unit, value = ev["role"], ev["unit"], ev["value"]
    inner = role == P.ROLE_DELEGATE_INTERNAL
    # The instruction's op type names the wrapper rows, not what a backend logs inside them.
    op_type = np.where(inner, -1, op_type)
    qnn_cycles = np.nonzero(inner & (unit == units.CYCLES))[0]
    op_type, op_types = _qnn_op_types(qnn, strings, instr, names, qnn_cycles, op_type, op_types)
    est_us = _qnn_est_us(profile, qnn, qnn_cycles[ev["execute"][qnn_cycles] >= 0])
    t0 = first_timed_ns(profile)
    timed = timed_mask(profile)
    start = since_origin(ev["start"], t0)
    end = since_origin(P.end_times(profile), t0)
    dur_us = np.where(unit == units.NS, value / 1e3, np.where(unit == units.US, value, np.nan))
    shapes = ev.get("tensor_shape", np.full(n, -1, np.int32))
    nbytes = ev.get("tensor_nbytes", np.full(n, -1, np.int64))
    did_int = ev["delegate_id_int"].astype(np.int64)
    cols = {
        "event": pa.array(np.asarray(ev["file_event"], dtype=np.int64) if "file_event" in ev
                          else np.arange(n, dtype=np.int64)),
        "run": pa.array(P.event_runs(profile).astype(np.int32, copy=False)),
        "run_name": _run_name_column(profile),
        "execute": _nullable(ev["execute"].astype(np.int32), ev["execute"] < 0),
        "kind": _dict_column(ev["kind"].astype(np.int32), list(KIND_NAMES)),
        "role": _dict_column(role.astype(np.int32), list(P.ROLE_NAMES)),
        "name": _dict_column(names, strings),
        "instruction_id": _nullable(instr.astype(np.int32), instr < 0),
        "chain_index": pa.array(chain),
        "delegate_debug_id_int": _nullable(did_int, did_int < 0),
        "delegate_debug_id_str": _dict_column(ev["delegate_id_str"], strings),
        "placement": _dict_column(placement, placements),
        "op_type": _dict_column(op_type, op_types),
        "start_us": _nullable(start / 1e3, ~timed, pa.float64()),
        "end_us": _nullable(end / 1e3, ~timed, pa.float64()),
        "value": _nullable(value, np.isnan(value), pa.float64()),
        "unit": _dict_column(unit.astype(np.int32), list(units.NAMES)),
        "dur_us": _nullable(dur_us, np.isnan(dur_us), pa.float64()),
        "est_us": _nullable(est_us, np.isnan(est_us), pa.float64()),
        "tensor_shape": _dict_column(shapes, strings),
        "tensor_nbytes": _nullable(nbytes, nbytes < 0, pa.int64()),
    }
    cols.update(_phase_columns(phases or one_phase(profile), ev["execute"]))
    return pa.table(cols)


def ops_table(profile: P.Profile, ops: list[OpRow] | None = None) -> pa.Table:
    """The per-op table of ``analysis.ops.per_op.op_table`` (see COLUMNS["ops"])."""
    if ops is None:
        ops = _op_table(profile)
    schema = pa.schema([
        ("instruction_id", pa.int64()), ("level", pa.int8()), ("role", pa.string()), ("name", pa.string()),
        ("occurrence", pa.int64()), ("op_type", pa.string()), ("placement", pa.string()),
        ("runs", pa.int64()), ("calls_per_run", pa.float64()), ("unit", pa.string()),
        ("p50", pa.float64()), ("mean", pa.float64()), ("total", pa.float64()), ("min", pa.float64()),
        ("max", pa.float64()), ("p50_ms", pa.float64()), ("mean_ms", pa.float64()),
        ("total_ms", pa.float64()), ("share", pa.float64()), ("source", pa.string())])
    data = {f.name: [_nan_none(getattr(r, f.name)) for r in ops] for f in schema}
    return pa.table(data, schema=schema)


def _nan_none(v):
    if isinstance(v, float) and v != v:
        return None
    return v


def runs_table(profile: P.Profile, phases: RunPhases | None = None) -> pa.Table:
    """One row per Execute run: latency and its split, its phase and method (see COLUMNS["runs"])."""
    from etscope.analysis.ops.placement import per_run_parts

    parts = per_run_parts(profile)
    n = profile.n_runs
    t0 = first_timed_ns(profile)
    start = profile.runs["start_ns"].astype(np.int64)
    start_since = since_origin(start, t0)
    cols = {
        "execute": pa.array(np.arange(n, dtype=np.int64)),
        "etdump_run": pa.array(profile.runs["etdump_run"].astype(np.int64)),
        "start_us": _nullable(start_since / 1e3, start == 0, pa.float64()),
        "latency_ms": _nullable(parts["latency"] / 1e6, np.isnan(parts["latency"]), pa.float64()),
        "event_count": pa.array(profile.runs["event_count"].astype(np.int64)),
    }
    for b in profile.backends():
        cols[f"delegate_{b}_ms"] = pa.array(parts[f"delegate:{b}"] / 1e6)
        cols[f"delegate_{b}_calls"] = pa.array(parts[f"calls:{b}"].astype(np.int64))
    cols["cpu_ops_ms"] = pa.array(parts["cpu_ops"] / 1e6)
    cols["cpu_ops_calls"] = pa.array(parts["calls:cpu"].astype(np.int64))
    fo = parts["framework_overhead"] / 1e6
    cols["framework_overhead_ms"] = _nullable(fo, np.isnan(fo), pa.float64())
    cols.update(_phase_columns(phases or one_phase(profile), np.arange(n)))
    return pa.table(cols)


def _phase_columns(phases: RunPhases, execute: np.ndarray) -> dict[str, pa.Array]:
    """``phase`` and ``method`` of rows given their Execute run index (-1: outside the runs, null),
    as dictionary columns (a few strings, millions of events)."""
    execute = np.asarray(execute, dtype=np.int64)
    n_runs = len(phases.of_run)
    inside = (execute >= 0) & (execute < n_runs)
    code = np.full(execute.shape, -1, dtype=np.int32)
    code[inside] = phases.of_run[execute[inside]]
    methods = sorted({m for m in phases.methods if m is not None})
    method_code = np.array([methods.index(m) if m is not None else -1 for m in phases.methods] + [-1], np.int32)
    return {"phase": _dict_column(code, [str(x) for x in phases.names]),
            "method": _dict_column(method_code[np.where(code >= 0, code, len(phases.methods))], methods)}


def phase_ops_table(blocks: list[tuple[str, str | None, list[OpRow]]]) -> pa.Table:
    """The ops table of several phases: per (phase, method, its op table), its rows with ``phase``
    and ``method`` columns, one block after the other (never pooled)."""
    parts = []
    for name, method, ops in blocks:
        t = ops_table(None, ops)
        parts.append(t.append_column("phase", pa.array([name] * t.num_rows, pa.string()))
                      .append_column("method", pa.array([method] * t.num_rows, pa.string())))
    return pa.concat_tables(parts)


def tables(profile: P.Profile, ops: list[OpRow] | None = None, qnn: QnnReport | None = None,
           phases: RunPhases | None = None, by_phase: list | tuple = ()) -> dict[str, pa.Table]:
    """events, ops and runs of the profile. ``phases``: the phase of each run (``Results.phases``;
    default one phase); ``by_phase``: [(name, its Results)] when the runs are several phases
    (``Results.by_phase``): then the ops table is each phase's own ops, one block per phase."""
    phases = phases or one_phase(profile)
    if by_phase:
        index = {n: k for k, n in enumerate(phases.names)}
        op_rows = phase_ops_table([(n, phases.methods[index[n]] if n in index else None, r.ops) for n, r in by_phase])
    else:       # one phase, or the phases pooled on purpose (--phase all): one block, method only when one
        method = phases.methods[0] if len(phases.methods) == 1 else None
        op_rows = phase_ops_table([(whole_phase(phases), method, ops if ops is not None else _op_table(profile))])
    return {"events": events_table(profile, qnn, phases), "ops": op_rows, "runs": runs_table(profile, phases)}


def whole_phase(phases: RunPhases) -> str:
    """The phase name of rows that aggregate every run: its name when the runs are one phase, else
    ``all`` (the phases pooled on purpose, ``--phase all``)."""
    return str(phases.names[0]) if len(phases.names) == 1 else ALL


def _op_table(profile: P.Profile) -> list[OpRow]:
    from etscope.analysis.ops.per_op import op_table

    return op_table(profile)
