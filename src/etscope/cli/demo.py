"""`etscope demo`: the summaries and report of the samples shipped in the package, the QNN run first."""
from __future__ import annotations

import click

from etscope.cli.common import (
    emit_json, human_size, load_profile, output_target,
)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.demo/1).")
@click.option("--report", "report_path", default="demo-report.html", show_default=True,
              type=str, help="Also write the HTML report of the QNN sample here ('-': standard output).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
def demo(as_json, report_path, no_report):
    """Run `summary` on real samples shipped inside the package (no files needed): a QNN/NPU run
    with its QHAS, optrace and runtrace first, then a CPU/XNNPACK run."""
    import shlex

    from etscope import api
    from etscope.demo import QNN_SAMPLE_DESCRIPTION, SAMPLE_DESCRIPTION, qnn_sample_paths, sample_paths, try_next

    qnn_paths, cpu_paths = qnn_sample_paths(), sample_paths()
    out = None if no_report else output_target(report_path, *qnn_paths.files(), *cpu_paths.files())
    if out is not None and out.kind == "stdout" and as_json:
        raise click.UsageError("--report - and --json both write to standard output; give --report a file")
    files = api.read_view_qnn_files((qnn_paths.qhas,), (qnn_paths.optrace,), None, qnn_paths.runtrace)
    q = api.view_results(load_profile(qnn_paths.etdump, None, None, None), files)
    c = api.view_results(load_profile(cpu_paths.etdump, cpu_paths.etrecord, cpu_paths.pte, None),
                         api.read_view_qnn_files())
    qnn_title, cpu_title = "etscope demo 1/2 — " + QNN_SAMPLE_DESCRIPTION, "etscope demo 2/2 — " + SAMPLE_DESCRIPTION
    if as_json:
        emit_json({"schema": "etscope.demo/1", "cases": [
            {"name": "qnn", "description": QNN_SAMPLE_DESCRIPTION, "summary": q.summary},
            {"name": "cpu", "description": SAMPLE_DESCRIPTION, "summary": c.summary}]})
    elif out is None or out.kind != "stdout":   # with --report - standard output is the page only
        from etscope.analysis.qnn.files_alone import op_findings, unit_findings
        from etscope.analysis.qnn.tables import partition_op_rows, unit_rows
        from etscope.render.text import render_summary

        render_summary(q.summary, title=qnn_title)
        for line in op_findings(partition_op_rows(q.qnn)) + unit_findings(unit_rows(q.qnn)):
            click.echo(line)
        click.echo("")
        render_summary(c.summary, title=cpu_title)
        click.echo("\nTry next:")
        for line in try_next(qnn_paths, cpu_paths, shlex.quote):
            click.echo("  " + line)
    if out is not None:
        from etscope.render.html import write_report

        w = write_report(out, q.view, title=qnn_title)
        if out.kind != "stdout":
            click.echo(f"wrote {out.shown} ({human_size(w.bytes)}): the QNN run as an HTML report", err=True)
