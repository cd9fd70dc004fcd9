"""`etscope diff`: two runs compared, with a gate for CI."""
from __future__ import annotations

import sys

import click

from etscope.cli.common import (
    emit_json, human_size, load_profile, output_target, with_runs,
)
from etscope.cli.kind_options import side_options


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


@click.command()
@click.argument("base", type=str)
@click.argument("new", type=str)
@click.option("--etrecord-base", type=str, help="ETRecord of the base run.")
@click.option("--etrecord-new", type=str, help="ETRecord of the new run.")
@click.option("--pte-base", type=str, help=".pte of the base run.")
@click.option("--pte-new", type=str, help=".pte of the new run.")
@side_options("diff")
@click.option("--fail-on-regression", callback=_percent,
              help="Exit 1 when p50 latency is significantly worse by more than this (e.g. 5%).")
@click.option("--fail-on-fallback", is_flag=True, help="Exit 1 when any op moved from a delegate to the CPU.")
@click.option("--min-effect", callback=_percent, default="2%", show_default=True,
              help="Smallest change reported as significant.")
@click.option("--session-allowance", callback=_percent,
              help="How far two sessions of one unchanged program may differ in p50 latency, as a ratio "
                   "(e.g. 10%: x0.91-x1.10); used with one session per side (default: measured on the "
                   "project's test machine, see BENCHMARKS.md; measure your device).")
@click.option("--phase", type=str,
              help="Compare one phase of an LLM's runs only (prefill, decode), or 'all' for every run pooled; "
                   "default: each phase compared with its namesake, never pooled.")
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
def diff(base, new, etrecord_base, etrecord_new, pte_base, pte_new, runtrace_base, runtrace_new, fail_on_regression,
         fail_on_fallback,
         min_effect, session_allowance, phase, as_json, html_path, no_html, base_also, new_also):
    """Compare two runs: latency change with a confidence interval, op and placement changes."""
    from etscope.analysis.diff.compare import compare
    from etscope.analysis.diff.result import Sides
    from etscope.paths import check_inputs, display

    inputs = (base, new, etrecord_base, etrecord_new, pte_base, pte_new, runtrace_base, runtrace_new, *base_also,
              *new_also)
    check_inputs(inputs)
    out = None if no_html or html_path is None else output_target(html_path, *inputs, what="--html")
    if out is not None and out.kind == "stdout" and as_json:
        raise click.UsageError("--html - and --json both write to standard output; give --html a file")

    from etscope import api
    from etscope.analysis.llm.run_phases import PhaseChoiceError

    a = with_runs(load_profile(base, etrecord_base, pte_base, None), base)
    b = with_runs(load_profile(new, etrecord_new, pte_new, None), new)
    more_a = [with_runs(load_profile(x, etrecord_base, pte_base, None), x) for x in base_also]
    more_b = [with_runs(load_profile(x, etrecord_new, pte_new, None), x) for x in new_also]
    clocks = _measured_clocks(runtrace_base, runtrace_new)
    try:     # each side's phases from its own runs, with its own .pte's token counts
        d = compare([a] + more_a, [b] + more_b, min_effect_pct=min_effect, fail_on_regression_pct=fail_on_regression,
                    fail_on_fallback=fail_on_fallback, session_allowance_pct=session_allowance, phase=phase,
                    llm_options=(api.llm_options(pte_base), api.llm_options(pte_new)), clocks=clocks,
                    inputs=Sides(tuple(display(x) for x in (base, *base_also)),
                                 tuple(display(x) for x in (new, *new_also))))
    except PhaseChoiceError as e:
        raise click.UsageError(str(e)) from None
    if as_json:
        emit_json(d)
    elif out is None or out.kind != "stdout":   # with --html - standard output is the page only
        from etscope.render.diff_text import render_diff

        render_diff(d)
    if out is not None:
        import os

        from etscope.paths import display
        from etscope.analysis.diff.view import diff_view
        from etscope.render.html import write_diff_page

        w = write_diff_page(out, diff_view(d, [a] + more_a, [b] + more_b, options={"min_effect_pct": min_effect,
                                                             "fail_on_regression_pct": fail_on_regression,
                                                             "fail_on_fallback": fail_on_fallback}))
        if out.kind != "stdout":
            click.echo(f"wrote {out.shown} ({human_size(w.bytes)}): open it in a browser"
                       + (f" (file://{display(os.path.abspath(html_path))})" if out.kind == "file" else ""),
                       err=True)
    if d.gate.fail:
        sys.exit(1)


def _measured_clocks(runtrace_base, runtrace_new) -> dict | None:
    """The HTP clock per side from its runtrace (median MHz of its events), or None."""
    if runtrace_base is None and runtrace_new is None:
        return None
    from etscope.analysis.diff.axes import runtrace_clock_mhz
    from etscope.cli.common import read_runtrace_file

    return {"base": runtrace_clock_mhz(read_runtrace_file(runtrace_base)),
            "new": runtrace_clock_mhz(read_runtrace_file(runtrace_new)), "source": "runtrace"}
