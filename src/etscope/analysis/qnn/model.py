"""The neutral shape every QNN source is put into (:class:`QnnSeries`: per partition, root events
and per-op node values, one column per execute) and the names of QNN's top-level events."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from etscope.arrays import median
from etscope.formats.qnn_names import parse_qnn_event_name

SCHEMA = "etscope.qnn/1"

# QNN's top-level execute events, by (identifier without ExecuTorch's unit suffix, unit).
QNN_EXECUTE = ("QNN (execute) time", "us")
RPC_EXECUTE = ("RPC (execute) time", "us")
QNN_ACCEL = ("QNN accelerator (execute) time", "us")
ACCEL_US = ("Accelerator (execute) time", "us")
ACCEL_EXCL_WAIT_US = ("Accelerator (execute excluding wait) time", "us")
ACCEL_CYCLES = ("Accelerator (execute) time (cycles)", "cycles")
HVX_THREADS = ("Number of HVX threads used", "count")
YIELDS = ("Num times yield occured", "count")
VTCM_ACQUIRE = ("Time for initial VTCM acquire", "us")
POWER_ON = ("Time for HVX + HMX power on and acquire", "us")

# The nesting from outside in, with what each level adds over the next one, in plain words.
LEVELS = (
    ("DELEGATE_CALL", "ExecuTorch's wall time around the call into the QNN backend (ns, measured "
     "by ExecuTorch)", "ExecuTorch QNN backend work around QNN's graph execute: input/output tensor "
     "setup, shared-buffer mapping, profiling readout"),
    (QNN_EXECUTE, "QNN's graphExecute call on the CPU side", "QNN host-side work before and after "
     "the remote call (argument marshalling, cache maintenance)"),
    (RPC_EXECUTE, "the FastRPC call from the CPU to the HTP (DSP)", "FastRPC transport and driver "
     "time between CPU and DSP"),
    (QNN_ACCEL, "QNN's handling of the execute on the DSP", "DSP-side QNN work around the graph "
     "(scheduling, VTCM acquire, power-up)"),
    (ACCEL_US, "the HTP executing the graph, waits included", "waiting (for VTCM, DMA, other "
     "clients) while the graph runs"),
    (ACCEL_EXCL_WAIT_US, "the HTP executing the graph, waits excluded", None),
)

WELL_KNOWN = {QNN_EXECUTE, RPC_EXECUTE, QNN_ACCEL, ACCEL_US, ACCEL_EXCL_WAIT_US, ACCEL_CYCLES,
               HVX_THREADS, YIELDS, VTCM_ACQUIRE, POWER_ON}


def root_key(name: str, unit: str | None = None) -> tuple[str, str]:
    """(QNN identifier, unit) for a top-level event name as ExecuTorch or a QNN tool writes it."""
    for suffix, u in ((" (us)", "us"), (" (bytes)", "bytes"), (" (count)", "count")):
        if name.endswith(suffix):
            return name[: -len(suffix)], u
    if name.endswith("(cycles)"):
        return name, "cycles"
    return name, (unit or "unknown")


@dataclass
class QnnSeries:
    """One QNN graph (partition): its events per execute, columns aligned on ``runs``."""

    key: str                                  # "instruction 12" or "graph 0"
    instruction_id: int | None
    runs: np.ndarray                          # execute indices (ETDump Execute runs or CSV executes)
    roots: dict[tuple[str, str], np.ndarray]  # (identifier, unit) -> value per run (NaN = absent)
    node_names: list[str]
    node_values: np.ndarray                   # (nodes, runs), NaN where absent
    node_unit: list[str]
    delegate_call_ns: np.ndarray | None = None   # per run (sum over calls), ETDump only
    accumulating: bool = False
    copies_per_run: np.ndarray | None = None
    source: str = "etdump"
    notes: list[str] = field(default_factory=list)


# ---- sources --------------------------------------------------------------------------------------
def is_node_name(name: str) -> bool:
    return parse_qnn_event_name(name).op_id is not None


def p50(a) -> float | None:
    if a is None:
        return None
    a = np.asarray(a, dtype=np.float64)
    a = a[~np.isnan(a)]
    return float(median(a)) if a.size else None


def as_list(a):
    if a is None:
        return None
    return [None if x != x else x for x in np.asarray(a, dtype=np.float64).tolist()]   # NaN -> None

