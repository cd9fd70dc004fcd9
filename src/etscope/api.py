"""Notebook API and the glue the view commands share.

    >>> import etscope
    >>> p = etscope.load("run.etdump", etrecord="m.etrecord", pte="m.pte")
    >>> p                      # in Jupyter: the reading guide and the time split as HTML
    >>> p.ops()                # pandas DataFrames (Arrow-backed), true units (see render.export.COLUMNS)
    >>> p.runs(); p.events()
    >>> p.sql("SELECT op_type, sum(dur_us) FROM events GROUP BY 1")
    >>> p.report("report.html"); p.trace("trace.json")

``etscope.load`` returns a :class:`NotebookProfile`: it holds the loaded :class:`Profile` (the model,
which knows nothing of analysis or rendering) and offers the notebook methods. Everything here is
computed lazily, on first use, and cached on the Profile.
"""
from __future__ import annotations

import html
import os
from collections.abc import Mapping

from etscope import profile as P
from etscope.analysis import llm as llm_analysis
from etscope.analysis import qnn as qnn_analysis
from etscope.errors import FormatError


# ---- the notebook object ----------------------------------------------------------------------------
class TableView(Mapping):
    """One of the profile's column tables (``events`` or ``runs``): a read-only mapping of aligned
    numpy arrays, as analysis reads it; called, as in ``p.events()``, the documented table as a
    pandas DataFrame."""

    __slots__ = ("_profile", "_kind")

    def __init__(self, profile: P.Profile, kind: str):
        self._profile, self._kind = profile, kind

    def _columns(self) -> dict:
        return getattr(self._profile, self._kind)      # read each time: the profile may replace it

    def __getitem__(self, key):
        return self._columns()[key]

    def __iter__(self):
        return iter(self._columns())

    def __len__(self) -> int:
        return len(self._columns())

    def __call__(self):
        return events_df(self._profile) if self._kind == "events" else runs_df(self._profile)


class NotebookProfile:
    """What ``etscope.load`` returns: the :class:`Profile` (``.profile``) with the notebook methods.
    Any other attribute (``n_runs``, ``etdump``, ``instructions``, ...) is the Profile's."""

    def __init__(self, profile: P.Profile):
        self.profile = profile
        self.events = TableView(profile, "events")
        self.runs = TableView(profile, "runs")

    def __getattr__(self, name):
        if name == "profile":                          # not set yet (copy/pickle): no recursion
            raise AttributeError(name)
        return getattr(self.profile, name)

    def ops(self):
        """The per-op table as a pandas DataFrame (``.events()`` and ``.runs()`` likewise)."""
        return ops_df(self.profile)

    def sql(self, query: str):
        """DuckDB SQL over the ``events``, ``ops`` and ``runs`` tables; a pandas DataFrame."""
        return sql(self.profile, query)

    def report(self, path="report.html", qhas=None, optrace=None) -> str:
        """Write the self-contained HTML report; returns its path."""
        return report(self.profile, path, qhas=qhas, optrace=optrace)

    def trace(self, path="trace.json", qhas=None, optrace=None) -> str:
        """Write the Perfetto / chrome://tracing JSON; returns its path."""
        return trace(self.profile, path, qhas=qhas, optrace=optrace)

    def _repr_html_(self) -> str:
        return repr_html(self.profile)


def load(*args, **kwargs) -> NotebookProfile:
    """Load an ETDump (and optional ETRecord/.pte) into a :class:`NotebookProfile`; the arguments
    are those of ``etscope.profile.load``."""
    return NotebookProfile(P.load(*args, **kwargs))


def profile_of(p) -> P.Profile:
    """The Profile of a NotebookProfile, or the Profile itself."""
    return p.profile if isinstance(p, NotebookProfile) else p


# ---- the qnn command: QNN files alone or with an ETDump -----------------------------------------------
def qnn_from_files(etdump=None, etrecord=None, pte=None, method=None, qhas=None, optrace=None,
                   qnn_csv=None, runtrace=None) -> dict:
    """Read whichever QNN inputs were given (paths) and produce the QNN report."""
    from etscope.formats.optrace import read_optrace
    from etscope.formats.pte import read_pte
    from etscope.formats.qhas import read_qhas
    from etscope.formats.qnn_compile_spec import soc_from_pte
    from etscope.formats.qnn_profile_files import read_qnn_profile
    from etscope.formats.runtrace import read_runtrace
    from etscope.paths import display

    profile = P.load(etdump, etrecord=etrecord, pte=pte, method=method) if etdump is not None else None
    q = read_qhas(qhas) if qhas is not None else None
    ot = read_optrace(optrace) if optrace is not None else None
    qp = read_qnn_profile(qnn_csv) if qnn_csv is not None else None
    rt = read_runtrace(runtrace) if runtrace is not None else None
    program = profile.pte if profile is not None else read_pte(pte) if pte is not None else None
    report = qnn_analysis.qnn_report(profile, qhas=q, optrace=ot, qnn_profile=qp, soc=soc_from_pte(program),
                                     runtrace=rt)
    report["inputs"] = {k: display(v) for k, v in (("etdump", etdump), ("etrecord", etrecord), ("pte", pte),
                                                     ("qhas", qhas), ("optrace", optrace), ("qnn_csv", qnn_csv),
                                                     ("runtrace", runtrace))
                        if v is not None}
    return report


# ---- what the views render: analysis results as plain dicts ----------------------------------------
def summary(profile: P.Profile, runtrace=None) -> dict:
    profile = profile_of(profile)
    key = "views_summary" if runtrace is None else ("views_summary", _rt_key(runtrace))
    s = profile.cache.get(key)
    if s is None:
        from etscope.analysis.summary import summarize

        s = profile.cache[key] = summarize(profile, runtrace=runtrace)
    return s


def ops(profile: P.Profile) -> list[dict]:
    profile = profile_of(profile)
    from etscope.analysis.ops import op_table

    return op_table(profile)


def qnn(profile: P.Profile, qhas=None, optrace=None, notes: list[str] | None = None, runtrace=None) -> dict | None:
    """``analysis.qnn.qnn_report`` for the profile (None when there is no QNN partition and no QNN
    file). ``qhas`` / ``optrace`` / ``runtrace`` may be paths or already-read objects."""
    profile = profile_of(profile)
    key = ("views_qnn", _key(qhas), _key(optrace)) + (() if runtrace is None else (_rt_key(runtrace),))
    if key in profile.cache:
        return profile.cache[key]
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
    from etscope.formats.qnn_compile_spec import soc_from_pte

    try:
        soc = soc_from_pte(profile.pte)
    except FormatError:
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
    profile = profile_of(profile)
    if "views_llm" in profile.cache:
        return profile.cache["views_llm"]
    result = None
    try:
        result = llm_analysis.llm_report(profile)
    except FormatError:
        raise
    except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
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
    profile = profile_of(profile)
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
    profile = profile_of(profile)
    return _df(_tables(profile)["events"])


def ops_df(profile: P.Profile):
    """The per-op table (pandas DataFrame, Arrow-backed)."""
    profile = profile_of(profile)
    return _df(_tables(profile)["ops"])


def runs_df(profile: P.Profile):
    """One row per Execute run (pandas DataFrame, Arrow-backed)."""
    profile = profile_of(profile)
    return _df(_tables(profile)["runs"])


def sql(profile: P.Profile, query: str):
    """DuckDB over the events / ops / runs tables; returns a pandas DataFrame."""
    profile = profile_of(profile)
    from etscope.render.sql import query as run_query

    return _df(run_query(profile, query, tables=_tables(profile)))


def report(profile: P.Profile, path: str | os.PathLike = "report.html", qhas=None, optrace=None) -> str:
    profile = profile_of(profile)
    from etscope.render.html import write_report

    out = _output(profile, path, qhas, optrace)
    v = view_inputs(profile, qhas, optrace)
    write_report(out, profile, summary=v["summary"], ops=v["ops"], qnn=v["qnn"], llm=v["llm"],
                 notes=v["notes"])
    return os.fspath(path)


def trace(profile: P.Profile, path: str | os.PathLike = "trace.json", qhas=None, optrace=None) -> str:
    profile = profile_of(profile)
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
    profile = profile_of(profile)
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
