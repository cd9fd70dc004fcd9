"""The analyses of one profile, each run at most once (explicit memoisation): a command asks for
what it needs (``results.ops``, ``results.qnn``, ...) and every later use gets the same object.

The QNN inputs (QHAS, optrace, runtrace) are given already read (the api/cli reads the files).
When the QNN or LLM analysis fails on an odd input, the other results still stand: the failure is
one line in ``notes`` and that result is None.
"""
from __future__ import annotations

from functools import cached_property

from etscope import profile as P
from etscope.analysis import llm as llm_analysis
from etscope.analysis import ops as ops_analysis
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis import summary as summary_analysis
from etscope.analysis.report_view import ReportView, report_view
from etscope.errors import FormatError
from etscope.formats.qnn_compile_spec import soc_from_pte


def is_llm(llm: dict) -> bool:
    """Whether the LLM analysis found LLM phases (prefill / decode, or several phases); a CNN's
    single group of identical runs is not shown as an LLM."""
    phases = [p for p in llm.get("phases") or [] if isinstance(p, dict)]
    names = {str(p.get("name")) for p in phases}
    return len(phases) > 1 or bool(names & {"prefill", "decode"})


class Results:
    """Summary, op table, QNN report, LLM phases and the report's view bundle of one profile."""

    def __init__(self, profile: P.Profile, qhas=None, optrace=None, runtrace=None):
        self.profile, self.qhas, self.optrace, self.runtrace = profile, qhas, optrace, runtrace
        self.notes: list[str] = []

    @cached_property
    def soc(self) -> dict | None:
        """The QNN compile spec of the .pte (SoC, HTP arch, VTCM, profile level)."""
        return soc_from_pte(self.profile.pte)

    @cached_property
    def ops(self) -> list[dict]:
        return ops_analysis.op_table(self.profile)

    @cached_property
    def qnn(self) -> dict | None:
        """``analysis.qnn.qnn_report`` (None when there is no QNN partition and no QNN file)."""
        p = self.profile
        if not qnn_analysis.qnn_instructions(p) and self.qhas is None and self.optrace is None:
            return None
        try:
            soc = self.soc
        except FormatError:
            soc = None
        try:
            return qnn_analysis.qnn_report(p, qhas=self.qhas, optrace=self.optrace, soc=soc, runtrace=self.runtrace)
        except FormatError:
            raise
        except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
            self.notes.append(f"the QNN analysis failed ({type(e).__name__}: {e}); the QNN section is left out")
            return None

    @cached_property
    def summary(self) -> dict:
        # The summary's QNN brief is the report without QHAS/optrace: reused when that is ours.
        if self.qhas is None and self.optrace is None and self.qnn is not None:
            brief = self.qnn
        elif qnn_analysis.qnn_instructions(self.profile):
            brief = qnn_analysis.qnn_report(self.profile, runtrace=self.runtrace)
        else:
            brief = None
        return summary_analysis.summary_of(self.profile, self.ops, brief, self.soc)

    @cached_property
    def llm(self) -> dict | None:
        """The LLM phases (the ``llm`` object of ``analysis.llm.llm_report``, with its findings and
        warnings), or None when the runs show no LLM phases."""
        try:
            outer = llm_analysis.llm_report(self.profile)
        except FormatError:
            raise
        except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
            self.notes.append(f"the LLM analysis failed ({type(e).__name__}: {e}); the LLM section is left out")
            return None
        result = dict(outer["llm"])
        for k in ("findings", "warnings"):
            if outer.get(k) and k not in result:
                result[k] = outer[k]
        return result if is_llm(result) else None

    @cached_property
    def tables(self) -> dict:
        """The events, ops and runs tables (pyarrow, ``analysis.tables``) that export, sql and the
        notebook DataFrames show."""
        from etscope.analysis.tables import tables

        return tables(self.profile, self.ops, self.qnn, self.llm)

    def trace(self, runs: list[int] | None = None):
        """The timeline (``analysis.trace_view.TraceView``) of the given Execute runs (default: all)."""
        from etscope.analysis.trace_view import trace_view

        return trace_view(self.profile, qnn=self.qnn, runs=runs)

    @cached_property
    def nodes(self) -> dict | None:
        """Graph nodes with placement and time (``analysis.nodes.node_table``); None without a graph."""
        from etscope.analysis.nodes import node_table

        return node_table(self.profile, self.ops, self.qnn)

    @cached_property
    def view(self) -> ReportView:
        """Everything the HTML report shows."""
        return report_view(self.profile, self.summary, self.ops, self.qnn, self.llm, self.notes)
