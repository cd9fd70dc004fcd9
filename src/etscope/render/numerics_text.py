"""Text views of ``etscope numerics`` (statistics, comparison) for people; ``--json`` is the stable form."""
from __future__ import annotations

import math

from etscope.render.safe import clean


def _g(x, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.{digits}g}"


def _row(cells, widths) -> str:
    return "  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def _table(header, rows) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return [_row(header, widths), *(_row(r, widths) for r in rows)]


def stats_lines(d: dict, limit: int | None = 60, run: int | None = None) -> list[str]:
    rows = [t for t in d["tensors"] if run is None or t["run"] == run]
    shown = rows if limit is None or limit <= 0 else rows[:limit]
    out = [f"Intermediate outputs: {len(d['tensors'])} tensors over {d['runs']} execute run(s)"
           + (f", method {clean(d['method'], 60)}" if d.get("method") else "")
           + (f"; {d['flagged']} flagged" if d["flagged"] else "; none flagged (NaN, Inf, values at int limits)")]
    table = []
    for t in shown:
        shape = "x".join(map(str, t["shape"])) or "scalar"
        table.append([t["run"], clean(t["name"], 48), t["role"].replace("_", " "), t["dtype"], shape,
                      _g(t["min"]), _g(t["max"]), _g(t["mean"]), _g(t["std"]), t["nan"], t["inf"],
                      "—" if t["at_limits_share"] is None else f"{100 * t['at_limits_share']:.1f}%",
                      clean("; ".join(t["flags"]), 60)])
    out += _table(["run", "tensor", "role", "dtype", "shape", "min", "max", "mean", "std", "NaN", "Inf",
                   "at limits", "flags"], table)
    if len(shown) < len(rows):
        out.append(f"… {len(rows) - len(shown)} more (--limit 0 shows all, --run N one run, --json everything)")
    for n in d["notes"]:
        out.append("note: " + clean(n, 400))
    return out


def _m(x, unit: str = "", digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}{unit}"


def compare_lines(d: dict, run: int | None = None) -> list[str]:
    """The comparison, or one block per method (``methods``) of a several-method ETDump."""
    if "methods" in d:
        out = []
        for m in d["methods"]:
            out += [f"method {clean(m['method'] or '?', 60)}:", *("  " + line for line in _compare_lines(m, run)), ""]
        return out[:-1]
    return _compare_lines(d, run)


def _run_label(r: dict) -> str:
    if r.get("phase") is None:
        return f"run {r['run']}"
    return f"run {r['run']} ({clean(r['phase'], 30)}, reference run {r['reference_run']})"


def _compare_lines(d: dict, run: int | None = None) -> list[str]:
    th = d["thresholds"]
    tests = [f"cosine < {th['cosine_below']}" if th["cosine_below"] is not None else "",
             f"SNR < {th['snr_db_below']} dB" if th["snr_db_below"] is not None else ""]
    out = [f"Comparison (candidate vs reference), matched by {d['match_by']}; divergence: "
           + (" or ".join(t for t in tests if t) or "no threshold (NaN/Inf only)")]
    fd = d["first_divergence"]
    out.append("first divergence: " + (f"{clean(fd['name'], 80)} (run(s) {', '.join(map(str, fd['runs'][:10]))}"
                                       + (" …" if len(fd["runs"]) > 10 else "") + ")" if fd else "none"))
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
                cells = [clean(t["name"], 48), t["role"].replace("_", " "), _m(t["cosine"], "", 7), snr,
                         _m(t["mse"]), _m(t["max_abs_error"]), _m(t["relative_error"]), mark]
            else:
                cells = [clean(t["name"], 48), t["role"].replace("_", " "), "—", "—", "—", "—", "—",
                         clean(t["note"] or "", 80)]
            table.append(cells)
        out += ["  " + line for line in _table(["tensor", "role", "cosine", "SNR dB", "MSE", "max abs",
                                                 "rel err", ""], table)]
        if pick["largest_drop"]:
            ld = pick["largest_drop"]
            out.append(f"  largest single-step SNR drop: {ld['snr_drop_db']:.1f} dB, {clean(ld['from'], 60)} -> "
                       f"{clean(ld['to'], 60)}")
    if len(runs) > 1:
        out.append("per run (first divergence / largest drop / lowest SNR):")
        for r in runs[:50]:
            snrs = [t["snr_db"] for t in r["tensors"]
                    if t["compared"] and not t["equal"] and t["snr_db"] is not None and math.isfinite(t["snr_db"])]
            ld = r["largest_drop"]
            out.append(f"  {_run_label(r)}: {clean(r['first_divergence'] or 'none', 60)} / "
                       + (f"{ld['snr_drop_db']:.1f} dB at {clean(ld['to'], 60)}" if ld else "none") + " / "
                       + (f"{min(snrs):.1f} dB" if snrs else "all exact"))
        if len(runs) > 50:
            out.append(f"  … {len(runs) - 50} more runs (--json)")
    if d["unmatched_candidate"]:
        out.append(f"candidate tensors without a reference partner: {len(d['unmatched_candidate'])} ("
                   + clean(", ".join(d["unmatched_candidate"][:4]), 200) + (" …" if len(d["unmatched_candidate"]) > 4 else "") + ")")
    if d["unmatched_reference"]:
        out.append(f"reference tensors without a candidate partner: {len(d['unmatched_reference'])} ("
                   + clean(", ".join(d["unmatched_reference"][:4]), 200) + (" …" if len(d["unmatched_reference"]) > 4 else "") + ")")
    for n in d["notes"]:
        out.append("note: " + clean(n, 400))
    return out
