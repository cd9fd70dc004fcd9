"""`etscope ops --by module`: time per source module."""
from __future__ import annotations

import click

from etscope.cli.common import EXIT_BAD_INPUT, emit_json
from etscope.render.json import as_fields


def emit_modules(results, as_json: bool, limit: int, parts=()) -> None:
    """Print the module tree of ``results`` (an ``analysis.results.Results``) as text or JSON;
    ``parts``: its phases (``Results.by_phase``), each printed on its own."""
    mt = results.modules
    if mt is None:
        click.echo("etscope: ops --by module needs the ETRecord's graph (--etrecord): the module of each op "
                   "comes from its nn_module_stack", err=True)
        raise SystemExit(EXIT_BAD_INPUT)
    if as_json:
        phased = dict(phases_pooled="the module times pool the steady runs of every phase; phases[] gives each phase's own",
                      phases=[dict(row.to_dict(), modules=pr.modules)
                              for row, (_, pr) in zip(results.phase_rows, parts)])
        emit_json({"schema": "etscope.modules/1", "inputs": results.summary.inputs,
                   "method": results.profile.method, **as_fields(mt), **(phased if parts else {})})
        return
    from etscope.render.modules_text import render_modules

    if not parts:
        render_modules(mt, limit=limit or None)
        return
    from etscope.render.phases_text import render_phase_heading, render_phase_table

    render_phase_table(results.phase_rows, results.phases.how, "ops --by module")
    for row, (_, pr) in zip(results.phase_rows, parts):
        render_phase_heading(row)
        render_modules(pr.modules, limit=limit or None)
