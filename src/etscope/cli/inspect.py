"""One-file inspection: summary, ops, qnn, program."""
from __future__ import annotations

import click

from etscope.cli.common import (
    dram_gbps_option, echo_heap, emit_json, etdump_inputs, heap_view_of, kind_options, load_profile, narrowed,
    read_heap_file, require_files, sort_option, view_inputs,
)
from etscope.cli.kind_options import kind_flags


@click.command()
@etdump_inputs
@kind_options("summary")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
def summary(etdump, etrecord, pte, method, phase, qnn_heap, given, as_json):
    """Reading guide: what contains what, what ran where, in true units."""
    from etscope import api
    from etscope.analysis.results import Results

    read = api.read_inputs(given)       # the input files (--runtrace, ...) first: small, and a bad one fails fast
    heap = read_heap_file(qnn_heap)
    profile = load_profile(etdump, etrecord, pte, method, announce=False)
    whole = Results(profile, llm_options=api.llm_options(pte)).feed(read)
    whole.qnn_heap = heap
    r = narrowed(whole, phase, method)
    heap_view = r.heap_view
    if as_json:
        emit_json(api.summary_document(r, consume=True))
        return
    parts = r.by_phase(consume=True)
    from etscope.render.text import render_summary

    if not parts:
        render_summary(r.summary, findings=r.findings)
    else:
        from etscope.render.phases_text import render_phase_heading, render_phase_table

        render_phase_table(r.phase_rows, r.phases.how, "summary")
        for row, (_, pr) in zip(r.phase_rows, parts):
            render_phase_heading(row)
            render_summary(pr.summary, findings=pr.findings)
    if heap_view is not None:
        echo_heap(heap_view)


@click.command()
@etdump_inputs
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
@click.option("--limit", type=click.IntRange(min=0),
              help="Rows to print (0: all; default: 60 on a terminal, all when piped).")
@sort_option("total", "Order of the table, largest first; an instruction's nested rows stay under it "
                      "(--json keeps instruction order).")
@click.option("--by", type=click.Choice(["instruction", "module"]), default="instruction", show_default=True,
              help="module: inclusive time per source module (needs --etrecord).")
def ops(etdump, etrecord, pte, method, phase, as_json, limit, sort, by):
    """Per-op table: every instruction and what ran inside it, with placement and source."""
    from etscope import api
    from etscope.analysis.results import Results

    r = narrowed(Results(load_profile(etdump, etrecord, pte, method), llm_options=api.llm_options(pte)), phase, method)
    if as_json or by == "module":      # the whole runs' results first (emit_modules reads them)
        _ = r.summary, (r.modules if by == "module" else r.ops)
    parts = r.by_phase(consume=True)     # the largest phase then takes the events
    if by == "module":
        from etscope.cli.modules import emit_modules

        return emit_modules(r, as_json, limit, parts)
    if as_json:
        from etscope.render.json import as_fields

        # The summary's keys (its schema replaced in place), then the op table.
        phased = dict(phases_pooled="ops pools the steady runs of every phase; phases[] gives each phase's own",
                      phases=[dict(row.to_dict(), ops=pr.ops) for row, (_, pr) in zip(r.phase_rows, parts)])
        emit_json(dict(as_fields(r.summary), schema="etscope.ops/1", ops=r.ops, **(phased if parts else {})))
        return
    from etscope.analysis.ops.ordering import ops_sort_used, order_ops
    from etscope.render.text import render_ops
    from etscope.render.text import render_warmup

    if not parts:
        sort, title = ops_sort_used(r.ops, sort)
        render_ops(order_ops(r.ops, sort), limit=limit, order=title, sort=sort)
        render_warmup(r.warmup)
        return
    from etscope.render.phases_text import render_phase_heading, render_phase_table

    render_phase_table(r.phase_rows, r.phases.how, "ops")
    for row, (_, pr) in zip(r.phase_rows, parts):
        render_phase_heading(row)
        used, title = ops_sort_used(pr.ops, sort)
        render_ops(order_ops(pr.ops, used), limit=limit, order=title, sort=used)
        render_warmup(pr.warmup)


@click.command()
@view_inputs("qnn")
@dram_gbps_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--top", type=click.IntRange(min=0),
              help="Per-op rows to print per partition (0: all; default: 25 on a terminal, all when piped).")
@sort_option("cycles", "Order of the per-op table, largest first (cycles, p50: cycles p50; mean: cycles "
                       "mean; total, share: share of the accelerator's cycles).")
def qnn(etdump, etrecord, pte, method, phase, qnn_heap, given, dram_gbps, as_json, top, sort):
    """QNN/HTP depth: nesting in true units, HTP clock, per-op cycles, HMX/HVX, VTCM, utilisation."""
    from etscope.analysis.llm.run_phases import PhaseChoiceError
    from etscope.api import qnn_from_files

    if not (etdump or given or qnn_heap):
        raise click.UsageError("give an ETDump and/or " + " / ".join(kind_flags("qnn")))
    require_files(etdump, etrecord, pte, *given.paths(), qnn_heap)
    heap = read_heap_file(qnn_heap)
    report = None
    if etdump or given:
        try:
            report = qnn_from_files(etdump, etrecord, pte, method, dram_gbps=dram_gbps, phase=phase, given=given)
        except PhaseChoiceError as e:
            raise click.UsageError(str(e)) from None
    heap_view = None
    if heap is not None:
        from etscope.formats.pte import read_pte

        heap_view = heap_view_of(heap, read_pte(pte) if pte is not None else None, method)
    if as_json:
        from etscope.paths import display

        # The inputs as shown: the report's (or the .pte's), then the heap file; the heap view last.
        shown = dict(report.inputs) if report is not None else {} if pte is None else {"pte": display(pte)}
        heap_file = {} if qnn_heap is None else {"qnn_heap": display(qnn_heap)}
        emit_json({"schema": "etscope.qnn/1", "inputs": {**shown, **heap_file}, "qnn": report,
                   **({} if heap_view is None else {"qnn_heap": heap_view})})
    else:
        if report is not None and report.phases:
            from etscope.render.phases_text import render_phase_heading, render_phase_table
            from etscope.render.qnn_text import render_qnn

            render_phase_table(report.phase_rows, report.phases_how, "qnn")
            for row, part in zip(report.phase_rows, report.phases):
                render_phase_heading(row)
                render_qnn(part.qnn, top=top, sort=sort)
        elif report is not None and (report.partitions or report.qhas or report.htp_timeline
                                     or not (report.files or report.ort)):
            from etscope.render.qnn_text import render_qnn

            render_qnn(report, top=top, sort=sort)
        if report is not None and report.ort:
            from etscope.render.ort_text import render_ort

            render_ort(report.ort, top=top)
        if report is not None and report.files:
            from etscope.render.qnn_files_text import render_qnn_files

            render_qnn_files(report.files, top=top)
        if heap_view is not None:
            echo_heap(heap_view)


@click.command()
@click.argument("pte", type=str)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.program/1).")
def program(pte, as_json):
    """What a .pte holds (no ETDump needed): methods, delegates, segments, QNN compile spec, checks."""
    from etscope.analysis.ops.program import program_report
    from etscope.formats.pte import read_pte
    from etscope.paths import check_inputs, display

    from etscope.formats.pte_constants import constant_method_values

    check_inputs((pte,))
    from etscope.formats.qnn_context import qnn_sdk_builds

    program = read_pte(pte)
    r = program_report(program, file=display(pte), constants=constant_method_values(pte),
                       qnn_sdk=qnn_sdk_builds(pte, program))
    if as_json:
        emit_json(r.to_json())
    else:
        from etscope.render.program_text import render_program

        render_program(r)
