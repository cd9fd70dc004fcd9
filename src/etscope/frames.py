"""Typed results for notebooks: each analysis' dict (the same object ``--json`` prints) with
pandas DataFrame accessors and a one-line ``repr``.

    >>> q = p.qnn();  q.partitions(); q.ops(); q.levels(); q.report      # QnnResult
    >>> q.htp_ops(); q.htp_split()                                       # inside the HTP (QHAS/optrace)
    >>> l = p.llm();  l.phases(); l.runs(); l.findings                   # LlmResult
    >>> d = p.diff(base);  d.verdict; d.ops(); d.breakdown()             # DiffResult
    >>> m = p.modules();  m.modules(); m.how(); m.placement(); m.total_us  # ModulesResult

DataFrames are plain pandas (one row per list item, the dict's scalar fields as columns; nested
lists have their own accessor). The dicts are not copied: treat them as read-only.
"""
from __future__ import annotations

import dataclasses
import html
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from etscope.units import fmt_ms

if TYPE_CHECKING:
    from etscope.analysis.ops.modules import ModuleTimes


def frame(rows, columns: list[str] | None = None, **constant):
    """A DataFrame of ``rows`` (dicts, or typed results: their fields) with their scalar fields
    (lists, tuples, dicts and typed parts left out), ``constant`` columns first; ``columns`` fixes
    the columns when there are no rows."""
    import pandas as pd

    keep = [{**constant, **{k: v for k, v in _items(r) if not isinstance(v, (list, tuple, dict))
                            and not dataclasses.is_dataclass(v)}} for r in rows]
    if not keep:
        return pd.DataFrame(columns=list(constant) + list(columns or []))
    return pd.DataFrame.from_records(keep)


def _items(r):
    """A row's (name, value) pairs: a dict's items, a typed result's fields in declared order."""
    if dataclasses.is_dataclass(r):
        return ((f.name, getattr(r, f.name)) for f in dataclasses.fields(r))
    return r.items()


def _html_table(title: str, rows: list[tuple[str, str]]) -> str:
    e = html.escape
    body = "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in rows)
    return f"<div><b>{e(title)}</b><table>{body}</table></div>"


@dataclass(frozen=True, repr=False)
class QnnResult:
    """``analysis.qnn.qnn_report`` (``report``: ``analysis.qnn.result.QnnReport``, or the
    ``QnnView`` of ``etscope qnn --json``'s ``qnn`` object)."""
    report: object

    @property
    def warnings(self) -> list[str]:
        return list(self.report.warnings)

    def partitions(self):
        """One row per QNN partition: nesting levels (DELEGATE_CALL ms, µs levels, accelerator
        cycles, p50 over runs), the HTP clock estimate and its basis, runs."""
        return frame(self.report.partitions, ["key", "instruction_id", "runs"])

    def ops(self):
        """Per-op rows of every partition (``partition`` column first): cycles p50 / mean, est. µs,
        share of the accelerator's cycles, graph node, HMX/HVX when QHAS/optrace were given."""
        import pandas as pd

        parts = [frame(p.ops, ["qnn_name", "cycles_p50"], partition=p.key) for p in self.report.partitions]
        return pd.concat(parts, ignore_index=True) if parts else frame([], ["partition", "qnn_name", "cycles_p50"])

    def levels(self):
        """What contains what, per partition: each level's p50 (µs or cycles) and what it adds over
        the next level. Levels nest: never sum them."""
        import pandas as pd

        parts = [frame(p.levels, ["name", "unit"], partition=p.key) for p in self.report.partitions]
        return pd.concat(parts, ignore_index=True) if parts else frame([], ["partition", "name", "unit"])

    def htp_ops(self):
        """One row per HTP op of each QNN op (QHAS/optrace given): unit and category from its flags,
        cycles, bytes, graph node, and its QNN op's achieved DRAM GB/s and bound (the ``htp_ops``
        table of export/sql)."""
        from etscope.analysis.qnn.tables import HTP_OP_COLUMNS, htp_op_rows

        return frame(htp_op_rows(self.report), list(HTP_OP_COLUMNS))

    def htp_split(self):
        """The whole graph's HTP cycles by category (compute on HMX / HVX, layout conversion, data
        movement, synchronisation, dominant-path idle), one row per category and QHAS/optrace file."""
        rows = [{"category": c.category, "label": c.label, "cycles": c.cycles, "share": c.share,
                 "partition": h.breakdown.partition, "file": h.breakdown.path}
                for h in self.report.htp_ops or () for c in h.breakdown.by_category]
        return frame(rows, ["partition", "file", "category", "label", "cycles", "share"])

    def __repr__(self) -> str:
        parts = self.report.partitions
        n_ops = sum(len(p.ops) for p in parts)
        return (f"<QnnResult: {len(parts)} partition(s), {n_ops} per-op row(s)"
                + (", QHAS" if self.report.qhas else "") + (", optrace" if self.report.optrace else "")
                + ("; .htp_ops() .htp_split()" if self.report.htp_ops else "")
                + "; .partitions() .ops() .levels() .report>")

    def _repr_html_(self) -> str:
        rows = [(p.key, f"DELEGATE_CALL {fmt_ms(p.delegate_call_ms)} p50, {len(p.ops)} per-op rows")
                for p in self.report.partitions[:20]]
        return _html_table(repr(self), rows)


@dataclass(frozen=True, repr=False)
class LlmResult:
    """The LLM analysis (``analysis.llm``): phases, warm-up, TTFT, decode tokens/s, drift, findings.
    ``report`` is the typed result (``analysis.llm.result.LlmReport``, what ``etscope llm --json``
    prints): ``report.llm.phases``, ``report.llm.series``, ``report.findings``, ..."""
    report: object

    @property
    def findings(self) -> list[str]:
        return list(self.report.findings)

    @property
    def ttft_ms(self) -> float | None:
        return self.report.llm.ttft_ms

    @property
    def decode_tokens_per_s(self) -> float | None:
        return self.report.llm.decode_tokens_per_s

    def phases(self):
        """One row per phase: runs (steady), warm-up runs, tokens per run, latency p50/p90/p99/max/
        min/mean (ms, steady runs), ms per token."""
        rows = []
        for ph in self.report.llm.phases:
            lat = ph.latency_ms
            rows.append({"phase": ph.name, "method": list(ph.method) if isinstance(ph.method, tuple) else ph.method,
                         "runs": len(ph.runs),
                         "warmup_runs": len(ph.warmup_runs), "tokens_per_run": ph.tokens_per_run,
                         **{f"{k}_ms": getattr(lat, k) if lat else None
                            for k in ("p50", "p90", "p99", "max", "min", "mean")},
                         "ms_per_token": ph.ms_per_token})
        return frame(rows, ["phase"])

    def runs(self):
        """One row per Execute run in order: latency (ms), phase, warm-up, tokens, position."""
        import dataclasses

        import pandas as pd

        s = self.report.llm.series
        cols = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
        return pd.DataFrame({k: list(v) for k, v in cols.items() if v is not None and len(v) == len(s.latency_ms)})

    def top_ops(self):
        """The top instructions of each phase (``phase`` column first)."""
        import dataclasses

        import pandas as pd

        parts = [frame([dataclasses.asdict(o) for o in ph.top_ops], ["instruction_id"], phase=ph.name)
                 for ph in self.report.llm.phases]
        return pd.concat(parts, ignore_index=True) if parts else frame([], ["phase", "instruction_id"])

    def __repr__(self) -> str:
        bits = [f"{ph.name} ×{len(ph.runs)}" for ph in self.report.llm.phases]
        if self.ttft_ms is not None:
            bits.append(f"TTFT {fmt_ms(self.ttft_ms)}")
        if self.decode_tokens_per_s is not None:
            bits.append(f"{self.decode_tokens_per_s:,.1f} tokens/s")
        return f"<LlmResult: {', '.join(bits)}; .phases() .runs() .top_ops() .findings .report>"

    def _repr_html_(self) -> str:
        return _html_table(repr(self), [("finding", f) for f in self.findings[:10]])


@dataclass(frozen=True, repr=False)
class DiffResult:
    """``analysis.diff.compare.compare(base, new)`` (``result``: the typed result, what ``etscope diff
    --json`` prints; ``analysis.diff.result``). ``view`` is what the diff page draws (``html(path)``
    writes it)."""
    result: object
    view: object = field(default=None, compare=False)
    inputs: tuple = ()          # the compared files: html() never writes over one

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def reasons(self) -> list[str]:
        return list(self.result.reasons)

    @property
    def latency(self):
        """p50 of both sides (ms), change and its 95% interval (%), runs, warm-up left out
        (``analysis.diff.result.Latency``; of an LLM: the phase the verdict is from,
        ``verdict_phase``; None when no phase is on both sides)."""
        return self.result.latency

    @property
    def headline(self) -> str:
        """The verdict in words; of an LLM, with the phase it is from ("regression in decode (prefill:
        no change)")."""
        return self.result.headline or self.verdict.replace("_", " ")

    def phases(self):
        """An LLM's phases, each compared with the same phase of the other side: name, method,
        verdict, p50 of both sides (ms), change and its 95% interval (%), time to first token
        (prefill) and tokens/s (decode) of both sides; empty when the runs are one phase."""
        rows = []
        for e in self.result.phases:
            lat = e.latency
            ci = lat.ci_pct if lat is not None else (None, None)
            figures = {}
            for k in ("ttft_ms", "tokens_per_s"):
                v = getattr(e.llm, k, None) if e.llm is not None else None
                figures.update({f"{k}_base": v.base if v else None, f"{k}_new": v.new if v else None})
            rows.append(dict(name=e.name, method=e.method, verdict=e.verdict,
                             base_p50_ms=lat.base_p50_ms if lat else None, new_p50_ms=lat.new_p50_ms if lat else None,
                             change_pct=lat.change_pct if lat else None, ci_low_pct=ci[0], ci_high_pct=ci[1],
                             **figures))
        return frame(rows, ["name"])

    def ops(self, changed_only: bool = False):
        """Every op compared: status (slower / faster / new / removed / same), p50 of both sides (in
        ``unit``), change %, rank-test p value, placement of both sides."""
        rows = [_row(o) for o in self.result.ops if not changed_only or o.status != "same"]
        return frame(rows, ["name", "status"])

    def breakdown(self):
        """Delegate calls per backend, CPU ops and framework overhead: p50 per run of both sides."""
        return frame([_row(b) for b in self.result.breakdown], ["kind", "backend"])

    def placement_changes(self):
        return frame([_row(c) for c in self.result.placement_changes], ["kind"])

    def html(self, path) -> str:
        """Write the diff page (as ``etscope diff --html``); returns its path."""
        import os

        from etscope.paths import check_output
        from etscope.render.html import write_diff_page

        write_diff_page(check_output(path, list(self.inputs)), self.view)
        return os.fspath(path)

    def __repr__(self) -> str:
        lat = self.latency
        if lat is None:
            return f"<DiffResult: {self.headline}; .phases() .reasons .html(path)>"
        ci = lat.ci_pct
        finite = all(isinstance(x, (int, float)) and math.isfinite(x) for x in ci)
        interval = f" (95% CI {ci[0]:+.1f}% to {ci[1]:+.1f}%)" if finite else ""
        changed = sum(1 for o in self.result.ops if o.status != "same")
        return (f"<DiffResult: {self.headline}; p50 {fmt_ms(lat.base_p50_ms)} → "
                f"{fmt_ms(lat.new_p50_ms)}, {lat.change_pct:+.1f}%{interval}; {changed} op(s) changed; "
                ".ops() .breakdown() .placement_changes() " + (".phases() " if self.result.phases else "")
                + ".reasons .html(path)>")

    def _repr_html_(self) -> str:
        return _html_table(repr(self), [("reason", r) for r in self.reasons[:10]])


def _row(x) -> dict:
    """A typed result's row as a DataFrame row: its JSON fields (the names ``--json`` gives them)."""
    from etscope.render.json import to_jsonable

    return to_jsonable(x)


@dataclass(frozen=True, repr=False)
class ModulesResult:
    """Inclusive time per source module (``analysis.ops.modules``; ``report``: the typed result
    ``etscope ops --by module --json`` prints, less its schema and inputs). Times are µs, mean per run.

    Summing without double counting: ``total_us`` is inclusive (a module's total holds its
    children's), so sum ``self_us`` over all rows, or read the root's ``total_us``; both equal
    ``Method::execute`` minus framework overhead (``total_us``)."""
    report: ModuleTimes

    @property
    def method_execute_us(self) -> float | None:
        return self.report.method_execute_us

    @property
    def framework_overhead_us(self) -> float | None:
        return self.report.framework_overhead_us

    @property
    def total_us(self) -> float:
        """The root's inclusive time: Method::execute minus framework overhead."""
        return self.report.attributed_us

    def modules(self):
        """One row per module in tree order (depth-first): path, name, type, depth, parent,
        total_us (inclusive), self_us, nodes."""
        cols = ["path", "name", "type", "depth", "parent", "total_us", "self_us", "nodes"]
        return frame([{c: getattr(m, c) for c in cols} for m in self.report.modules], cols[:-1])

    def _long(self, field_name: str, column: str):
        rows = [{"path": m.path, column: k, "us": us} for m in self.report.modules
                for k, us in getattr(m, field_name).items()]
        return frame(rows, ["path", column, "us"])

    def how(self):
        """Where each module's inclusive time comes from: one row per (path, how) with its µs
        (``how`` values explained in ``report.how``)."""
        return self._long("how_us", "how")

    def placement(self):
        """Each module's inclusive time per placement (``cpu`` or the backend): one row per
        (path, placement) with its µs."""
        return self._long("placement_us", "placement")

    def __repr__(self) -> str:
        over = self.framework_overhead_us or 0.0
        execute = self.method_execute_us or 0.0
        return (f"<ModulesResult: {len(self.report.modules)} module(s); Method::execute "
                f"{fmt_ms(execute / 1e3)} = modules {fmt_ms(self.total_us / 1e3)} + framework overhead "
                f"{fmt_ms(over / 1e3)}; .modules() .how() .placement() .report>")

    def _repr_html_(self) -> str:
        rows = [("  " * m.depth + m.name, fmt_ms(m.total_us / 1e3)) for m in self.report.modules[:20]]
        return _html_table(repr(self), rows)
