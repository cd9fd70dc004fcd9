"""`etscope demo`: the summary and report of a sample shipped in the package."""
from __future__ import annotations

import click

from etscope.cli.common import (
    emit_json, human_size, load_profile, output_target,
)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--report", "report_path", default="demo-report.html", show_default=True,
              type=str, help="Also write the HTML report here ('-': standard output).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
def demo(as_json, report_path, no_report):
    """Run `summary` on a real sample shipped inside the package (no files needed)."""
    from etscope.analysis.results import Results
    from etscope.demo import SAMPLE_DESCRIPTION, sample_paths

    paths = sample_paths()
    out = None if no_report else output_target(report_path, *paths.values())
    if out is not None and out.kind == "stdout" and as_json:
        raise click.UsageError("--report - and --json both write to standard output; give --report a file")
    r = Results(load_profile(paths["etdump"], paths.get("etrecord"), paths.get("pte"), None))
    s = r.summary
    if as_json:
        emit_json(s)
    elif out is None or out.kind != "stdout":   # with --report - standard output is the page only
        from etscope.render.text import render_summary

        render_summary(s, title="etscope demo — " + SAMPLE_DESCRIPTION)
    if out is not None:
        from etscope.render.html import write_report

        w = write_report(out, r.view, title="etscope demo — " + SAMPLE_DESCRIPTION)
        if out.kind != "stdout":
            click.echo(f"wrote {out.shown} ({human_size(w['bytes'])}): the same run as an HTML report", err=True)
