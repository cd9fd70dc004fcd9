"""The self-contained HTML report: one file, works offline, opens in any browser.

:func:`report_data` formats what analysis computed (``analysis.views.report.ReportView``: summary,
op table, QNN and LLM results, hierarchy, placement, per-run columns, graph nodes, checks) into one
plain dict, numbers rounded for the page; :func:`render_report`
puts it into the page as one JSON blob (``<script type="application/json">``, every ``<``, ``>``,
``&`` escaped) that the inlined script (assets/report.js, no libraries) draws with DOM and SVG calls,
writing data only through ``textContent`` and attributes, never as markup. The template is Jinja2
with autoescape on; a Content-Security-Policy forbids any network access.

:func:`diff_page_data` / :func:`write_diff_page` do the same for ``etscope diff --html`` from an
``analysis.diff.view.DiffView`` (the diff plus the per-run latency of both runs), drawn by
assets/diff.js; the report's "Compared with base" section (``etscope report --compare``) uses the
same data (:func:`diff_view_data`) and the same script. Scripts: common.js (helpers), diff.js and the page's own (report.js or
diff_page.js) are inlined into one function scope; the report's module tree (modules.js) and
graph view (graph.js) are their own files, inlined before report.js.

Charts are hand-written SVG rather than plotly: plotly.min.js alone is ~4.6 MB, which would use up
the 5 MB budget for a report before any data, and the charts needed here (icicle, bars, scatter,
histogram, a layered graph) are small.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import re
import threading
from collections.abc import Sequence
from importlib import resources

import numpy as np

from etscope.analysis import glossary
from etscope.analysis.diff.view import DiffView, RunSeries
from etscope.analysis.ops.modules import ModuleTimes
from etscope.analysis.ops.nodes import NodeTable
from etscope.analysis.ops.per_op import OpRow
from etscope.analysis.numerics.view import NumericsView
from etscope.analysis.views.report import ReportView
from etscope.analysis.views.report_parts import AnyBox, RunColumns
from etscope.render.files import Written, write_text
from etscope.render.guide import reading_guide
from etscope.render.json import PLAIN_NUMBERS, as_fields, non_finite_as_null, to_jsonable
from etscope.render.html.numerics import numerics_data
from etscope.render.html.phases import PhasePage, phases_data
from etscope.display import without_controls
from etscope.formats.backends import BACKENDS
from etscope.units import fmt_ms, fmt_us
from etscope.version import __version__

SCHEMA = "etscope.report/1"
DIFF_SCHEMA = "etscope.diff-page/2"   # /2: series with stats, histogram and step; phase_series, phases, axes, figures
MAX_TABLE_ROWS = 20000      # op-table rows embedded (all of them below this)
MAX_LIST = 5000             # any other list from analysis dicts is cut to this many entries
# Scripts of the report's sections that live in their own files, inlined before the page's script.
PAGE_PARTS = {"report.js": ("modules.js", "numerics.js", "graph.js", "phases.js")}
# The diff view (the diff page, the report's "Compared with base"): its core, then its parts.
DIFF_SCRIPTS = ("diff.js", "diff_runs.js", "diff_parts.js", "diff_ops.js")


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _clean(x, depth: int = 0):
    """JSON-safe copy: NaN/inf -> None, numpy -> Python, tuples -> lists, long lists cut, control
    characters in strings replaced (they would show as raw controls in the page's text)."""
    if depth > 20:
        return None
    if isinstance(x, str):
        return without_controls(x)
    if isinstance(x, dict):
        return {without_controls(str(k)): _clean(v, depth + 1) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):     # a typed result: as its JSON writes it
        return {without_controls(k): _clean(v, depth + 1) for k, v in as_fields(x).items()}
    if isinstance(x, (list, tuple)):
        items = x[:MAX_LIST]
        if depth < 20:              # per-run series: plain values need no call each
            kinds = set(map(type, items))
            if kinds <= PLAIN_NUMBERS:
                return non_finite_as_null(items)
            if kinds == {str}:
                return list(map(without_controls, items))
        return [_clean(v, depth + 1) for v in items]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        try:
            x = x.item()
        except (TypeError, ValueError):
            return str(x)
    if isinstance(x, float):
        return None if (math.isnan(x) or math.isinf(x)) else x
    if isinstance(x, str):
        return without_controls(x)
    if isinstance(x, (int, bool)) or x is None:
        return x
    if hasattr(x, "tolist"):
        return _clean(x.tolist(), depth + 1)
    return str(x)


def _r(x, nd: int = 6):
    """Round a float for the page (keeps the JSON small); None stays None."""
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return None
    return float(f"{float(x):.{nd}g}")


# ---- pieces of the page: the analysed view, rounded and cut for the page --------------------------------
def _rounded_tree(box: AnyBox | None) -> dict | None:
    if box is None:
        return None
    return _rounded_ms(to_jsonable(box))


def _rounded_ms(node: dict) -> dict:
    return {k: _r(v) if k == "ms" else [_rounded_ms(c) for c in v] if k == "children" else v
            for k, v in node.items()}


def _rounded_column(values: list) -> list:
    """``[_r(x) if isinstance(x, float) else x for x in values]`` without a call of ``_r`` per
    value (a column has one value per run: 100k on a long LLM session)."""
    fmt = "{:.6g}".format
    return [(float(fmt(x)) if x - x == 0 else None) if type(x) is float     # x - x: NaN for NaN and inf
            else _r(x) if isinstance(x, float) else x for x in values]


def runs_data(runs: RunColumns | None) -> dict:
    """Per-run columns (``ReportView.runs``: arrays), floats rounded, NaN as null: the first
    MAX_LIST runs (as many as _clean keeps), and how many there are when that is fewer (the chart
    says so)."""
    if runs is None:
        return {"columns": {}, "phase": None}
    n = len(runs.execute)
    cols = {k: _rounded_column(np.asarray(v[:MAX_LIST]).tolist()) for k, v in runs.columns().items()}
    phase = None if runs.phase is None else list(runs.phase)
    return {"columns": cols, "phase": phase, **({"total_runs": n} if n > MAX_LIST else {})}


def ops_data(ops: list[OpRow]) -> dict:
    cols = [f.name for f in dataclasses.fields(OpRow)]
    rows = []
    for r in ops[:MAX_TABLE_ROWS]:
        values = (getattr(r, c) for c in cols)
        rows.append([_r(v) if isinstance(v, float) else v for v in values])
    return {"columns": cols, "rows": rows, "total_rows": len(ops)}


def graph_data(nodes: NodeTable | None) -> dict | None:
    """The graph's nodes (``analysis.ops.nodes.node_table``) as columns and rows."""
    if nodes is None:
        return None
    cols = ["name", "op", "target", "module", "inputs", "placement", "time_us", "estimated", "source",
            "input_kind", "instruction_id", "hmx", "hvx", "module_instance", "time_how", "untimed_why"]
    rows = [[_r(v) if isinstance(v, float) else v for v in map(n.__getattribute__, cols)] for n in nodes.nodes]
    return {"graph": nodes.graph, "method": nodes.method, "columns": cols, "nodes": rows,
            "module_types": nodes.module_types}


def modules_data(modules: ModuleTimes | None) -> dict | None:
    """The module tree (``analysis.ops.modules.module_times``), µs rounded."""
    if modules is None:
        return None
    rows = [dict(as_fields(m), total_us=_r(m.total_us), self_us=_r(m.self_us),
                 how_us={k: _r(v) for k, v in m.how_us.items()},
                 placement_us={k: _r(v) for k, v in m.placement_us.items()}) for m in modules.modules]
    return dict(to_jsonable(modules), modules=rows, attributed_us=_r(modules.attributed_us),
                method_execute_us=_r(modules.method_execute_us),
                framework_overhead_us=_r(modules.framework_overhead_us))


def llm_data(report) -> dict | None:
    """The LLM section's data (``Results.llm``, an ``analysis.llm.result.LlmReport``): the ``llm``
    object of ``etscope llm --json``, then its findings and warnings (when there are any) and the
    decode's memory wall, under the keys the page reads."""
    if report is None:
        return None
    llm = report.llm
    return {**to_jsonable(dataclasses.replace(llm, memory_wall=None)),
            **({"findings": list(report.findings)} if report.findings else {}),
            **({"warnings": list(report.warnings)} if report.warnings else {}),
            **({"memory_wall": to_jsonable(llm.memory_wall)} if llm.memory_wall is not None else {})}


def _view_data(view: ReportView) -> dict:
    """What the page draws of one view (the whole file's, or one phase's), in the page's key order."""
    summary = view.summary
    return {
        "guide": reading_guide(summary, view.qnn),
        "findings": [dict(f.to_dict(), at_stake=fmt_us(f.us_per_run) if f.us_per_run else None)
                     for f in view.findings],
        "summary": summary,
        "hierarchy": _rounded_tree(view.hierarchy),
        "placement": [dict(to_jsonable(a), ms=_r(a.ms)) for a in view.placement],
        "ops": ops_data(view.ops),
        "runs": runs_data(view.runs),
        "qnn": view.qnn,
        "llm": llm_data(view.llm),
        "graph": graph_data(view.nodes),
        "modules": modules_data(view.modules),
        "warnings": list(summary.warnings) + view.checks + view.notes,
    }


def report_data(view: ReportView, title: str | None = None, compare: DiffView | None = None,
                numerics: NumericsView | None = None,
                phases: Sequence[PhasePage] = (), phases_how: str = "") -> dict:
    """Everything the page shows, as one plain dict. ``compare``: the diff of a base run against
    this one (the "Compared with base" section); ``numerics``: the debug buffer's tensors or their
    comparison with a reference (the "Numerics" section, and the graph view's SNR colours);
    ``phases``: when the runs form several phases (per ``Results.phase_rows`` row, the phase's
    ``Results.for_phase(name).view``), the page shows them side by side and draws its sections
    from the selected phase's view (``render.html.phases``; ``phases_how``: how they were told apart)."""
    profile, summary = view.profile, view.summary
    return _clean({
        "schema": SCHEMA,
        "title": title or ("etscope report: " + ((profile.source_files.etdump if profile is not None else None)
                                                  or ", ".join(summary.inputs.values()) or "ETDump")),
        "generator": f"etscope {__version__}",
        "generated": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        **_view_data(view),
        "compare": None if compare is None else diff_view_data(compare),
        # only with --debug-buffer (the key absent otherwise keeps every other report's data as before)
        **({"numerics": numerics_data(numerics)} if numerics is not None else {}),
        # only when the runs form several phases (likewise)
        **({"phases": phases_data(phases, phases_how, profile.n_runs, _view_data, diff_view_data)}
           if len(phases) > 1 and profile is not None else {}),
    })


# ---- diff: etscope diff --html, and the report's "Compared with base" section -----------------------
MAX_SERIES = MAX_LIST       # runs drawn per side in the runs chart, at most (the statistics are over every run)


def diff_view_data(view: DiffView) -> dict:
    """What the diff script draws: the diff as ``diff --json`` writes it (op rows cut to
    ``MAX_LIST``, changed ones come first), the per-run latency of both sides (ms; at most
    ``MAX_SERIES`` runs of a side drawn, evenly spaced) with the statistics and histogram the analysis made of
    every steady run, the axes shown at the top, the options used and the input paths."""
    d = view.diff
    anchors: set[str] = set()
    phases = tuple(dataclasses.replace(e, ops=e.ops[:MAX_LIST]) if e.latency is not None else e for e in d.phases)
    shown = dataclasses.replace(d, ops=d.ops[:MAX_LIST], **({"phases": phases} if d.phases else {}))
    return _clean({"diff": to_jsonable(shown), "ops_total": len(d.ops),
                   # per phase (in the order of ``diff.phases``): its section ids' suffix, its op rows
                   "phases": [{"anchor": _phase_anchor(e.name, anchors) if e.latency is not None else None,
                               "ops_total": len(e.ops) if e.latency is not None else 0} for e in d.phases],
                   "series": _series_data(view.series),
                   "phase_series": {name: _series_data(s) for name, s in view.phase_series},
                   "axes": {name: to_jsonable(a) for name, a in view.axes},
                   "figures": to_jsonable(view.figures),
                   "phase_figures": {name: to_jsonable(f) for name, f in view.phase_figures},
                   "options": dict(view.options), "inputs": dict(view.inputs)})


def _series_data(series: RunSeries | None) -> dict | None:
    """A comparison's runs for the page: values rounded; a side of more than ``MAX_SERIES`` runs
    drawn every ``step``-th run (its sessions all shown; ``runs``: how many there are)."""
    if series is None:
        return None
    step = {side: max(1, -(-len(getattr(series, side)) // MAX_SERIES)) for side in ("base", "new")}
    return {**{side: [_r(x) for x in getattr(series, side)[::step[side]]] for side in ("base", "new")},
            "step": step, "runs": {"base": len(series.base), "new": len(series.new)},
            **{k: to_jsonable(getattr(series, k)) for k in ("sessions", "warmup", "stats", "histogram")}}


def _phase_anchor(name, taken: set[str]) -> str:
    """The suffix of a phase's section ids (``diff-verdict-decode``), unique among ``taken``: the
    page's script uses it. Phase names may hold a method name from the input: only [A-Za-z0-9_-]."""
    base = "-" + re.sub(r"[^A-Za-z0-9_-]", "_", str(name))[:60]
    out, k = base, 1
    while out in taken:
        k += 1
        out = f"{base}-{k}"
    taken.add(out)
    return out


def diff_page_data(view: DiffView, title: str | None = None) -> dict:
    """Everything the diff page shows, as one plain dict."""
    data = diff_view_data(view)
    return {
        "schema": DIFF_SCHEMA,
        "title": title or f"etscope diff: {view.labels.base} → {view.labels.new}",
        "generator": f"etscope {__version__}",
        "generated": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        **data,
    }


def json_for_script(data: dict) -> str:
    """JSON safe inside ``<script type="application/json">``: ASCII only, and ``<``, ``>``, ``&``
    as ``\\u003c`` etc., so no ``</script>`` or ``<!--`` can appear."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_typed)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _typed(obj):
    """A typed result inside the page's data: its JSON (render.json), as the CLI writes it."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(obj)
    raise TypeError(f"not JSON: {type(obj).__name__}")


def _script(*pages: str) -> str:
    """The page's script: common.js, the diff view's scripts and ``pages`` in one function scope, after ``DATA`` is
    parsed from the JSON blob (our own files, shipped with the package)."""
    text = "\n".join(["(function () {", "  'use strict';",
                      "  var DATA = JSON.parse(document.getElementById('etscope-data').textContent);",
                      # the glossary's labels of levels and statistics (analysis.glossary), when the page has them
                      "  var WORDS = (function (e) { return e ? JSON.parse(e.textContent) : {}; })"
                      "(document.getElementById('etscope-words'));",
                      _asset("common.js"), *map(_asset, DIFF_SCRIPTS),
                      *(_asset(part) for p in pages for part in PAGE_PARTS.get(p, ())),
                      *(_asset(p) for p in pages), "})();"])
    if "</" in text:    # cannot end the <script> element early
        raise ValueError(f"inlined script for {pages} contains '</'")
    return text


_templates: dict = {}
_templates_lock = threading.Lock()


def _template(name: str):
    """The page template ``name``, compiled once per process (jinja2 imported then)."""
    with _templates_lock:
        template = _templates.get(name)
        if template is None:
            import jinja2

            env = jinja2.Environment(
                loader=jinja2.FunctionLoader(lambda asset: _asset(asset)),
                autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
            env.filters.update(ms=fmt_ms)
            template = _templates[name] = env.get_template(name)
        return template


def prepare_in_background(name: str = "report.html.j2") -> None:
    """Import jinja2 and compile the page's template on a thread of its own, while the caller reads
    its inputs (~50 ms of a report off its path: the reading leaves a core idle). Whatever fails
    there is left for the page's own call of ``_template`` to raise."""
    def prepare() -> None:
        try:
            _template(name)
        except BaseException:        # noqa: BLE001 (raised again, on the caller's thread, when rendering)
            pass

    threading.Thread(target=prepare, name="etscope-template", daemon=True).start()


def glossary_words() -> dict[str, str | list[str]]:
    """What the page calls each level and statistic (``analysis.glossary``: one definition, the
    text views' too), by key; and ``npu_backends``, the delegate backends the registry calls NPUs
    (``formats.backends``: the pages colour and label them "NPU (...)")."""
    labels = {x.key: x.label for x in (*glossary.NESTING, glossary.ACCELERATOR_CYCLES, *glossary.STATISTICS)}
    return {**labels, "npu_backends": [b.backend_id for b in BACKENDS if b.npu]}


def _render(template_name: str, page_js: tuple[str, ...], data: dict) -> str:
    from markupsafe import Markup

    template = _template(template_name)
    return template.render(
        data=data,
        data_json=Markup(json_for_script(data)),   # escaped above; JSON, not markup
        words=glossary_words(),
        words_json=Markup(json_for_script(glossary_words())),
        css=Markup(_asset("report.css")),           # our own files, shipped with the package
        js=Markup(_script(*page_js)),
    )


def render_report(data: dict) -> str:
    # qnn.js: the QNN / HTP section; htp.js: its "Inside the HTP" part
    return _render("report.html.j2", ("htp.js", "qnn.js", "report.js"), data)


def render_diff_page(data: dict) -> str:
    return _render("diff.html.j2", ("diff_page.js",), data)


def write_report(path: str, view: ReportView, title: str | None = None, compare: DiffView | None = None,
                 numerics: NumericsView | None = None, phases: Sequence[PhasePage] = (),
                 phases_how: str = "") -> Written:
    """Build and write the report atomically; return where and how many bytes."""
    return write_report_data(path, report_data(view, title=title, compare=compare, numerics=numerics,
                                               phases=phases, phases_how=phases_how))


def write_report_data(path: str, data: dict) -> Written:
    """Write the page of ``report_data``'s result atomically; return where and how many bytes. The data is
    plain (no arrays, no profile): a caller that drops its profile and analyses first renders the
    page without holding them (on 10M events, half a gigabyte)."""
    return Written(path, write_text(path, render_report(data)))


def write_diff_page(path: str, view: DiffView, title: str | None = None) -> Written:
    """Build and write the diff page atomically; return where and how many bytes."""
    html = render_diff_page(diff_page_data(view, title=title))
    return Written(path, write_text(path, html))
