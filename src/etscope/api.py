"""Notebook API and the glue the view commands share.

    >>> import etscope
    >>> p = etscope.load("run.etdump", etrecord="m.etrecord", pte="m.pte")
    >>> p                      # in Jupyter: the reading guide and the time split as HTML
    >>> p.ops()                # pandas DataFrames (Arrow-backed), true units (see analysis.views.tables.COLUMNS)
    >>> p.runs(); p.events()
    >>> p.qnn(); p.llm(); p.diff(new)   # typed results with DataFrame accessors (etscope.frames)
    >>> p.modules()            # inclusive time per source module (needs the ETRecord)
    >>> p.sql("SELECT op_type, sum(dur_us) FROM events GROUP BY 1")
    >>> p.report("report.html"); p.trace("trace.json")

Summing ``ops()`` without double counting: rows with ``level == 0`` are the instructions (each
DELEGATE_CALL and CPU kernel call); they do not overlap, and per placement they add up to the
summary's split of Method::execute (``ops(level=0).groupby("placement").total_ms.sum()`` =
mean ms per run x runs). Rows with ``level == 1`` are logged inside their instruction (backend
per-op events, kernel events, QNN's nested levels and cycles): they are contained in the level-0
row above them, and QNN's levels contain each other, so never add them to level 0 or to each other.

``etscope.load`` returns a :class:`NotebookProfile`: it holds the loaded :class:`Profile` (the model,
which knows nothing of analysis or rendering) and offers the notebook methods. Everything here is
computed lazily, on first use, once (``analysis.results.Results``).
"""
from __future__ import annotations

import html
import os
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from etscope import profile as P
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis.results import Results
from etscope.formats.kinds import KINDS
# The input files, read through the registry of input kinds (etscope.inputs); read_view_qnn_files,
# split_pin, sharded_results and view_results stay importable from here, as they always were.
from etscope.inputs import (  # noqa: F401 - re-exported
    _is_path_or_paths, _paths, given_paths, given_values, read_inputs, read_qnn_inputs, read_view_qnn_files,
    shown_inputs, sharded_results, split_pin, view_results,
)

if TYPE_CHECKING:      # types only: the diff and QNN-file analyses load when a call needs them
    from etscope.analysis.diff.view import DiffView
    from etscope.analysis.qnn.partition_files import QnnFiles
    from etscope.analysis.qnn.result import QnnView


# ---- the notebook object ----------------------------------------------------------------------------
class TableView(Mapping):
    """One of the profile's column tables (``events`` or ``runs``): a read-only mapping of aligned
    numpy arrays, as analysis reads it; called, as in ``p.events()``, the documented table as a
    pandas DataFrame."""

    __slots__ = ("_owner", "_kind")

    def __init__(self, owner: "NotebookProfile", kind: str):
        self._owner, self._kind = owner, kind

    def _columns(self) -> dict:
        return getattr(self._owner.profile, self._kind)      # read each time: the profile may replace it

    def __getitem__(self, key):
        return self._columns()[key]

    def __iter__(self):
        return iter(self._columns())

    def __len__(self) -> int:
        return len(self._columns())

    def __call__(self):
        return events_df(self._owner) if self._kind == "events" else runs_df(self._owner)


class NotebookProfile:
    """What ``etscope.load`` returns: the :class:`Profile` (``.profile``) with the notebook methods.
    Any other attribute (``n_runs``, ``etdump``, ``instructions``, ...) is the Profile's."""

    def __init__(self, profile: P.Profile, llm_options: dict | None = None, given: Mapping | None = None):
        self.profile = profile
        self.llm_options = llm_options or {}       # token counts for the LLM analysis (``llm_options``)
        self.events = TableView(self, "events")
        self.runs = TableView(self, "runs")
        # Input files given to ``load`` by kind name (formats.kinds: ``runtrace=``, ``qnn_heap=``, ...),
        # read now: a bad one fails at load, as the CLI's before the ETDump.
        self.given = given_values(given)
        self.inputs_read = read_inputs(self.given)

    @cached_property
    def results(self) -> Results:
        """The analyses of the profile with the inputs given to ``load``, each computed once."""
        return Results(self.profile, llm_options=self.llm_options).feed(self.inputs_read)

    def input_view(self, name: str):
        """The view of an input kind given to ``load`` that has no method of its own (a kind of the
        registry with a ``view``, ``formats.kinds``), as ``etscope summary --json`` shows it; None
        when that input was not given."""
        return self.results.kind_views.get(name)

    @cached_property
    def tables(self) -> dict:
        """The events, ops and runs tables (pyarrow) by name, built once (the QNN tables too)."""
        return tables_of(self.results)

    def __getattr__(self, name):
        if name == "profile":                          # not set yet (copy/pickle): no recursion
            raise AttributeError(name)
        return getattr(self.profile, name)

    def ops(self, level: int | None = None):
        """The per-op table as a pandas DataFrame (``.events()`` and ``.runs()`` likewise).
        ``level=0``: only the instructions, the rows to sum (see the module doc); ``level=1``:
        only what is logged inside them."""
        d = ops_df(self)
        return d if level is None else d[d.level == level].reset_index(drop=True)

    def qnn(self, qhas=None, optrace=None, runtrace=None, qnn_csv=None, phase: str | None = None):
        """The QNN analysis (:class:`etscope.frames.QnnResult`: ``.partitions()``, ``.ops()``,
        ``.levels()``), or None without QNN partition or file: what ``etscope qnn`` gives for the
        same inputs. ``qhas`` / ``optrace``: a path or several (one per partition, pins
        ``METHOD:INSTR=FILE`` allowed) or an already-read object; ``qnn_csv``, ``runtrace``: a
        path (or a read runtrace); ``phase``: one phase of an LLM's runs (``--phase``)."""
        from etscope.analysis.views.qnn_view import qnn_view
        from etscope.frames import QnnResult

        read = [x for x in (qhas, optrace, runtrace) if x is not None and not _is_path_or_paths(x)]
        if read and qnn_csv is None and phase is None:       # objects already read: as before
            r = qnn(self, qhas, optrace, runtrace=runtrace)
            return None if r is None else QnnResult(r)
        if read:
            raise TypeError("give paths (as etscope qnn takes them) when qnn_csv or phase is given")
        files = read_view_qnn_files(_paths(qhas), _paths(optrace), qnn_csv, runtrace, given=self.given)
        if not (files.qhas or files.optrace or files.qnn_profile or files.runtrace):
            r = narrowed(self.results, phase)
        else:
            r = narrowed(view_results(self.profile, files, llm_options=self.llm_options), phase)
        if r.qnn is None:
            return None
        return QnnResult(qnn_view(r))

    def llm(self):
        """The LLM analysis (:class:`etscope.frames.LlmResult`: ``.phases()``, ``.runs()``,
        ``.findings``), or None when the runs show no LLM phases."""
        from etscope.frames import LlmResult

        r = llm(self)
        return None if r is None else LlmResult(r)

    def modules(self):
        """Inclusive time per source module, as ``etscope ops --by module``
        (:class:`etscope.frames.ModulesResult`: ``.modules()``, ``.how()``, ``.placement()``,
        ``.total_us``), or None without the ETRecord's graph (the module of each op comes from its
        ``nn_module_stack``). Sum ``self_us``, never ``total_us`` (inclusive)."""
        from etscope.frames import ModulesResult

        r = self.results.modules
        return None if r is None else ModulesResult(r)

    def diff(self, new, min_effect_pct: float = 2.0, fail_on_regression_pct: float | None = None,
             fail_on_fallback: bool = False):
        """This profile (the base) compared with ``new`` (a loaded profile or an ETDump path), as
        ``etscope diff THIS NEW``: :class:`etscope.frames.DiffResult` (``.verdict``, ``.ops()``,
        ``.breakdown()``, ``.html(path)``)."""
        from etscope.analysis.diff.compare import compare
        from etscope.frames import DiffResult

        other = profile_of(new) if isinstance(new, (NotebookProfile, P.Profile)) else P.load(new)
        base = self.profile
        theirs = new.llm_options if isinstance(new, NotebookProfile) else llm_options_of(other)
        d = compare(base, other, min_effect_pct=min_effect_pct, fail_on_regression_pct=fail_on_regression_pct,
                    fail_on_fallback=fail_on_fallback, llm_options=(self.llm_options, theirs))
        options = {"min_effect_pct": min_effect_pct, "fail_on_regression_pct": fail_on_regression_pct,
                   "fail_on_fallback": fail_on_fallback}
        inputs = tuple(base.sources.values()) + tuple(other.sources.values())
        from etscope.analysis.diff.view import diff_view

        return DiffResult(d, view=diff_view(d, base, other, options=options), inputs=inputs)

    def sql(self, query: str):
        """DuckDB SQL over the ``events``, ``ops`` and ``runs`` tables; a pandas DataFrame."""
        return sql(self, query)

    def report(self, path="report.html", qhas=None, optrace=None) -> str:
        """Write the self-contained HTML report; returns its path."""
        return report(self, path, qhas=qhas, optrace=optrace)

    def trace(self, path="trace.json", qhas=None, optrace=None) -> str:
        """Write the Perfetto / chrome://tracing JSON; returns its path."""
        return trace(self, path, qhas=qhas, optrace=optrace)

    def __repr__(self) -> str:
        """One line: file, method, runs, instructions by placement, p50 latency."""
        from etscope.analysis.ops.latency import latency_summary
        from etscope.units import fmt_ms

        p = self.profile
        kinds: dict[str, int] = {}
        for ins in p.instructions.values():
            kinds[ins.backend] = kinds.get(ins.backend, 0) + 1
        lat = latency_summary(p).latency_ms          # the summary's figure (its runs with timing)
        p50 = f"; Method::execute p50 {fmt_ms(lat.p50)}" if lat is not None else ""
        return (f"<etscope profile {p.source_files.etdump or 'ETDump'}: method {p.method}, {p.n_runs} run(s), "
                f"{len(p.instructions)} instruction(s) ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})"
                f"{p50}; .ops() .qnn() .llm() .modules() .diff(new) .report(path)>")

    def _repr_html_(self) -> str:
        return repr_html(self)


def load(etdump, etrecord=None, pte=None, method: str | None = None, progress=None, *,
         prompt_tokens: int | None = None, decode_tokens: int | None = None, **given) -> NotebookProfile:
    """Load an ETDump (and optional ETRecord/.pte) into a :class:`NotebookProfile`; the arguments
    are those of ``etscope.profile.load``, plus the LLM token counts of ``etscope llm``
    (``prompt_tokens``, ``decode_tokens``; the .pte's ``get_ar_len`` is read when a .pte path is given),
    plus input files by kind name (``runtrace=``, ``qnn_heap=``, ...: the kinds of ``formats.kinds``,
    the files the CLI's options take)."""
    kinds = {k.name for k in KINDS if k.reader is not None}       # input files by kind name (formats.kinds)
    unknown = sorted(set(given) - kinds)
    if unknown:
        raise TypeError(f"load() got an unexpected keyword argument {unknown[0]!r}")
    return NotebookProfile(P.load(etdump, etrecord=etrecord, pte=pte, method=method, progress=progress),
                           llm_options(pte, prompt_tokens, decode_tokens), given)


def llm_options(pte=None, prompt_tokens: int | None = None, decode_tokens: int | None = None) -> dict:
    """The token options of ``analysis.llm.llm_report`` that ``llm``, ``report`` and the notebook
    share: the user's counts, and the constant methods (``get_ar_len``) of the .pte at path ``pte``."""
    constants = {}
    if isinstance(pte, (str, os.PathLike)):
        from etscope.formats.pte_constants import constant_method_values

        constants = {"program_constants": constant_method_values(pte)}
    return {"prompt_tokens": prompt_tokens, "decode_tokens": decode_tokens, **constants}


def llm_options_of(profile: P.Profile) -> dict:
    """The LLM token options of a loaded profile: its .pte's constant methods (``get_ar_len``)."""
    return llm_options(profile.source_files.pte)


def profile_of(p) -> P.Profile:
    """The Profile of a NotebookProfile, or the Profile itself."""
    return p.profile if isinstance(p, NotebookProfile) else p


# ---- the qnn command: QNN files alone or with an ETDump -----------------------------------------------
def qnn_from_files(etdump=None, etrecord=None, pte=None, method=None, qhas=(), optrace=(),
                   qnn_csv=None, runtrace=None, dram_gbps: float | None = None, phase: str | None = None,
                   ort_profile=None, given: Mapping | None = None) -> QnnView:
    """Read whichever QNN inputs were given (paths; ``qhas``/``optrace`` one path or several, pins
    allowed) and produce the QNN report; QNN files without a partition to join get ``files``.
    ``dram_gbps``: the DRAM bandwidth the HTP limits compare with (default: the SoC's, if sourced).
    ``phase``: ``--phase`` (see :func:`narrowed`); when the runs are several phases, ``phases``
    holds each phase's own report (``phase_rows``: them side by side). ``given``: any input kind
    by name (the CLI's options, ``formats.kinds``)."""
    from etscope.analysis.views.qnn_view import qnn_view
    from etscope.paths import display

    values = given_values(given, qhas=_paths(qhas), optrace=_paths(optrace), qnn_profile=qnn_csv, runtrace=runtrace,
                          ort_profile=ort_profile)
    files = read_view_qnn_files(given=values)
    profile = P.load(etdump, etrecord=etrecord, pte=pte, method=method) if etdump is not None else None
    r = narrowed(view_results(profile, files, pte=pte, llm_options=llm_options(pte), dram_gbps=dram_gbps),
                 phase, method, consume=True)
    shown = {k: display(v) for k, v in (("etdump", etdump), ("etrecord", etrecord), ("pte", pte)) if v is not None}
    return qnn_view(r, phases=True, consume=True, inputs=dict(shown, **shown_inputs(values)))


# ---- phases: a view shows one phase, or each on its own --------------------------------------------
def narrowed(r: Results, phase: str | None = None, method: str | None = None, consume: bool = False) -> Results:
    """The Results of the runs ``--phase`` names, or of a look-alike ``--method``'s runs (an LLM
    whose prefill and decode methods execute the same instructions); ``r`` itself when neither
    selects (one phase, ``--phase all``, or a method the loader already told apart).
    ``analysis.llm.run_phases.PhaseChoiceError`` when the choice names no phase of these runs.
    ``consume``: the phase takes ``r``'s own event buffers (``Results.for_phase``): ``r`` is then
    used up (the CLI, which reads only the phase)."""
    from etscope.analysis.llm.lookalike import lookalike_methods
    from etscope.analysis.llm.run_phases import choose

    p = r.profile
    if p is None or (phase is None and method is None):
        return r
    if phase is None and len(lookalike_methods(p.pte, method, p.etrecord)) < 2:
        return r                  # a method with instructions of its own: the loader chose its runs
    name = choose(r.phases, phase, method)
    if name is None:
        r.pool_phases = phase is not None        # --phase all: every run together, as asked
        return r
    return r.for_phase(name, consume=consume)


# ---- analyses: each once per profile and set of inputs -----------------------------------------------
def results(p, qhas=None, optrace=None, runtrace=None, llm_options: dict | None = None,
            given: Mapping | None = None) -> Results:
    """The analyses of a profile (:class:`analysis.results.Results`, each computed once). A
    NotebookProfile without QNN files or other LLM options keeps one, so its views share them.
    ``llm_options``: see :func:`llm_options` (a NotebookProfile's own by default); ``given``: more
    input files by kind name (``formats.kinds``; a NotebookProfile's from ``load`` too)."""
    qhas, optrace, runtrace = read_qnn_inputs(qhas, optrace, runtrace)
    read = read_inputs(given)
    if isinstance(p, NotebookProfile):
        if qhas is None and optrace is None and runtrace is None and llm_options is None and not read:
            return p.results
        llm_options = p.llm_options if llm_options is None else llm_options
        read = {**p.inputs_read, **read}
    r = Results(profile_of(p), llm_options=llm_options).feed(read)
    return r.feed({k: v for k, v in (("qhas", qhas), ("optrace", optrace), ("runtrace", runtrace)) if v is not None})


def summary(p, runtrace=None):
    """What ``etscope summary --json`` prints (findings and phases included): ``summary_document``,
    a ``Summary`` (``analysis.views.summary_result``), or a ``PhasedSummary`` when the runs are
    several phases."""
    return summary_document(results(p, runtrace=runtrace))


def summary_document(r: Results, consume: bool = False):
    """What ``etscope summary --json`` prints for ``r``: its summary with the ranked findings of the
    same inputs (``Results.summary_view``, a ``Summary``), and when the runs are several
    phases each phase's runs with its own summary (the top level then pools them: said in
    ``phases_pooled``). ``etscope collect`` stores the same document per file. ``consume``: the
    phases take ``r``'s event buffers (``Results.by_phase``; the CLI, which needs nothing after)."""
    whole = r.summary_view      # the whole runs first: with ``consume`` the phases then take the events
    parts = r.by_phase(consume=consume)
    if not parts:
        return whole
    from etscope.analysis.views.summary import phased_summary

    return phased_summary(whole, [(row, pr.summary_view) for row, (_, pr) in zip(r.phase_rows, parts)])


def ops(p) -> list[dict]:
    return results(p).ops


def qnn(p, qhas=None, optrace=None, notes: list[str] | None = None, runtrace=None):
    """``analysis.qnn.qnn_report`` for the profile (None when there is no QNN partition and no QNN
    file). ``qhas`` / ``optrace`` / ``runtrace`` may be paths or already-read objects."""
    r = results(p, qhas, optrace, runtrace)
    out = r.qnn
    if notes is not None:
        notes.extend(r.notes)
    return out


def llm(p, notes: list[str] | None = None):
    """The LLM analysis (``analysis.llm.result.LlmReport``) when it finds LLM phases, else None."""
    r = results(p)
    out = r.llm
    if notes is not None:
        notes.extend(r.notes)
    return out


def compare_view(base, new, min_effect_pct: float = 2.0) -> DiffView:
    """``analysis.diff.compare.compare(base, new)`` with both sides' runs (for ``report --compare``)."""
    from etscope.analysis.diff.compare import compare

    opts = tuple(p.llm_options if isinstance(p, NotebookProfile) else llm_options_of(profile_of(p)) for p in (base, new))
    base, new = profile_of(base), profile_of(new)
    d = compare(base, new, min_effect_pct=min_effect_pct, llm_options=opts)
    from etscope.analysis.diff.view import diff_view

    return diff_view(d, base, new, options={"min_effect_pct": min_effect_pct})


# ---- tables -------------------------------------------------------------------------------------------
def tables_of(r: Results) -> dict:
    """The events, ops and runs tables (pyarrow) of analysed results, by name (the QNN tables too)."""
    return r.tables.named()


def _tables(p):
    """The tables of ``p``'s analyses (``analysis.views.table_set.TableSet``)."""
    return results(p).tables


def _df(table):
    import pandas as pd

    return table.to_pandas(types_mapper=pd.ArrowDtype)


def events_df(p):
    """One row per event (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(p).events)


def ops_df(p):
    """The per-op table (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(p).ops)


def runs_df(p):
    """One row per Execute run (pandas DataFrame, Arrow-backed)."""
    return _df(_tables(p).runs)


def sql(p, query: str):
    """DuckDB over the events / ops / runs tables; returns a pandas DataFrame."""
    from etscope.sql.engine import query as run_query

    return _df(run_query(_tables(p).named(), query))


def report(p, path: str | os.PathLike = "report.html", qhas=None, optrace=None) -> str:
    from etscope.render.html import write_report

    out = _output(profile_of(p), path, qhas, optrace, *given_paths(getattr(p, "given", None)))
    from etscope.render.html.phases import phase_pages

    r = results(p, qhas, optrace)      # an LLM's phases each on its own page view, as etscope report
    write_report(out, r.view, phases=phase_pages(r), phases_how=r.phases.how)
    return os.fspath(path)


def trace(p, path: str | os.PathLike = "trace.json", qhas=None, optrace=None) -> str:
    from etscope.analysis.views.trace import trace_view
    from etscope.render.trace import build_trace, write_trace

    out = _output(profile_of(p), path, qhas, optrace, *given_paths(getattr(p, "given", None)))
    write_trace(out, build_trace(trace_view(profile_of(p), qnn=results(p, qhas, optrace).qnn)))
    return os.fspath(path)


def _output(profile: P.Profile, path, *more_inputs):
    """``paths.check_output`` against the profile's files and any QNN input paths: never an input."""
    from etscope.paths import check_output

    inputs = list(profile.sources.values()) + [p for p in more_inputs if isinstance(p, (str, os.PathLike))]
    return check_output(path, inputs)


# ---- notebook display ----------------------------------------------------------------------------------
HTML_WARNINGS = 5      # the notebook cell stays small; p.warnings has them all
def repr_html(p) -> str:
    """Compact HTML for Jupyter: the reading guide and the split of Method::execute. Every string
    from the inputs is escaped."""
    profile = profile_of(p)
    from etscope.render.guide import reading_guide
    from etscope.units import fmt_ms

    s = results(p).summary
    e = html.escape
    parts = ['<div class="etscope-profile">',
             f"<b>etscope Profile</b> — {e(profile.source_files.etdump or 'ETDump')}: "
             f"{profile.n_runs} run(s), {profile.etdump.event_count:,} events",
             "<ol>" + "".join(f"<li>{e(line)}</li>" for line in reading_guide(s)) + "</ol>"]
    if s.runs.latency_ms:
        rows = []
        for b in s.breakdown:
            label = {"delegate": f"delegate: {b.backend}", "cpu_ops": "CPU kernels (fallback)",
                     "framework_overhead": "framework overhead"}.get(b.kind, b.kind)
            rows.append(f"<tr><td>{e(str(label))}</td><td style='text-align:right'>{e(fmt_ms(b.mean_ms))}</td>"
                        f"<td style='text-align:right'>{b.share:.1%}</td></tr>")
        parts.append("<table><tr><th>part of Method::execute</th><th>mean per run</th><th>share</th></tr>"
                     + "".join(rows) + "</table>")
    parts.append("<small>.ops(), .runs(), .events() give DataFrames; .qnn(), .llm(), .diff(new) typed results; "
                 ".report('report.html') the full report.</small>")
    if profile.warnings:
        shown = profile.warnings[:HTML_WARNINGS]
        more = len(profile.warnings) - len(shown)
        parts.append("<ul>" + "".join(f"<li>warning: {e(w)}</li>" for w in shown)
                     + (f"<li>{more} more warning(s): print(p.warnings)</li>" if more else "") + "</ul>")
    parts.append("</div>")
    return "\n".join(parts)
