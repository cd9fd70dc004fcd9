"""Terminal lines for QNN files given without a partition to join them to (``etscope qnn --optrace
x.json`` alone): their per-op and per-unit findings, the busiest ops, and what is missing."""
from __future__ import annotations

from etscope.render.safe import clean
from etscope.units import fmt_bytes


def _yn(v) -> str:
    return "—" if v is None else ("yes" if v else "no")


def qnn_files_lines(files: dict, top: int = 25) -> list[str]:
    """``files``: the ``files`` object of the qnn report (analysis.qnn_only.files_view)."""
    out = [clean(f"QNN files ({files['from']}): what they hold without an ETDump", 300)]
    out += ["  " + clean(f, 500) for f in files["findings"]]
    ops = sorted((o for o in files["ops"] if o.get("cycles")), key=lambda o: -o["cycles"])
    if ops:
        out.append(f"Per-op cycles, one inference ({len(ops)} ops with cycles, highest first):")
        out.append(f"  {'QNN op':<40} {'op type':<18} {'cycles':>10} {'share':>6}  HMX  HVX  DMA  DRAM r/w")
        for o in ops[:top]:
            dram = ("—" if o.get("dram_read") is None and o.get("dram_write") is None else
                    f"{fmt_bytes(o.get('dram_read') or 0)} / {fmt_bytes(o.get('dram_write') or 0)}")
            share = "—" if o.get("share") is None else f"{o['share']:.1%}"
            out.append(f"  {clean(o['qnn_name'], 40):<40} {clean(o.get('op_type') or '—', 18):<18} "
                       f"{o['cycles']:>10,.0f} {share:>6}  {_yn(o.get('hmx')):<4} {_yn(o.get('hvx')):<4} "
                       f"{_yn(o.get('dma')):<4} {dram}")
        if len(ops) > top:
            out.append(f"  … {len(ops) - top} more (--top, or --json for all)")
    out += ["Missing: " + clean(m, 500) for m in files["missing"]]
    return out
