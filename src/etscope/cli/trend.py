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
                   "points explained, a table of the builds, and each build's stored summary a click away.")
@click.option("--summary", "summary_of", type=str, metavar="BUILD",
              help="Print the stored summary of BUILD's collected file(s) (what etscope summary printed for each "
                   "when it was collected; BUILD: a build label or 8+ hex digits of a file's hash); with --json, "
                   "as JSON.")
def trend(dataset, model, soc, as_json, html_path, summary_of):
    """Trend over builds: p50 latency per commit with its interval, the first commit where a change
    became significant (spread measured from the series; Bonferroni over it), op and placement changes.
    The dataset is read through its manifest; a bad part is skipped with one warning line."""
    from etscope.analysis.diff.trend import trend_of_sessions
    from etscope.fleet.dataset import Dataset, trend_inputs

    ds = Dataset(dataset)
    if summary_of is not None:
        if html_path is not None:
            raise click.UsageError("--summary prints one build's stored summary; give --html without it")
        print_stored_summaries(ds, summary_of, model, soc, as_json)
        return
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
        emit_json(t)
    elif out is None or out.kind != "stdout":
        from etscope.render.trend_text import render_trend

        render_trend(t, footer=f"A build's stored summary: etscope trend --dataset {shell_word(dataset)} --summary "
                               "BUILD (or click the build on the --html page).")
    if out is not None:
        from etscope.fleet.summaries import build_summaries
        from etscope.render.trend_html import write_trend_page

        from etscope.paths import display

        n = write_trend_page(out, t, display(dataset), build_summaries(ds, sessions, t), shell_word(dataset))
        if out.kind != "stdout":      # on stderr: standard output stays the text or the JSON
            click.echo(f"wrote {out.shown} ({human_size(n)}): open it in a browser", err=True)


def shell_word(s: str) -> str:
    """``s`` as one word of a shell command line (quoted when it needs to be; shown escaped)."""
    import shlex

    from etscope.paths import display

    return shlex.quote(display(str(s)))


def print_stored_summaries(ds, build: str, model, soc, as_json: bool) -> None:
    """``--summary BUILD``: each collected file of the build, its stored summary (text: as ``etscope
    summary`` prints it; JSON: the stored documents). A file collected before summaries were
    stored is said; a stored summary that cannot be read is one line and exit 2."""
    from etscope.errors import FormatError
    from etscope.fleet.summaries import NOT_STORED, summaries_of_build

    found = summaries_of_build(ds, build, model, soc)
    if all(doc is None for _, doc in found):
        from etscope.paths import display

        raise FormatError(f"build {display(build)[:200]}: {len(found)} collected file(s), {NOT_STORED}")
    if as_json:
        emit_json({"schema": "etscope.stored-summaries/1", "build": build, "files": [
            {"file_hash": c.file_hash, "model": c.model, "soc": c.soc, "build": c.build, "order_key": c.order_key,
             "summary": doc, "note": None if doc is not None else NOT_STORED} for c, doc in found]})
        return
    from etscope.render.screen import screen
    from etscope.render.stored_summary_text import stored_summary_text

    texts = []
    for c, doc in found:
        title = (f"build {c.build} · {c.model} on {c.soc} · file {c.file_hash[:12]} · order {c.order_key} "
                 "(stored when it was collected)")
        if doc is None:
            texts.append(None)
            continue
        try:
            text = stored_summary_text(doc, title)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError) as e:
            # the shape check passed, yet a value the renderers need is not usable: the stored bytes' fault
            raise FormatError(f"stored summary of file {c.file_hash[:12]} cannot be shown "
                              f"({type(e).__name__}: {str(e)[:120]})", ds.root) from None
        texts.append(text)
    out = screen()      # every file's text made before any is printed: a bad one prints nothing
    for i, ((c, _), text) in enumerate(zip(found, texts)):
        if i:
            out.print("")
        if text is None:
            out.print(f"build {c.build} · {c.model} on {c.soc} · file {c.file_hash[:12]}: {NOT_STORED}")
        else:
            click.echo(text, nl=False)
