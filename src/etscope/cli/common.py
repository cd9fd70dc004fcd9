"""What every command shares: input options, loading with the progress bar, output checks, JSON out.

Heavy modules are imported inside the functions so `etscope --help` stays fast.
"""
from __future__ import annotations

import click

from etscope.cli.kind_options import kind_options

EXIT_BAD_INPUT = 2


def one_line(s: str) -> str:
    from etscope.display import clean

    return clean(" ".join(s.split()), limit=500)


def read_runtrace_file(path):
    if path is None:
        return None
    from etscope.formats.runtrace import read_runtrace

    return read_runtrace(path)


def llm_tokens_options(f):
    """``--prompt-tokens`` and ``--decode-tokens`` (``llm`` and ``report``: the same LLM numbers)."""
    f = click.option("--decode-tokens", type=click.IntRange(min=1),
                     help="Tokens each decode run processes, when the logged tensors do not say; default: the "
                          "program's get_ar_len (with --pte). Without any token count, rates are per run "
                          "(runs/s), not tokens/s.")(f)
    return click.option("--prompt-tokens", type=click.IntRange(min=1),
                        help="Tokens each prefill run processes (the prompt, or the prefill graph's AR length), "
                             "when the ETDump's logged tensors do not say.")(f)


def read_heap_file(path):
    """The heap file is read first: a bad one fails before a long ETDump read."""
    if path is None:
        return None
    from etscope.formats.heap import read_heap

    return read_heap(path)


def heap_view_of(heap, program=None, method=None):
    from etscope.analysis.qnn.heap import heap_view

    return heap_view(heap, program, method)


def echo_heap(view):
    from etscope.render.heap_text import heap_lines
    from etscope.render.text import screen

    out = screen()
    out.print()
    out.lines(heap_lines(view))


def sort_option(default: str, help: str):
    """``--sort`` of the per-op tables (analysis.ops.ordering.SORT_KEYS)."""
    from etscope.analysis.ops.ordering import SORT_KEYS

    return click.option("--sort", type=click.Choice(SORT_KEYS), default=default, show_default=True, help=help)


PHASE_HELP = ("Only the runs of this phase: prefill, decode (an LLM's phases, as etscope llm finds them) or all "
              "(every run pooled). Default: each phase on its own, never pooled.")


def etdump_companions(f):
    """--etrecord, --pte, --method and --phase: what joins an ETDump's runs to the program."""
    f = click.option("--phase", type=str, metavar="PHASE", help=PHASE_HELP)(f)
    f = click.option("--method", help="Method the runs executed (default: the one that fits; when the ETDump "
                                      "holds runs of several methods, the one with most runs).")(f)
    f = click.option("--pte", type=str, help="The .pte program.")(f)
    return click.option("--etrecord", type=str, help="The ETRecord from export.")(f)


def etdump_inputs(f):
    return click.argument("etdump", type=str)(etdump_companions(f))


def load_profile(etdump, etrecord, pte, method, announce=True):
    from etscope.paths import check_inputs, display
    from etscope.profile import load
    from etscope.render.progress import reading
    from etscope.display import clean

    check_inputs((etdump, etrecord, pte))

    with reading(etdump) as progress:   # a bar on stderr for big files (> 50 MB), else nothing
        profile = load(etdump, etrecord=etrecord, pte=pte, method=method, progress=progress)
    # Removed accumulated copies change every number: said on stderr by every command (summary
    # lists it among its warnings instead).
    if announce and profile.accumulation is not None:
        click.echo("etscope: warning: " + clean(f"{display(etdump)}: {profile.accumulation.warning()}", 800), err=True)
    return profile


def emit_json(obj):
    import sys

    from etscope.render.json import write

    write(obj, sys.stdout)


def view_inputs(command: str):
    """The views' inputs: the ETDump (optional when QNN files are given: each works alone), its
    ETRecord/.pte, and the input files the registry gives ``command`` (``formats.kinds``)."""
    def decorate(f):
        return click.argument("etdump", type=str, required=False)(qnn_view_options(command)(f))
    return decorate


def dram_gbps_option(f):
    """``--dram-gbps``: the DRAM bandwidth the HTP limits compare achieved bytes/s with."""
    return click.option("--dram-gbps", "dram_gbps", type=click.FloatRange(min=0, min_open=True, max=1e5),
                        help="DRAM bandwidth in GB/s to compare the HTP ops' achieved bytes/s with (default: the "
                             "SoC's sourced figure when the .pte names a known SoC, else 'bandwidth unknown').")(f)


def qnn_view_options(command: str):
    """The views' options: ETRecord/.pte/--method and the input files the registry gives ``command``."""
    def decorate(f):
        return etdump_companions(kind_options(command)(f))
    return decorate


def load_results(etdump, etrecord, pte, method, given, llm_options: dict | None = None,
                 dram_gbps: float | None = None, phase: str | None = None):
    """The analyses of the views' inputs: of the ETDump (with any input files ``given``, by kind
    name: a ``kind_options.Given``), or of QNN files alone; ``llm_options``: token counts of the LLM
    section (``api.llm_options``, default: the .pte's); ``dram_gbps``: the DRAM bandwidth of the
    HTP limits (``--dram-gbps``); ``phase``: ``--phase`` (with a look-alike ``--method``, the runs
    of one phase: ``narrowed``)."""
    from etscope import api

    if etdump is None:
        if not given:
            raise click.UsageError("give an ETDump, or QNN files alone: " + ", ".join(given.flags))
        if etrecord or method or phase:
            raise click.UsageError("--etrecord / --method / --phase describe an ETDump's runs: give the ETDUMP too")
    require_files(etdump, etrecord, pte, *api.given_paths(given))
    qnn_files = api.read_view_qnn_files(given=given)   # small: before the ETDump
    profile = load_profile(etdump, etrecord, pte, method) if etdump is not None else None
    if llm_options is None:
        llm_options = api.llm_options(pte)
    r = api.view_results(profile, qnn_files, pte=pte, llm_options=llm_options, dram_gbps=dram_gbps)
    return narrowed(r, phase, method)


def narrowed(r, phase, method):
    """``api.narrowed``: a wrong ``--phase`` / look-alike ``--method`` is a usage error (exit 2)."""
    from etscope import api
    from etscope.analysis.llm.run_phases import PhaseChoiceError

    try:
        return api.narrowed(r, phase, method, consume=True)      # the command reads only the phase
    except PhaseChoiceError as e:
        raise click.UsageError(str(e)) from None


def require_files(*paths):
    """Every input an existing regular file (symlinks resolved), checked before any work."""
    from etscope.paths import check_inputs

    check_inputs(paths)


def output_target(path, *inputs, what="-o"):
    """Where one output goes (``etscope.paths`` rules: never an input, '-' is standard output,
    devices written in place, no folders created), checked before any work."""
    from etscope.paths import check_inputs, check_output

    check_inputs(inputs)
    return check_output(path, inputs, what=what)


def echo_wrote(out, text: str) -> None:
    """The 'wrote ...' line: on stderr when the output itself went to standard output."""
    click.echo(f"wrote {out.shown} {text}", err=out.kind == "stdout")


def with_runs(profile, path):
    """A profile to compare: it must hold at least one Execute run (a latency to compare)."""
    from etscope.errors import FormatError

    if profile.n_runs == 0:
        raise FormatError("no Execute run (no Method::execute) in this ETDump: no latency to compare", path)
    return profile


def human_size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"
