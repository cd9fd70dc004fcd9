"""QNN (HTP) depth: the nesting of QNN's events inside DELEGATE_CALL with true units, the HTP
clock estimated per run, per-op cycles joined to the graph, HMX/HVX/DMA, VTCM/DRAM and utilisation.

Sources, each optional: the ETDump (QNN events logged by ExecuTorch's QnnProfiler inside each
DELEGATE_CALL), a QNN profile CSV / viewer text / viewer JSON (same events, from qnn-net-run or
ONNX Runtime), QHAS and optrace JSON (first inference only, from a separate optrace run).

Everything is first put into one neutral shape, :class:`QnnSeries` (per partition: root events
and per-op node values, one column per execute), then analysed the same way whatever the source.
The modules: ``model`` (that shape, event names), ``etdump`` and ``qnn_files`` (sources into it),
``clock`` (estimated / measured HTP clock), ``partition`` (one partition analysed), ``op_tables``
(QHAS / optrace tables), ``htp_ops`` (inside the HTP: each QNN op's HTP ops by category, from their
flags), ``limits`` (achieved bytes/s, what bounds an op, sourced DRAM bandwidth, the LLM memory
wall), ``htp_findings`` (findings from the breakdown), ``report`` (``qnn_report``, everything
together). The result is typed: ``result`` (``QnnReport``, ``QnnView``) and ``partition_result``
(``Partition`` and its rows), frozen dataclasses ``render.json`` writes field by field.
"""
from __future__ import annotations

import importlib

# Names re-exported from the submodules, loaded on first use: a program without QNN partitions
# then imports only what tells it so (``etdump.qnn_instructions``), not the whole package (~5 ms).
_FROM = {
    "PLAUSIBLE_MAX_CLOCK_MHZ": "clock",
    "clock_estimate": "clock",
    "clock_fields": "clock",
    "clock_warnings": "clock",
    "measured_clock": "clock",
    "MAX_QNN_PARTITIONS": "etdump",
    "SLICE_EVENTS": "etdump",
    "qnn_instructions": "etdump",
    "run_slices": "etdump",
    "series_from_profile": "etdump",
    "ACCEL_CYCLES": "model",
    "ACCEL_EXCL_WAIT_US": "model",
    "ACCEL_US": "model",
    "HVX_THREADS": "model",
    "LEVELS": "model",
    "POWER_ON": "model",
    "QNN_ACCEL": "model",
    "QNN_EXECUTE": "model",
    "RPC_EXECUTE": "model",
    "SCHEMA": "model",
    "VTCM_ACQUIRE": "model",
    "WELL_KNOWN": "model",
    "YIELDS": "model",
    "QnnSeries": "model",
    "as_list": "model",
    "is_node_name": "model",
    "p50": "model",
    "root_key": "model",
    "merge_op_tables": "op_tables",
    "optrace_op_table": "op_tables",
    "optrace_summary": "op_tables",
    "qhas_op_table": "op_tables",
    "qhas_summary": "op_tables",
    "analyse_series": "partition",
    "cold_runs": "partition",
    "series_from_qnn_profile": "qnn_files",
    "lowering_graph": "report",
    "method_execute_us": "report",
    "qnn_report": "report",
}

__all__ = [
    "ACCEL_CYCLES", "ACCEL_EXCL_WAIT_US", "ACCEL_US", "HVX_THREADS", "LEVELS", "MAX_QNN_PARTITIONS",
    "PLAUSIBLE_MAX_CLOCK_MHZ", "POWER_ON", "QNN_ACCEL", "QNN_EXECUTE", "RPC_EXECUTE", "SCHEMA",
    "SLICE_EVENTS", "VTCM_ACQUIRE", "WELL_KNOWN", "YIELDS", "QnnSeries", "analyse_series", "as_list",
    "clock_estimate", "clock_fields", "clock_warnings", "cold_runs", "is_node_name", "lowering_graph",
    "measured_clock", "merge_op_tables", "method_execute_us", "optrace_op_table", "optrace_summary", "p50",
    "qhas_op_table", "qhas_summary", "qnn_instructions", "qnn_report", "root_key", "run_slices",
    "series_from_profile", "series_from_qnn_profile",
]


def __getattr__(attr: str):
    module = _FROM.get(attr)      # only the fixed table above: never a name from outside
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    value = getattr(importlib.import_module(f".{module}", __package__), attr)
    globals()[attr] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
