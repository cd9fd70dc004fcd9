"""Text views of ``etscope numerics`` (statistics, comparison) for people; ``--json`` is the stable form.

They print to the shared Screen (render.screen): on a terminal the lines fit the width (tensor
names shortened in the middle, columns moved under their rows); piped, nothing is cut.
"""
from __future__ import annotations

import math

from etscope.analysis.numerics.compare import ComparedTensor, Comparison, MethodComparisons, RunComparison
from etscope.analysis.numerics.drift import Drift, DriftCell
from etscope.analysis.numerics.tensors import NumericsResult
from etscope.render.text import Table, console_or_default, shown


def _g(x, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.{digits}g}"


def _table(header, rows, right=(), details=None, text=()) -> Table:
    """A Screen table: ``right`` the right-aligned (number) columns, ``details`` {column: rank} those
    that may move under their row on a narrow terminal, ``text`` the columns wrapped, not shortened."""
    t = Table()
    for h in header:
        t.add_column(h, justify="right" if h in right else "left", kind="text" if h in text else None,
                     detail=(details or {}).get(h, 0))
    for r in rows:
        t.add_row(*map(str, r))
    return t


def _print(out: list, console) -> None:
    c = console_or_default(console)
    for item in out:
        c.print(item)


STATS_SHOWN = 60      # tensors on a terminal without --limit; piped output lists all


def render_stats(r: NumericsResult, console=None, limit: int | None = None, run: int | None = None) -> None:
    """``limit``: tensors listed (0: all; None: all when piped, STATS_SHOWN on a terminal)."""
    c = console_or_default(console)
    _print(stats_lines(r, limit if limit is not None else (0 if c.complete else STATS_SHOWN), run), c)


def render_compare(c: Comparison | MethodComparisons, console=None, run: int | None = None) -> None:
    _print(compare_lines(c, run), console)


_STATS_RIGHT = ("run", "min", "max", "mean", "std", "NaN", "Inf", "at limits")
_STATS_DETAIL = {"flags": 9, "at limits": 8, "std": 7, "role": 6, "dtype": 5, "shape": 4, "Inf": 3, "NaN": 2,
                 "mean": 1}


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def stats_lines(r: NumericsResult, limit: int | None = 60, run: int | None = None) -> list:
    """The statistics view: prose lines (str) and one :class:`Table`."""
    rows = [t for t in r.rows if run is None or t.id.run == run]
    kept = rows if limit is None or limit <= 0 else rows[:limit]
    out = [f"Intermediate outputs: {len(r.rows)} tensors over {r.runs} execute run(s)"
           + (f", method {shown(r.method)}" if r.method else "")
           + (f"; {r.flagged} flagged" if r.flagged else "; none flagged (NaN, Inf, values at int limits)")]
    table = []
    for row in kept:
        t, s = row.id, row.stats
        table.append([t.run, shown(t.name), t.role.replace("_", " "), t.dtype, _shape(t.shape),
                      _g(s.min), _g(s.max), _g(s.mean), _g(s.std), s.nan, s.inf,
                      "—" if s.at_limits is None else f"{100 * s.at_limits:.1f}%", shown("; ".join(row.flags))])
    out.append(_table(["run", "tensor", "role", "dtype", "shape", "min", "max", "mean", "std", "NaN", "Inf",
                       "at limits", "flags"], table, _STATS_RIGHT, _STATS_DETAIL, text=("flags",)))
    if len(kept) < len(rows):
        out.append(f"{len(rows) - len(kept)} more (--limit 0 shows all, --run N one run, --json everything)")
    for n in r.notes:
        out.append("note: " + shown(n))
    return out


def _m(x, unit: str = "", digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}{unit}"


def compare_lines(c: Comparison | MethodComparisons, run: int | None = None) -> list:
    """The comparison view: prose lines (str) and one :class:`Table` for the chosen run; one block
    per method of a several-method ETDump."""
    if isinstance(c, MethodComparisons):
        out: list = []
        for m in c.methods:
            out += [f"method {shown(m.method or '?')}:", *_compare_lines(m, run), ""]
        return out[:-1]
    return _compare_lines(c, run)


def _run_label(r: RunComparison) -> str:
    if r.phase is None:
        return f"run {r.run}"
    return f"run {r.run} ({shown(r.phase)}, reference run {r.ref_run})"


def _more(names: tuple[str, ...]) -> str:
    return (f"{len(names)} (" + shown(", ".join(names[:4])) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            + ")")


def _tensor_cells(t: ComparedTensor, mark: str) -> list:
    m = t.metrics
    if m is None:
        return [shown(t.name), t.role.replace("_", " "), "—", "—", "—", "—", "—", shown(t.note or "")]
    snr = "exact" if m.equal else _m(m.snr_db, "", 4)
    return [shown(t.name), t.role.replace("_", " "), _m(m.cosine, "", 7), snr, _m(m.mse), _m(m.max_abs), _m(m.rel_err),
            mark]


def _compare_lines(c: Comparison, run: int | None = None) -> list:
    """One method's comparison: prose lines (str) and one :class:`Table` for the chosen run."""
    th = c.thresholds
    tests = [f"cosine < {th.cosine}" if th.cosine is not None else "",
             f"SNR < {th.snr_db} dB" if th.snr_db is not None else ""]
    out = [f"Comparison (candidate vs reference), matched by {c.match_by}; divergence: "
           + (" or ".join(t for t in tests if t) or "no threshold (NaN/Inf only)")]
    fd = c.first_divergence
    out.append("first divergence: " + (f"{shown(fd.name)} (run(s) {', '.join(map(str, fd.runs[:10]))}"
                                       + (f" and {len(fd.runs) - 10} more" if len(fd.runs) > 10 else "") + ")" if fd else "none"))
    runs = c.runs
    if not runs:
        out.append("no tensor matched")
    pick = next((r for r in runs if r.run == run), None) if run is not None else (runs[0] if runs else None)
    if run is not None and pick is None:
        out.append(f"run {run} has no compared tensor")
    if pick is not None:
        out.append(f"{_run_label(pick)}:")
        table = []
        for i, t in enumerate(pick.tensors):
            mark = "<- first divergence" if i == pick.first_divergence else ("diverged" if t.diverged else "")
            table.append(_tensor_cells(t, mark))
        out.append(_table(["tensor", "role", "cosine", "SNR dB", "MSE", "max abs", "rel err", "note"], table,
                          ("cosine", "SNR dB", "MSE", "max abs", "rel err"),
                          {"role": 4, "rel err": 3, "max abs": 2, "MSE": 1}, text=("note",)))
        if pick.matched_by_counts:
            out.append("  matched by: " + "; ".join(f"{shown(h or '?')} x{n}" for h, n in pick.matched_by_counts))
        if pick.largest_drop:
            ld = pick.largest_drop
            out.append(f"  largest single-step SNR drop: {ld.snr_drop_db:.1f} dB, {shown(ld.from_name)} -> "
                       f"{shown(ld.to_name)}")
    if len(runs) > 1:
        out.append("per run (first divergence / largest drop / lowest SNR):")
        for r in runs[:50]:
            ld = r.largest_drop
            out.append(f"  {_run_label(r)}: {shown(r.first_divergence_name or 'none')} / "
                       + (f"{ld.snr_drop_db:.1f} dB at {shown(ld.to_name)}" if ld else "none") + " / "
                       + (f"{r.lowest_snr_db:.1f} dB" if r.lowest_snr_db is not None else "all exact"))
        if len(runs) > 50:
            out.append(f"  ({len(runs) - 50} more runs in --json)")
    if c.drift:
        out += drift_lines(c.drift)
    cv = c.coverage
    if cv.share is not None:
        out.append(f"coverage: {cv.paired} of the reference's {cv.loggable} "
                   f"logged node(s) the candidate could log paired ({100 * cv.share:.0f}%)"
                   + (f"; {cv.hidden} more inside the candidate's delegate partitions (never "
                      "logged by the backend)" if cv.hidden else "")
                   + (f"; {cv.refused} pair(s) refused (shapes differ)" if cv.refused else "")
                   + (" -- LOW" if cv.low else ""))
    if c.unmatched_cand:
        out.append("candidate tensors without a reference partner: " + _more(c.unmatched_cand))
    if c.unmatched_ref:
        out.append("reference tensors without a candidate partner: " + _more(c.unmatched_ref))
    for n in c.notes:
        out.append("note: " + shown(n))
    return out


DRIFT_WIDTH = 80          # the drift table fits 80 columns: steps past it are counted, not shown
DRIFT_LAYERS = 60         # layers listed (the rest counted; --json has all)
_LAYER_W, _STEP_W, _MAX_W = 20, 7, 9


def _drift_cell(c: DriftCell | None) -> str:
    if c is None:
        return "·"
    if c.nonfinite:
        v = "nan"
    elif c.equal:
        v = "="
    else:
        v = f"{c.snr_db:.1f}" if abs(c.snr_db) < 1000 else f"{c.snr_db:.0f}"
    return v + ("*" if c.diverged else "")


def drift_lines(dr: Drift) -> list[str]:
    """The drift table (layers x steps, worst SNR in dB; the last column each layer's largest max abs
    error over all steps), the steps that did not fit counted, and the first crossing."""
    steps, cells = dr.steps, dr.cells
    fit = max(1, (DRIFT_WIDTH - _LAYER_W - _MAX_W - 2) // (_STEP_W + 1))
    shown_steps = list(range(min(fit, len(steps))))
    out = ["drift over steps: each layer's worst SNR (dB) per step; = all equal, * crosses a",
           "threshold, · none compared; steps: d<step>@<position> (r<run>: step unknown);",
           "max abs: the layer's largest max abs error over all its steps"]
    head = f"{'layer':<{_LAYER_W}} " + " ".join(f"{shown(steps[j].label)[:_STEP_W]:>{_STEP_W}}" for j in shown_steps)
    out.append(head + f" {'max abs':>{_MAX_W}}")
    for i, lay in enumerate(dr.layers[:DRIFT_LAYERS]):
        name = shown(lay.name)
        if len(name) > _LAYER_W:
            name = "…" + name[-(_LAYER_W - 1):]
        row = [cells[i][j] for j in shown_steps]
        worst = "nan" if math.isnan(lay.max_abs) else f"{lay.max_abs:.3g}"
        out.append(f"{name:<{_LAYER_W}} " + " ".join(f"{_drift_cell(c):>{_STEP_W}}" for c in row)
                   + f" {worst:>{_MAX_W}}")
    if len(dr.layers) > DRIFT_LAYERS:
        out.append(f"({len(dr.layers) - DRIFT_LAYERS} more layers: --json or --export)")
    if len(steps) > len(shown_steps):
        out.append(f"({len(steps) - len(shown_steps)} more step(s) not shown, up to {shown(steps[-1].label)}: "
                   "--json or --export)")
    fd = dr.first
    if fd is None:
        out.append("first crossing: none (no layer crosses a threshold at any step)")
    else:
        snr = "NaN/Inf values" if not math.isfinite(fd.snr_db) else f"SNR {fd.snr_db:.1f} dB"
        mx = "" if not math.isfinite(fd.max_abs) else f", max abs {fd.max_abs:.3g}"
        out.append(f"first crossing: layer {shown(fd.layer)} at {shown(fd.step)} (run {fd.run}): "
                   f"{snr}{mx}")
        out.append(f"  first crossing tensor {shown(fd.first_tensor)}, worst {shown(fd.worst)}")
    return out
