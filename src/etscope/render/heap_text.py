"""The DSP heap view (``--qnn-heap``) as text lines for people."""
from __future__ import annotations

from etscope.render.text import shown


def _b(n) -> str:
    if n is None:
        return "—"
    return f"{n:,} B" + (f" ({n / 2**20:.2f} MiB)" if abs(n) >= 100 << 10 else "")


def heap_lines(v: dict) -> list[str]:
    out = [f"DSP heap (QNN HTP heap profile {shown(v['path'])}):",
           f"  before the first context was created  {_b(v['before_bytes'])}",
           f"  after the last context was freed      {_b(v['after_bytes'])}"]
    if v["difference_bytes"] is not None:
        out.append(f"  difference (after - before)           {v['difference_bytes']:+,} B")
    planned = v.get("planned_cpu_bytes") or {}
    for name, n in planned.items():
        mark = " (the runs' method)" if name == v.get("method") and len(planned) > 1 else ""
        out.append(f"  planned CPU memory, {shown(name)}{mark}: {_b(n)}")
    if v.get("vtcm_bytes") is not None:
        src = " (SoC table)" if v.get("vtcm_source") == "soc table" else ""
        out.append(f"  VTCM of {shown(v.get('soc_model'))}{src}: {_b(v['vtcm_bytes'])}")
    out.append("  (" + shown(v.get("about") or "") + ")")
    for note in v.get("notes") or []:
        out.append("  note: " + shown(note))
    return out
