"""Ops of a trend: each substantial op's own change test, and the ops whose backend changed
between consecutive builds (level-0 rows of the dataset's ops table)."""
from __future__ import annotations

import numpy as np

from etscope.analysis.diff.noise import SUBSTANTIAL_SHARE
from etscope.analysis.diff.trend_changes import CHANGED, detect, possible_tests
from etscope.analysis.diff.trend_result import Moved, OpChange, PlacementChange
from etscope.analysis.diff.trend_sessions import factorize, text


def level0(ops: dict, files: list[str]) -> tuple:
    """Level-0 op rows of the given files with an identity that survives re-numbering: the name
    and its rank among same-named instructions of the file (``DELEGATE_CALL (XnnpackBackend) #2``)."""
    fh = text(ops["file_hash"])
    f_codes, f_names = factorize(fh)
    wanted = set(files)
    in_files = np.array([f in wanted for f in f_names] + [False], bool)[f_codes]
    keep = (np.asarray(ops["level"]) == 0) & in_files
    idx = np.flatnonzero(keep)
    iid = np.asarray(ops["instruction_id"], np.int64)[idx]
    names_all = text(np.asarray(ops["name"])[idx])
    n_codes, _ = factorize(names_all)
    occ = np.asarray(ops["occurrence"], np.int64)[idx] if "occurrence" in ops else np.zeros(idx.size, np.int64)
    order = np.lexsort((occ, iid, n_codes, f_codes[idx]))
    idx = idx[order]
    f_s, n_s = fh[idx], names_all[order]
    # rank among same-named rows of a file: position since the start of its (file, name) run
    same = np.r_[False, (f_codes[idx][1:] == f_codes[idx][:-1]) & (n_codes[order][1:] == n_codes[order][:-1])]
    run_start = np.maximum.accumulate(np.where(~same, np.arange(idx.size), 0)) if idx.size else np.zeros(0, np.int64)
    rank = np.arange(idx.size) - run_start
    label = n_s.copy()
    for i in np.flatnonzero(rank):
        label[i] = f"{n_s[i]} #{rank[i] + 1}"
    return idx, f_s, label


MAX_MOVED = 500          # ops listed per placement change (the count is always whole)
MAX_OP_CANDIDATES = 100   # ops tested per series: the largest by share (real series have at most ~1/SUBSTANTIAL_SHARE)


def op_changes(ops: dict, files: list[str], b_of: np.ndarray, builds: list[str], sessions: dict,
               alpha: float, min_effect_pct: float, notes: list | None = None, level0=None) -> tuple[OpChange, ...]:
    """Ops (level 0, time units, at least SUBSTANTIAL_SHARE of the latency in the first build)
    whose per-session p50 changed significantly; Bonferroni over ops x builds. At most
    MAX_OP_CANDIDATES ops (the largest median shares) are tested, so a series whose ops claim
    more than the whole latency costs bounded work (a note says so)."""
    idx, f_s, label = level0 if level0 is not None else level0(ops, files)
    unit = text(np.asarray(ops["unit"])[idx])
    p50 = np.asarray(ops["p50"], np.float64)[idx]
    placement = np.asarray(ops["placement"]).astype(object)[idx]
    scale = np.where(unit == "ns", 1e-6, np.where(unit == "us", 1e-3, np.nan))     # -> ms
    ms = p50 * scale
    ok = np.isfinite(ms) & (ms > 0)
    build_of_file = {f: int(b) for f, b in zip(files, b_of)}
    okx = np.flatnonzero(ok)
    row_build = np.array([build_of_file[f] for f in f_s[okx].tolist()], np.int64)
    row_share = ms[okx] / np.array([sessions[f][0] for f in f_s[okx].tolist()], np.float64)
    l_codes, l_names = factorize(label[okx])
    # the median share of each label over its first-build rows, for all labels at once
    first = np.flatnonzero(row_build == 0)
    order = first[np.lexsort((row_share[first], l_codes[first]))]
    shares = {}
    if order.size:
        codes_o = l_codes[order]
        bounds = np.r_[0, np.flatnonzero(np.diff(codes_o)) + 1, order.size]
        lo, hi = bounds[:-1], bounds[1:]
        k = hi - lo
        med = (row_share[order[lo + (k - 1) // 2]] + row_share[order[lo + k // 2]]) / 2
        shares = {l_names[c]: float(v) for c, v in zip(codes_o[lo], med) if v >= SUBSTANTIAL_SHARE}
    chosen = sorted(sorted(shares), key=lambda lab: -shares[lab])[:MAX_OP_CANDIDATES]
    if len(shares) > MAX_OP_CANDIDATES and notes is not None:
        notes.append(f"{len(shares)} ops each take at least {SUBSTANTIAL_SHARE:.0%} of the latency in the first build; "
                     f"the {MAX_OP_CANDIDATES} largest are tested")
    wanted = set(chosen)
    by_label = np.argsort(l_codes, kind="stable")
    bounds = np.r_[0, np.flatnonzero(np.diff(l_codes[by_label])) + 1, by_label.size] if by_label.size else [0]
    candidates = {}
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lab = l_names[l_codes[by_label[lo]]]
        if lab in wanted:
            sel = by_label[lo:hi]
            candidates[lab] = (row_build[sel], np.log(ms[okx[sel]]), placement[okx[sel]][0])
    candidates = {lab: candidates[lab] for lab in sorted(candidates)}
    m = possible_tests(len(builds)) * max(1, len(candidates))
    out = []
    for lab, (bo, yy, place) in candidates.items():
        res, _ = detect(bo, yy, len(builds), alpha / m, min_effect_pct)
        for i, r in enumerate(res):
            if r.verdict in CHANGED:
                out.append(OpChange(str(lab), None if place is None else str(place), builds[i], builds[i - 1],
                                    r.change_pct, r.p_value, r.verdict, builds[r.significant_at]))
    return tuple(sorted(out, key=lambda c: (builds.index(c.build), -abs(c.change_pct))))


def placement_changes(ops: dict, files: list[str], b_of: np.ndarray, builds: list[str],
                      level0=None) -> tuple[PlacementChange, ...]:
    """Between consecutive builds (each as its first session), the ops whose backend changed,
    appeared or vanished, and the op count per backend."""
    idx, f_s, label = level0 if level0 is not None else level0(ops, files)
    placement = np.asarray(ops["placement"]).astype(object)[idx]
    first_file = {}
    for f, b in zip(files, b_of):
        first_file.setdefault(int(b), f)
    rows_of: dict[str, list[int]] = {}
    for i, f in enumerate(f_s.tolist()):
        rows_of.setdefault(f, []).append(i)
    per_build = []
    for i in range(len(builds)):
        sel = rows_of.get(first_file.get(i), [])
        per_build.append({str(label[j]): (None if placement[j] is None else str(placement[j])) for j in sel})
    out = []
    for i in range(1, len(builds)):
        a, b = per_build[i - 1], per_build[i]
        moved = [Moved(k, a.get(k, None), b.get(k, None))
                 for k in sorted(set(a) | set(b)) if a.get(k, "<absent>") != b.get(k, "<absent>")]
        if moved:
            out.append(PlacementChange(builds[i], builds[i - 1], tuple(moved[:MAX_MOVED]), _counts(a), _counts(b),
                                       len(moved)))
    return tuple(out)


def _counts(placements: dict) -> dict:
    out: dict = {}
    for p in placements.values():
        out[p or "none"] = out.get(p or "none", 0) + 1
    return dict(sorted(out.items()))

