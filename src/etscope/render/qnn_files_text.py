"""Terminal view of QNN files given without a partition to join them to (``etscope qnn --optrace
x.json`` alone): their per-op and per-unit findings, the busiest ops, and what is missing. Laid out
by the shared screen (render.screen): fitted to a terminal's width, nothing cut when piped."""
from __future__ import annotations

from etscope.analysis.qnn.files_alone import FilesView
from etscope.render.text import Table, console_or_default, shown
from etscope.units import fmt_bytes

TOP = 25    # per-op rows on a terminal without --top; piped output lists all


def _yn(v) -> str:
    return "—" if v is None else ("yes" if v else "no")


def render_qnn_files(files: FilesView, console=None, top: int | None = None) -> None:
    """``files``: the ``files`` object of the qnn report (analysis.qnn.files_alone.files_view); ``top``:
    per-op rows (0: all; None: all when piped, TOP on a terminal)."""
    c = console_or_default(console)
    if top is None:
        top = 0 if c.complete else TOP
    c.print(shown(f"QNN files ({files.from_}): what they hold without an ETDump"), style="bold")
    for f in files.findings:
        c.print(shown("  " + f))
    ops = sorted((o for o in files.ops if o.cycles), key=lambda o: -o.cycles)
    if ops:
        shown_ops = ops[:top] if top else ops
        t = Table(title=f"Per-op cycles, one inference ({len(ops)} ops with cycles, highest first)")
        for col in ("QNN op", "op type", "cycles", "share", "HMX", "HVX", "DMA", "DRAM r/w"):
            t.add_column(col, justify="right" if col in ("cycles", "share") else "left",
                         detail={"DRAM r/w": 2, "op type": 1}.get(col, 0))
        for o in shown_ops:
            dram = ("—" if o.dram_read is None and o.dram_write is None else
                    f"{fmt_bytes(o.dram_read or 0)} / {fmt_bytes(o.dram_write or 0)}")
            share = "—" if o.share is None else f"{o.share:.1%}"
            t.add_row(shown(o.qnn_name), shown(o.op_type or "—"), f"{o.cycles:,.0f}", share,
                      _yn(o.hmx), _yn(o.hvx), _yn(o.dma), dram)
        if len(shown_ops) < len(ops):
            t.caption = f"… {len(ops) - len(shown_ops)} more (--top 0, or --json for all)"
        c.print(t)
    for m in files.missing:
        c.print(shown("Missing: " + m))
