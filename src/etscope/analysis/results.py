"""The analyses of one profile, each run at most once (explicit memoisation): a command asks for
what it needs (``results.ops``, ``results.qnn``, ...) and every later use gets the same object.

The QNN inputs (QHAS, optrace, runtrace) are given already read (the api/cli reads the files), and
so are the LLM token options (``llm_options``: ``prompt_tokens``, ``decode_tokens`` and the
program's constant methods, ``api.llm_options``): the LLM section is then what ``etscope llm``
gives for the same inputs.
When the QNN or LLM analysis fails on an odd input, the other results still stand: the failure is
one line in ``notes`` and that result is None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
from functools import cached_property

import numpy as np

from etscope import profile as P
from etscope.analysis import llm as llm_analysis
from etscope.analysis.ops import per_op as ops_analysis
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis.views import summary as summary_analysis
from etscope.analysis.ops.modules import module_times
from etscope.analysis.views.report import ReportView, report_view
from etscope.analysis.llm.result import with_memory_wall
from etscope.analysis.llm.run_phases import RunPhases, one_phase, phase_rows, run_phases
from etscope.errors import FormatError
from etscope.formats.qnn_compile_spec import QnnSoc, soc_from_pte


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow


def is_llm(report) -> bool:
    """Whether the LLM analysis (``analysis.llm.result.LlmReport``) found LLM phases (prefill /
    decode, or several phases); a CNN's single group of identical runs is not shown as an LLM."""
    return report.is_llm


class Results:
    """Summary, op table, QNN report, LLM phases and the report's view bundle of one profile.

    ``profile`` None: QNN files alone (``qnn_profile`` = a QNN CSV/text/JSON profile read by
    ``formats.qnn_profile_files``, ``program`` = the .pte if given, ``inputs`` = their display paths by
    kind): the analyses hold what those files have and ``summary.qnn_only`` says what is missing.
    """

    def __init__(self, profile: P.Profile | None, qhas=None, optrace=None, runtrace=None, qnn_profile=None,
                 program=None, inputs: dict[str, str] | None = None,
                 llm_options: dict | None = None):
        self.profile, self.qhas, self.optrace, self.runtrace = profile, qhas, optrace, runtrace
        self.qnn_profile = qnn_profile
        self.program = profile.pte if profile is not None else program
        self.inputs = dict(inputs or {})
        self.llm_options = dict(llm_options or {})
        self.notes: list[str] = []
        # Several QHAS/optrace files, one per partition (set by api.sharded_results).
        self.shards: list | None = None     # analysis.qnn.partition_files.PlacedFile per file
        self.qhas_ops_by_key: dict | None = None
        self.loose_qhas = self.loose_optrace = None
        # The DRAM bandwidth (GB/s) to compare achieved bytes/s with (``--dram-gbps``; None: the
        # SoC's sourced figure, if any). Set before ``qnn`` is first read.
        self.dram_gbps: float | None = None
        # How to make the Results of another profile with the same inputs (a phase's runs): the
        # api sets it when it built these from several QNN files.
        self.rebuild = None
        self._phase_results: dict[str, Results] = {}
        self.ort = None        # ONNX Runtime's profile of the session (``--ort-profile``), read
        self.qnn_heap = None   # QNN's DSP heap profile (``--qnn-heap``), read; set before ``summary``
        # ``--phase all``: the user asked for every run together (the views then pool the phases).
        self.pool_phases = False
        # Inputs of registry kinds without a dedicated analysis here (formats.kinds: ``view``), read,
        # by the name they feed; set through ``feed`` before ``summary`` is first read.
        self.extra: dict = {}

    # The inputs with an analysis of their own here, by the name a kind of the registry feeds.
    FED = ("qhas", "optrace", "runtrace", "qnn_profile", "ort", "qnn_heap")

    def feed(self, read: dict) -> "Results":
        """Take read inputs by the name their kind feeds (``formats.kinds.InputKind.input_name``):
        the analyses' own inputs (``FED``), else ``extra`` (shown by the kind's ``view``)."""
        for name, data in read.items():
            if name in self.FED:
                setattr(self, name, data)
            else:
                self.extra[name] = data
        return self

    # ---- phases: every view shows one phase, or each on its own, never pooled ------------------------
    @cached_property
    def phases(self) -> RunPhases:
        """The phase of every run (``analysis.llm.run_phases``), from the LLM analysis of these runs."""
        p = self.profile
        if p is None:
            return RunPhases(names=(), methods=(), of_run=np.zeros(0, dtype=np.int64),
                             warmup=np.zeros(0, dtype=bool), how="no ETDump")
        if p.phase is not None:      # already one phase's runs
            ph = one_phase(p)
            return RunPhases(names=(p.phase.name,), methods=(p.method,), of_run=ph.of_run, warmup=ph.warmup,
                             how=p.phase.how)
        return run_phases(p, self.llm)

    def for_phase(self, name: str, consume: bool = False) -> "Results":
        """The Results of the runs of phase ``name`` only (a Profile of its own, built once).
        ``consume``: move its events out of this profile instead of copying them
        (``profile.compact_runs``): this Results' own profile is then used up, so only what it has
        already computed may be read afterwards."""
        if name not in self._phase_results:
            ph = self.phases
            select = P.compact_runs if consume else P.select_runs
            sub = select(self.profile, ph.of_run == ph.names.index(name),
                         method=ph.methods[ph.names.index(name)], phase=ph.phase_of(name))
            # The loader's "several methods fit" is answered here: the phase names its method.
            sub.warnings = [w for w in self.profile.warnings if not (
                ph.methods[ph.names.index(name)] and w.startswith("several methods fit the ETDump"))]
            if self.rebuild is not None:
                r = self.rebuild(sub)
            else:
                r = Results(sub, self.qhas, self.optrace, self.runtrace, qnn_profile=self.qnn_profile,
                            program=self.program, inputs=self.inputs, llm_options=self.llm_options)
            r.dram_gbps = self.dram_gbps
            r.qnn_heap = self.qnn_heap
            r.extra = dict(self.extra)
            try:      # the program is the same: its compile spec is read once
                r.__dict__["soc"] = self.soc
            except FormatError:
                pass
            self._phase_results[name] = r
        return self._phase_results[name]

    @cached_property
    def phase_rows(self) -> list:
        """The phases side by side (``run_phases.PhaseRow``): [] when the runs are one phase."""
        return phase_rows(self.phases, [(n, r.profile, r.summary) for n, r in self.by_phase()])

    def by_phase(self, consume: bool = False) -> list[tuple[str, "Results"]]:
        """Each phase with its Results when the runs form several phases; else [] (these are one).
        ``consume``: the largest phase takes this profile's own event buffers (``for_phase``), the
        others copies: a big LLM file then needs about its own memory once, not twice."""
        ph = self.phases
        if not ph.split or self.pool_phases:
            return []
        if consume and not self._phase_results:
            by_size = sorted(ph.names, key=lambda n: int((ph.of_run == ph.names.index(n)).sum()))
            for n in by_size[:-1]:
                self.for_phase(n)
            self.for_phase(by_size[-1], consume=True)
        return [(n, self.for_phase(n)) for n in ph.names]

    @cached_property
    def ort_view(self):
        """ONNX Runtime's view of the session (``analysis.qnn.ort_view``), joined to the QNN profile's
        partitions; None without ``--ort-profile``."""
        if self.ort is None:
            return None
        from etscope.analysis.qnn.ort_view import ort_view

        return ort_view(self.ort, self.qnn)

    @cached_property
    def soc(self) -> QnnSoc | None:
        """The QNN compile spec of the .pte (SoC, HTP arch, VTCM, profile level)."""
        return soc_from_pte(self.program)

    @cached_property
    def steady(self) -> np.ndarray | None:
        """The runs every statistic over runs of these results is over (bool per run): each phase's
        runs without its warm-up runs, as ``etscope llm`` judges them (``RunPhases.warmup``) when
        the runs are several phases pooled; None otherwise: one phase, whose steady runs are
        ``stats.steady_runs`` of the profile (the same rule)."""
        if self.profile is None or not self.phases.split:
            return None
        return ~self.phases.warmup

    @cached_property
    def warmup(self):
        """The warm-up runs left out of these results' statistics (``latency.WarmupLeftOut``, as
        ``summary.runs.warmup`` says them; None when none was), without making the summary."""
        if self.profile is None:
            return None
        from etscope.analysis.ops.latency import latency_summary

        return latency_summary(self.profile, self.steady).warmup

    @cached_property
    def ops(self) -> list[OpRow]:
        return ops_analysis.op_table(self.profile, self.steady) if self.profile is not None else []

    @cached_property
    def qnn(self):
        """``analysis.qnn.qnn_report``: an ``analysis.qnn.result.QnnReport`` (None when there is no
        QNN partition and no QNN file)."""
        p = self.profile
        files = (self.qhas, self.optrace, self.qnn_profile) if p is not None else (
            self.qhas, self.optrace, self.qnn_profile, self.runtrace)
        if (p is None or not qnn_analysis.qnn_instructions(p)) and all(f is None for f in files) and not self.shards:
            return None
        try:
            soc = self.soc
        except FormatError:
            soc = None
        try:
            if self.shards is not None:
                return self._sharded_qnn(soc)
            return qnn_analysis.qnn_report(p, qhas=self.qhas, optrace=self.optrace, qnn_profile=self.qnn_profile,
                                           soc=soc, runtrace=self.runtrace, dram_gbps=self.dram_gbps,
                                           steady=self.steady)
        except FormatError:
            raise
        except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
            self.notes.append(f"the QNN analysis failed ({type(e).__name__}: {e}); the QNN section is left out")
            return None

    def _sharded_qnn(self, soc):
        from etscope.analysis.qnn.partition_files import shard_view

        return qnn_analysis.qnn_report(self.profile, qhas=self.loose_qhas, optrace=self.loose_optrace,
                                       qnn_profile=self.qnn_profile, soc=soc, runtrace=self.runtrace,
                                       qhas_ops_by_key=self.qhas_ops_by_key, htp_sources=self._htp_sources(),
                                       dram_gbps=self.dram_gbps, shards=shard_view(self.shards, soc),
                                       steady=self.steady)

    def _htp_sources(self) -> list[tuple]:
        """(partition key or None, qhas, optrace) per partition of the shard files: each partition's
        HTP-op breakdown from its own files; files on no partition each on their own."""
        pairs: dict = {}
        loose = []
        for r in self.shards or []:
            if r.partition is None:
                loose.append((None, r.data, None) if r.kind == "qhas" else (None, None, r.data))
                continue
            q, o = pairs.get(r.partition, (None, None))
            pairs[r.partition] = (r.data, o) if r.kind == "qhas" else (q, r.data)
        return [(k, q, o) for k, (q, o) in pairs.items()] + loose

    @cached_property
    def heap_view(self):
        """The DSP heap before/after the QNN contexts (``analysis.qnn.heap``), with ``--qnn-heap``."""
        if self.qnn_heap is None:
            return None
        from etscope.analysis.qnn.heap import heap_view

        view = heap_view(self.qnn_heap, self.program, self.profile.method if self.profile is not None else None)
        self.notes += ["DSP heap: " + n for n in view.notes]
        return view

    @cached_property
    def summary(self):
        """The summary (``analysis.views.summary_result``: a ``Summary``, or a ``FilesSummary`` of
        QNN files alone) with the DSP heap view and the input kinds' views."""
        return dataclasses.replace(self._summary(), qnn_heap=self.heap_view, views=dict(self.kind_views))

    @cached_property
    def kind_views(self) -> dict:
        """The views of the registry's input kinds given here that have no analysis of their own
        (``formats.kinds.InputKind.view``: (these results, the data) -> a typed view), by the name
        they feed; ``summary`` carries them. A view that fails on an odd input is one line in
        ``notes``, as the QNN and LLM analyses."""
        from etscope.formats.kinds import KINDS, resolve

        out = {}
        for k in KINDS:
            if k.view is None or k.input_name not in self.extra:
                continue
            try:
                out[k.input_name] = resolve(k.view)(self, self.extra[k.input_name])
            except FormatError:
                raise
            except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
                self.notes.append(f"the {k.name} view failed ({type(e).__name__}: {e}); it is left out")
        return out

    def _summary(self):
        if self.profile is None:
            return summary_analysis.files_alone_summary(self.qnn, self.inputs, self.soc)
        # The summary's QNN brief is the report without QHAS/optrace: reused when that is ours.
        if self.qhas is None and self.optrace is None and self.qnn is not None:
            brief = self.qnn
        elif qnn_analysis.qnn_instructions(self.profile):
            brief = qnn_analysis.qnn_report(self.profile, runtrace=self.runtrace, steady=self.steady)
        else:
            brief = None
        return summary_analysis.summary_of(self.profile, self.ops, brief, self.soc, steady=self.steady)

    @cached_property
    def llm(self):
        """The LLM analysis (``analysis.llm.llm_report``'s ``LlmReport``, with the decode's memory
        wall when the program has a QNN delegate), or None when the runs show no LLM phases. The same token sources as ``etscope
        llm`` (``llm_options``), so both show the same numbers; the runs are the profile's (of an
        ETDump holding several methods, the loaded method's, as ``llm --method``), as the report's
        other sections and its per-run columns are."""
        if self.profile is None:
            return None
        try:
            report = llm_analysis.llm_report(self.profile, **self.llm_options)
        except FormatError:
            raise
        except Exception as e:  # noqa: BLE001 - the other sections still render; say what failed
            self.notes.append(f"the LLM analysis failed ({type(e).__name__}: {e}); the LLM section is left out")
            return None
        if not report.is_llm:
            return None
        return with_memory_wall(report, self._memory_wall(report.llm))

    def _memory_wall(self, llm):
        """The decode's distance from the memory wall (``analysis.qnn.limits``); the prefill's HMX
        busy share from a QHAS pinned to the prefill method, when one is."""
        from etscope.analysis.qnn.limits import llm_memory_wall

        try:
            soc = self.soc
        except FormatError:
            soc = None
        prefill = llm.phase("prefill").method if llm.phase("prefill") is not None else None
        pinned = next((r for r in self.shards or [] if r.kind == "qhas" and prefill
                       and r.how.startswith(f"pinned {prefill}:")), None)
        return llm_memory_wall(self.program, llm, soc, self.dram_gbps, self.profile.sources.values(),
                               pinned.data.htp_resources if pinned else None,
                               pinned.data.path if pinned else None)

    @cached_property
    def modules(self) -> dict | None:
        """Inclusive time per source module (``analysis.ops.modules``), None without an ETRecord graph."""
        if self.profile is None:
            return None
        return module_times(self.profile, self.ops, self.qnn, self.steady)

    @cached_property
    def tables(self):
        """The events, ops and runs tables (pyarrow, ``analysis.views.tables``) and the QNN tables that
        export, sql and the notebook DataFrames show (``analysis.views.table_set.TableSet``)."""
        from etscope.analysis.qnn.tables import qnn_tables
        from etscope.analysis.views.table_set import TableSet
        from etscope.analysis.views.tables import tables, whole_phase

        if self.profile is None:
            return TableSet(None, None, None, qnn_tables(self.qnn, self.file_ops, self.file_ops_source, self.runtrace))
        parts = self.by_phase()          # one block of aggregated rows per phase, never pooled
        out = tables(self.profile, self.ops, self.qnn, self.phases, parts)
        return TableSet(out["events"], out["ops"], out["runs"], qnn_tables(
            self.qnn, self.file_ops, self.file_ops_source, self.runtrace,
            [(n, r.qnn) for n, r in parts] or [(whole_phase(self.phases), self.qnn)]))

    @cached_property
    def file_ops(self) -> dict | None:
        """Per QNN op name, what QHAS and optrace say of it (their one inference), merged."""
        return qnn_analysis.merge_op_tables(
            qnn_analysis.qhas_op_table(self.qhas) if self.qhas is not None else None,
            qnn_analysis.optrace_op_table(self.optrace) if self.optrace is not None else None)

    @property
    def file_ops_source(self) -> str:
        return "/".join(k for k, f in (("qhas", self.qhas), ("optrace", self.optrace)) if f is not None)

    def trace(self, runs: list[int] | None = None):
        """The timeline (``analysis.views.trace.TraceView``) of the given Execute runs (default: all)."""
        from etscope.analysis.views.trace import trace_view

        if self.profile is None:
            from etscope.analysis.views.qnn_trace import qnn_trace_view

            return qnn_trace_view(self.qnn, self.optrace, self.runtrace, self.inputs, runs, qhas=self.qhas)
        return trace_view(self.profile, qnn=self.qnn, runs=runs, phases=self.phases)

    @cached_property
    def nodes(self) -> dict | None:
        """Graph nodes with placement and time (``analysis.ops.nodes.node_table``); None without a graph."""
        from etscope.analysis.ops.nodes import node_table

        if self.profile is None:
            return None
        return node_table(self.profile, self.ops, self.qnn, self.steady)

    @cached_property
    def qnn_files(self):
        """QNN files given without an ETDump partition (or QNN profile) to join them to: what they
        hold per op (``analysis.qnn.files_alone.files_view``); None otherwise."""
        if self.profile is not None or self.qnn_profile is not None or self.shards is not None or self.qnn is None:
            return None
        have = {k for k, v in (("qhas", self.qhas), ("optrace", self.optrace), ("runtrace", self.runtrace)) if v is not None}
        if not have:
            return None
        from etscope.analysis.qnn.files_alone import files_view

        return files_view(self.qnn, self.file_ops, self.file_ops_source, have)

    @cached_property
    def summary_view(self):
        """What ``etscope summary`` shows: the summary and the ranked findings of these inputs
        (``findings``: the list ``qnn`` and ``report`` show for the same inputs)."""
        return dataclasses.replace(self.summary, findings=tuple(self.findings))

    @cached_property
    def findings(self) -> list:
        """The ranked findings of these inputs (``analysis.findings``), once: the report, ``qnn``
        (text and JSON) and the notebook show this list, whether an ETDump, QNN files or both were
        given."""
        from etscope.analysis.findings import findings

        return findings(self.summary if self.profile is not None else None, self.qnn)

    @cached_property
    def view(self) -> ReportView:
        """Everything the HTML report shows."""
        if self.profile is None:    # QNN files alone: the QNN section, the guide and what is missing
            from etscope.analysis.views.qnn_view import files_alone_view

            # The QNN section: the report, the files without a partition, ONNX Runtime's profile.
            qnn = files_alone_view(self)
            return ReportView(profile=None, summary=self.summary, ops=[], qnn=qnn, llm=None, hierarchy=None,
                              placement=[], runs=None, nodes=None,
                              checks=["QNN files only: " + m for m in self.summary.qnn_only.missing],
                              notes=self.notes, findings=list(self.findings))
        return report_view(self.profile, self.summary, self.ops, self.qnn, self.llm, self.notes, self.modules,
                           ranked=self.findings, steady=self.steady)
