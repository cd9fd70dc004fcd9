"""Command line: parse arguments, call one function, pick a renderer, map errors to exit codes.

Heavy modules (numpy, rich, readers) are imported inside the commands so `etscope --help` is fast.
Exit codes: 0 ok, 1 a requested check failed, 2 bad input or usage.
"""
from __future__ import annotations

import sys

import click

from etscope.cli import process
from etscope.cli.common import EXIT_BAD_INPUT, one_line


class _Group(click.Group):
    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        process.command = name
        return name, command, rest

    def invoke(self, ctx):
        from etscope.errors import FormatError

        try:
            return super().invoke(ctx)
        except FormatError as err:
            click.echo(f"etscope: {one_line(str(err))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:
            click.echo("etscope: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)
        except MemoryError:
            click.echo("etscope: out of memory while reading the input", err=True)
            sys.exit(EXIT_BAD_INPUT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="etscope")
def main():
    """etscope: where an ExecuTorch model spends its time and memory (QNN/HTP first).

    Give it an ETDump (and optionally the ETRecord and .pte) to see what contains what, what ran on
    which backend or fell back to the CPU, and every number in its true unit.
    """
    process.tune()


def _register() -> None:
    """One module per command group, each defining plain click commands; a new command is one line here."""
    from etscope.cli import collect, demo, diff, inspect, llm, numerics, trend, views

    for command in (inspect.summary, inspect.ops, inspect.qnn, inspect.program, demo.demo, views.report,
                    views.trace, views.export, views.sql, diff.diff, llm.llm, numerics.numerics,
                    collect.collect, trend.trend):
        main.add_command(command)


_register()


def run() -> None:
    """The ``etscope`` command (and ``python -m etscope.cli``): ``main``, then the process ends
    without tearing the interpreter down (see ``process.finish``). Tests call ``main`` itself."""
    try:
        main()
    except SystemExit as done:
        process.finish(done)
