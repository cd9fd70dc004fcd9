"""Lookups over the ``analysis.qnn`` result: a partition by instruction, a per-op row by its QNN
name, the clock a partition converts cycles with (used by the tables, the trace and the report)."""
from __future__ import annotations

from etscope.analysis.qnn.partition_result import OpRow, Partition
from etscope.analysis.qnn.result import QnnReport
from etscope.formats.qnn_names import UNIT_SUFFIX


def clock_mhz(partition: Partition, execute: int | None = None) -> float | None:
    """Clock of a QNN partition (MHz): the one it converts cycles with in run ``execute``
    (``per_run.clock_mhz_used``: the runtrace's measured clock when given, else the run's
    estimate), else its p50 estimate; None when unknown."""
    per_run = partition.per_run.clock_mhz_used
    if execute is not None and 0 <= execute < len(per_run):
        v = per_run[execute]
        if isinstance(v, (int, float)) and v == v and v > 0:
            return float(v)
    c = partition.clock_mhz_est
    return float(c) if isinstance(c, (int, float)) and c > 0 else None


def qnn_name_keys(name: str) -> list[str]:
    """Spellings a QNN per-op row may have: with and without the unit suffix."""
    keys = [name]
    m = UNIT_SUFFIX.match(name)
    if m:
        keys.append(m.group(1))
    return keys


def qnn_op_lookup(qnn: QnnReport | None) -> dict[tuple[int | None, str], OpRow]:
    """(instruction_id, qnn_name) -> per-op row of analysis.qnn; also (None, qnn_name)."""
    out: dict = {}
    for part in (qnn.partitions if qnn is not None else ()):
        iid = part.instruction_id
        for op in part.ops:
            name = op.qnn_name
            if not name:
                continue
            for key in qnn_name_keys(str(name)):
                out.setdefault((iid, key), op)
                out.setdefault((None, key), op)
    return out


def qnn_partitions(qnn: QnnReport | None) -> dict[int, Partition]:
    return {p.instruction_id: p for p in (qnn.partitions if qnn is not None else ()) if p.instruction_id is not None}
