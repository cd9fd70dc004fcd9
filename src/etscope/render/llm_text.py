"""Terminal view of ``etscope llm`` (rich). For people; ``--json`` is the stable form."""
from __future__ import annotations


from rich.console import Console
from rich.text import Text

from etscope.analysis.glossary import ACCELERATOR, DELEGATE_CALL, MEAN_PER_RUN, P50, SHARE_OF_MEAN
from etscope.analysis.llm import label_text
from etscope.render.text import Table, breakdown_table, console_or_default, safe_text
from etscope.render.text import shown
from etscope.units import fmt_ms

_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values, width: int = 72, marks=None) -> str:
    """One line of block characters; long series are reduced to ``width`` buckets (max per bucket)."""
    vals = [v for v in values]
    if not vals:
        return ""
    n = len(vals)
    buckets = min(width, n)
    out = []
    finite = [v for v in vals if v == v]
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    span = hi - lo or 1.0
    for b in range(buckets):
        a, z = b * n // buckets, max((b + 1) * n // buckets, b * n // buckets + 1)
        chunk = [v for v in vals[a:z] if v == v]
        if not chunk:
            out.append(" ")
            continue
        v = max(chunk)
        out.append(_BLOCKS[min(len(_BLOCKS) - 1, int((v - lo) / span * (len(_BLOCKS) - 1) + 0.5))])
    return "".join(out)


def render_llm(r, console: Console | None = None) -> None:
    """``r``: the ``etscope llm`` result (``analysis.llm.result.LlmReport``)."""
    c = console_or_default(console)
    llm = r.llm
    names = ", ".join(shown("?" if i.etdump is None else i.etdump) for i in r.inputs)
    c.print(Text(f"etscope llm — {names}", style="bold"))
    extra = sorted({f"{k}: {shown(v)}" for i in r.inputs for k, v in (("etrecord", i.etrecord), ("pte", i.pte))
                    if v is not None})
    if extra:
        c.print(Text(", ".join(extra), style="dim"))
    split = llm.phase_split
    per_file = split.files       # several ETDumps: each one's phases, joined by name
    if per_file:
        how = (f"phases by {split.by}, found in each of {len(per_file)} ETDumps and joined by phase name."
               if split.by != "none" else
               f"no phases told apart in any of the {len(per_file)} ETDumps: {split.evidence or 'none'}.")
    else:
        how = f"phases by {split.by}." if split.by != "none" else f"no phases told apart: {split.evidence or 'none'}."
    c.print(safe_text(f"{llm.runs} Execute run(s); {how}"))
    named = [ph for ph in llm.phases if ph.method_from]
    if named:   # look-alike methods (QNN hybrid prefill/kv) named by analysis.llm.lookalike
        c.print(safe_text("Methods: " + ", ".join(f"{ph.name} runs = {ph.method}" for ph in named)
                          + f" ({named[0].method_from})."))
    if per_file:
        c.print(_files_table(per_file))
    c.print()
    for line in r.findings:
        c.print(safe_text(line))
    wall = llm.memory_wall
    if wall is not None:        # analysis.qnn.limits: weights per token x tokens/s vs the DRAM bandwidth
        c.print(safe_text(f"Memory wall: {wall.text}."))
        c.print(safe_text(f"  bytes per token: {wall.weight_bytes_from}; tokens/s: {wall.tokens_from}; "
                          f"DRAM: {wall.bandwidth.text}; prefill HMX busy share: "
                          + (f"{wall.prefill_hmx_busy_share:.1%} ({wall.prefill_hmx_from})"
                             if wall.prefill_hmx_busy_share is not None else wall.prefill_hmx_from)))
    c.print()

    t = Table(title="Phases (steady-state runs; warm-up left out)")
    for col in ("phase", "runs", "warm-up", "tokens/run", P50.label, "p90", "p99", "max", "per token",
                "runs/s"):
        t.add_column(col, justify="left" if col == "phase" else "right",
                     detail={"warm-up": 3, "p99": 2, "max": 1}.get(col, 0))
    for ph in llm.phases:
        lat = ph.latency_ms
        t.add_row(safe_text(ph.name), str(len(ph.runs)),
                  _runs_text(ph.warmup_runs, None if c.complete else 6) or "—",
                  "?" if ph.tokens_per_run is None else f"{ph.tokens_per_run:g}",
                  *((fmt_ms(v) for v in (lat.p50, lat.p90, lat.p99, lat.max)) if lat else ("n/a",) * 4),
                  fmt_ms(ph.ms_per_token) if ph.ms_per_token else "—",
                  f"{ph.runs_per_s:,.1f}" if ph.runs_per_s else "—")
    c.print(t)
    if llm.ttft_ms is not None:
        c.print(safe_text(f"Time to first token, prefill {P50.label}: {fmt_ms(llm.ttft_ms)}"))
    if llm.decode_tokens_per_s is not None:
        c.print(safe_text(f"Decode tokens/s: {llm.decode_tokens_per_s:,.1f}"))
    elif llm.decode_runs_per_s is not None:
        c.print(safe_text(f"Decode runs/s (tokens per run unknown): {llm.decode_runs_per_s:,.1f}"))
    c.print()

    for ph in llm.phases:
        c.print(breakdown_table(ph.breakdown,
                                f"{shown(ph.name)}: where Method::execute's time goes ({MEAN_PER_RUN.label})"))
        if ph.qnn is not None:
            c.print(_partitions_table(ph))
        t = Table(title=f"{shown(ph.name)}: top instructions")
        for col in ("instr", "op", "placement", MEAN_PER_RUN.label, P50.label, SHARE_OF_MEAN.label, "source"):
            t.add_column(col, justify="left" if col in ("op", "placement", "source") else "right",
                         detail=col == "source")
        for o in ph.top_ops:
            t.add_row(str(o.instruction_id), safe_text(label_text(o)), safe_text(o.placement or ""),
                      fmt_ms(o.mean_ms), fmt_ms(o.p50_ms), f"{o.share:.1%}" if o.share is not None else "",
                      safe_text(o.source or ""))
        c.print(t)
        c.print()

    series = llm.series
    c.print(Text("Run series (latency of every run in order, max per column):", style="bold"))
    c.print(Text(sparkline(series.latency_ms, width=min(96, max(8, c.width - 4)))))
    if len(llm.phases) > 1:
        marks = "".join(_phase_mark(p) for p in series.phase)
        c.print(Text(_squeeze_marks(marks, min(96, max(8, c.width - 4))), style="dim"))
    drift = llm.drift
    if drift is not None:
        rows = drift.by_position.rows
        ci = drift.slope_ci95_ms_per_100_tokens
        c.print(Text(f"Decode latency by {drift.x} (p50 per position, {rows[0][0]}..{rows[-1][0]}, "
                     f"{drift.runs} runs): {drift.slope_ms_per_100_tokens:+.3f} ms per 100 tokens"
                     + (f" (95% interval {ci[0]:+.3f}..{ci[1]:+.3f})" if ci else "")
                     + ("" if drift.drift_shown else "; no drift shown (see findings)"), style="bold"))
        c.print(Text(sparkline([row[2] for row in rows], width=min(96, max(8, c.width - 4)))))
    for w in r.warnings:
        c.print(Text("warning: " + shown(w), style="yellow"))


def _files_table(per_file) -> Table:
    """Each ETDump's runs, how its phases were found and how many of its runs each joined phase holds."""
    t = Table(title="ETDumps (each a session: phases found on its own runs, then joined by name)")
    for col in ("ETDump", "runs", "phases by", "runs per phase"):
        t.add_column(col, justify="right" if col == "runs" else "left")
    for f in per_file:
        t.add_row(safe_text(shown(f.etdump)), str(f.runs), safe_text(f.by),
                  safe_text(", ".join(f"{name} {n}" for name, n in f.runs_by_phase.items())))
    return t


def _partitions_table(ph) -> Table:
    """The phase's QNN partitions (analysis.llm.partitions): means per steady run, and their total."""
    q = ph.qnn
    t = Table(title=f"{shown(ph.name)}: QNN shards ({MEAN_PER_RUN.label}; overhead = {DELEGATE_CALL.label} minus "
                    f"{shown(q.accel_basis or ACCELERATOR.label + ' time')})")
    for col in ("instr", "runs", DELEGATE_CALL.label, ACCELERATOR.label, "overhead", "overhead share", "HTP cycles",
                "cycles/token", SHARE_OF_MEAN.label):
        t.add_column(col, justify="right", detail={"runs": 1, "cycles/token": 2, "overhead share": 3}.get(col, 0))
    for name, row in [(str(s.instruction_id), s) for s in q.partitions] + [("total", q.totals)]:
        t.add_row(name, str(row.delegate_call_ms.runs) if name == "total" else str(row.runs_called),
                  *(fmt_ms(v.mean) if v else "n/a" for v in (row.delegate_call_ms, row.accel_ms, row.overhead_ms)),
                  f"{row.overhead_share:.0%}" if row.overhead_share is not None else "n/a",
                  f"{row.accel_cycles.mean:,.0f}" if row.accel_cycles else "n/a",
                  f"{row.cycles_per_token:,.0f}" if row.cycles_per_token is not None else "—",
                  f"{row.share:.0%}" if name != "total" and row.share is not None else "")
    return t


def _phase_mark(name: str) -> str:
    return {"prefill": "P", "decode": "·"}.get(name, (name[:1] or "?").upper())


def _squeeze_marks(marks: str, width: int) -> str:
    n = len(marks)
    if n <= width:
        return marks
    out = []
    for b in range(width):
        chunk = marks[b * n // width:max((b + 1) * n // width, b * n // width + 1)]
        out.append(next((m for m in chunk if m != "·"), "·"))
    return "".join(out)


def _runs_text(runs, limit: int | None = 6) -> str:
    """Run indices; past ``limit`` (None: no limit) the count of the others."""
    if not runs:
        return ""
    s = ", ".join(str(r) for r in runs[:limit])
    return s + (f" (+{len(runs) - limit})" if limit is not None and len(runs) > limit else "")
