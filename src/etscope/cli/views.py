"""Views written to files or queried: report, trace, export, sql."""
from __future__ import annotations

import sys

import click

from etscope.cli.common import (
    EXIT_BAD_INPUT, dram_gbps_option, echo_wrote, human_size, llm_tokens_options, load_profile, load_results, one_line,
    output_target, qnn_view_options, read_heap_file, require_files, view_inputs, with_runs,
)
from etscope.cli.numerics import report_numerics, report_numerics_options
from etscope.sql.guard import ALLOWED as SQL_ALLOWED


@click.command()
@view_inputs("report")
@click.option("-o", "--output", default="report.html", show_default=True, type=str,
              help="HTML file to write (one file, works offline).")
@click.option("--compare", "compare_etdump", type=str,
              help="Base ETDump: add a 'Compared with base' section (as etscope diff BASE ETDUMP).")
@click.option("--compare-etrecord", type=str, help="ETRecord of the base run.")
@click.option("--compare-pte", type=str, help=".pte of the base run.")
@llm_tokens_options
@report_numerics_options
@dram_gbps_option
def report(etdump, etrecord, pte, method, phase, qnn_heap, given, output, compare_etdump,
           compare_etrecord, compare_pte, prompt_tokens, decode_tokens, debug_buffer, numerics_reference,
           reference_buffer, reference_etrecord, numerics_thresholds, dram_gbps):
    """Self-contained HTML report: guide, time icicle, placement, op table, QNN, LLM, graph."""
    import os

    from etscope import api
    from etscope.paths import display
    from etscope.render.html import prepare_in_background, report_data, write_report_data
    from etscope.render.html.phases import phase_pages

    if compare_etdump is None and (compare_etrecord or compare_pte):
        raise click.UsageError("--compare-etrecord / --compare-pte need --compare BASE.etdump")
    if compare_etdump is not None and etdump is None:
        raise click.UsageError("--compare needs the ETDUMP to compare with it")
    if debug_buffer is not None and etdump is None:
        raise click.UsageError("--debug-buffer needs the ETDUMP whose debug events point into it")
    if "ort_profile" in given and etdump is not None:
        raise click.UsageError("--ort-profile goes with QNN files alone (an ONNX Runtime session is not an "
                               "ExecuTorch run): etscope report --ort-profile F [--qnn-csv F]")
    out = output_target(output, etdump, etrecord, pte, *given.paths(), qnn_heap, compare_etdump, compare_etrecord, compare_pte, debug_buffer, numerics_reference,
                        reference_buffer, reference_etrecord)
    heap = read_heap_file(qnn_heap)
    prepare_in_background()          # the page's template, while the inputs are read
    r = load_results(etdump, etrecord, pte, method, given, llm_options=api.llm_options(pte, prompt_tokens, decode_tokens),
                     dram_gbps=dram_gbps, phase=phase)
    profile = r.profile
    if heap is not None:
        _ = r.qnn, r.llm     # computed first: their notes come first in the report, as before
        r.qnn_heap = heap    # before the phases' Results are made: they take it from r
    # What reads every run comes first (the whole runs' view, the comparison, numerics): the phases
    # then take the profile's events instead of copying them (Results.by_phase(consume=True)).
    view = r.view
    compare, phase_compares, base, base_llm = None, {}, None, None
    if compare_etdump is not None:
        base = with_runs(load_profile(compare_etdump, compare_etrecord, compare_pte, None), compare_etdump)
        base_llm = api.llm_options(compare_pte, prompt_tokens, decode_tokens)
        one = base
        if profile.phase is not None:        # --phase X: compared with the base's X runs, when it has them
            pair = _compare_phases(base, base_llm, [(profile.phase.name, profile)]).get(profile.phase.name)
            one = pair[0] if pair else base
        compare = api.compare_view(one, with_runs(profile, etdump))
    numerics = report_numerics(profile, method, debug_buffer, numerics_reference, reference_buffer, reference_etrecord,
                               numerics_thresholds)
    # Runs that form several phases (an LLM's prefill and decode): each phase's Results, side by side.
    by_phase = r.by_phase(consume=True)
    if by_phase and base is not None:
        pairs = _compare_phases(base, base_llm, [(name, p.profile) for name, p in by_phase])
        phase_compares = {name: api.compare_view(*pair) for name, pair in pairs.items()}
    data = report_data(view, compare=compare, numerics=numerics, phases=phase_pages(r, phase_compares),
                       phases_how=r.phases.how)
    # The page needs only its data: the events and analyses go before it is rendered.
    del r, profile, view, compare, numerics, by_phase, phase_compares, base
    import gc

    # Any cycle among them is young: the etscope process collects after 100,000 new objects
    # (process.tune), so what the command made is in the first two generations; the oldest, the
    # modules, is not walked (10-20 ms on 10M events, the same memory freed).
    gc.collect(1)
    w = write_report_data(out, data)
    echo_wrote(out, f"({human_size(w.bytes)}): open it in a browser"
                + (f" (file://{display(os.path.abspath(output))})" if out.kind == "file" else ""))


def _compare_phases(base, llm_options: dict, phases: list) -> dict:
    """``report --compare`` of an LLM's phases ((name, profile) each): per phase, (the base's runs
    of that phase, the phase's profile), to compare like with like (prefill with prefill, decode
    with decode), when the base's runs form every one of these phases; else {} (the page compares
    the whole files and says so)."""
    from etscope import api

    base_phases = dict(api.results(base, llm_options=llm_options).by_phase())
    if not all(name in base_phases for name, _ in phases):
        return {}
    return {name: (base_phases[name].profile, p) for name, p in phases}


def _parse_runs(spec: str | None):
    """``--runs`` as (start, stop) ranges, not expanded: checked against the file before any work."""
    if spec is None:
        return None
    ranges: list[tuple[int, int]] = []
    try:
        for part in spec.split(","):
            part = part.strip()
            if ":" in part:
                a, b = part.split(":", 1)
                ranges.append((int(a.strip() or 0), int(b)))
            elif part:
                ranges.append((int(part), int(part) + 1))
    except ValueError:
        raise click.BadParameter("use indices and ranges such as 0:10,15", param_hint="--runs") from None
    if not ranges:
        raise click.BadParameter("give at least one run index", param_hint="--runs")
    for a, b in ranges:
        if a < 0 or b <= a:
            raise click.BadParameter(f"{a}:{b} is not a range of run indices (0 <= start < stop)",
                                     param_hint="--runs")
    return ranges


def _qnn_file_runs(r) -> int:
    """Executes the QNN files hold (profile runs, runtrace executes): what ``--runs`` can select
    without an ETDump."""
    n = max([p.runs or 0 for p in (r.qnn.partitions if r.qnn is not None else ())] + [0])
    if r.runtrace is not None and len(r.runtrace):
        n = max(n, int(r.runtrace.execute.max()) + 1)
    return n


def _runs_in(ranges, n_runs: int, spec: str, clip: bool = False):
    """The run indices of ``ranges``, each range within the file's ``n_runs`` Execute runs
    (``clip``: QNN files alone, whose runs are counted per file: ranges cut at ``n_runs``, never
    expanded past it)."""
    if ranges is None:
        return None
    if clip:
        return sorted({r for a, b in ranges for r in range(a, min(b, n_runs))})
    for a, b in ranges:
        if b > n_runs:
            raise click.BadParameter(f"{spec!r} asks for run {b - 1}, the ETDump has {n_runs} Execute run(s) "
                                     f"(indices 0 to {n_runs - 1})" if n_runs else
                                     f"{spec!r}: the ETDump has no Execute runs", param_hint="--runs")
    return sorted({r for a, b in ranges for r in range(a, b)})


@click.command()
@view_inputs("trace")
@click.option("-o", "--output", default="trace.json", show_default=True, type=str,
              help="Trace file to write (Chrome / Perfetto JSON).")
@click.option("--runs", "runs_spec", help="Only these Execute runs, e.g. 0:10 or 3,7 (default: all).")
def trace(etdump, etrecord, pte, method, phase, given, output, runs_spec):
    """Perfetto / chrome://tracing timeline (µs): runs in sequence, one track per partition."""
    from etscope.render.trace import build_trace, write_trace

    ranges = _parse_runs(runs_spec)
    out = output_target(output, etdump, etrecord, pte, *given.paths())
    r = load_results(etdump, etrecord, pte, method, given, phase=phase)
    runs = _runs_in(ranges, r.profile.n_runs if r.profile is not None else _qnn_file_runs(r), runs_spec,
                    clip=r.profile is None)
    view = r.trace(runs)
    write_trace(out, build_trace(view, notes_before=r.notes))
    n = len(view.slices) + (len(view.units.slices) if view.units is not None else 0)
    echo_wrote(out, f"({n:,} events): open it in https://ui.perfetto.dev or chrome://tracing")
    for note in [*r.notes, *view.notes]:
        click.echo(f"note: {note}", err=True)


@click.command()
@view_inputs("export")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json", "model-explorer"]), default="csv",
              show_default=True, help="Tables as CSV / Parquet / JSON, or Model Explorer node data.")
@click.option("-o", "--output", "out_dir", default="etscope-export", show_default=True,
              type=str, help="Directory to write into.")
def export(etdump, etrecord, pte, method, phase, given, fmt, out_dir):
    """Write the events, ops and runs tables, the QNN tables (or a Model Explorer overlay) in true units."""
    from etscope.paths import check_output_dir, display
    from etscope.render.export import export as do_export
    from etscope.render.export import export_names

    inputs = (etdump, etrecord, pte, *given.paths())
    require_files(*inputs)
    check_output_dir(out_dir, export_names(fmt), inputs)
    r = load_results(etdump, etrecord, pte, method, given, phase=phase)
    if fmt == "model-explorer" and (r.profile is None or r.profile.etrecord is None):
        raise click.UsageError("--format model-explorer needs --etrecord (node ids come from its graph)")
    written = do_export(r, fmt, out_dir, inputs=inputs)
    for path in written:
        click.echo(f"wrote {display(path)}")
    if r.profile is None:
        for gap in r.summary.qnn_only.missing:
            click.echo(f"note: {gap}", err=True)
    if fmt == "model-explorer":
        click.echo("open the model's exported program in Model Explorer, then load these files as node data "
                   "(keys are the FX node names of the ETRecord's edge graph)")


SQL_HELP = f"""DuckDB SQL over the tables events, ops, runs and the QNN tables (columns: README / `etscope
export`), or over a collected dataset (--dataset).

Read-only: only these statements run: {"; ".join(SQL_ALLOWED)}. A query with any other statement
is refused (exit 2) before any of it runs. DuckDB cannot reach files, the network or extensions
here, and its settings are locked: only etscope's tables are visible. Ctrl-C stops a running query.
A query starting with "-" goes after "--": etscope sql run.etdump -- "-- comment ..." """


def _etdump_and_query(ctx, param, value):
    """``[ETDUMP] QUERY``: one argument is the query (QNN files alone), two are the ETDump and the query."""
    if len(value) not in (1, 2):
        raise click.BadParameter("give [ETDUMP] QUERY (the query in quotes)", param_hint="ETDUMP QUERY")
    return value


@click.command(help=SQL_HELP)
@click.argument("etdump_and_query", nargs=-1, required=True, metavar="[ETDUMP] QUERY", callback=_etdump_and_query)
@qnn_view_options("sql")
@click.option("--dataset", type=str,
              help="Query a dataset made by etscope collect instead of one ETDump: etscope sql --dataset D \"SQL\" "
                   "(tables runs, ops, events, qnn, files, rejects; partition columns model, soc, build, date).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--limit", type=click.IntRange(min=0),
              help="Rows to print as a table (0: all; default: 100 on a terminal, all when piped).")
def sql(etdump_and_query, etrecord, pte, method, phase, given, dataset, fmt, limit):
    from etscope.sql.engine import SqlError
    from etscope.sql.engine import query as run_query

    *first, query = etdump_and_query
    etdump = first[0] if first else None
    if dataset is not None:
        if etdump is not None or etrecord or pte or method or phase or given:
            raise click.UsageError("with --dataset give only the query: etscope sql --dataset DATASET \"SQL\"")
        from etscope.fleet.dataset import Dataset, query_dataset

        try:
            result = query_dataset(Dataset(dataset), query)
        except SqlError as err:
            click.echo(f"etscope: sql: {one_line(str(err))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    else:
        r = load_results(etdump, etrecord, pte, method, given, phase=phase)
        tables = r.tables.named()
        try:
            result = run_query(tables, query)
        except SqlError as err:
            hint = f" (tables here: {', '.join(tables)})" if r.profile is None else ""
            click.echo(f"etscope: sql: {one_line(str(err))}{hint}", err=True)
            if r.profile is None:
                for gap in r.summary.qnn_only.missing:
                    click.echo(f"note: {gap}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    from etscope.render.sql_cells import UnwritableError

    try:
        if fmt == "table":
            from etscope.render.sql import print_table

            print_table(result, limit)
        else:
            from etscope.render.sql import csv_text, json_text

            text = csv_text(result) if fmt == "csv" else json_text(result) + "\n"
            click.echo(text, nl=False)
    except UnwritableError as err:
        click.echo(f"etscope: sql: {one_line(str(err))}", err=True)
        sys.exit(EXIT_BAD_INPUT)
