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

from etscope import units

TOP_LEVEL = ("delegate_call", "operator_call", "kernel")


def attribute(d: dict, base_p50_ms: float | None, new_p50_ms: float | None) -> dict | None:
    """Split ``new_p50_ms - base_p50_ms`` over the parts of ``d`` (a ``compare_runs`` result with
    ``ops``, ``placement_changes``, ``breakdown`` and ``qnn``). None without both p50s."""
    if not (_num(base_p50_ms) and _num(new_p50_ms)):
        return None
    total = new_p50_ms - base_p50_ms
    moved = _moved_keys(d["placement_changes"])
    parts: list[dict] = []
    other_cpu = {"ms": 0.0, "n": 0}
    for o in d["ops"]:
        if o["role"] not in TOP_LEVEL or o["unit"] != "ns":
            continue
        delta = _ms(o["new_p50"]) - _ms(o["base_p50"])
        if (o.get("op_type"), o.get("source")) in moved and o["role"] != "delegate_call":
            parts.append({"kind": "moved_op", "name": f"moved {_moved_dir(o)}: {o['op_type']}"
                          + (f" ({o['source']})" if o.get("source") else ""), "change_ms": delta,
                          "base_ms": _ms(o["base_p50"]), "new_ms": _ms(o["new_p50"])})
        elif o["role"] == "delegate_call":
            parts.append({"kind": "delegate_call", "name": o["name"], "change_ms": delta,
                          "base_ms": _ms(o["base_p50"]), "new_ms": _ms(o["new_p50"]),
                          "of_which": _qnn_nesting(d.get("qnn"), o, delta)})
        else:
            other_cpu["ms"] += delta
            other_cpu["n"] += 1
    if other_cpu["n"]:
        parts.append({"kind": "cpu_ops", "name": f"other CPU ops ({other_cpu['n']})", "change_ms": other_cpu["ms"]})
    for b in d["breakdown"]:
        if b["kind"] == "framework_overhead" and _num(b.get("change_ms")):
            parts.append({"kind": "framework_overhead", "name": "framework overhead", "change_ms": b["change_ms"]})
    parts = [p for p in parts if _num(p["change_ms"])]
    parts.sort(key=lambda p: -abs(p["change_ms"]))
    named = sum(p["change_ms"] for p in parts)
    rest = total - named
    # Shares of a change that is not significant are shares of noise (+856 ns split into -1053%
    # and +766%): given only for a significant change.
    significant = bool(d["latency"].get("significant"))
    for p in parts:
        p["share_pct"] = p["change_ms"] / total * 100 if total and significant else None
    moved_ms = sum(p["change_ms"] for p in parts if p["kind"] == "moved_op")
    return {"base_ms": base_p50_ms, "new_ms": new_p50_ms, "change_ms": total, "parts": parts,
            "explained_ms": named, "unexplained_ms": rest,
            "unexplained_pct": rest / total * 100 if total and significant else None,
            "moved_ops_ms": moved_ms,
            "moved_ops_pct": moved_ms / total * 100 if total and moved and significant else None,
            "significant": significant,
            "method": "change of each part's own p50 per steady run (ns events of the instructions: moved ops, "
                      "each DELEGATE_CALL, the other CPU ops together, framework overhead), largest first; p50s do "
                      "not add, the rest is stated as unexplained"}


def _moved_keys(changes: list[dict]) -> set:
    return {(c.get("op_type"), c.get("source")) for c in changes if c["kind"] in ("moved_to_cpu", "moved_to_delegate")}


def _moved_dir(o: dict) -> str:
    return "to the CPU" if o["status"] == "new" or o.get("placement_new") == "cpu" else "off the CPU"


def _qnn_nesting(qnn: list[dict] | None, op: dict, delta_ms: float) -> list[dict] | None:
    """A QNN DELEGATE_CALL's change split by the levels of the nesting (accelerator time, the rest
    of QnnGraph_execute, the rest of the call) and, when the clock estimate moved, how much of the
    accelerator change the clock explains (same cycles at another clock)."""
    if not qnn or not op.get("identity") or op["identity"][1] != "QnnBackend":
        return None
    try:
        k = int(op["identity"][2])
    except (ValueError, IndexError):
        return None
    q = next((x for x in qnn if x.get("partition") == k), None)
    if q is None:
        return None
    out = []
    acc, exe = q.get("accel_us") or {}, q.get("qnn_execute_us") or {}
    d_acc = _diff_us(acc)
    d_exe = _diff_us(exe)
    if d_acc is not None:
        clock = q.get("clock_mhz_est") or {}
        cb, cn = clock.get("base"), clock.get("new")
        if _num(cb) and _num(cn) and cb > 0 and cn > 0 and _num(acc.get("base")):
            by_clock = acc["base"] * (cb / cn - 1) / 1000
            out.append({"name": "HTP clock (same cycles at the new clock)", "change_ms": by_clock})
            out.append({"name": "HTP accelerator cycles", "change_ms": d_acc - by_clock})
        else:
            out.append({"name": "HTP accelerator time", "change_ms": d_acc})
    if d_exe is not None:
        out.append({"name": "QnnGraph_execute outside the accelerator", "change_ms": d_exe - (d_acc or 0.0)})
        out.append({"name": "delegate call outside QnnGraph_execute", "change_ms": delta_ms - d_exe})
    return out or None


def _diff_us(v: dict) -> float | None:
    a, b = v.get("base"), v.get("new")
    return (b - a) / 1000 if _num(a) and _num(b) else None


def _ms(ns) -> float:
    return units.ns_to_ms(float(ns)) if _num(ns) else 0.0


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
