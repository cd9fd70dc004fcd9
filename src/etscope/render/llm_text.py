"""Terminal view of ``etscope llm`` (rich). For people; ``--json`` is the stable form."""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

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


def render_llm(r: dict, console: Console | None = None) -> None:
    c = console_or_default(console)
    llm = r["llm"]
    inputs = r["inputs"]
    names = ", ".join(shown(i.get("etdump", "?")) for i in inputs)
    c.print(Text(f"etscope llm — {names}", style="bold"))
    extra = sorted({f"{k}: {shown(v)}" for i in inputs for k, v in i.items() if k != "etdump"})
    if extra:
        c.print(Text(", ".join(extra), style="dim"))
    split = llm["phase_split"]
    per_file = split.get("files")       # several ETDumps: each one's phases, joined by name
    if per_file:
        how = (f"phases by {split['by']}, found in each of {len(per_file)} ETDumps and joined by phase name."
               if split["by"] != "none" else
               f"no phases told apart in any of the {len(per_file)} ETDumps: {split.get('evidence') or 'none'}.")
    else:
        how = (f"phases by {split['by']}." if split["by"] != "none" else
               f"no phases told apart: {split.get('evidence') or 'none'}.")
    c.print(safe_text(f"{llm['runs']} Execute run(s); {how}"))
    named = [ph for ph in llm["phases"] if ph.get("method_from")]
    if named:   # look-alike methods (QNN hybrid prefill/kv) named by analysis.llm.lookalike
        c.print(safe_text("Methods: " + ", ".join(f"{ph['name']} runs = {ph['method']}" for ph in named)
                   + f" ({named[0]['method_from']})."))
    if per_file:
        c.print(_files_table(per_file))
    c.print()
    for line in r["findings"]:
        c.print(safe_text(line))
    wall = llm.get("memory_wall")
    if wall:        # analysis.qnn.limits: weights per token x tokens/s vs the DRAM bandwidth
        c.print(safe_text(f"Memory wall: {wall['text']}."))
        c.print(safe_text(f"  bytes per token: {wall['weight_bytes_from']}; tokens/s: {wall['tokens_from']}; "
                          f"DRAM: {wall['bandwidth']['text']}; prefill HMX busy share: "
                          + (f"{wall['prefill_hmx_busy_share']:.1%} ({wall['prefill_hmx_from']})"
                             if wall.get("prefill_hmx_busy_share") is not None else wall["prefill_hmx_from"])))
    c.print()

    t = Table(title="Phases (steady-state runs; warm-up left out)")
    for col in ("phase", "runs", "warm-up", "tokens/run", "p50", "p90", "p99", "max", "per token", "runs/s"):
        t.add_column(col, justify="left" if col == "phase" else "right",
                     detail={"warm-up": 3, "p99": 2, "max": 1}.get(col, 0))
    for ph in llm["phases"]:
        lat = ph["latency_ms"] or {}
        t.add_row(safe_text(ph["name"]), str(len(ph["runs"])),
                  _runs_text(ph["warmup_runs"], None if c.complete else 6) or "—",
                  "?" if ph["tokens_per_run"] is None else f"{ph['tokens_per_run']:g}",
                  *(fmt_ms(lat[k]) if lat else "n/a" for k in ("p50", "p90", "p99", "max")),
                  fmt_ms(ph["ms_per_token"]) if ph["ms_per_token"] else "—",
                  f"{ph['runs_per_s']:,.1f}" if ph.get("runs_per_s") else "—")
    c.print(t)
    rate = ("decode_runs_per_s", "Decode runs/s (tokens per run unknown)") if llm.get("decode_tokens_per_s") is None \
        else ("decode_tokens_per_s", "Decode tokens/s")
    for k, label in (("ttft_ms", "Time to first token (prefill p50)"), rate):
        v = llm.get(k)
        if v is not None:
            c.print(safe_text(f"{label}: " + (fmt_ms(v) if k.endswith("_ms") else f"{v:,.1f}")))
    c.print()

    for ph in llm["phases"]:
        c.print(breakdown_table(ph["breakdown"],
                                f"{shown(ph['name'])}: where Method::execute's time goes (mean per run)"))
        if ph.get("qnn"):
            c.print(_qnn_shards_table(ph))
        t = Table(title=f"{shown(ph['name'])}: top instructions")
        for col in ("instr", "op", "placement", "mean", "p50", "share", "source"):
            t.add_column(col, justify="right" if col in ("instr", "mean", "p50", "share") else "left",
                         detail=col == "source")
        for o in ph["top_ops"]:
            t.add_row(str(o["instruction_id"]), safe_text(label_text(o)), safe_text(o["placement"] or ""),
                      fmt_ms(o["mean_ms"]), fmt_ms(o["p50_ms"]),
                      f"{o['share']:.1%}" if o["share"] is not None else "", safe_text(o["source"] or ""))
        c.print(t)
        c.print()

    series = llm["series"]
    c.print(Text("Run series (latency of every run in order, max per column):", style="bold"))
    c.print(Text(sparkline(series["latency_ms"], width=min(96, max(8, c.width - 4)))))
    if len(llm["phases"]) > 1:
        marks = "".join(_phase_mark(p) for p in series["phase"])
        c.print(Text(_squeeze_marks(marks, min(96, max(8, c.width - 4))), style="dim"))
    drift = llm.get("drift")
    if drift:
        rows = drift["by_position"]["rows"]
        ci = drift.get("slope_ci95_ms_per_100_tokens")
        c.print(Text(f"Decode latency by {drift['x']} (p50 per position, {rows[0][0]}..{rows[-1][0]}, "
                     f"{drift['runs']} runs): {drift['slope_ms_per_100_tokens']:+.3f} ms per 100 tokens"
                     + (f" (95% interval {ci[0]:+.3f}..{ci[1]:+.3f})" if ci else "")
                     + ("" if drift.get("drift_shown") else "; no drift shown (see findings)"), style="bold"))
        c.print(Text(sparkline([row[2] for row in rows], width=min(96, max(8, c.width - 4)))))
    for w in r.get("warnings", []):
        c.print(Text("warning: " + shown(w), style="yellow"))


def _files_table(per_file: list[dict]) -> Table:
    """Each ETDump's runs, how its phases were found and how many of its runs each joined phase holds."""
    t = Table(title="ETDumps (each a session: phases found on its own runs, then joined by name)")
    for col in ("ETDump", "runs", "phases by", "runs per phase"):
        t.add_column(col, justify="right" if col == "runs" else "left")
    for f in per_file:
        t.add_row(safe_text(shown(f["etdump"])), str(f["runs"]), safe_text(f["by"]),
                  safe_text(", ".join(f"{name} {n}" for name, n in f["runs_by_phase"].items())))
    return t


def _qnn_shards_table(ph: dict) -> Table:
    """The phase's QNN shards (analysis.llm.partitions): means per steady run, and their total."""
    q = ph["qnn"]
    t = Table(title=f"{shown(ph['name'])}: QNN shards (mean per run; overhead = DELEGATE_CALL minus "
                    f"{shown(q['accel_basis'] or 'accelerator time')})")
    for col in ("instr", "runs", "delegate call", "accelerator", "overhead", "overhead share", "HTP cycles",
                "cycles/token", "share"):
        t.add_column(col, justify="right", detail={"runs": 1, "cycles/token": 2, "overhead share": 3}.get(col, 0))
    for name, row in [(str(s["instruction_id"]), s) for s in q["shards"]] + [("total", q["totals"])]:
        t.add_row(name, str(row["delegate_call_ms"]["runs"]) if name == "total" else str(row["runs_called"]),
                  *(fmt_ms(row[k]["mean"]) if row[k] else "n/a" for k in ("delegate_call_ms", "accel_ms", "overhead_ms")),
                  f"{row['overhead_share']:.0%}" if row["overhead_share"] is not None else "n/a",
                  f"{row['accel_cycles']['mean']:,.0f}" if row["accel_cycles"] else "n/a",
                  f"{row['cycles_per_token']:,.0f}" if row["cycles_per_token"] is not None else "—",
                  f"{row['share']:.0%}" if row.get("share") is not None else "")
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


def _runs_text(runs: list[int], limit: int | None = 6) -> str:
    """Run indices; past ``limit`` (None: no limit) the count of the others."""
    if not runs:
        return ""
    s = ", ".join(str(r) for r in runs[:limit])
    return s + (f" (+{len(runs) - limit})" if limit is not None and len(runs) > limit else "")
