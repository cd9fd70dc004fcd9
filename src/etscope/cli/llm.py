"""`etscope llm`: run series, prefill/decode phases, tokens/s."""
from __future__ import annotations

import click

from etscope.cli.common import (
    dram_gbps_option, emit_json, llm_tokens_options, load_profile, require_files,
)


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


@click.command()
@click.argument("etdumps", nargs=-1, required=True, type=str)
@click.option("--etrecord", type=str, help="The ETRecord from export.")
@click.option("--pte", type=str, help="The .pte program (method names).")
@click.option("--method", help="Only the runs of this method (default: the runs of every method, each "
                               "matched to its method by the instructions it executed).")
@click.option("--prompt-runs", callback=_prompt_runs,
              help="Runs that are prefill, e.g. 0,57,114 (indices over all ETDumps given, in order; one given "
                   "twice counts once); overrides the detection.")
@click.option("--phases", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="auto: find prefill/decode (token counts, method, cost profile); none: one phase.")
@llm_tokens_options
@click.option("--top", type=click.IntRange(min=0), default=8, show_default=True, help="Instructions listed per phase.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema etscope.llm/1).")
@dram_gbps_option
def llm(etdumps, etrecord, pte, method, prompt_runs, phases, prompt_tokens, decode_tokens, top, as_json, dram_gbps):
    """LLM runs: prefill/decode phases, warm-up, latency per phase, tokens/s, TTFT, drift.

    Several ETDumps (sessions of one program) are read as one series, in order: each one's phases
    are found on its own runs, then joined by phase name; warm-up is judged per phase within each
    file; an ETDump given twice (or a copy of one) is counted once.
    """
    from etscope.analysis.llm import RunIndexError, llm_report

    if prompt_runs is not None and phases != "auto":
        raise click.UsageError("--prompt-runs and --phases none exclude each other")
    require_files(*etdumps, etrecord, pte)
    loaded = {}         # a path given twice is read once (the analysis counts it once and says so)
    for e in etdumps:
        if e not in loaded:
            loaded[e] = load_profile(e, etrecord, pte, method)
    profiles = [loaded[e] for e in etdumps]
    from etscope.api import llm_options

    try:
        r = llm_report(profiles, prompt_runs=prompt_runs, phases=phases, top=top, all_methods=True,
                       **llm_options(pte, prompt_tokens, decode_tokens))
    except RunIndexError as err:
        raise click.BadParameter(str(err), param_hint="--prompt-runs") from None
    r = _with_memory_wall(r, profiles[0].pte, dram_gbps, etdumps)
    if as_json:
        emit_json(r)
    else:
        from etscope.render.llm_text import render_llm

        render_llm(r)


def _with_memory_wall(r, program, dram_gbps, etdumps):
    """The result with the decode's distance from the memory wall (``analysis.qnn.limits``) when the
    program has a QNN delegate (``llm.memory_wall``)."""
    from etscope.analysis.llm.result import with_memory_wall
    from etscope.analysis.qnn.limits import llm_memory_wall
    from etscope.formats.qnn_compile_spec import soc_from_pte

    return with_memory_wall(r, llm_memory_wall(program, r.llm, soc_from_pte(program) if program is not None else None,
                                               dram_gbps, etdumps))
