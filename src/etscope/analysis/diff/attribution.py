"""Attribution of a latency change: the change of the p50 of ``Method::execute`` split into named
parts (ops that moved between a delegate and the CPU, each delegate call, the other CPU ops,
framework overhead; inside a QNN delegate, its accelerator time and the clock), largest first,
with what the parts leave unexplained.

Each part's change is the change of its own p50 per run over the steady runs (the verdict's
runs). p50s do not add, so the parts need not sum to the whole change: the difference is stated
as ``unexplained_ms`` and, as a share of the change, ``unexplained_pct``. A part is never
counted twice: an op that moved is taken out of the CPU ops and the delegate calls it left.
"""
from __future__ import annotations

import math

from dataclasses import replace

from etscope import units
from etscope.analysis.diff.result import (
    Attribution, BreakdownPart, DelegateCallPart, Latency, NestingPart, OpChange, OpPart, Part, PlacementChange,
    QnnPartitionChange,
)
from etscope.formats.backends import is_qnn

TOP_LEVEL = ("delegate_call", "operator_call", "kernel")


def attribute(latency: Latency, ops: tuple[OpChange, ...], placement_changes: tuple[PlacementChange, ...],
              breakdown: tuple[BreakdownPart, ...], qnn: tuple[QnnPartitionChange, ...] | None) -> Attribution | None:
    """Split ``new_p50_ms - base_p50_ms`` of ``latency`` over the parts of one comparison (its op
    changes, placement changes, breakdown and QNN partitions). None without both p50s."""
    base_p50_ms, new_p50_ms = latency.base_p50_ms, latency.new_p50_ms
    if not (_num(base_p50_ms) and _num(new_p50_ms)):
        return None
    total = new_p50_ms - base_p50_ms
    moved = _moved_keys(placement_changes)
    parts: list = []
    other_cpu_ms, other_cpu_n = 0.0, 0
    for o in ops:
        if o.role not in TOP_LEVEL or o.unit != "ns":
            continue
        delta = _ms(o.new_p50) - _ms(o.base_p50)
        if (o.op_type, o.source) in moved and o.role != "delegate_call":
            parts.append(OpPart(kind="moved_op", name=f"moved {_moved_dir(o)}: {o.op_type}"
                                + (f" ({o.source})" if o.source else ""), change_ms=delta,
                                base_ms=_ms(o.base_p50), new_ms=_ms(o.new_p50), share_pct=None))
        elif o.role == "delegate_call":
            parts.append(DelegateCallPart(kind="delegate_call", name=o.name, change_ms=delta,
                                          base_ms=_ms(o.base_p50), new_ms=_ms(o.new_p50),
                                          of_which=_qnn_nesting(qnn, o, delta), share_pct=None))
        else:
            other_cpu_ms += delta
            other_cpu_n += 1
    if other_cpu_n:
        parts.append(Part(kind="cpu_ops", name=f"other CPU ops ({other_cpu_n})", change_ms=other_cpu_ms,
                          share_pct=None))
    for b in breakdown:
        if b.kind == "framework_overhead" and _num(b.change_ms):
            parts.append(Part(kind="framework_overhead", name="framework overhead", change_ms=b.change_ms,
                              share_pct=None))
    parts = [p for p in parts if _num(p.change_ms)]
    parts.sort(key=lambda p: -abs(p.change_ms))
    named = sum(p.change_ms for p in parts)
    rest = total - named
    # Shares of a change that is not significant are shares of noise (+856 ns split into -1053%
    # and +766%): given only for a significant change.
    significant = bool(latency.significant)
    parts = [replace(p, share_pct=p.change_ms / total * 100 if total and significant else None) for p in parts]
    moved_ms = sum(p.change_ms for p in parts if p.kind == "moved_op")
    return Attribution(base_ms=base_p50_ms, new_ms=new_p50_ms, change_ms=total, parts=tuple(parts),
                       explained_ms=named, unexplained_ms=rest,
                       unexplained_pct=rest / total * 100 if total and significant else None,
                       moved_ops_ms=moved_ms,
                       moved_ops_pct=moved_ms / total * 100 if total and moved and significant else None,
                       significant=significant,
                       method="change of each part's own p50 per steady run (ns events of the instructions: moved "
                              "ops, each DELEGATE_CALL, the other CPU ops together, framework overhead), largest "
                              "first; p50s do not add, the rest is stated as unexplained")


def _moved_keys(changes: tuple[PlacementChange, ...]) -> set:
    return {(c.op_type, c.source) for c in changes if c.kind in ("moved_to_cpu", "moved_to_delegate")}


def _moved_dir(o: OpChange) -> str:
    return "to the CPU" if o.status == "new" or o.placement_new == "cpu" else "off the CPU"


def _qnn_nesting(qnn: tuple[QnnPartitionChange, ...] | None, op: OpChange,
                 delta_ms: float) -> tuple[NestingPart, ...] | None:
    """A QNN DELEGATE_CALL's change split by the levels of the nesting (accelerator time, the rest
    of QnnGraph_execute, the rest of the call) and, when the clock estimate moved, how much of the
    accelerator change the clock explains (same cycles at another clock)."""
    if not qnn or not op.identity or not is_qnn(op.identity[1]):
        return None
    try:
        k = int(op.identity[2])
    except (ValueError, IndexError):
        return None
    q = next((x for x in qnn if x.partition == k), None)
    if q is None:
        return None
    out = []
    acc, exe = q.accel_us, q.qnn_execute_us
    d_acc = _diff_us(acc.base, acc.new)
    d_exe = _diff_us(exe.base, exe.new)
    if d_acc is not None:
        cb, cn = q.clock_mhz_est.base, q.clock_mhz_est.new
        if _num(cb) and _num(cn) and cb > 0 and cn > 0 and _num(acc.base):
            by_clock = acc.base * (cb / cn - 1) / 1000
            out.append(NestingPart("HTP clock (same cycles at the new clock)", by_clock))
            out.append(NestingPart("HTP accelerator cycles", d_acc - by_clock))
        else:
            out.append(NestingPart("HTP accelerator time", d_acc))
    if d_exe is not None:
        out.append(NestingPart("QnnGraph_execute outside the accelerator", d_exe - (d_acc or 0.0)))
        out.append(NestingPart("delegate call outside QnnGraph_execute", delta_ms - d_exe))
    return tuple(out) or None


def _diff_us(a, b) -> float | None:
    return (b - a) / 1000 if _num(a) and _num(b) else None


def _ms(ns) -> float:
    return units.ns_to_ms(float(ns)) if _num(ns) else 0.0


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
