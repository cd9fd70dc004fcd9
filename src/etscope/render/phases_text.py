"""The phases of an LLM's runs side by side (``analysis.llm.run_phases.PhaseRow``), and the heading of
each phase's own section: what ``summary``, ``ops`` and ``qnn`` print before each phase."""
from __future__ import annotations

from rich.text import Text

from etscope.analysis.glossary import MEAN_PER_RUN, P50
from etscope.render.screen import Table
from etscope.render.text import console_or_default, safe_text, shown
from etscope.units import fmt_ms

RUNS_LISTED = 12          # run indices listed in a heading; the rest counted


def run_list(runs, limit: int = RUNS_LISTED) -> str:
    shown_runs = ", ".join(str(r) for r in list(runs)[:limit])
    return shown_runs + (f" (+{len(runs) - limit} more)" if len(runs) > limit else "")


def render_phase_table(rows, how: str, command: str, console=None) -> None:
    """The phases side by side and how to see one."""
    c = console_or_default(console)
    c.print(safe_text(f"These runs are {len(rows)} phases ({', '.join(r.name for r in rows)}), told apart by "
                      f"{how}; each is shown on its own below, never pooled. One phase: etscope {command} "
                      f"--phase {rows[0].name} (or --phase all for every run together)."))
    t = Table(title="Phases (Method::execute over the steady runs of each phase, warm-up runs left out)")
    for col in ("phase", "method", "runs", "warm-up", P50.label, MEAN_PER_RUN.label, "min", "max"):
        t.add_column(col, justify="left" if col in ("phase", "method") else "right")
    for r in rows:
        t.add_row(safe_text(r.name), safe_text(r.method or "—"), str(len(r.runs)),
                  str(len(r.warmup_runs)) if r.warmup_runs else "—",
                  *(fmt_ms(v) if v is not None else "—" for v in (r.p50_ms, r.mean_ms, r.min_ms, r.max_ms)))
    c.print(t)
    c.print()


def render_phase_heading(row, console=None) -> None:
    """The line that opens one phase's section."""
    c = console_or_default(console)
    method = f" (method {row.method})" if row.method else ""
    c.print(Text(shown(f"━━ {row.name}{method}: {len(row.runs)} run(s): {run_list(row.runs)}"), style="bold"))
