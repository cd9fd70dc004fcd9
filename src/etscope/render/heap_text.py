"""The DSP heap view (``--qnn-heap``) as text lines for people."""
from __future__ import annotations

from etscope.analysis.qnn.heap import HeapView
from etscope.render.text import shown


def _b(n) -> str:
    if n is None:
        return "—"
    return f"{n:,} B" + (f" ({n / 2**20:.2f} MiB)" if abs(n) >= 100 << 10 else "")


def heap_lines(v: HeapView) -> list[str]:
    out = [f"DSP heap (QNN HTP heap profile {shown(v.path)}):",
           f"  before the first context was created  {_b(v.before_bytes)}",
           f"  after the last context was freed      {_b(v.after_bytes)}"]
    if v.difference_bytes is not None:
        out.append(f"  difference (after - before)           {v.difference_bytes:+,} B")
    planned = v.planned_cpu_bytes
    for name, n in planned.items():
        mark = " (the runs' method)" if name == v.method and len(planned) > 1 else ""
        out.append(f"  planned CPU memory, {shown(name)}{mark}: {_b(n)}")
    if v.vtcm_bytes is not None:
        src = " (SoC table)" if v.vtcm_source == "soc table" else ""
        out.append(f"  VTCM of {shown(v.soc_model)}{src}: {_b(v.vtcm_bytes)}")
    out.append("  (" + shown(v.about) + ")")
    for note in v.notes:
        out.append("  note: " + shown(note))
    return out
