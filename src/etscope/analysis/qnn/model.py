"""The neutral shape every QNN source is put into (:class:`QnnSeries`: per partition, root events
and per-op node values, one column per execute) and the names of QNN's top-level events."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from etscope.analysis import glossary
from etscope.arrays import median
from etscope.formats.qnn_names import parse_qnn_event_name

SCHEMA = "etscope.qnn/1"

# QNN's top-level execute events, by (identifier without ExecuTorch's unit suffix, unit): the
# time levels are the glossary's (one definition per level), the others QNN's counters.
QNN_EXECUTE = (glossary.QNN_EXECUTE.event, glossary.QNN_EXECUTE.unit)
RPC_EXECUTE = (glossary.RPC_EXECUTE.event, glossary.RPC_EXECUTE.unit)
QNN_ACCEL = (glossary.QNN_ACCELERATOR.event, glossary.QNN_ACCELERATOR.unit)
ACCEL_US = (glossary.ACCELERATOR.event, glossary.ACCELERATOR.unit)
ACCEL_EXCL_WAIT_US = (glossary.ACCELERATOR_EXCL_WAIT.event, glossary.ACCELERATOR_EXCL_WAIT.unit)
ACCEL_CYCLES = (glossary.ACCELERATOR_CYCLES.event, glossary.ACCELERATOR_CYCLES.unit)
HVX_THREADS = ("Number of HVX threads used", "count")
YIELDS = ("Num times yield occured", "count")
VTCM_ACQUIRE = ("Time for initial VTCM acquire", "us")
POWER_ON = ("Time for HVX + HMX power on and acquire", "us")

# The nesting from outside in (key, what the level measures, what it adds over the next one), as
# the glossary defines it: DELEGATE_CALL by its event name, QNN's levels by (identifier, unit).
LEVELS = tuple(((lv.event if lv is glossary.DELEGATE_CALL else (lv.event, lv.unit)), lv.meaning, lv.adds)
               for lv in (glossary.DELEGATE_CALL, *glossary.QNN_TIME_LEVELS))

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

