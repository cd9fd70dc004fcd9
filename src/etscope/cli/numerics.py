"""`etscope numerics`: intermediate-output statistics from the debug buffer, and their comparison."""
from __future__ import annotations

import click

from etscope.cli.common import emit_json, etdump_inputs, load_profile, require_files
from etscope.cli.kind_options import kind_options, side_options


def _thresholds(ctx, param, values):
    """Defaults changed per metric; ``off`` drops a metric from the divergence test."""
    if not values:
        return None
    from etscope.analysis.numerics.metrics import DEFAULT_THRESHOLDS

    out = dict(DEFAULT_THRESHOLDS)
    for v in values:
        key, _, num = v.replace(" ", "").partition("=")
        if key not in ("cosine", "snr") or not num:
            raise click.BadParameter("use cosine=VALUE, snr=VALUE (dB) or METRIC=off, e.g. --threshold snr=40")
        if num == "off":
            out.pop(key, None)
            continue
        try:
            out[key] = float(num)
        except ValueError:
            raise click.BadParameter(f"{num!r} is not a number") from None
        if out[key] != out[key]:
            raise click.BadParameter("NaN is not a threshold")
    return out


@click.command()
@etdump_inputs
@click.option("--debug-buffer", "debug_buffer", required=True, type=str,
              help="The debug buffer file written with the ETDump (its tensors' bytes).")
@click.option("--reference", type=str, help="Reference ETDump to compare with (e.g. the CPU-only export).")
@click.option("--reference-buffer", type=str, help="The reference's debug buffer.")
@click.option("--reference-etrecord", type=str, help="The reference's ETRecord (matching by graph node).")
@click.option("--reference-pte", type=str, help="The reference's .pte.")
@kind_options("numerics")
@side_options("numerics")
@click.option("--threshold", "thresholds", multiple=True, callback=_thresholds,
              help="Divergence threshold, cosine=V or snr=DB, or METRIC=off (repeatable; default cosine=0.999 "
                   "and snr=30: a tensor diverges below either).")
@click.option("--run", "run", type=click.IntRange(min=0), help="Show this execute run's table (default: the first).")
@click.option("--limit", type=click.IntRange(min=0),
              help="Tensors listed by the statistics table (0: all; default: 60 on a terminal, all when piped).")
@click.option("--export", "export_path", type=str,
              help="Also write the per-tensor table (statistics, or the comparison) to FILE.csv or FILE.parquet.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (schema etscope.numerics/1, or etscope.numerics.compare/1 with --reference).")
def numerics(etdump, etrecord, pte, method, phase, debug_buffer, reference, reference_buffer, reference_etrecord,
             reference_pte, taps, reference_taps, thresholds, run, limit, export_path, as_json):
    """Per-tensor statistics of the logged intermediate outputs (shape, dtype, min/max/mean/std,
    NaN/Inf, share at the int limits), per run; with --reference, per-tensor cosine/SNR/MSE/max
    abs/relative error against a reference run, the first divergence and the largest SNR drop.
    """
    from etscope.formats.debug_buffer import DebugBuffer

    if (reference is None) != (reference_buffer is None):
        raise click.UsageError("--reference and --reference-buffer go together")
    if reference is None and (reference_etrecord or reference_pte or thresholds or reference_taps):
        raise click.UsageError("--reference-etrecord, --reference-pte, --reference-taps and --threshold need --reference")
    inputs = (etdump, debug_buffer, etrecord, pte, reference, reference_buffer, reference_etrecord, reference_pte,
              taps, reference_taps)
    require_files(*inputs)
    export = _export_target(export_path, inputs)
    from etscope.formats.taps import read_taps

    taps_c = read_taps(taps) if taps else None
    taps_r = read_taps(reference_taps) if reference_taps else None
    profile = phase_profile(load_profile(etdump, etrecord, pte, method), pte, method, phase)
    with DebugBuffer(debug_buffer) as buf:
        if reference is None:
            from etscope.analysis.numerics.tensors import numerics as stats

            result = stats(profile, buf, taps=taps_c)
            _export(result, export)
            if as_json:
                emit_json(result)
            else:
                from etscope.render.numerics_text import render_stats

                render_stats(result, limit=limit, run=run)
            return
        from etscope.analysis.numerics.compare import comparison

        ref = phase_profile(load_profile(reference, reference_etrecord, reference_pte, method), reference_pte,
                            method, phase)
        with DebugBuffer(reference_buffer) as rbuf:
            result = comparison(profile, buf, ref, rbuf, thresholds, taps_c=taps_c, taps_r=taps_r)
    _export(result, export)
    if as_json:
        emit_json(result)
    else:
        from etscope.render.numerics_text import render_compare

        render_compare(result, run=run)


def phase_profile(profile, pte, method, phase):
    """The runs of ``--phase`` (or of a look-alike ``--method``): each side compares its own phase."""
    if phase is None and method is None:
        return profile
    from etscope import api
    from etscope.analysis.results import Results
    from etscope.cli.common import narrowed

    return narrowed(Results(profile, llm_options=api.llm_options(pte)), phase, method).profile


def _export_target(path, inputs):
    if path is None:
        return None
    fmt = "csv" if path.lower().endswith(".csv") else "parquet" if path.lower().endswith(".parquet") else None
    if fmt is None:
        raise click.BadParameter("the file name must end in .csv or .parquet", param_hint="--export")
    from etscope.cli.common import output_target

    return output_target(path, *[i for i in inputs if i], what="--export"), fmt


def _export(result, target) -> None:
    if target is None:
        return
    from etscope.paths import atomic_paths
    from etscope.render.numerics_export import write

    out, fmt = target
    if out.kind != "file":
        raise click.BadParameter("write the table to a file", param_hint="--export")
    with atomic_paths([out]) as (tmp,):
        write(result, tmp, fmt)
    click.echo(f"wrote {out.shown} ({fmt})", err=True)   # stderr: standard output may be the JSON


# ---- etscope report's numerics section: options and the view ---------------------------------------
def report_numerics_options(f):
    """``--debug-buffer`` (statistics section) and ``--reference``/``--reference-buffer``/
    ``--reference-etrecord``/``--numerics-threshold`` (comparison section, graph coloured by SNR)."""
    for opt in reversed([
        click.option("--debug-buffer", "debug_buffer", type=str,
                     help="Debug buffer written with the ETDump: add a Numerics section (per-tensor statistics)."),
        click.option("--reference", "numerics_reference", type=str,
                     help="Reference ETDump (with --reference-buffer): compare tensors, SNR curve, graph coloured by SNR."),
        click.option("--reference-buffer", type=str, help="The reference's debug buffer."),
        click.option("--reference-etrecord", type=str, help="The reference's ETRecord (matching by graph node)."),
        click.option("--numerics-threshold", "numerics_thresholds", multiple=True, callback=_thresholds,
                     help="Divergence threshold as in etscope numerics --threshold (default cosine=0.999, snr=30)."),
    ]):
        f = opt(f)
    return f


def report_numerics(profile, method, debug_buffer, reference, reference_buffer, reference_etrecord, thresholds):
    """The report's ``NumericsView`` (None without ``--debug-buffer``); bad options are usage errors."""
    if debug_buffer is None:
        if reference or reference_buffer or reference_etrecord or thresholds:
            raise click.UsageError("--reference, --reference-buffer, --reference-etrecord and --numerics-threshold "
                                   "need --debug-buffer")
        return None
    if (reference is None) != (reference_buffer is None):
        raise click.UsageError("--reference and --reference-buffer go together")
    if reference is None and (reference_etrecord or thresholds):
        raise click.UsageError("--reference-etrecord and --numerics-threshold need --reference")
    require_files(debug_buffer, reference, reference_buffer, reference_etrecord)
    from etscope.analysis.numerics.view import numerics_view
    from etscope.formats.debug_buffer import DebugBuffer

    with DebugBuffer(debug_buffer) as buf:
        if reference is None:
            return numerics_view(profile, buf)
        ref = load_profile(reference, reference_etrecord, None, method)
        with DebugBuffer(reference_buffer) as rbuf:
            return numerics_view(profile, buf, ref, rbuf, thresholds)
