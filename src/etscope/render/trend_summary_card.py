"""A build's stored summary on the trend page: the figures of ``analysis.views.stored_summary``'s
digest (the summary ``etscope collect`` stored for the build's file) as labelled texts in their
units, for trend.js to put in place (through ``textContent``: the page escapes, this module only words).

The numbers are the stored summary's, of that one file over every run (as ``etscope summary``
gives them); the chart's p50 is the trend's (steady runs, the build's sessions pooled): the card
says so, so the two are not read as one figure."""
from __future__ import annotations

import hashlib
import re

from etscope.analysis.views.stored_summary import BuildSummary, SummaryDigest
from etscope.units import fmt_ms

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
MAX_ANCHOR_LABEL = 60
PART_WORDS = {"cpu_ops": "CPU kernels (fallback)", "framework_overhead": "framework overhead"}


def anchor(series_index: int, build: str) -> str:
    """The page's anchor of a build of a series: ``build-<series>-<label>`` (characters other than
    letters, digits, ``_.-`` as ``_``; a label changed so, or long, ends with 8 hex digits of its hash,
    so two labels never share an anchor)."""
    safe = _UNSAFE.sub("_", build)
    if safe != build or len(safe) > MAX_ANCHOR_LABEL:
        safe = safe[:MAX_ANCHOR_LABEL] + "~" + hashlib.sha256(build.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"build-{series_index}-{safe}"


def _ms(v) -> str:
    return "n/a" if v is None else fmt_ms(v)


def _share(v) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def _calls(v) -> str:
    return "" if v is None else f"{v:g}"


def headline(d: SummaryDigest) -> str:
    """ "Method::execute (forward): 32.5 µs p50 over 10 run(s) (mean 46.1 µs, min 30.2 µs, max 145.4 µs)"."""
    method = f" ({d.method})" if d.method else ""
    if d.p50_ms is None:
        return f"Method::execute{method}: no timed run ({d.runs:,} run(s))"
    return (f"Method::execute{method}: {_ms(d.p50_ms)} p50 over {runs_phrase(d.runs, d.warmup_runs)} "
            f"(mean {_ms(d.mean_ms)}, min {_ms(d.min_ms)}, max {_ms(d.max_ms)})")


def runs_phrase(runs: int, warmup: int) -> str:
    """ "10 run(s)", or "9 steady run(s) of 10" when warm-up runs were left out of the statistics."""
    return f"{runs - warmup:,} steady run(s) of {runs:,}" if warmup else f"{runs:,} run(s)"


def summary_card(bs: BuildSummary, build: str, anchor_id: str, command: str) -> dict:
    """The page's card of a build's stored summary (``command``: the CLI line that prints it whole)."""
    card = {"anchor": anchor_id, "build": build, "file": bs.file_hash[:12], "command": command,
            "sessions": (f"the first by order key of the build's {bs.files} files in this series"
                         if bs.files > 1 else "the build's file in this series"),
            "note": bs.note, "headline": "", "phase": "", "parts": [], "ops": [], "ops_more": "", "facts": [],
            "warnings": [], "warnings_more": ""}
    d = bs.digest
    if d is None:
        return card
    card.update(
        headline=headline(d),
        phase=f"{d.phase} phase" if d.phase else "",
        parts=[{"part": f"delegate: {p.backend or '?'}" if p.kind == "delegate" else PART_WORDS.get(p.kind, p.kind),
                "calls": _calls(p.calls_per_run), "mean": _ms(p.mean_ms), "p50": _ms(p.p50_ms),
                "share": _share(p.share)} for p in d.parts],
        ops=[{"instr": str(o.instruction_id), "kind": o.kind, "name": o.name, "where": o.where,
              "mean": _ms(o.mean_ms), "share": _share(o.share)} for o in d.top_ops],
        ops_more=(f"{d.ops_total - len(d.top_ops)} more instruction(s) in the stored summary: `{command} --json` "
                  "lists every one"
                  if d.ops_total > len(d.top_ops) else ""),
        facts=[x for x in (f"compiled for {d.soc}" if d.soc else "",
                           f"{d.events:,} events in the ETDump" if d.events is not None else "",
                           *(f"QNN: {h}" for h in d.qnn_headlines)) if x],
        warnings=list(d.warnings),
        warnings_more=(f"{d.warnings_total - len(d.warnings)} more warning(s)" if d.warnings_total > len(d.warnings)
                       else ""))
    return card
