"""The ranked findings (``analysis.findings.Finding``) as a table: ``qnn`` and ``summary`` print the
list their result carries (the report shows the same list)."""
from __future__ import annotations

from etscope.render.screen import Table
from etscope.display import without_controls


def render_findings(c, findings) -> None:
    """The findings, most important first, each with the numbers it rests on."""
    t = Table(title="Findings, most important first")
    t.add_column("severity")
    t.add_column("finding", kind="text")
    t.add_column("evidence", kind="text", detail=True)
    for f in findings:
        t.add_row(*(without_controls(x) for x in (f.severity, f.text, f.evidence)))
    c.print(t)
    c.print()
