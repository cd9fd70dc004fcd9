"""Plain-language reading guide built from a summary dict (shared by the text and HTML views)."""
from __future__ import annotations

from etscope.units import fmt_ms


def reading_guide(s: dict) -> list[str]:
    lines: list[str] = []
    runs = s["runs"]
    lat = runs.get("latency_ms")
    if not lat:
        return ["No Execute runs with timing were found in this ETDump."]
    method = f" ({s['method']})" if s.get("method") else ""
    lines.append(
        f"Method::execute{method}: {fmt_ms(lat['p50'])} p50 over {runs['count']} run(s) "
        f"(mean {fmt_ms(lat['mean'])}, min {fmt_ms(lat['min'])}, max {fmt_ms(lat['max'])}).")
    parts = []
    for b in s["breakdown"]:
        if b["kind"] == "delegate":
            calls = b["calls_per_run"]
            parts.append(f"{_num(calls)} {b['backend']} delegate call{'s' if calls != 1 else ''} "
                         f"({fmt_ms(b['mean_ms'])}, {b['share']:.0%})")
        elif b["kind"] == "cpu_ops":
            calls = b.get("calls_per_run", 0)
            tops = s.get("top_fallback_op_types") or []
            detail = ""
            if tops:
                bits = []
                for t in tops[:3]:
                    where = f" at {t['sources'][0]}" if t["sources"] else ""
                    bits.append(f"{t['op_type']} ×{t['instructions']}{where}")
                detail = ": " + ", ".join(bits) + (" …" if len(tops) > 3 else "")
            parts.append(f"{_num(calls)} CPU kernel call{'s' if calls != 1 else ''} "
                         f"({fmt_ms(b['mean_ms'])}, {b['share']:.0%}{detail})")
        else:
            parts.append(f"{fmt_ms(b['mean_ms'])} framework overhead ({b['share']:.0%})")
    lines.append("Per run on average it contains " + "; ".join(parts) + ".")
    lines.append(
        "How to read this: Method::execute wraps the whole call. Each DELEGATE_CALL is timed by "
        "ExecuTorch around one call into a backend (one per partition); the backend's own events "
        "(per-op rows, QNN's accelerator time and cycles) are nested inside it, not added to it. "
        "OPERATOR_CALL rows are kernels that ran on the CPU (fallback, not delegated). Framework "
        "overhead is Method::execute minus all of those.")
    qnn = [d for d in s.get("delegate_calls", []) if d["backend"] == "QnnBackend"]
    if qnn:
        lines.append("QNN events inside DELEGATE_CALL are in their own units (µs, cycles, bytes, "
                     "counts), shown as such; `etscope qnn` explains them per partition.")
    mem = s.get("memory") or {}
    if mem.get("planned_bytes") is not None:
        from etscope.units import fmt_bytes

        lines.append(f"Planned activation memory (from the .pte): {fmt_bytes(mem['planned_bytes'])} "
                     f"in {len(mem['planned_buffers'])} buffer(s).")
    return lines


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"
