"""Command line: parse arguments, call one function, pick a renderer, map errors to exit codes.

Heavy modules (numpy, rich, readers) are imported inside the commands so `etscope --help` is fast.
Exit codes: 0 ok, 1 a requested check failed, 2 bad input or usage.
"""
from __future__ import annotations

import sys

import click

EXIT_BAD_INPUT = 2


class _Group(click.Group):
    def invoke(self, ctx):
        from etscope.errors import FormatError

        try:
            return super().invoke(ctx)
        except FormatError as err:
            click.echo(f"etscope: {_one_line(str(err))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:
            click.echo("etscope: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)
        except MemoryError:
            click.echo("etscope: out of memory while reading the input", err=True)
            sys.exit(EXIT_BAD_INPUT)


def _one_line(s: str) -> str:
    from etscope.render.safe import clean

    return clean(" ".join(s.split()), limit=500)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="etscope")
def main():
    """etscope: where an ExecuTorch model spends its time and memory (QNN/HTP first).

    Give it an ETDump (and optionally the ETRecord and .pte) to see what contains what, what ran on
    which backend or fell back to the CPU, and every number in its true unit.
    """


def _runtrace_option(f):
    return click.option("--runtrace", type=str,
                        help="QNN runtrace JSON (*_runtrace.json, RUN_TRACE): the measured HTP clock, used "
                             "instead of the estimate to turn cycles into µs.")(f)


def _read_runtrace(path):
    if path is None:
        return None
    from etscope.formats.runtrace import read_runtrace

    return read_runtrace(path)


def _qnn_heap_option(f):
    return click.option("--qnn-heap", "qnn_heap", type=str,
                        help="QNN HTP DSP heap profile (htp_heap_usage.txt): heap before/after the QNN "
                             "contexts, shown beside planned CPU memory and VTCM.")(f)


def _read_heap(path):
    """The heap file is read first: a bad one fails before a long ETDump read."""
    if path is None:
        return None
    from etscope.formats.heap import read_heap

    return read_heap(path)


def _heap_view(heap, program=None, method=None):
    from etscope.analysis.heap import heap_view

    return heap_view(heap, program, method)


def _echo_heap(view):
    from etscope.render.heap_text import heap_lines

    click.echo("")
    for line in heap_lines(view):
        click.echo(line)


def _inputs(f):
    f = click.option("--method", help="Method the runs executed (default: the one that fits; when the ETDump "
                                      "holds runs of several methods, the one with most runs).")(f)
    f = click.option("--pte", type=str, help="The .pte program.")(f)
    f = click.option("--etrecord", type=str, help="The ETRecord from export.")(f)
    f = click.argument("etdump", type=str)(f)
    return f


def _load(etdump, etrecord, pte, method, announce=True):
    from etscope.paths import check_inputs, display
    from etscope.profile import load
    from etscope.render.progress import reading
    from etscope.render.safe import clean

    check_inputs((etdump, etrecord, pte))

    with reading(etdump) as progress:   # a bar on stderr for big files (> 50 MB), else nothing
        profile = load(etdump, etrecord=etrecord, pte=pte, method=method, progress=progress)
    # Removed accumulated copies change every number: said on stderr by every command (summary
    # lists it among its warnings instead).
    if announce and profile.accumulation is not None:
        click.echo("etscope: warning: " + clean(f"{display(etdump)}: {profile.accumulation.warning()}", 800), err=True)
    return profile


def _emit_json(obj):
    import sys

    from etscope.render.json import write

    write(obj, sys.stdout)


@main.command()
@_inputs
@_runtrace_option
@_qnn_heap_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
def summary(etdump, etrecord, pte, method, runtrace, qnn_heap, as_json):
    """Reading guide: what contains what, what ran where, in true units."""
    from etscope.analysis.summary import summarize

    rt = _read_runtrace(runtrace)
    heap = _read_heap(qnn_heap)
    profile = _load(etdump, etrecord, pte, method, announce=False)
    s = summarize(profile, runtrace=rt)
    if heap is not None:
        s["qnn_heap"] = _heap_view(heap, profile.pte, profile.method)
    if as_json:
        _emit_json(s)
    else:
        from etscope.render.text import render_summary

        render_summary(s)
        if heap is not None:
            _echo_heap(s["qnn_heap"])


@main.command()
@_inputs
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
@click.option("--limit", type=click.IntRange(min=0), default=60, show_default=True, help="Rows to print (0: all).")
def ops(etdump, etrecord, pte, method, as_json, limit):
    """Per-op table: every instruction and what ran inside it, with placement and source."""
    from etscope.analysis.results import Results

    r = Results(_load(etdump, etrecord, pte, method))
    rows = r.ops
    if as_json:
        s = r.summary
        s["schema"] = "etscope.ops/1"
        s["ops"] = rows
        _emit_json(s)
    else:
        from etscope.render.text import render_ops

        render_ops(rows, limit=limit or None)


@main.command()
@click.argument("etdump", type=str, required=False)
@click.option("--etrecord", type=str, help="The ETRecord from export.")
@click.option("--pte", type=str, help="The .pte program (SoC from its QNN compile spec).")
@click.option("--method", help="Method the runs executed (default: the one that fits).")
@click.option("--qhas", type=str, help="QHAS JSON (*_qnn_htp_analysis_summary.json).")
@click.option("--optrace", type=str, help="optrace JSON (Chrome trace, cycles).")
@click.option("--qnn-csv", "qnn_csv", type=str,
              help="QNN profile from qnn-profile-viewer or ONNX Runtime: CSV, text or JSON.")
@_runtrace_option
@_qnn_heap_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--top", type=click.IntRange(min=0), default=25, show_default=True, help="Per-op rows to print.")
def qnn(etdump, etrecord, pte, method, qhas, optrace, qnn_csv, runtrace, qnn_heap, as_json, top):
    """QNN/HTP depth: nesting in true units, HTP clock, per-op cycles, HMX/HVX, VTCM, utilisation."""
    from etscope.api import qnn_from_files

    if not any((etdump, qhas, optrace, qnn_csv, qnn_heap)):
        raise click.UsageError("give an ETDump and/or --qhas / --optrace / --qnn-csv / --qnn-heap")
    _require_files(etdump, etrecord, pte, qhas, optrace, qnn_csv, runtrace, qnn_heap)
    heap = _read_heap(qnn_heap)
    report = None
    if any((etdump, qhas, optrace, qnn_csv)):
        report = qnn_from_files(etdump, etrecord, pte, method, qhas, optrace, qnn_csv, runtrace=runtrace)
    heap_view = None
    if heap is not None:
        from etscope.formats.pte import read_pte

        heap_view = _heap_view(heap, read_pte(pte) if pte is not None else None, method)
    if as_json:
        from etscope.paths import display

        inputs = report.pop("inputs") if report is not None else {
            k: display(v) for k, v in (("pte", pte), ("qnn_heap", qnn_heap)) if v is not None}
        if report is not None and qnn_heap is not None:
            inputs["qnn_heap"] = display(qnn_heap)
        out = {"schema": "etscope.qnn/1", "inputs": inputs, "qnn": report}
        if heap_view is not None:
            out["qnn_heap"] = heap_view
        _emit_json(out)
    else:
        if report is not None:
            from etscope.render.qnn_text import render_qnn

            render_qnn(report, top=top)
        if heap_view is not None:
            _echo_heap(heap_view)


@main.command()
@click.argument("pte", type=str)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.program/1).")
def program(pte, as_json):
    """What a .pte holds (no ETDump needed): methods, delegates, segments, QNN compile spec, checks."""
    from etscope.analysis.program import program_report
    from etscope.formats.pte import read_pte
    from etscope.paths import check_inputs, display

    from etscope.formats.pte_constants import constant_method_values

    check_inputs((pte,))
    r = program_report(read_pte(pte), file=display(pte), constants=constant_method_values(pte))
    if as_json:
        _emit_json(r.to_json())
    else:
        from etscope.render.program_text import render_program

        render_program(r, echo=click.echo)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--report", "report_path", default="demo-report.html", show_default=True,
              type=str, help="Also write the HTML report here ('-': standard output).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
def demo(as_json, report_path, no_report):
    """Run `summary` on a real sample shipped inside the package (no files needed)."""
    from etscope.analysis.results import Results
    from etscope.demo import SAMPLE_DESCRIPTION, sample_paths

    paths = sample_paths()
    out = None if no_report else _output(report_path, *paths.values())
    if out is not None and out.kind == "stdout" and as_json:
        raise click.UsageError("--report - and --json both write to standard output; give --report a file")
    r = Results(_load(paths["etdump"], paths.get("etrecord"), paths.get("pte"), None))
    s = r.summary
    if as_json:
        _emit_json(s)
    elif out is None or out.kind != "stdout":   # with --report - standard output is the page only
        from etscope.render.text import render_summary

        render_summary(s, title="etscope demo — " + SAMPLE_DESCRIPTION)
    if out is not None:
        from etscope.render.html import write_report

        w = write_report(out, r.view, title="etscope demo — " + SAMPLE_DESCRIPTION)
        if out.kind != "stdout":
            click.echo(f"wrote {out.shown} ({_size(w['bytes'])}): the same run as an HTML report", err=True)


# ---- views: report, trace, export, sql (etscope.render.html / trace / export / sql) -------------------
def _view_inputs(f):
    f = click.option("--optrace", type=str, help="QNN optrace JSON (HMX/HVX per op).")(f)
    f = click.option("--qhas", type=str,
                     help="QHAS JSON (*_qnn_htp_analysis_summary.json): utilisation, VTCM, DRAM.")(f)
    return _inputs(f)


def _require_files(*paths):
    """Every input an existing regular file (symlinks resolved), checked before any work."""
    from etscope.paths import check_inputs

    check_inputs(paths)


def _output(path, *inputs, what="-o"):
    """Where one output goes (``etscope.paths`` rules: never an input, '-' is standard output,
    devices written in place, no folders created), checked before any work."""
    from etscope.paths import check_inputs, check_output

    check_inputs(inputs)
    return check_output(path, inputs, what=what)


def _wrote(out, text: str) -> None:
    """The 'wrote ...' line: on stderr when the output itself went to standard output."""
    click.echo(f"wrote {out.shown} {text}", err=out.kind == "stdout")


def _with_runs(profile, path):
    """A profile to compare: it must hold at least one Execute run (a latency to compare)."""
    from etscope.errors import FormatError

    if profile.n_runs == 0:
        raise FormatError("no Execute run (no Method::execute) in this ETDump: no latency to compare", path)
    return profile


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


@main.command()
@_view_inputs
@_runtrace_option
@_qnn_heap_option
@click.option("-o", "--output", default="report.html", show_default=True, type=str,
              help="HTML file to write (one file, works offline).")
@click.option("--compare", "compare_etdump", type=str,
              help="Base ETDump: add a 'Compared with base' section (as etscope diff BASE ETDUMP).")
@click.option("--compare-etrecord", type=str, help="ETRecord of the base run.")
@click.option("--compare-pte", type=str, help=".pte of the base run.")
def report(etdump, etrecord, pte, method, qhas, optrace, runtrace, qnn_heap, output, compare_etdump,
           compare_etrecord, compare_pte):
    """Self-contained HTML report: guide, time icicle, placement, op table, QNN, LLM, graph."""
    import os

    from etscope import api
    from etscope.paths import display
    from etscope.render.html import write_report

    if compare_etdump is None and (compare_etrecord or compare_pte):
        raise click.UsageError("--compare-etrecord / --compare-pte need --compare BASE.etdump")
    out = _output(output, etdump, etrecord, pte, qhas, optrace, runtrace, qnn_heap, compare_etdump,
                  compare_etrecord, compare_pte)
    heap = _read_heap(qnn_heap)
    profile = _load(etdump, etrecord, pte, method)
    compare = None
    if compare_etdump is not None:
        compare = api.compare_view(_with_runs(_load(compare_etdump, compare_etrecord, compare_pte, None),
                                              compare_etdump), _with_runs(profile, etdump))
    r = api.results(profile, qhas, optrace, runtrace)
    if heap is not None:
        _ = r.qnn, r.llm     # computed first: their notes come first in the report, as before
        r.summary["qnn_heap"] = _heap_view(heap, profile.pte, profile.method)
        r.notes += ["DSP heap: " + n for n in r.summary["qnn_heap"]["notes"]]
    w = write_report(out, r.view, compare=compare)
    _wrote(out, f"({_size(w['bytes'])}): open it in a browser"
                + (f" (file://{display(os.path.abspath(output))})" if out.kind == "file" else ""))


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


def _runs_in(ranges, n_runs: int, spec: str):
    """The run indices of ``ranges``, each range within the file's ``n_runs`` Execute runs."""
    if ranges is None:
        return None
    for a, b in ranges:
        if b > n_runs:
            raise click.BadParameter(f"{spec!r} asks for run {b - 1}, the ETDump has {n_runs} Execute run(s) "
                                     f"(indices 0 to {n_runs - 1})" if n_runs else
                                     f"{spec!r}: the ETDump has no Execute runs", param_hint="--runs")
    return sorted({r for a, b in ranges for r in range(a, b)})


@main.command()
@_view_inputs
@_runtrace_option
@click.option("-o", "--output", default="trace.json", show_default=True, type=str,
              help="Trace file to write (Chrome / Perfetto JSON).")
@click.option("--runs", "runs_spec", help="Only these Execute runs, e.g. 0:10 or 3,7 (default: all).")
def trace(etdump, etrecord, pte, method, qhas, optrace, runtrace, output, runs_spec):
    """Perfetto / chrome://tracing timeline (µs): runs in sequence, one track per partition."""
    from etscope import api
    from etscope.render.trace import build_trace, write_trace

    ranges = _parse_runs(runs_spec)
    out = _output(output, etdump, etrecord, pte, qhas, optrace, runtrace)
    profile = _load(etdump, etrecord, pte, method)
    runs = _runs_in(ranges, profile.n_runs, runs_spec)
    r = api.results(profile, qhas, optrace, runtrace)
    t = build_trace(r.trace(runs))
    t["otherData"]["notes"] = r.notes + t["otherData"]["notes"]
    write_trace(out, t)
    n = sum(1 for e in t["traceEvents"] if e.get("ph") == "X")
    _wrote(out, f"({n:,} events): open it in https://ui.perfetto.dev or chrome://tracing")
    for note in t["otherData"]["notes"]:
        click.echo(f"note: {note}", err=True)


@main.command()
@_view_inputs
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json", "model-explorer"]), default="csv",
              show_default=True, help="Tables as CSV / Parquet / JSON, or Model Explorer node data.")
@click.option("-o", "--output", "out_dir", default="etscope-export", show_default=True,
              type=str, help="Directory to write into.")
def export(etdump, etrecord, pte, method, qhas, optrace, fmt, out_dir):
    """Write the events, ops and runs tables (or a Model Explorer overlay) in true units."""
    from etscope import api
    from etscope.paths import check_output_dir, display
    from etscope.render.export import export as do_export
    from etscope.render.export import export_names

    inputs = (etdump, etrecord, pte, qhas, optrace)
    _require_files(*inputs)
    check_output_dir(out_dir, export_names(fmt), inputs)
    profile = _load(etdump, etrecord, pte, method)
    r = api.results(profile, qhas, optrace)
    if fmt == "model-explorer" and profile.etrecord is None:
        raise click.UsageError("--format model-explorer needs --etrecord (node ids come from its graph)")
    written = do_export(r, fmt, out_dir, inputs=inputs)
    for path in written:
        click.echo(f"wrote {display(path)}")
    if fmt == "model-explorer":
        click.echo("open the model's exported program in Model Explorer, then load these files as node data "
                   "(keys are the FX node names of the ETRecord's edge graph)")


@main.command()
@_view_inputs
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--limit", type=click.IntRange(min=0), default=100, show_default=True, help="Rows to print as a table (0: all).")
def sql(etdump, etrecord, pte, method, qhas, optrace, query, fmt, limit):
    """DuckDB SQL over the tables events, ops, runs (columns: README / `etscope export`)."""
    from etscope import api
    from etscope.render.sql import SqlError, format_table
    from etscope.render.sql import query as run_query

    _require_files(qhas, optrace)
    profile = _load(etdump, etrecord, pte, method)
    try:
        result = run_query(api.tables_of(api.results(profile, qhas, optrace)), query)
    except SqlError as err:
        click.echo(f"etscope: sql: {_one_line(str(err))}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if fmt == "table":
        click.echo(format_table(result, max_rows=limit or None))
    elif fmt == "csv":
        import io

        import pyarrow.csv as pacsv

        from etscope.render.export import no_formulas, plain

        buf = io.BytesIO()
        pacsv.write_csv(no_formulas(plain(result)), buf)
        click.echo(buf.getvalue().decode("utf-8"), nl=False)
    else:
        from etscope.render.export import plain
        from etscope.render.json import dumps

        click.echo(dumps(plain(result).to_pylist(), indent=None))


# ---- diff -----------------------------------------------------------------------------------------
def _percent(ctx, param, value):
    if value is None:
        return None
    import math

    try:
        pct = float(str(value).strip().rstrip("%"))
    except ValueError:
        raise click.BadParameter(f"expected a percentage like 5% (got {value!r})") from None
    if not math.isfinite(pct) or pct < 0:
        raise click.BadParameter(f"expected a percentage of 0 or more, like 5% (got {value!r})")
    return pct


@main.command()
@click.argument("base", type=str)
@click.argument("new", type=str)
@click.option("--etrecord-base", type=str, help="ETRecord of the base run.")
@click.option("--etrecord-new", type=str, help="ETRecord of the new run.")
@click.option("--pte-base", type=str, help=".pte of the base run.")
@click.option("--pte-new", type=str, help=".pte of the new run.")
@click.option("--fail-on-regression", callback=_percent,
              help="Exit 1 when p50 latency is significantly worse by more than this (e.g. 5%).")
@click.option("--fail-on-fallback", is_flag=True, help="Exit 1 when any op moved from a delegate to the CPU.")
@click.option("--min-effect", callback=_percent, default="2%", show_default=True,
              help="Smallest change reported as significant.")
@click.option("--session-allowance", callback=_percent,
              help="How far two sessions of one unchanged program may differ in p50 latency, as a ratio "
                   "(e.g. 10%: x0.91-x1.10); used with one session per side (default: measured on the "
                   "project's test machine, see BENCHMARKS.md; measure your device).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--html", "html_path", type=str,
              help="Also write the comparison as one offline HTML page here ('-': standard output, "
                   "instead of the text).")
@click.option("--no-html", is_flag=True, help="Write no page (overrides --html).")
@click.option("--base-also", "base_also", multiple=True, type=str,
              help="More ETDumps of the base program from separate sessions (repeatable): lets the "
                   "interval include session-to-session noise.")
@click.option("--new-also", "new_also", multiple=True, type=str,
              help="More ETDumps of the new program from separate sessions (repeatable).")
def diff(base, new, etrecord_base, etrecord_new, pte_base, pte_new, fail_on_regression, fail_on_fallback,
         min_effect, session_allowance, as_json, html_path, no_html, base_also, new_also):
    """Compare two runs: latency change with a confidence interval, op and placement changes."""
    from etscope.analysis.diff import compare
    from etscope.paths import check_inputs, display

    inputs = (base, new, etrecord_base, etrecord_new, pte_base, pte_new, *base_also, *new_also)
    check_inputs(inputs)
    out = None if no_html or html_path is None else _output(html_path, *inputs, what="--html")
    if out is not None and out.kind == "stdout" and as_json:
        raise click.UsageError("--html - and --json both write to standard output; give --html a file")

    a = _with_runs(_load(base, etrecord_base, pte_base, None), base)
    b = _with_runs(_load(new, etrecord_new, pte_new, None), new)
    more_a = [_with_runs(_load(x, etrecord_base, pte_base, None), x) for x in base_also]
    more_b = [_with_runs(_load(x, etrecord_new, pte_new, None), x) for x in new_also]
    d = compare([a] + more_a, [b] + more_b, min_effect_pct=min_effect, fail_on_regression_pct=fail_on_regression,
                fail_on_fallback=fail_on_fallback, session_allowance_pct=session_allowance)
    d["inputs"] = {"base": [display(x) for x in (base, *base_also)], "new": [display(x) for x in (new, *new_also)]}
    if as_json:
        _emit_json(d)
    elif out is None or out.kind != "stdout":   # with --html - standard output is the page only
        from etscope.render.diff_text import render_diff

        render_diff(d)
    if out is not None:
        import os

        from etscope.paths import display
        from etscope.analysis.diff_view import diff_view
        from etscope.render.html import write_diff_page

        w = write_diff_page(out, diff_view(d, a, b, options={"min_effect_pct": min_effect,
                                                             "fail_on_regression_pct": fail_on_regression,
                                                             "fail_on_fallback": fail_on_fallback}))
        if out.kind != "stdout":
            click.echo(f"wrote {out.shown} ({_size(w['bytes'])}): open it in a browser"
                       + (f" (file://{display(os.path.abspath(html_path))})" if out.kind == "file" else ""),
                       err=True)
    if d["gate"]["fail"]:
        sys.exit(1)


# ---- llm: run series, phases, tokens/s (etscope.analysis.llm) -------------------------------------
def _prompt_runs(ctx, param, value):
    if value is None:
        return None
    try:
        runs = sorted({int(x) for x in value.replace(" ", "").split(",") if x != ""})
    except ValueError:
        raise click.BadParameter("use run indices separated by commas, e.g. 0,57,114") from None
    if not runs:
        raise click.BadParameter("give at least one run index")
    return runs


@main.command()
@click.argument("etdumps", nargs=-1, required=True, type=str)
@click.option("--etrecord", type=str, help="The ETRecord from export.")
@click.option("--pte", type=str, help="The .pte program (method names).")
@click.option("--method", help="Only the runs of this method (default: the runs of every method, each "
                               "matched to its method by the instructions it executed).")
@click.option("--prompt-runs", callback=_prompt_runs,
              help="Runs that are prefill, e.g. 0,57,114 (indices over all ETDumps given, in order); "
                   "overrides the detection.")
@click.option("--phases", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="auto: find prefill/decode (token counts, method, cost profile); none: one phase.")
@click.option("--top", type=click.IntRange(min=0), default=8, show_default=True, help="Instructions listed per phase.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.llm/1).")
def llm(etdumps, etrecord, pte, method, prompt_runs, phases, top, as_json):
    """LLM runs: prefill/decode phases, warm-up, latency per phase, tokens/s, TTFT, drift.

    Several ETDumps (e.g. separate prefill and decode runs) are read as one series, in order.
    """
    from etscope.analysis.llm import llm_report

    if prompt_runs is not None and phases != "auto":
        raise click.UsageError("--prompt-runs and --phases none exclude each other")
    _require_files(*etdumps, etrecord, pte)
    profiles = [_load(e, etrecord, pte, method) for e in etdumps]
    try:
        r = llm_report(profiles, prompt_runs=prompt_runs, phases=phases, top=top, all_methods=True)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--prompt-runs") from None
    if as_json:
        _emit_json(r)
    else:
        from etscope.render.llm_text import render_llm

        render_llm(r)


if __name__ == "__main__":  # pragma: no cover
    main()
