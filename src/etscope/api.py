"""Notebook API and the glue the view commands share.

    >>> import etscope
    >>> p = etscope.load("run.etdump", etrecord="m.etrecord", pte="m.pte")
    >>> p                      # in Jupyter: the reading guide and the time split as HTML
    >>> p.ops()                # pandas DataFrames (Arrow-backed), true units (see render.export.COLUMNS)
    >>> p.runs(); p.events()
    >>> p.sql("SELECT op_type, sum(dur_us) FROM events GROUP BY 1")
    >>> p.report("report.html"); p.trace("trace.json")

Everything here is computed lazily, on first use, and cached on the Profile.
"""
from __future__ import annotations

import html
import os

from etscope import profile as P
from etscope.errors import FormatError


# ---- what the views render: analysis results as plain dicts ----------------------------------------
def summary(profile: P.Profile, runtrace=None) -> dict:
    key = "views_summary" if runtrace is None else ("views_summary", _rt_key(runtrace))
    s = profile.cache.get(key)
    if s is None:
        from etscope.analysis.summary import summarize

        s = profile.cache[key] = summarize(profile, runtrace=runtrace)
    return s


def ops(profile: P.Profile) -> list[dict]:
    from etscope.analysis.ops import op_table

    return op_table(profile)


def qnn(profile: P.Profile, qhas=None, optrace=None, notes: list[str] | None = None, runtrace=None) -> dict | None:
    """``analysis.qnn.qnn_report`` for the profile (None when there is no QNN partition and no QNN
    file). ``qhas`` / ``optrace`` / ``runtrace`` may be paths or already-read objects."""
    key = ("views_qnn", _key(qhas), _key(optrace)) + (() if runtrace is None else (_rt_key(runtrace),))
    if key in profile.cache:
        return profile.cache[key]
    try:
        from etscope.analysis import qnn as qnn_analysis
    except ImportError:
        return None
    if isinstance(qhas, (str, os.PathLike)):
        from etscope.formats.qhas import read_qhas

        qhas = read_qhas(qhas)
    if isinstance(optrace, (str, os.PathLike)):
        from etscope.formats.optrace import read_optrace

        optrace = read_optrace(optrace)
    if isinstance(runtrace, (str, os.PathLike)):
        from etscope.formats.runtrace import read_runtrace

        runtrace = read_runtrace(runtrace)
    has_partitions = bool(qnn_analysis.qnn_instructions(profile))
    if not has_partitions and qhas is None and optrace is None:
        profile.cache[key] = None
        return None
    soc = None
    try:
        from etscope.qnn_inputs import soc_from_pte

        soc = soc_from_pte(profile.pte)
    except (ImportError, FormatError):
        soc = None
    try:
        result = qnn_analysis.qnn_report(profile, qhas=qhas, optrace=optrace, soc=soc, runtrace=runtrace)
    except FormatError:
        raise
    except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
        if notes is not None:
            notes.append(f"the QNN analysis failed ({type(e).__name__}: {e}); the QNN section is left out")
        result = None
    profile.cache[key] = result
    return result


def llm(profile: P.Profile, notes: list[str] | None = None) -> dict | None:
    """The LLM phases dict from ``analysis.llm`` when that module is present and finds phases."""
    if "views_llm" in profile.cache:
        return profile.cache["views_llm"]
    try:
        from etscope.analysis import llm as llm_analysis
    except ImportError:
        return None
    fn = None
    for name in ("llm_report", "analyze", "analyse", "summarize", "llm_summary"):
        fn = getattr(llm_analysis, name, None)
        if callable(fn):
            break
    result = None
    if fn is not None:
        try:
            result = fn(profile)
        except FormatError:
            raise
        except Exception as e:  # noqa: BLE001
            if notes is not None:
                notes.append(f"the LLM analysis failed ({type(e).__name__}: {e}); the LLM section is left out")
    if isinstance(result, dict) and isinstance(result.get("llm"), dict) and "phases" not in result:
        outer = result
        result = dict(result["llm"])
        for k in ("findings", "warnings"):
            if outer.get(k) and k not in result:
                result[k] = outer[k]
    if not isinstance(result, dict) or not is_llm(result):
        result = None
    profile.cache["views_llm"] = result
    return result


def is_llm(llm: dict) -> bool:
    """Whether the LLM analysis found LLM phases (prefill / decode, or several phases); a CNN's
    single group of identical runs is not shown as an LLM."""
    phases = [p for p in llm.get("phases") or [] if isinstance(p, dict)]
    names = {str(p.get("name")) for p in phases}
    return len(phases) > 1 or bool(names & {"prefill", "decode"})


def _rt_key(runtrace) -> str | None:
    """Cache key of a runtrace given as a path or as a read RunTrace (its path)."""
    return os.fspath(runtrace) if isinstance(runtrace, (str, os.PathLike)) else getattr(runtrace, "path", None)


def _key(x):
    return os.fspath(x) if isinstance(x, (str, os.PathLike)) else id(x) if x is not None else None


def view_inputs(profile: P.Profile, qhas=None, optrace=None, runtrace=None) -> dict:
    """summary, ops, qnn, llm and notes: what the report, trace and export need."""
    notes: list[str] = []
    if isinstance(runtrace, (str, os.PathLike)):
        from etscope.formats.runtrace import read_runtrace

        runtrace = read_runtrace(runtrace)
    return {"summary": summary(profile, runtrace), "ops": ops(profile),
            "qnn": qnn(profile, qhas, optrace, notes, runtrace), "llm": llm(profile, notes), "notes": notes}


# ---- tables -------------------------------------------------------------------------------------------
def _tables(profile: P.Profile) -> dict:
    t = profile.cache.get("views_tables")
    if t is None:
        from etscope.render.export import tables

        v = view_inputs(profile)
        t = profile.cache["views_tables"] = tables(profile, v["ops"], v["qnn"], v["llm"])
    return t


def _df(table):
    import pandas as pd

    return table.to_pandas(types_mapper=pd.ArrowDtype)


def events_df(profile: P.Profile):
    """One row per event (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(profile)["events"])


def ops_df(profile: P.Profile):
    """The per-op table (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(profile)["ops"])


def runs_df(profile: P.Profile):
    """One row per Execute run (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(profile)["runs"])


def sql(profile: P.Profile, query: str):
    """DuckDB over the events / ops / runs tables; returns a pandas DataFrame."""
    from etscope.render.sql import query as run_query

    return _df(run_query(profile, query, tables=_tables(profile)))


def report(profile: P.Profile, path: str | os.PathLike = "report.html", qhas=None, optrace=None) -> str:
    from etscope.render.html import write_report

    out = _output(profile, path, qhas, optrace)
    v = view_inputs(profile, qhas, optrace)
    write_report(out, profile, summary=v["summary"], ops=v["ops"], qnn=v["qnn"], llm=v["llm"],
                 notes=v["notes"])
    return os.fspath(path)


def trace(profile: P.Profile, path: str | os.PathLike = "trace.json", qhas=None, optrace=None) -> str:
    from etscope.render.trace import build_trace, write_trace

    out = _output(profile, path, qhas, optrace)
    v = view_inputs(profile, qhas, optrace)
    write_trace(out, build_trace(profile, qnn=v["qnn"]))
    return os.fspath(path)


def _output(profile: P.Profile, path, *more_inputs):
    """``paths.check_output`` against the profile's files and any QNN input paths: never an input."""
    from etscope.paths import check_output

    inputs = list(profile.sources.values()) + [p for p in more_inputs if isinstance(p, (str, os.PathLike))]
    return check_output(path, inputs)


# ---- notebook display ----------------------------------------------------------------------------------
def repr_html(profile: P.Profile) -> str:
    """Compact HTML for Jupyter: the reading guide and the split of Method::execute. Every string
    from the inputs is escaped."""
    from etscope.render.guide import reading_guide
    from etscope.units import fmt_ms

    s = summary(profile)
    e = html.escape
    parts = ['<div class="etscope-profile">',
             f"<b>etscope Profile</b> — {e(profile.sources.get('etdump') or 'ETDump')}: "
             f"{profile.n_runs} run(s), {profile.etdump.event_count:,} events",
             "<ol>" + "".join(f"<li>{e(line)}</li>" for line in reading_guide(s)) + "</ol>"]
    if s["runs"].get("latency_ms"):
        rows = []
        for b in s["breakdown"]:
            label = {"delegate": f"delegate: {b.get('backend')}", "cpu_ops": "CPU kernels (fallback)",
                     "framework_overhead": "framework overhead"}.get(b["kind"], b["kind"])
            rows.append(f"<tr><td>{e(str(label))}</td><td style='text-align:right'>{e(fmt_ms(b['mean_ms']))}</td>"
                        f"<td style='text-align:right'>{b['share']:.1%}</td></tr>")
        parts.append("<table><tr><th>part of Method::execute</th><th>mean per run</th><th>share</th></tr>"
                     + "".join(rows) + "</table>")
    parts.append("<small>.ops(), .runs(), .events() give DataFrames; .report('report.html') the full report.</small>")
    if profile.warnings:
        parts.append("<ul>" + "".join(f"<li>warning: {e(w)}</li>" for w in profile.warnings) + "</ul>")
    parts.append("</div>")
    return "\n".join(parts)
