"""Trend over a series of builds: which commit made the model (or an op) slower, on which SoC.

Input: the ``runs`` and ``ops`` tables of a dataset (``etscope collect``), each row tagged with
its file (``file_hash``, one profiling session), ``model``, ``soc``, ``build`` and ``order_key``.
One series per model x SoC x phase; its builds are ordered by their smallest order key (numerically
when every key is a number, else as text: commit hashes do not sort, dates and counters do).

Phases: an LLM's prefill and decode runs are never pooled. The dataset's runs and ops rows carry
the run's ``phase`` (``analysis.llm.run_phases``, as ``etscope llm`` finds it; ``all`` when a file's
runs are one phase); each phase of a file is a session of its own and each phase its own series.
Rows without the column (a dataset collected before it existed) are phase ``all``: their runs
together, as they were summarised then.

Statistic: each session's p50 latency over its steady runs (leading warm-up dropped, as in
``diff``), on a log scale. A one-session ``diff`` cannot know how far two sessions of one program
differ; a series can: the sessions of the builds before a change are repeated measurements of
one program (or of builds that did not change its speed), so their spread *is* the
between-session (and between-build) noise. Detection walks the builds in order: build b is
compared with the baseline (the builds since the last change) by a t test on the sessions' log
p50s whose variance is the baseline's alone (build b may have a single session, so its own
spread is unknown; under no change both sides share it). A change is called when p < alpha / m
with m the number of builds that could be tested in the series (Bonferroni: the chance of any
false alarm in a series of unchanged builds stays below alpha, whatever its length) and the
change is at least ``min_effect_pct``; it is then placed at the best two-level split since the
baseline began (``detect``) and the baseline restarts there. Ops: the same test on each
substantial op's per-session p50 (m counts ops x builds). Placement: the backend of each op in
consecutive builds.

The false-alarm rate and the power are measured on generated series (tests/analysis/test_trend.py;
benchmarks/trend_false_alarms.py; numbers in BENCHMARKS.md, "trend: false alarms and detection").
Assumes sessions of unchanged builds are exchangeable: a slow drift over many builds, or a
device whose spread changes, is not modelled.

Parts: ``trend_result`` (the result: frozen dataclasses, the JSON schema), ``trend_sessions`` (each
file's steady p50, the builds' order, the rows of each series), ``trend_changes`` (the change test),
``trend_ops`` (op changes and placement changes); this module puts a series together.
"""
from __future__ import annotations
from __future__ import annotations

import math

import numpy as np

from etscope.analysis.diff.compare import t975
from etscope.analysis.diff.trend_changes import (ALPHA, CHANGED, MIN_BASELINE_BUILDS, MIN_BASELINE_SESSIONS,
                                                 MIN_EFFECT_PCT, BuildTest, detect, possible_tests)
from etscope.analysis.diff.trend_ops import MAX_MOVED, MAX_OP_CANDIDATES, level0, op_changes, placement_changes
from etscope.analysis.diff.trend_result import (ALL_PHASES, SCHEMA, BuildPoint, Change, FactChange, FactDiff,
                                                Moved, OpChange, PlacementChange, Series, Trend)
from etscope.analysis.diff.trend_sessions import (Session, build_order, factorize, phase_values, series_rows,
                                                  session_p50, session_p50s, session_summary, text)

__all__ = ["ALL_PHASES", "ALPHA", "MAX_MOVED", "MAX_OP_CANDIDATES", "MIN_BASELINE_BUILDS", "MIN_BASELINE_SESSIONS",
           "MIN_EFFECT_PCT", "SCHEMA", "BuildPoint", "BuildTest", "Change", "FactChange", "FactDiff", "Moved",
           "OpChange", "PlacementChange", "Series", "Session", "Trend", "build_order", "detect", "factorize",
           "fact_changes", "op_changes", "phase_values", "placement_changes", "possible_tests", "series_trend",
           "session_p50", "session_p50s", "session_summary", "text", "trend", "trend_of_sessions"]


# ---- one series --------------------------------------------------------------------------------------
def series_trend(model: str, soc: str, runs: dict, ops: dict | None, alpha: float = ALPHA,
                 min_effect_pct: float = MIN_EFFECT_PCT, phase: str = ALL_PHASES) -> Series:
    """The trend of one model x SoC. ``runs``/``ops``: column dicts (numpy arrays) of that series'
    rows of the dataset's runs (file_hash, build, order_key, execute, latency_ms) and ops
    (file_hash, level, name, instruction_id, placement, unit, p50) tables."""
    fh = text(runs["file_hash"])
    sessions = session_p50s(fh, np.asarray(runs["execute"], np.int64), np.asarray(runs["latency_ms"], np.float64))
    build_of_file, key_of_file = {}, {}
    # The first row of each run of rows of one file names its build and order key (as the first
    # row of the file would: a later run of the same file keeps the first).
    starts = np.r_[0, np.flatnonzero(fh[1:] != fh[:-1]) + 1] if fh.size else np.zeros(0, np.int64)
    for f, b, k in zip(fh[starts].tolist(), text(np.asarray(runs["build"])[starts]).tolist(),
                       text(np.asarray(runs["order_key"])[starts]).tolist()):
        build_of_file.setdefault(f, b)
        key_of_file.setdefault(f, k)
    return _series(str(model), str(soc), phase, sessions, build_of_file, key_of_file, ops, alpha, min_effect_pct)


def _series(model: str, soc: str, phase: str, sessions: dict, build_of_file: dict, key_of_file: dict,
            ops: dict | None, alpha: float, min_effect_pct: float, xs: list[Session] | None = None) -> Series:
    """The trend of one series from its files' sessions ({file: (p50 ms, runs)}; files of
    ``build_of_file`` missing there had no timed run). ``xs``: the series' :class:`Session` s when
    it was read as such (their other build labels and stored facts are part of the result)."""
    notes = []
    keys_by_build: dict[str, list[str]] = {}
    for f in sessions:
        keys_by_build.setdefault(build_of_file[f], []).append(key_of_file[f])
    builds = build_order(keys_by_build)
    if len(sessions) < len(build_of_file):
        notes.append(f"{len(build_of_file) - len(sessions)} file(s) without a timed Method::execute run are left out")
    bidx = {b: i for i, b in enumerate(builds)}
    files = sorted(sessions, key=lambda f: (bidx[build_of_file[f]], key_of_file[f], f))
    b_of = np.array([bidx[build_of_file[f]] for f in files], np.int64)
    y = np.log(np.array([sessions[f][0] for f in files], np.float64))
    m = possible_tests(len(builds))
    res, seg = detect(b_of, y, len(builds), alpha / m, min_effect_pct)

    # The session spread of the series: residuals around each segment's mean (segments = runs of
    # builds between detected changes), pooled.
    seg_of_session = np.array([seg[b] for b in b_of], np.int64)
    resid = y.copy()
    for s in np.unique(seg_of_session):
        sel = seg_of_session == s
        resid[sel] -= y[sel].mean()
    df = int(y.size - np.unique(seg_of_session).size)
    sd = float(math.sqrt((resid ** 2).sum() / df)) if df > 0 else None

    points = []
    for i, b in enumerate(builds):
        sel = b_of == i
        fs = [f for f, keep in zip(files, sel) if keep]
        p50 = float(np.exp(y[sel].mean()))
        if sd is not None:
            half = t975(df) * sd / math.sqrt(sel.sum())
            lo, hi = p50 * math.exp(-half), p50 * math.exp(half)
        else:
            lo = hi = float("nan")
        quart = [sessions[f][2:4] for f in fs if len(sessions[f]) >= 4 and sessions[f][2] is not None]
        q1, q3 = (float(np.median([q[0] for q in quart])), float(np.median([q[1] for q in quart]))) if quart \
            else (float("nan"), float("nan"))
        r = res[i]
        points.append(BuildPoint(b, min(keys_by_build[b]), int(sel.sum()), sum(sessions[f][1] for f in fs),
                                 p50, lo, hi, r.change_pct, r.p_value, r.verdict, q1, q3))
    changes = tuple(Change(builds[i], builds[i - 1], r.change_pct, r.p_value, r.verdict, builds[r.significant_at],
                           r.lo_pct, r.hi_pct)
                    for i, r in enumerate(res) if r.verdict in CHANGED)
    ops_changed: tuple[OpChange, ...] = ()
    moved: tuple[PlacementChange, ...] = ()
    if ops is not None and len(ops.get("file_hash", ())):
        rows = level0(ops, files)      # once for both (labels cost a pass over every op row)
        ops_changed = op_changes(ops, files, b_of, builds, sessions, alpha, min_effect_pct, notes, rows)
        moved = placement_changes(ops, files, b_of, builds, rows)
    if len(builds) < MIN_BASELINE_BUILDS + 1:
        notes.append(f"{len(builds)} build(s): a change is judged from the {MIN_BASELINE_BUILDS + 1}rd build on "
                     f"(the baseline needs {MIN_BASELINE_BUILDS} builds and {MIN_BASELINE_SESSIONS} sessions)")
    if xs is not None:
        notes.extend(_label_notes(xs))
    return Series(model, soc, tuple(points), None if sd is None else (math.exp(sd) - 1) * 100, df, m, changes,
                  ops_changed, moved, tuple(notes), phase, fact_changes(xs, builds) if xs is not None else ())


def trend(runs: dict, ops: dict | None = None, alpha: float = ALPHA, min_effect_pct: float = MIN_EFFECT_PCT) -> Trend:
    """One :class:`Series` per model x SoC x phase found in ``runs`` (column dicts of numpy arrays;
    see :func:`series_trend`; ``phase`` optional), sorted by model, SoC, then phase."""
    rows = series_rows(runs)
    op_rows = series_rows(ops) if ops is not None else {}
    out = []
    for key in sorted(rows):
        r = {k: np.asarray(v)[rows[key]] for k, v in runs.items()}
        o = None
        if ops is not None:
            sel = op_rows.get(key, np.zeros(0, np.int64))
            o = {k: np.asarray(v)[sel] for k, v in ops.items()}
        out.append(series_trend(key[0], key[1], r, o, alpha, min_effect_pct, phase=key[2]))
    return Trend(tuple(out), alpha, min_effect_pct)


def trend_of_sessions(sessions: list[Session], ops: dict | None = None, alpha: float = ALPHA,
                      min_effect_pct: float = MIN_EFFECT_PCT) -> Trend:
    """:func:`trend` from files already summarised (:class:`Session`, e.g. by a reader that keeps
    one part in memory at a time): the same series, tests and changes as from the rows."""
    by_series: dict[tuple[str, str, str], list[Session]] = {}
    for x in sessions:
        by_series.setdefault((x.model, x.soc, x.phase), []).append(x)
    op_rows = series_rows(ops) if ops is not None else {}
    out = []
    for mo, so, ph in sorted(by_series):
        xs = by_series[(mo, so, ph)]
        o = None
        if ops is not None:
            sel = op_rows.get((mo, so, ph), np.zeros(0, np.int64))
            o = {k: np.asarray(v)[sel] for k, v in ops.items()}
        build_of_file, key_of_file = {}, {}
        for x in xs:
            build_of_file.setdefault(x.file, x.build)
            key_of_file.setdefault(x.file, x.order_key)
        done = {x.file: (x.p50_ms, x.runs, x.q1_ms, x.q3_ms) for x in xs if x.p50_ms is not None}
        out.append(_series(mo, so, ph, done, build_of_file, key_of_file, o, alpha, min_effect_pct, xs))
    return Trend(tuple(out), alpha, min_effect_pct)


MAX_LABEL_NOTES = 20
MAX_FACT_CHANGES = 20        # names listed per build change


def fact_changes(xs: list[Session], builds: list[str]) -> tuple[FactChange, ...]:
    """Between consecutive builds (each as its first file by order key), the stored facts that differ."""
    first: dict[str, Session] = {}
    for x in sorted(xs, key=lambda x: (x.order_key, x.file)):
        first.setdefault(x.build, x)
    out = []
    for prev, cur in zip(builds, builds[1:]):
        if prev not in first or cur not in first:
            continue
        a, b = dict(first[prev].facts), dict(first[cur].facts)
        changed = [FactDiff(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        if changed:
            out.append(FactChange(cur, prev, tuple(changed[:MAX_FACT_CHANGES])))
    return tuple(out)


def _label_notes(xs: list[Session]) -> list[str]:
    """A note per file that carries other build labels (the same bytes collected under another
    build, ``collect --also-label``): it is counted once, under the build it was collected as."""
    out = []
    labelled = [x for x in xs if x.also_builds]
    for x in labelled[:MAX_LABEL_NOTES]:
        others = ", ".join(str(b) for b in x.also_builds[:10]) + (" …" if len(x.also_builds) > 10 else "")
        out.append(f"file {x.file[:12]} of build {x.build} is also labelled {others} (the same bytes): "
                   f"counted once, under {x.build}")
    if len(labelled) > MAX_LABEL_NOTES:
        out.append(f"{len(labelled) - MAX_LABEL_NOTES} more files carry other build labels")
    return out

