"""`etscope ops --by module`: time per source module."""
from __future__ import annotations

import click

from etscope.cli.common import EXIT_BAD_INPUT, emit_json


def emit_modules(results, as_json: bool, limit: int) -> None:
    """Print the module tree of ``results`` (an ``analysis.results.Results``) as text or JSON."""
    mt = results.modules
    if mt is None:
        click.echo("etscope: ops --by module needs the ETRecord's graph (--etrecord): the module of each op "
                   "comes from its nn_module_stack", err=True)
        raise SystemExit(EXIT_BAD_INPUT)
    if as_json:
        emit_json({"schema": "etscope.modules/1", "inputs": results.summary["inputs"],
                   "method": results.profile.method, **mt})
        return
    from etscope.render.modules_text import render_modules

    render_modules(mt, limit=limit or None)
