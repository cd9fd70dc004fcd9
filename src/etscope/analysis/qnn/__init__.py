"""QNN (HTP) depth: the nesting of QNN's events inside DELEGATE_CALL with true units, the HTP
clock estimated per run, per-op cycles joined to the graph, HMX/HVX/DMA, VTCM/DRAM and utilisation.

Sources, each optional: the ETDump (QNN events logged by ExecuTorch's QnnProfiler inside each
DELEGATE_CALL), a QNN profile CSV / viewer text / viewer JSON (same events, from qnn-net-run or
ONNX Runtime), QHAS and optrace JSON (first inference only, from a separate optrace run).

Everything is first put into one neutral shape, :class:`QnnSeries` (per partition: root events
and per-op node values, one column per execute), then analysed the same way whatever the source.
The modules: ``model`` (that shape, event names), ``etdump`` and ``qnn_files`` (sources into it),
``clock`` (estimated / measured HTP clock), ``partition`` (one partition analysed), ``op_tables``
(QHAS / optrace tables), ``report`` (``qnn_report``, everything together).
"""
from etscope.analysis.qnn.clock import (PLAUSIBLE_MAX_CLOCK_MHZ, clock_estimate, clock_fields,
                                        clock_warnings, measured_clock)
from etscope.analysis.qnn.etdump import (MAX_QNN_PARTITIONS, SLICE_EVENTS, qnn_instructions, run_slices,
                                         series_from_profile)
from etscope.analysis.qnn.model import (ACCEL_CYCLES, ACCEL_EXCL_WAIT_US, ACCEL_US, HVX_THREADS, LEVELS,
                                        POWER_ON, QNN_ACCEL, QNN_EXECUTE, RPC_EXECUTE, SCHEMA, VTCM_ACQUIRE,
                                        WELL_KNOWN, YIELDS, QnnSeries, as_list, is_node_name, p50, root_key)
from etscope.analysis.qnn.op_tables import (merge_op_tables, optrace_op_table, optrace_summary, qhas_op_table,
                                            qhas_summary)
from etscope.analysis.qnn.partition import analyse_series, cold_runs
from etscope.analysis.qnn.qnn_files import series_from_qnn_profile
from etscope.analysis.qnn.report import lowering_graph, method_execute_us, qnn_report

__all__ = [
    "ACCEL_CYCLES", "ACCEL_EXCL_WAIT_US", "ACCEL_US", "HVX_THREADS", "LEVELS", "MAX_QNN_PARTITIONS",
    "PLAUSIBLE_MAX_CLOCK_MHZ", "POWER_ON", "QNN_ACCEL", "QNN_EXECUTE", "RPC_EXECUTE", "SCHEMA",
    "SLICE_EVENTS", "VTCM_ACQUIRE", "WELL_KNOWN", "YIELDS", "QnnSeries", "analyse_series", "as_list",
    "clock_estimate", "clock_fields", "clock_warnings", "cold_runs", "is_node_name", "lowering_graph",
    "measured_clock", "merge_op_tables", "method_execute_us", "optrace_op_table", "optrace_summary", "p50",
    "qhas_op_table", "qhas_summary", "qnn_instructions", "qnn_report", "root_key", "run_slices",
    "series_from_profile", "series_from_qnn_profile",
]
