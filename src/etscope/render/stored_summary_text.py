"""A summary stored in a dataset (``etscope trend --summary BUILD``), printed as ``etscope summary``
prints it: the same renderers (``render.text.render_summary``, and the phase table when the runs
were several phases), reading the stored document (checked on read: ``fleet.summaries``)."""
from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from etscope.analysis.views.stored_summary import stored_findings, stored_phases, stored_result
from etscope.render.phases_text import render_phase_heading, render_phase_table
from etscope.render.screen import Screen, screen
from etscope.render.text import render_summary, shown


def render_stored_summary(doc: dict, console=None, title: str | None = None) -> None:
    """The summary of a checked stored document, with ``title`` (which build and file) above it."""
    how, phases = stored_phases(doc)
    if not phases:
        render_summary(stored_result(doc), console, title=title, findings=stored_findings(doc))
        return
    c = screen(console)
    if title:
        c.print(Text(shown(title), style="bold"))
    render_phase_table([row for row, _ in phases], how, "summary", c)
    for row, s in phases:
        render_phase_heading(row, c)
        render_summary(stored_result(s), c, findings=stored_findings(s))


def stored_summary_text(doc: dict, title: str | None = None) -> str:
    """:func:`render_stored_summary` as the text it prints to standard output (its width policy),
    made whole before anything is printed: a stored document the renderers cannot read raises
    before a line of it is shown."""
    out = screen()
    buf = io.StringIO()
    c = Screen(Console(file=buf, width=out.console.width, highlight=False, soft_wrap=out.limit is None,
                       force_terminal=False), out.limit, out.terminal)
    render_stored_summary(doc, c, title)
    return buf.getvalue()
