"""The report of runs that form several phases (an LLM's prefill and decode): each phase's own view,
formatted as the page formats one view, with the phases side by side (``analysis.llm.run_phases.PhaseRow``).

The page (assets/phases.js) draws every section but the LLM one from the selected phase's view, so
no section shows the phases pooled (issue 34). The whole file's data stays at the top level of the
page's data (what it was before phases existed: tools that read the blob keep working); each phase's
view is in ``phases.views``, once. With ``report --compare``, a phase is compared with the same phase
of the base when the base's runs form the same phases (else the comparison is the whole files', and
the page says so).

A phase's per-run columns are put at the file's Execute indices (the other phases' runs are null), so
its runs chart reads "run 7" for the file's run 7, and the LLM analysis' per-run warm-up flags (whole
file) line up with it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence


from etscope.analysis.diff.view import DiffView
from etscope.analysis.views.report import ReportView
from etscope.analysis.llm.run_phases import PhaseRow

# What the page takes from a phase's view instead of the whole file's (the rest: title, inputs,
# the LLM section, the comparison, the numerics, are the file's).
PHASE_KEYS = ("guide", "findings", "summary", "hierarchy", "placement", "ops", "runs", "qnn", "graph", "modules",
              "warnings")


def default_phase(names: Sequence[str]) -> str:
    """The phase the page opens on: decode (what an LLM spends its time in) if there is one, else the first."""
    return "decode" if "decode" in names else names[0]


@dataclass(frozen=True)
class PhasePage:
    """What the page shows of one phase: its row beside the others, its view and, with ``report
    --compare`` when the base's runs form the same phases, the diff of the base's phase against it."""

    row: PhaseRow
    view: ReportView
    compare: DiffView | None = None


def phases_data(phases: Sequence[PhasePage], how: str, n_file_runs: int, view_data: Callable[[ReportView], dict],
                compare_data: Callable[[DiffView], dict]) -> dict:
    """The ``phases`` entry of the page's data: how the phases were told apart, the one shown first,
    per phase its row (runs, warm-up runs, Method::execute p50 / mean / min / max) and its view's
    data (``view_data``: what ``report_data`` makes of one view; its per-run columns at the file's
    Execute indices; ``compare`` when the phase has its own comparison)."""
    rows, views = [], []
    for page in phases:
        row = page.row
        rows.append(dict(row.to_dict(), n_runs=len(row.runs), n_warmup=len(row.warmup_runs)))
        placed = dataclasses.replace(page.view, runs=page.view.runs and page.view.runs.at_file_positions(row.runs, n_file_runs))
        v = view_data(placed)
        views.append({**{k: v[k] for k in PHASE_KEYS},
                      **({"compare": compare_data(page.compare)} if page.compare is not None else {})})
    return {"how": how, "default": default_phase([page.row.name for page in phases]), "rows": rows, "views": views}


def phase_pages(results, compares: dict | None = None) -> list[PhasePage]:
    """The pages of ``results``' phases (an ``analysis.results.Results``: its ``phase_rows`` and each
    phase's ``for_phase(name).view``); [] when its runs are one phase. ``compares``: per phase name,
    its comparison with the base's same phase."""
    return [PhasePage(row, results.for_phase(row.name).view, (compares or {}).get(row.name))
            for row in results.phase_rows]
