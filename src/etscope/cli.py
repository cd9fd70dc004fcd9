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


def _inputs(f):
    f = click.option("--method", help="Method the runs executed (default: the one that fits).")(f)
    f = click.option("--pte", type=click.Path(dir_okay=False), help="The .pte program.")(f)
    f = click.option("--etrecord", type=click.Path(dir_okay=False), help="The ETRecord from export.")(f)
    f = click.argument("etdump", type=click.Path(dir_okay=False))(f)
    return f


def _load(etdump, etrecord, pte, method):
    from etscope.profile import load

    return load(etdump, etrecord=etrecord, pte=pte, method=method)


def _emit_json(obj):
    from etscope.render.json import dumps

    click.echo(dumps(obj))


@main.command()
@_inputs
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
def summary(etdump, etrecord, pte, method, as_json):
    """Reading guide: what contains what, what ran where, in true units."""
    from etscope.analysis.summary import summarize

    s = summarize(_load(etdump, etrecord, pte, method))
    if as_json:
        _emit_json(s)
    else:
        from etscope.render.text import render_summary

        render_summary(s)


@main.command()
@_inputs
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema in README).")
@click.option("--limit", type=int, default=60, show_default=True, help="Rows to print (0: all).")
def ops(etdump, etrecord, pte, method, as_json, limit):
    """Per-op table: every instruction and what ran inside it, with placement and source."""
    from etscope.analysis.ops import op_table
    from etscope.analysis.summary import summarize

    profile = _load(etdump, etrecord, pte, method)
    rows = op_table(profile)
    if as_json:
        s = summarize(profile)
        s["schema"] = "etscope.ops/1"
        s["ops"] = rows
        _emit_json(s)
    else:
        from etscope.render.text import render_ops

        render_ops(rows, limit=limit or None)


@main.command()
@click.argument("etdump", type=click.Path(dir_okay=False), required=False)
@click.option("--etrecord", type=click.Path(dir_okay=False), help="The ETRecord from export.")
@click.option("--pte", type=click.Path(dir_okay=False), help="The .pte program (SoC from its QNN compile spec).")
@click.option("--method", help="Method the runs executed (default: the one that fits).")
@click.option("--qhas", type=click.Path(dir_okay=False), help="QHAS JSON (*_qnn_htp_analysis_summary.json).")
@click.option("--optrace", type=click.Path(dir_okay=False), help="optrace JSON (Chrome trace, cycles).")
@click.option("--qnn-csv", "qnn_csv", type=click.Path(dir_okay=False),
              help="QNN profile from qnn-profile-viewer or ONNX Runtime: CSV, text or JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--top", type=int, default=25, show_default=True, help="Per-op rows to print.")
def qnn(etdump, etrecord, pte, method, qhas, optrace, qnn_csv, as_json, top):
    """QNN/HTP depth: nesting in true units, HTP clock, per-op cycles, HMX/HVX, VTCM, utilisation."""
    from etscope.qnn_inputs import load_qnn_inputs

    if not any((etdump, qhas, optrace, qnn_csv)):
        raise click.UsageError("give an ETDump and/or --qhas / --optrace / --qnn-csv")
    report = load_qnn_inputs(etdump, etrecord, pte, method, qhas, optrace, qnn_csv)
    if as_json:
        _emit_json({"schema": "etscope.qnn/1", "inputs": report.pop("inputs"), "qnn": report})
    else:
        from etscope.render.qnn_text import render_qnn

        render_qnn(report, top=top)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def demo(as_json):
    """Run `summary` on a real sample shipped inside the package (no files needed)."""
    from etscope.analysis.summary import summarize
    from etscope.demo import SAMPLE_DESCRIPTION, sample_paths

    paths = sample_paths()
    s = summarize(_load(paths["etdump"], paths.get("etrecord"), paths.get("pte"), None))
    if as_json:
        _emit_json(s)
        return
    from etscope.render.text import render_summary

    render_summary(s, title="etscope demo — " + SAMPLE_DESCRIPTION)


if __name__ == "__main__":  # pragma: no cover
    main()
