"""Terminal view of the HTP-op breakdown and limits (``qnn``'s "Inside the HTP" section)."""
from __future__ import annotations

from rich.text import Text

from etscope.render.text import Table, safe_text, shown

# Columns of the per-QNN-op table, in the breakdown's category order (analysis.qnn.htp_ops).
_COLUMNS = (("hmx", "HMX"), ("hvx", "HVX"), ("layout", "layout"), ("dma", "DMA"), ("sync", "sync"),
            ("unknown", "unknown"), ("idle", "idle"))


def _cyc(x) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _cat(o, c: str) -> float:
    return o.category_cycles(c)


def render_htp(c, htp, top: int) -> None:
    """``htp``: ``analysis.qnn.result.HtpView`` per QHAS/optrace file pair; ``top``: QNN op rows per
    breakdown (0: all)."""
    for h in htp:
        b, lim = h.breakdown, h.limits
        where = f" — {b.partition}" if b.partition else ""
        c.print(Text(shown(f"Inside the HTP{where}: what each QNN op ran (HTP cycles, {b.source} "
                           f"{b.path}, first inference of the optrace run)"), style="bold"))
        split = ", ".join(f"{x.label} {x.cycles:,.0f}" + (f" ({x.share:.1%})" if x.share is not None else "")
                          for x in b.by_category)
        c.print(safe_text(f"Whole graph: {b.active_cycles:,.0f} active cycles: {split}"
                          + (f"; idle share is of {b.timeline_cycles:,.0f} timeline cycles" if b.timeline_cycles
                             and b.idle_cycles is not None else "")))
        shown_cats = [(k, h_) for k, h_ in _COLUMNS if any(_cat(o, k) for o in b.ops)]
        lims = {x.qnn_op: x for x in lim.ops}
        t = Table(title="Per QNN op (cycles by category; DRAM GB/s = its DRAM bytes ÷ its cycles at the clock below)")
        t.add_column("QNN op", kind="name")
        t.add_column("cycles", justify="right", kind="num")
        for _, head in shown_cats:
            t.add_column(head, justify="right", kind="num")
        t.add_column("DRAM GB/s", justify="right", kind="num")
        t.add_column("bound", kind="text")
        t.add_column("graph node / source", kind="text", detail=True)
        rows = b.ops if not top else b.ops[:top]
        for o in rows:
            x = lims.get(o.qnn_op)
            node = " ".join(v for v in (o.node, o.source and f"({o.source})") if v) or "—"
            t.add_row(safe_text(o.qnn_op), _cyc(o.cycles), *(_cyc(_cat(o, k)) if _cat(o, k) else "·"
                                                                   for k, _ in shown_cats),
                      "—" if x is None or x.dram_gbps is None else f"{x.dram_gbps:.2f}",
                      safe_text((x.bound if x is not None else None) or "—"), safe_text(node))
        c.print(t)
        if top and len(b.ops) > top:
            c.print(safe_text(f"… {len(b.ops) - top} more QNN ops (--top 0 or --json lists all)"))
        if b.ops and b.ops[0].htp_ops:
            _render_htp_ops(c, b.ops[0])
        clock = (f"{lim.clock_mhz:,.0f} MHz ({lim.clock_note})" if lim.clock_mhz else
                 "no clock: times and bytes/s unknown")
        c.print(safe_text(f"Clock: {clock}. DRAM: {lim.bandwidth.text}. {lim.macs_note}; "
                          f"{lim.compute_ceiling_note}."))
        for n in b.notes or []:
            c.print(safe_text("note: " + n))
        c.print()


def _render_htp_ops(c, o) -> None:
    t = Table(title=f"HTP ops of {o.qnn_op} (the largest)")
    # On a narrow terminal the byte and dominant-path columns move under their rows (detail).
    for col, kind, detail in (("HTP op", "name", 0), ("unit", None, 0), ("category", "text", 0), ("cycles", "num", 0),
                              ("dominant path", "num", 1), ("DRAM r/w", "num", 3), ("VTCM r/w", "num", 2)):
        t.add_column(col, justify="right" if kind == "num" else "left", kind=kind, detail=detail)
    for h in o.htp_ops:
        t.add_row(safe_text(h.htp_op), safe_text(h.unit), safe_text(h.label), _cyc(h.cycles),
                  _cyc(h.dominant_path_cycles), _rw(h.dram_read, h.dram_write), _rw(h.vtcm_read, h.vtcm_write))
    c.print(t)


def _rw(r, w) -> str:
    if r is None and w is None:
        return "—"
    return f"{r or 0:,.0f} / {w or 0:,.0f}"
