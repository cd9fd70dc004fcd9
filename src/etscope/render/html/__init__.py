"""The self-contained HTML report: one file, works offline, opens in any browser.

:func:`report_data` gathers what analysis computed (summary, op table, QNN and LLM dicts when
present, the ETRecord graph with placement and time) into one plain dict; :func:`render_report`
puts it into the page as one JSON blob (``<script type="application/json">``, every ``<``, ``>``,
``&`` escaped) that the inlined script (assets/report.js, no libraries) draws with DOM and SVG calls,
writing data only through ``textContent`` and attributes, never as markup. The template is Jinja2
with autoescape on; a Content-Security-Policy forbids any network access.

:func:`diff_page_data` / :func:`write_diff_page` do the same for ``etscope diff --html``: the dict of
``analysis.diff.compare`` plus the per-run latency of both runs, drawn by assets/diff.js; the report's
"Compared with base" section (``etscope report --compare``) uses the same view (:func:`diff_view`)
and the same script. Scripts: common.js (helpers), diff.js and the page's own (report.js or
diff_page.js) are inlined into one function scope.

Charts are hand-written SVG rather than plotly: plotly.min.js alone is ~4.6 MB, which would use up
the 5 MB budget for a report before any data, and the charts needed here (icicle, bars, scatter,
histogram, a layered graph) are small.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from importlib import resources

from etscope import profile as P
from etscope.render.safe import without_controls

SCHEMA = "etscope.report/1"
DIFF_SCHEMA = "etscope.diff-page/1"
MAX_TABLE_ROWS = 20000      # op-table rows embedded (all of them below this)
MAX_LIST = 5000             # any other list from analysis dicts is cut to this many entries

_XNN_REPEAT = re.compile(r"#\d+$")   # then rstrip(): "\s*#\d+$" is quadratic on runs of spaces


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
    if isinstance(x, (list, tuple)):
        return [_clean(v, depth + 1) for v in x[:MAX_LIST]]
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


# ---- pieces of the page ---------------------------------------------------------------------------
def hierarchy(summary: dict, ops: list[dict], qnn: dict | None, n_runs: int) -> dict | None:
    """Method::execute -> delegate calls per backend / CPU kernels / overhead -> instructions -> the
    events inside them, in ms per run (mean). QNN ops are estimates (cycles / derived clock)."""
    lat = (summary.get("runs") or {}).get("latency_ms")
    if not lat:
        return None
    n = max(n_runs, 1)
    qparts = {p.get("instruction_id"): p for p in (qnn or {}).get("partitions") or [] if isinstance(p, dict)}
    inside = _inner_rows_by_call(ops)

    def inner_nodes(iid: int, occurrence: int) -> list[dict]:
        out = []
        part = qparts.get(iid)
        if part and part.get("ops") and occurrence == 0:
            for op in part["ops"]:
                est = op.get("est_us_p50")
                if isinstance(est, (int, float)) and est > 0:
                    out.append({"name": str(op.get("qnn_name") or op.get("node") or "?"), "ms": _r(est / 1e3),
                                "kind": "qnn_op", "estimated": True, "op_type": op.get("op_type"),
                                "node": op.get("node")})
            if out:
                return out
        for r in inside.get((iid, occurrence), []):
            if r["unit"] == "ns" and r["total"]:
                out.append({"name": r["name"], "ms": _r(r["total"] / 1e6 / n), "kind": r["role"]})
        return out

    root = {"name": "Method::execute", "ms": _r(lat["mean"]), "kind": "method", "children": []}
    for b in summary.get("breakdown") or []:
        if b["kind"] == "delegate":
            node = {"name": f"{b['backend']} delegate calls", "ms": _r(b["mean_ms"]), "kind": "delegate",
                    "backend": b["backend"], "children": []}
            for r in ops:
                if r["level"] == 0 and r["role"] == "delegate_call" and r["placement"] == b["backend"]:
                    iid = r["instruction_id"]
                    node["children"].append({"name": f"DELEGATE_CALL #{iid}", "ms": _r(r["total_ms"] / n),
                                             "kind": "delegate_call", "backend": b["backend"],
                                             "op_type": r.get("op_type"),
                                             "children": inner_nodes(iid, r["occurrence"])})
            root["children"].append(node)
        elif b["kind"] == "cpu_ops":
            node = {"name": "CPU kernels (fallback)", "ms": _r(b["mean_ms"]), "kind": "cpu", "children": []}
            for r in ops:
                if r["level"] == 0 and r["role"] in ("operator_call", "kernel") and r["unit"] == "ns":
                    iid = r["instruction_id"]
                    node["children"].append({
                        "name": f"{r.get('op_type') or r['name']} (#{iid})", "ms": _r(r["total_ms"] / n),
                        "kind": "operator_call", "source": r.get("source"),
                        "children": [{"name": k["name"], "ms": _r(k["total"] / 1e6 / n), "kind": "kernel"}
                                     for k in inside.get((iid, r["occurrence"]), []) if k["unit"] == "ns"]})
            root["children"].append(node)
        else:
            root["children"].append({"name": "framework overhead", "ms": _r(b["mean_ms"]), "kind": "overhead"})
    return root


def _inner_rows_by_call(ops: list[dict]) -> dict[tuple[int, int], list[dict]]:
    """Level-1 rows (kernels, delegate-internal events) under the level-0 row (instruction id,
    occurrence) that holds them: the k-th call of an instruction in a run holds the k-th event of
    each name inside it (occurrences beyond the last call go to the last call). Each row is listed
    under one call only: an instruction called K times per run gives K calls, not K x K rows."""
    calls: dict[int, int] = {}
    for r in ops:
        if r["level"] == 0:
            calls[r["instruction_id"]] = max(calls.get(r["instruction_id"], 0), r["occurrence"] + 1)
    out: dict[tuple[int, int], list[dict]] = {}
    for r in ops:
        if r["level"] == 1:
            iid = r["instruction_id"]
            out.setdefault((iid, min(r["occurrence"], calls.get(iid, 1) - 1)), []).append(r)
    return out


def category_of(placement: str | None) -> str:
    if placement == "QnnBackend":
        return "NPU (QNN)"
    if placement == "cpu":
        return "CPU"
    if placement is None:
        return "framework overhead"
    return f"other delegate ({placement})"


def placement_by_op_type(summary: dict, ops: list[dict], qnn: dict | None, n_runs: int) -> list[dict]:
    """Mean ms per run per (category, op type): CPU kernels by edge op type, QNN ops by op type
    (estimated), other delegates by the op names they log (XNNPACK ``#N`` suffix dropped), partitions
    without per-op rows as a whole."""
    n = max(n_runs, 1)
    agg: dict[tuple[str, str], dict] = {}

    def add(cat, placement, op_type, ms, estimated=False):
        a = agg.setdefault((cat, op_type), {"category": cat, "placement": placement, "op_type": op_type,
                                            "ms": 0.0, "count": 0, "estimated": False})
        a["ms"] += ms
        a["count"] += 1
        a["estimated"] = a["estimated"] or estimated

    qparts = {p.get("instruction_id"): p for p in (qnn or {}).get("partitions") or [] if isinstance(p, dict)}
    inside = _inner_rows_by_call(ops)
    for r in ops:
        if r["level"] != 0 or r["unit"] != "ns":
            continue
        iid, pl = r["instruction_id"], r["placement"]
        cat = category_of(pl)
        if r["role"] != "delegate_call":
            add(cat, pl, r.get("op_type") or r["name"], r["total_ms"] / n)
            continue
        part = qparts.get(iid)
        qops = [o for o in (part or {}).get("ops") or [] if isinstance(o.get("est_us_p50"), (int, float))]
        if qops:
            # The partition's per-op estimates describe the instruction: counted once, with its
            # first call (as in the hierarchy), not once per call.
            if r["occurrence"] == 0:
                for o in qops:
                    add(cat, pl, str(o.get("op_type") or o.get("qnn_name") or "?"), o["est_us_p50"] / 1e3, True)
            continue
        inner = [x for x in inside.get((iid, r["occurrence"]), []) if x["unit"] == "ns"]
        if inner:
            for x in inner:
                add(cat, pl, _XNN_REPEAT.sub("", x["name"]).rstrip() or "?", x["total"] / 1e6 / n)
        else:
            add(cat, pl, f"whole partition (DELEGATE_CALL #{iid}, no per-op times)", r["total_ms"] / n)
    for b in summary.get("breakdown") or []:
        if b["kind"] == "framework_overhead":
            add("framework overhead", None, "framework overhead", b["mean_ms"])
    rows = sorted(agg.values(), key=lambda a: -a["ms"])
    for a in rows:
        a["ms"] = _r(a["ms"])
    return rows


def runs_data(profile: P.Profile, llm: dict | None) -> dict:
    """Per-run columns (the ``runs`` table of render.export, built from numpy without pyarrow)."""
    from etscope.analysis.placement import per_run_parts
    from etscope.render.export import _first_timed_ns, run_phases, since_origin

    parts = per_run_parts(profile)
    t0 = _first_timed_ns(profile)
    start = profile.runs["start_ns"].astype("int64")
    start_since = since_origin(start, t0)

    def ms(a):
        return [_r(float(x) / 1e6) for x in a]

    cols = {"execute": list(range(profile.n_runs)),
            "start_us": [_r(int(d) / 1e3) if s != 0 else None for s, d in zip(start, start_since)],
            "latency_ms": ms(parts["latency"])}
    for b in profile.backends():
        cols[f"delegate_{b}_ms"] = ms(parts[f"delegate:{b}"])
    cols["cpu_ops_ms"] = ms(parts["cpu_ops"])
    cols["framework_overhead_ms"] = ms(parts["framework_overhead"])
    return {"columns": cols, "phase": run_phases(llm, profile.n_runs)}


def ops_data(ops: list[dict]) -> dict:
    cols = ["instruction_id", "level", "role", "name", "occurrence", "op_type", "placement", "runs",
            "calls_per_run", "unit", "p50", "mean", "total", "min", "max", "p50_ms", "mean_ms",
            "total_ms", "share", "source"]
    rows = []
    for r in ops[:MAX_TABLE_ROWS]:
        rows.append([_r(r.get(c)) if isinstance(r.get(c), float) else r.get(c) for c in cols])
    return {"columns": cols, "rows": rows, "total_rows": len(ops)}


def graph_data(profile: P.Profile, ops: list[dict], qnn: dict | None) -> dict | None:
    from etscope.render.nodes import node_table

    nt = node_table(profile, ops, qnn)
    if nt is None:
        return None
    cols = ["name", "op", "target", "module", "inputs", "placement", "time_us", "estimated", "source",
            "input_kind", "instruction_id", "hmx", "hvx"]
    rows = [[_r(n[c]) if isinstance(n[c], float) else n[c] for c in cols] for n in nt["nodes"]]
    return {"graph": nt["graph"], "method": nt["method"], "columns": cols, "nodes": rows}


def checks(summary: dict, profile: P.Profile, qnn: dict | None, tree: dict | None) -> list[str]:
    """Warnings about units and failed invariants, in plain words (shown in the report)."""
    from etscope.analysis.placement import per_run_parts

    out: list[str] = []
    parts = per_run_parts(profile)
    neg = int((parts["framework_overhead"] < -1e3).sum())   # more than 1 µs below zero
    if neg:
        out.append(f"In {neg} run(s) the delegate calls and CPU kernels add up to more than Method::execute "
                   "(overhead below zero): events overlap or the clock is not monotonic.")
    has_qnn_rows = any(d.get("backend") == "QnnBackend" for d in summary.get("delegate_calls") or [])
    if has_qnn_rows and not (qnn and qnn.get("partitions")):
        out.append("QNN rows are in their own units (cycles, µs, counts); the QNN analysis was not available, "
                   "so no per-op times are estimated from cycles.")
    elif qnn and qnn.get("partitions"):
        measured = any(p.get("clock_source") == "runtrace" for p in qnn["partitions"])
        out.append("QNN per-op times are estimates: cycles divided by " + (
            "the clock the runtrace measured" if measured else "a clock derived from the same run") +
            " (see the QNN section for the clock and its bounds). They are not measured times.")

    def walk(node, path):
        kids = node.get("children") or []
        s = sum(k.get("ms") or 0 for k in kids)
        if kids and node.get("ms") is not None and s > node["ms"] * 1.01 + 1e-6:
            out.append(f"'{' > '.join(path + [node['name']])}': the events inside add up to {s:.4g} ms per run, "
                       f"more than its own {node['ms']:.4g} ms (drawn scaled to fit).")
        for k in kids:
            walk(k, path + [node["name"]])

    if tree:
        walk(tree, [])
    return out


def report_data(profile: P.Profile, summary: dict | None = None, ops: list[dict] | None = None,
                qnn: dict | None = None, llm: dict | None = None, title: str | None = None,
                notes: list[str] | None = None, compare: dict | None = None) -> dict:
    """Everything the page shows, as one plain dict. ``compare``: a :func:`diff_view` of a base run
    against this one (the "Compared with base" section)."""
    from etscope import __version__
    from etscope.render.guide import reading_guide

    if summary is None:
        from etscope.analysis.summary import summarize

        summary = summarize(profile)
    if ops is None:
        from etscope.analysis.ops import op_table

        ops = op_table(profile)
    tree = hierarchy(summary, ops, qnn, profile.n_runs)
    summary_small = {k: v for k, v in summary.items() if k != "ops"}
    return _clean({
        "schema": SCHEMA,
        "title": title or ("etscope report: " + (profile.sources.get("etdump") or "ETDump")),
        "generator": f"etscope {__version__}",
        "generated": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "guide": reading_guide(summary),
        "summary": summary_small,
        "hierarchy": tree,
        "placement": placement_by_op_type(summary, ops, qnn, profile.n_runs),
        "ops": ops_data(ops),
        "runs": runs_data(profile, llm),
        "qnn": qnn,
        "llm": llm,
        "graph": graph_data(profile, ops, qnn),
        "warnings": list(summary.get("warnings") or []) + checks(summary, profile, qnn, tree) + list(notes or []),
        "compare": compare,
    })


# ---- diff: etscope diff --html, and the report's "Compared with base" section -----------------------
def _sessions(p) -> list:
    return [] if p is None else list(p) if isinstance(p, (list, tuple)) else [p]


def diff_view(diff: dict, base=None, new=None, options: dict | None = None) -> dict:
    """What the diff script draws: the dict of ``analysis.diff.compare`` (op rows cut to
    ``MAX_LIST``, changed ones come first), the per-run ``Method::execute`` latency of both sides in
    ms (the diff dict has only their p50), the options used (``min_effect_pct``,
    ``fail_on_regression_pct``, ``fail_on_fallback``) and the input paths.

    ``base`` / ``new``: the Profiles compared, or lists of Profiles (sessions; their runs are
    concatenated in order). ``series``: ``base`` / ``new`` (ms per run), ``sessions`` (runs per
    session) and ``warmup`` (indices of the leading warm-up runs the analysis left out, from
    ``latency.warmup_runs_dropped``)."""
    ops = list(diff.get("ops") or [])
    d = {k: v for k, v in diff.items() if k != "ops"}
    d["ops"] = ops[:MAX_LIST]
    series = None
    if base is not None or new is not None:
        dropped = (diff.get("latency") or {}).get("warmup_runs_dropped") or {}
        series = {"base": [], "new": [], "sessions": {}, "warmup": {}}
        for side, p in (("base", base), ("new", new)):
            vals: list = []
            warm: list[int] = []
            lens: list[int] = []
            drop = dropped.get(side) if isinstance(dropped, dict) else None
            for i, q in enumerate(_sessions(p)):
                lat = q.runs["latency_ns"]
                w = int(drop[i]) if isinstance(drop, list) and i < len(drop) and drop[i] else 0
                warm += range(len(vals), len(vals) + min(w, len(lat)))
                vals += [_r(float(x) / 1e6) for x in lat]
                lens.append(len(lat))
            series[side], series["sessions"][side], series["warmup"][side] = vals, lens, warm
    inputs = {str(k): str(v) for k, v in (diff.get("inputs") or {}).items()}
    for side, p in (("base", base), ("new", new)):
        sess = _sessions(p)
        for k, v in (sess[0].sources.items() if sess else ()):
            inputs.setdefault(side if k == "etdump" else f"{side} {k}", str(v))
        if len(sess) > 1:
            inputs.setdefault(f"{side} sessions", str(len(sess)))
    return _clean({"diff": d, "ops_total": len(ops), "series": series, "options": dict(options or {}),
                   "inputs": inputs})


def compare_view(base: P.Profile, new: P.Profile, min_effect_pct: float = 2.0) -> dict:
    """:func:`diff_view` of ``analysis.diff.compare(base, new)`` (for ``report --compare``)."""
    from etscope.analysis.diff import compare

    d = compare(base, new, min_effect_pct=min_effect_pct)
    return diff_view(d, base, new, options={"min_effect_pct": min_effect_pct})


def diff_page_data(diff: dict, base=None, new=None, options: dict | None = None, title: str | None = None) -> dict:
    """Everything the diff page shows, as one plain dict."""
    from etscope import __version__

    view = diff_view(diff, base, new, options)
    inputs = view["inputs"]
    return {
        "schema": DIFF_SCHEMA,
        "title": title or f"etscope diff: {inputs.get('base', 'base')} → {inputs.get('new', 'new')}",
        "generator": f"etscope {__version__}",
        "generated": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        **view,
    }


def json_for_script(data: dict) -> str:
    """JSON safe inside ``<script type="application/json">``: ASCII only, and ``<``, ``>``, ``&``
    as ``\\u003c`` etc., so no ``</script>`` or ``<!--`` can appear."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _script(page: str) -> str:
    """The page's script: common.js, diff.js and ``page`` in one function scope, after ``DATA`` is
    parsed from the JSON blob (our own files, shipped with the package)."""
    text = "\n".join(["(function () {", "  'use strict';",
                      "  var DATA = JSON.parse(document.getElementById('etscope-data').textContent);",
                      _asset("common.js"), _asset("diff.js"), _asset(page), "})();"])
    if "</" in text:    # cannot end the <script> element early
        raise ValueError(f"inlined script for {page} contains '</'")
    return text


def _render(template_name: str, page_js: str, data: dict) -> str:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _asset(name)),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.get_template(template_name)
    return template.render(
        data=data,
        data_json=Markup(json_for_script(data)),   # escaped above; JSON, not markup
        css=Markup(_asset("report.css")),           # our own files, shipped with the package
        js=Markup(_script(page_js)),
    )


def render_report(data: dict) -> str:
    return _render("report.html.j2", "report.js", data)


def render_diff_page(data: dict) -> str:
    return _render("diff.html.j2", "diff_page.js", data)


def write_report(path: str, profile: P.Profile, **kwargs) -> dict:
    """Build and write the report atomically; return {"path", "bytes"}."""
    from etscope.render.files import write_text

    html = render_report(report_data(profile, **kwargs))
    return {"path": path, "bytes": write_text(path, html)}


def write_diff_page(path: str, diff: dict, base=None, new=None, options: dict | None = None,
                    title: str | None = None) -> dict:
    """Build and write the diff page atomically; return {"path", "bytes"}."""
    from etscope.render.files import write_text

    html = render_diff_page(diff_page_data(diff, base, new, options=options, title=title))
    return {"path": path, "bytes": write_text(path, html)}
