"""Lookups over the ``analysis.qnn`` result: a partition by instruction, a per-op row by its QNN
name, the clock a partition converts cycles with (used by the tables, the trace and the report)."""
from __future__ import annotations

from etscope.formats.qnn_names import UNIT_SUFFIX


def clock_mhz(partition: dict, execute: int | None = None) -> float | None:
    """Clock of a QNN partition (MHz) from the analysis.qnn dict: the one it converts cycles with
    (``per_run.clock_mhz_used``: the runtrace's measured clock when given, else the per-run
    estimate), per run when it gives a list/dict per run, else one value; None when unknown."""
    pr = partition.get("per_run") if isinstance(partition.get("per_run"), dict) else {}
    per_run = pr.get("clock_mhz_used", pr.get("clock_mhz_est"))
    if isinstance(per_run, list) and execute is not None and 0 <= execute < len(per_run):
        v = per_run[execute]
        if isinstance(v, (int, float)) and v == v and v > 0:
            return float(v)
    c = partition.get("clock_mhz_est")
    if isinstance(c, dict):
        per_run = c.get("per_run")
        if isinstance(per_run, list) and execute is not None and 0 <= execute < len(per_run):
            v = per_run[execute]
            if isinstance(v, (int, float)) and v > 0:
                return float(v)
        for k in ("value", "p50", "warm_p50", "mean"):
            v = c.get(k)
            if isinstance(v, (int, float)) and v > 0:
                return float(v)
        return None
    if isinstance(c, list):
        if execute is not None and 0 <= execute < len(c) and isinstance(c[execute], (int, float)) and c[execute] > 0:
            return float(c[execute])
        vals = sorted(float(v) for v in c if isinstance(v, (int, float)) and v > 0)
        return vals[len(vals) // 2] if vals else None
    if isinstance(c, (int, float)) and c > 0:
        return float(c)
    return None


def qnn_name_keys(name: str) -> list[str]:
    """Spellings a QNN per-op row may have: with and without the unit suffix."""
    keys = [name]
    m = UNIT_SUFFIX.match(name)
    if m:
        keys.append(m.group(1))
    return keys


def qnn_op_lookup(qnn: dict | None) -> dict[tuple[int | None, str], dict]:
    """(instruction_id, qnn_name) -> op dict of analysis.qnn; also (None, qnn_name)."""
    out: dict = {}
    for part in (qnn or {}).get("partitions") or []:
        iid = part.get("instruction_id")
        for op in part.get("ops") or []:
            name = op.get("qnn_name")
            if not name:
                continue
            for key in qnn_name_keys(str(name)):
                out.setdefault((iid, key), op)
                out.setdefault((None, key), op)
    return out


def qnn_partitions(qnn: dict | None) -> dict[int, dict]:
    return {p.get("instruction_id"): p for p in (qnn or {}).get("partitions") or []
            if isinstance(p, dict) and p.get("instruction_id") is not None}
