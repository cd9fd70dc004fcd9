"""What changed inside the runs, for `etscope diff`: per part of ``Method::execute`` (each delegate
backend, CPU ops, framework overhead), per op (matched by identity, with a rank test), and per QNN
partition (accelerator cycles, clock, per-op cycles). Every figure is a p50 over the steady runs,
the verdict's runs."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.arrays import median
from etscope.analysis.diff.intervals import mann_whitney_p
from etscope.analysis.diff.result import BreakdownPart, Change, OpChange, QnnOpChange, QnnPartitionChange
from etscope.analysis.diff.samples import strip_qnn
from etscope.analysis.ops import placement

OP_ALPHA = 0.01
# Where a status sorts among the op rows: what changed first.
STATUS_RANK = {"new": 0, "removed": 1, "slower": 2, "faster": 3, "uncertain": 4, "same": 5, "not_compared": 6}


def p50(v) -> float | None:
    v = np.asarray(v, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(median(v)) if v.size else None


def breakdown_change(bases: list[P.Profile], news: list[P.Profile], drop_b: list[int],
                     drop_n: list[int]) -> tuple[BreakdownPart, ...]:
    """Per part of Method::execute (each delegate backend, CPU ops, framework overhead): p50 per
    run over the same steady runs as the verdict. Parts' p50s need not add up to the latency p50."""
    def parts_of(profiles, drops):
        cols: dict[tuple, list[np.ndarray]] = defaultdict(list)
        for p, n in zip(profiles, drops):
            parts = placement.per_run_parts(p)
            ok = ~np.isnan(parts["latency"])
            ok[:n] = False
            for b in p.backends():
                cols[("delegate", b)].append(parts[f"delegate:{b}"][ok])
                cols[("calls", b)].append(parts[f"calls:{b}"][ok])
            for kind in ("cpu_ops", "framework_overhead"):
                cols[(kind, None)].append(parts[kind][ok])
            cols[("calls", "cpu")].append(parts["calls:cpu"][ok])
        return {k: np.concatenate(v) for k, v in cols.items()}

    a, b = parts_of(bases, drop_b), parts_of(news, drop_n)
    out = []
    for key in dict.fromkeys([k for k in list(a) + list(b) if k[0] != "calls"]):
        calls_key = ("calls", key[1] if key[0] == "delegate" else "cpu")
        x, y = p50(a.get(key, [])), p50(b.get(key, []))
        xs = _ms(x) if x is not None else None
        ys = _ms(y) if y is not None else None
        calls = key[0] != "framework_overhead"
        out.append(BreakdownPart(kind=key[0], backend=key[1], base_p50_ms=xs, new_p50_ms=ys,
                                 base_calls_per_run=p50(a[calls_key]) if calls and calls_key in a else None,
                                 new_calls_per_run=p50(b[calls_key]) if calls and calls_key in b else None,
                                 change_ms=(ys or 0.0) - (xs or 0.0)))
    return tuple(out)


def _ms(ns: float) -> float:
    return units.ns_to_ms(float(ns))


def op_changes(a: dict, b: dict, min_effect_pct: float) -> tuple[OpChange, ...]:
    """Every op of either side (``samples.steady_samples``), matched by identity: p50 of each side,
    change, rank-test p value and a status; changed ones first, the larger change first."""
    rows = []
    for key in list(dict.fromkeys(list(a) + list(b))):
        x, y = a.get(key), b.get(key)
        ref = y or x
        common = dict(identity=tuple(str(k) for k in key), name=ref["name"], role=ref["role"], unit=ref["unit"],
                      op_type=ref["op_type"], source=ref["source"],
                      placement_base=x["placement"] if x else None, placement_new=y["placement"] if y else None)
        if x is None or y is None:
            rows.append(OpChange(**common, status="new" if x is None else "removed",
                                 base_p50=p50(x["values"]) if x else None, new_p50=p50(y["values"]) if y else None,
                                 change_pct=None, p_value=None, significant=None))
            continue
        pb, pn = p50(x["values"]), p50(y["values"])
        change = (pn / pb - 1) * 100 if pb else (0.0 if pn == 0 else None)
        p = mann_whitney_p(x["values"], y["values"])
        sig = bool(p == p and p < OP_ALPHA and change is not None and abs(change) >= min_effect_pct)
        # Not significant is "same" only when the p50 barely moved; a large move the test cannot
        # confirm (few runs, spread) is "uncertain", never "same".
        moved = change is None or abs(change) >= min_effect_pct
        rows.append(OpChange(**common, status=("slower" if change > 0 else "faster") if sig
                             else ("uncertain" if moved else "same"),
                             base_p50=pb, new_p50=pn, change_pct=change, p_value=p, significant=sig))
    return tuple(sorted(rows, key=lambda r: (STATUS_RANK[r.status], -abs(r.change_pct or 0))))


QNN_MEASURES = ("accel_cycles", "clock_mhz_est", "accel_us", "qnn_execute_us", "delegate_call_ms")


def qnn_changes(base: P.Profile, new: P.Profile) -> tuple[QnnPartitionChange, ...] | None:
    """Per QNN partition (matched by position): its measures on each side and its per-op cycle
    changes, largest first; None when neither side has a QNN delegate."""
    from etscope.analysis import qnn

    if not qnn.qnn_instructions(base) and not qnn.qnn_instructions(new):
        return None
    ra, rb = qnn.qnn_report(base), qnn.qnn_report(new)
    by_k: dict = defaultdict(dict)
    for side, rep in (("base", ra), ("new", rb)):
        for k, p in enumerate(rep.partitions):
            by_k[k][side] = p
    out = []
    for k, sides in sorted(by_k.items()):
        pa, pb = sides.get("base"), sides.get("new")
        measures = {}
        for f in QNN_MEASURES:
            va, vb = (getattr(pa, f) if pa else None), (getattr(pb, f) if pb else None)
            measures[f] = Change(va, vb, ((vb / va - 1) * 100) if va and vb is not None else None)
        ops_a = {strip_qnn(o.qnn_name): o for o in (pa.ops if pa else ())}
        ops_b = {strip_qnn(o.qnn_name): o for o in (pb.ops if pb else ())}
        changes = []
        for name in dict.fromkeys(list(ops_a) + list(ops_b)):
            oa, ob = ops_a.get(name), ops_b.get(name)
            ca = oa.cycles_p50 if oa else None
            cb = ob.cycles_p50 if ob else None
            changes.append(QnnOpChange(op=name, base_cycles_p50=ca, new_cycles_p50=cb,
                                       change_cycles=(cb or 0) - (ca or 0),
                                       status="new" if oa is None else "removed" if ob is None else "both"))
        out.append(QnnPartitionChange(partition=k, **measures,
                                      ops=tuple(sorted(changes, key=lambda c: -abs(c.change_cycles)))))
    return tuple(out)
