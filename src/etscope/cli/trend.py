"""`etscope trend`: per commit, in order, the p50 latency and the first commit of each change."""
from __future__ import annotations

import click

from etscope.cli.common import emit_json, human_size


@click.command()
@click.option("--dataset", required=True, type=str, help="Dataset folder made by etscope collect.")
@click.option("--model", type=str, help="Only this model (partition value).")
@click.option("--soc", type=str, help="Only this SoC / device (partition value).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.trend/1).")
@click.option("--html", "html_path", type=str, help="Also write one offline HTML page: a chart per model x SoC x phase with its change "
                   "points explained, and a table of the builds.")
def trend(dataset, model, soc, as_json, html_path):
    """Trend over builds: p50 latency per commit with its interval, the first commit where a change
    became significant (spread measured from the series; Bonferroni over it), op and placement changes.
    The dataset is read through its manifest; a bad part is skipped with one warning line."""
    from etscope.analysis.diff.trend import trend_of_sessions
    from etscope.fleet.dataset import Dataset, trend_inputs

    ds = Dataset(dataset)
    out = None
    if html_path is not None:      # checked before any work: never an input, never inside a dataset
        from etscope.cli.common import output_target

        out = output_target(html_path, what="--html")
        if out.kind == "stdout" and as_json:
            raise click.UsageError("--html - and --json both write to standard output; give --html a file")
    ds.require()
    sessions, ops = trend_inputs(ds, model, soc)
    t = trend_of_sessions(sessions, ops)
    if as_json:
        emit_json(t.to_dict())
    elif out is None or out.kind != "stdout":
        from etscope.render.trend_text import render_trend

        render_trend(t)
    if out is not None:
        from etscope.render.trend_html import write_trend_page

        from etscope.paths import display

        n = write_trend_page(out, t, display(dataset))
        if out.kind != "stdout":      # on stderr: standard output stays the text or the JSON
            click.echo(f"wrote {out.shown} ({human_size(n)}): open it in a browser", err=True)
