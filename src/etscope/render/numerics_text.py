"""Text views of ``etscope numerics`` (statistics, comparison) for people; ``--json`` is the stable form.

They print to the shared Screen (render.screen): on a terminal the lines fit the width (tensor
names shortened in the middle, columns moved under their rows); piped, nothing is cut.
"""
from __future__ import annotations

import math

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


def render_stats(d: dict, console=None, limit: int | None = None, run: int | None = None) -> None:
    """``limit``: tensors listed (0: all; None: all when piped, STATS_SHOWN on a terminal)."""
    c = console_or_default(console)
    _print(stats_lines(d, limit if limit is not None else (0 if c.complete else STATS_SHOWN), run), c)


def render_compare(d: dict, console=None, run: int | None = None) -> None:
    _print(compare_lines(d, run), console)


_STATS_RIGHT = ("run", "min", "max", "mean", "std", "NaN", "Inf", "at limits")
_STATS_DETAIL = {"flags": 9, "at limits": 8, "std": 7, "role": 6, "dtype": 5, "shape": 4, "Inf": 3, "NaN": 2,
                 "mean": 1}


def stats_lines(d: dict, limit: int | None = 60, run: int | None = None) -> list:
    """The statistics view: prose lines (str) and one :class:`Table`."""
    rows = [t for t in d["tensors"] if run is None or t["run"] == run]
    kept = rows if limit is None or limit <= 0 else rows[:limit]
    out = [f"Intermediate outputs: {len(d['tensors'])} tensors over {d['runs']} execute run(s)"
           + (f", method {shown(d['method'])}" if d.get("method") else "")
           + (f"; {d['flagged']} flagged" if d["flagged"] else "; none flagged (NaN, Inf, values at int limits)")]
    table = []
    for t in kept:
        shape = "x".join(map(str, t["shape"])) or "scalar"
        table.append([t["run"], shown(t["name"]), t["role"].replace("_", " "), t["dtype"], shape,
                      _g(t["min"]), _g(t["max"]), _g(t["mean"]), _g(t["std"]), t["nan"], t["inf"],
                      "—" if t["at_limits_share"] is None else f"{100 * t['at_limits_share']:.1f}%",
                      shown("; ".join(t["flags"]))])
    out.append(_table(["run", "tensor", "role", "dtype", "shape", "min", "max", "mean", "std", "NaN", "Inf",
                       "at limits", "flags"], table, _STATS_RIGHT, _STATS_DETAIL, text=("flags",)))
    if len(kept) < len(rows):
        out.append(f"{len(rows) - len(kept)} more (--limit 0 shows all, --run N one run, --json everything)")
    for n in d["notes"]:
        out.append("note: " + shown(n))
    return out


def _m(x, unit: str = "", digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}{unit}"


def compare_lines(d: dict, run: int | None = None) -> list:
    """The comparison view: prose lines (str) and one :class:`Table` for the chosen run; one block
    per method (``methods``) of a several-method ETDump."""
    if "methods" in d:
        out: list = []
        for m in d["methods"]:
            out += [f"method {shown(m['method'] or '?')}:", *_compare_lines(m, run), ""]
        return out[:-1]
    return _compare_lines(d, run)


def _run_label(r: dict) -> str:
    if r.get("phase") is None:
        return f"run {r['run']}"
    return f"run {r['run']} ({shown(r['phase'])}, reference run {r['reference_run']})"


def _compare_lines(d: dict, run: int | None = None) -> list:
    """One method's comparison: prose lines (str) and one :class:`Table` for the chosen run."""
    th = d["thresholds"]
    tests = [f"cosine < {th['cosine_below']}" if th["cosine_below"] is not None else "",
             f"SNR < {th['snr_db_below']} dB" if th["snr_db_below"] is not None else ""]
    out = [f"Comparison (candidate vs reference), matched by {d['match_by']}; divergence: "
           + (" or ".join(t for t in tests if t) or "no threshold (NaN/Inf only)")]
    fd = d["first_divergence"]
    out.append("first divergence: " + (f"{shown(fd['name'])} (run(s) {', '.join(map(str, fd['runs'][:10]))}"
                                       + (f" and {len(fd['runs']) - 10} more" if len(fd["runs"]) > 10 else "") + ")" if fd else "none"))
    runs = d["runs"]
    if not runs:
        out.append("no tensor matched")
    pick = next((r for r in runs if r["run"] == run), None) if run is not None else (runs[0] if runs else None)
    if run is not None and pick is None:
        out.append(f"run {run} has no compared tensor")
    if pick is not None:
        out.append(f"{_run_label(pick)}:")
        table = []
        for t in pick["tensors"]:
            mark = "<- first divergence" if t["name"] == pick["first_divergence"] and t["diverged"] else (
                "diverged" if t["diverged"] else "")
            if t["compared"]:
                snr = "exact" if t["equal"] else _m(t["snr_db"], "", 4)
                cells = [shown(t["name"]), t["role"].replace("_", " "), _m(t["cosine"], "", 7), snr,
                         _m(t["mse"]), _m(t["max_abs_error"]), _m(t["relative_error"]), mark]
            else:
                cells = [shown(t["name"]), t["role"].replace("_", " "), "—", "—", "—", "—", "—",
                         shown(t["note"] or "")]
            table.append(cells)
        out.append(_table(["tensor", "role", "cosine", "SNR dB", "MSE", "max abs", "rel err", "note"], table,
                          ("cosine", "SNR dB", "MSE", "max abs", "rel err"),
                          {"role": 4, "rel err": 3, "max abs": 2, "MSE": 1}, text=("note",)))
        hows: dict[str, int] = {}
        for t in pick["tensors"]:
            hows[t.get("matched_by") or "?"] = hows.get(t.get("matched_by") or "?", 0) + 1
        if hows:
            out.append("  matched by: " + "; ".join(f"{shown(h)} x{n}" for h, n in sorted(hows.items(), key=lambda x: -x[1])))
        if pick["largest_drop"]:
            ld = pick["largest_drop"]
            out.append(f"  largest single-step SNR drop: {ld['snr_drop_db']:.1f} dB, {shown(ld['from'])} -> "
                       f"{shown(ld['to'])}")
    if len(runs) > 1:
        out.append("per run (first divergence / largest drop / lowest SNR):")
        for r in runs[:50]:
            snrs = [t["snr_db"] for t in r["tensors"]
                    if t["compared"] and not t["equal"] and t["snr_db"] is not None and math.isfinite(t["snr_db"])]
            ld = r["largest_drop"]
            out.append(f"  {_run_label(r)}: {shown(r['first_divergence'] or 'none')} / "
                       + (f"{ld['snr_drop_db']:.1f} dB at {shown(ld['to'])}" if ld else "none") + " / "
                       + (f"{min(snrs):.1f} dB" if snrs else "all exact"))
        if len(runs) > 50:
            out.append(f"  ({len(runs) - 50} more runs in --json)")
    if d.get("drift"):
        out += drift_lines(d["drift"])
    cv = d.get("coverage")
    if cv and cv["share"] is not None:
        out.append(f"coverage: {cv['paired']} of the reference's {cv['reference_nodes_logged'] - cv['inside_candidate_partitions']} "
                   f"logged node(s) the candidate could log paired ({100 * cv['share']:.0f}%)"
                   + (f"; {cv['inside_candidate_partitions']} more inside the candidate's delegate partitions (never "
                      "logged by the backend)" if cv["inside_candidate_partitions"] else "")
                   + (f"; {cv['pairs_refused']} pair(s) refused (shapes differ)" if cv["pairs_refused"] else "")
                   + (" -- LOW" if cv["low"] else ""))
    if d["unmatched_candidate"]:
        out.append(f"candidate tensors without a reference partner: {len(d['unmatched_candidate'])} ("
                   + shown(", ".join(d["unmatched_candidate"][:4])) + (f" and {len(d['unmatched_candidate']) - 4} more" if len(d["unmatched_candidate"]) > 4 else "") + ")")
    if d["unmatched_reference"]:
        out.append(f"reference tensors without a candidate partner: {len(d['unmatched_reference'])} ("
                   + shown(", ".join(d["unmatched_reference"][:4])) + (f" and {len(d['unmatched_reference']) - 4} more" if len(d["unmatched_reference"]) > 4 else "") + ")")
    for n in d["notes"]:
        out.append("note: " + shown(n))
    return out


DRIFT_WIDTH = 80          # the drift table fits 80 columns: steps past it are counted, not shown
DRIFT_LAYERS = 60         # layers listed (the rest counted; --json has all)
_LAYER_W, _STEP_W, _MAX_W = 20, 7, 9


def _drift_cell(c: dict | None) -> str:
    if c is None:
        return "·"
    if c["nonfinite"]:
        v = "nan"
    elif c["equal"]:
        v = "="
    else:
        v = f"{c['snr_db']:.1f}" if abs(c["snr_db"]) < 1000 else f"{c['snr_db']:.0f}"
    return v + ("*" if c["diverged"] else "")


def drift_lines(dr: dict) -> list[str]:
    """The drift table (layers x steps, worst SNR in dB; the last column each layer's largest max abs
    error over the steps shown), the steps that did not fit counted, and the first crossing."""
    steps, layers, cells = dr["steps"], dr["layers"], dr["cells"]
    fit = max(1, (DRIFT_WIDTH - _LAYER_W - _MAX_W - 2) // (_STEP_W + 1))
    shown_steps = list(range(min(fit, len(steps))))
    out = ["drift over steps: each layer's worst SNR (dB) per step; = all equal, * crosses a",
           "threshold, · none compared; steps: d<step>@<position> (r<run>: step unknown);",
           "max abs: the layer's largest max abs error over the steps shown"]
    head = f"{'layer':<{_LAYER_W}} " + " ".join(f"{shown(steps[j]['label'])[:_STEP_W]:>{_STEP_W}}" for j in shown_steps)
    out.append(head + f" {'max abs':>{_MAX_W}}")
    for i, lay in enumerate(layers[:DRIFT_LAYERS]):
        name = shown(lay["name"])
        if len(name) > _LAYER_W:
            name = "…" + name[-(_LAYER_W - 1):]
        row = [cells[i][j] for j in shown_steps]
        mx = [c["max_abs_error"] for c in row if c is not None and c["max_abs_error"] is not None]
        nan = any(c is not None and c["nonfinite"] for c in row)
        worst = "nan" if nan else (f"{max(mx):.3g}" if mx else "—")
        out.append(f"{name:<{_LAYER_W}} " + " ".join(f"{_drift_cell(c):>{_STEP_W}}" for c in row)
                   + f" {worst:>{_MAX_W}}")
    if len(layers) > DRIFT_LAYERS:
        out.append(f"({len(layers) - DRIFT_LAYERS} more layers: --json or --export)")
    if len(steps) > len(shown_steps):
        out.append(f"({len(steps) - len(shown_steps)} more step(s) not shown, up to {shown(steps[-1]['label'])}: "
                   "--json or --export)")
    fd = dr["first_divergence"]
    if fd is None:
        out.append("first crossing: none (no layer crosses a threshold at any step)")
    else:
        snr = "NaN/Inf values" if fd["snr_db"] is None else f"SNR {fd['snr_db']:.1f} dB"
        mx = "" if fd["max_abs_error"] is None else f", max abs {fd['max_abs_error']:.3g}"
        out.append(f"first crossing: layer {shown(fd['layer'])} at {shown(fd['step'])} (run {fd['run']}): "
                   f"{snr}{mx}")
        out.append(f"  first crossing tensor {shown(fd['first_tensor'])}, worst {shown(fd['worst_tensor'])}")
    return out
