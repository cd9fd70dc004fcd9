"""Findings from the HTP-op breakdown (``htp_ops``), ranked by the cycles at stake:

- ``layout``: layout conversions (HTP ops flagged ``fmt_change``): their share of the active cycles,
  the QNN ops they sit in, and what usually removes them;
- ``weights_to_vtcm``: DRAM -> VTCM transfers inside QNN ops that compute (their constant operands,
  weights and bias, brought in on every call);
- ``mostly_dma``: QNN ops that compute but spend most of their cycles in data movement (QNN's own
  Input/Output ops, which only move data, are left out: true by construction);
- ``idle``: idle on the dominant path (QHAS ``dominant_path_htp_0``).

Every finding states its basis: QHAS/optrace rows of the first inference of a separate optrace run.
"""
from __future__ import annotations

# A layout share of the active cycles at or above these: high / medium (else info).
LAYOUT_HIGH, LAYOUT_MEDIUM = 0.25, 0.10
MOSTLY_DMA = 0.5         # an op's DMA share of its cycles at or above this: "mostly DMA"
IDLE_MEDIUM = 0.10       # dominant-path idle at or above this share of the timeline: medium
MIN_SHARE = 0.01         # below this share of the active cycles, not a finding
COMPUTE = ("hmx", "hvx", "layout")


def htp_findings(htp, make, anchor: str = "qnn-htp") -> list:
    """Findings (``make(**fields)`` builds one, ``analysis.findings.Finding``) of each breakdown
    (``htp``: ``analysis.qnn.result.HtpView`` per QHAS/optrace file pair)."""
    out = []
    for i, h in enumerate(htp or ()):
        b, lim = h.breakdown, h.limits
        where = _where(b, len(htp))
        mhz = lim.clock_mhz
        out += _layout(b, where, mhz, make, anchor) + _weights(b, where, mhz, make, anchor)
        out += _mostly_dma(b, where, mhz, make, anchor) + _idle(b, where, mhz, make, anchor)
    return out


def _where(b, n: int) -> str:
    name = b.partition or b.path.replace("\\", "/").rsplit("/", 1)[-1]
    if name.startswith("instruction "):          # named as the other findings name a partition
        name = "DELEGATE_CALL #" + name[len("instruction "):]
    return f"{name}: " if n > 1 or b.partition else ""


def _cat(o, c: str) -> float:
    return o.category_cycles(c)


def _us(cycles: float, mhz) -> float | None:
    return cycles / mhz if mhz else None


def _basis(b) -> str:
    name = b.path.replace("\\", "/").rsplit("/", 1)[-1]
    return (f"{'QHAS htp_op_instances' if b.source == 'qhas' else 'optrace op events'} of {name}, "
            "first inference of a separate optrace-level run")


def _layout(b, where, mhz, make, anchor) -> list:
    total = b.active_cycles
    layout = sum(_cat(o, "layout") for o in b.ops)
    if not total or layout / total < MIN_SHARE:
        return []
    share = layout / total
    ops = sorted((o for o in b.ops if _cat(o, "layout")), key=lambda o: -_cat(o, "layout"))
    sites = ", ".join(f"{o.qnn_op} {_cat(o, 'layout'):,.0f}" + (f" at {o.source}" if o.source else "")
                      for o in ops[:4]) + (f" and {len(ops) - 4} more" if len(ops) > 4 else "")
    return [make(
        kind="layout", severity="high" if share >= LAYOUT_HIGH else "medium" if share >= LAYOUT_MEDIUM else "info",
        text=(f"{where}layout conversions take {layout:,.0f} of {total:,.0f} active HTP cycles ({share:.1%}): "
              f"{sites}. They sit where a tensor changes between the flat layout (graph inputs/outputs, ops that "
              "need it) and the HTP's tiled one; fewer partition boundaries usually remove them"),
        evidence=f"HTP ops flagged fmt_change; {_basis(b)}", section=anchor, us_per_run=_us(layout, mhz))]


def _weights(b, where, mhz, make, anchor) -> list:
    cyc, bytes_, ops = 0.0, 0.0, set()
    for o in b.ops:
        if not any(_cat(o, c) for c in COMPUTE):
            continue
        for h in o.htp_ops:
            if h.category == "dma" and (h.dram_read or 0) > 0 and (h.vtcm_write or 0) > 0:
                cyc += h.cycles
                bytes_ += h.dram_read
                ops.add(o.qnn_op)
    if not cyc or cyc / (b.active_cycles or 1) < MIN_SHARE:
        return []
    share = cyc / b.active_cycles
    return [make(
        kind="weights_to_vtcm", severity="medium" if share >= LAYOUT_MEDIUM else "info",
        text=(f"{where}{len(ops)} computing QNN op(s) copy {bytes_:,.0f} bytes from DRAM into VTCM on every call "
              f"(their constant operands: weights and bias), {cyc:,.0f} cycles ({share:.1%} of the active cycles)"),
        evidence=f"DMA HTP ops reading DRAM and writing VTCM inside QNN ops that compute on HMX/HVX; {_basis(b)}",
        section=anchor, us_per_run=_us(cyc, mhz))]


def _split(o) -> tuple[tuple, str]:
    """The op's dominant-path split when known (a DMA wait overlapping other work is not on the
    path), else its cycles."""
    return (o.dominant_by_category, "dominant-path cycles") if o.dominant_by_category else (
        o.by_category, "cycles")


def _mostly_dma(b, where, mhz, make, anchor) -> list:
    rows = []
    for o in b.ops:
        split, of = _split(o)
        dma = next((x.cycles for x in split if x.category == "dma"), 0.0)
        total = sum(x.cycles for x in split if x.category != "idle")
        if total and any(_cat(o, c) for c in COMPUTE) and dma / total >= MOSTLY_DMA:
            rows.append((dma, total, of, o))
    if not rows:
        return []
    rows.sort(key=lambda r: -r[0])
    cyc = sum(d for d, *_ in rows)
    names = ", ".join(f"{o.qnn_op} ({d / t:.0%} of {t:,.0f} {of})" for d, t, of, o in rows[:4])
    return [make(
        kind="mostly_dma", severity="medium" if cyc / (b.active_cycles or 1) >= LAYOUT_MEDIUM else "info",
        text=f"{where}{len(rows)} computing QNN op(s) spend most of their time moving data (DMA): {names}",
        evidence=(f"DMA transfers, waits and checkpoints against the op's dominant-path cycles (its cycles "
                  f"without a dominant path); {_basis(b)}"), section=anchor, us_per_run=_us(cyc, mhz))]


def _idle(b, where, mhz, make, anchor) -> list:
    idle, timeline = b.idle_cycles, b.timeline_cycles
    if not idle or not timeline or idle / timeline < MIN_SHARE:
        return []
    share = idle / timeline
    top = sorted((o for o in b.ops if o.idle_cycles), key=lambda o: -o.idle_cycles)[:3]
    return [make(
        kind="idle", severity="medium" if share >= IDLE_MEDIUM else "info",
        text=(f"{where}the HTP's dominant path is idle {idle:,.0f} of {timeline:,.0f} timeline cycles ({share:.1%}); "
              "most before " + ", ".join(f"{o.qnn_op} ({o.idle_cycles:,.0f})" for o in top)),
        evidence=f"dominant_path_htp_0 rows that are no HTP op instance (Accumulated Idle); {_basis(b)}",
        section=anchor, us_per_run=_us(idle, mhz))]
