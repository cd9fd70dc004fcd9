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
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from etscope.arrays import median
from etscope.analysis.diff.compare import t975
from etscope.analysis.diff.noise import SUBSTANTIAL_SHARE
from etscope.analysis.stats import leading_warmup, t_two_sided_p

SCHEMA = "etscope.trend/1"
ALPHA = 0.05                 # family-wise false-alarm rate per series (latency), likewise for its ops
MIN_EFFECT_PCT = 2.0
MIN_BASELINE_BUILDS = 2      # a baseline of one build knows only its sessions' spread, not builds'
MIN_BASELINE_SESSIONS = 3


@dataclass
class BuildPoint:
    """One build of a series: its p50 latency with a 95% interval and its test against the baseline."""
    build: str
    order_key: str
    sessions: int
    runs: int
    p50_ms: float
    lo_ms: float
    hi_ms: float
    change_pct: float | None = None      # vs the baseline (builds since the last change); None: not tested
    p_value: float | None = None
    verdict: str = "not tested"          # not tested / no change / regression / improvement
    q1_ms: float = float("nan")          # quartiles of the build's steady runs (one session: its own;
    q3_ms: float = float("nan")          # several: the median over its sessions of each quartile)


@dataclass
class OpChange:
    """An op whose p50 changed significantly at ``build`` (first build of the change)."""
    op: str
    placement: str | None
    build: str
    previous_build: str
    change_pct: float
    p_value: float
    verdict: str
    significant_at: str                  # the build whose test first crossed the threshold


@dataclass
class PlacementChange:
    """Ops whose backend differs between two consecutive builds."""
    build: str
    previous_build: str
    moved: list[dict]                    # {op, before, after}; None = absent in that build (at most MAX_MOVED)
    counts_before: dict
    counts_after: dict
    moved_total: int = 0                 # ops that moved (moved lists the first MAX_MOVED by name)


ALL_PHASES = "all"           # the phase of rows whose runs are one phase (or with no phase column)


@dataclass
class FactChange:
    """Stored facts about the program or environment (metadata keys, the HTP clock) that differ
    between two consecutive builds (each as its first file in order)."""
    build: str
    previous_build: str
    changed: list[dict]                  # {name, before, after}; None = not recorded for that build


@dataclass
class Series:
    model: str
    soc: str
    builds: list[BuildPoint]
    session_sd_pct: float | None         # between-session spread measured from the series (log SD as %)
    session_sd_df: int
    tests: int                           # m of the Bonferroni correction (latency)
    changes: list[dict] = field(default_factory=list)   # {build, previous_build, change_pct, p_value, verdict}
    op_changes: list[OpChange] = field(default_factory=list)
    placement_changes: list[PlacementChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    phase: str = ALL_PHASES              # the runs' phase (prefill / decode; all: one phase)
    fact_changes: list[FactChange] = field(default_factory=list)


@dataclass
class Trend:
    series: list[Series]
    alpha: float
    min_effect_pct: float
    schema: str = SCHEMA

    def to_dict(self) -> dict:
        return asdict(self)


# ---- strings without fixed-width copies ----------------------------------------------------------------
def text(a) -> np.ndarray:
    """Values as an object array of ``str`` (``astype(str)`` would make a fixed-width array as
    wide as the longest value, times every row: one long model name and millions of rows)."""
    a = np.asarray(a)
    if a.dtype.kind == "U":
        return a.astype(object)
    if a.dtype.kind == "O":
        return np.frompyfunc(str, 1, 1)(a).astype(object, copy=False) if a.size else a.astype(object)
    return a.astype(str).astype(object)


def factorize(a: np.ndarray) -> tuple[np.ndarray, list]:
    """(codes, distinct values in order of first appearance) of an array, comparing only
    neighbours and each run's first value in Python (rows of one file or series come in runs)."""
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(0, np.int64), []
    starts = np.r_[0, np.flatnonzero(a[1:] != a[:-1]) + 1]
    index: dict = {}
    seg = np.fromiter((index.setdefault(v, len(index)) for v in a[starts].tolist()), np.int64, starts.size)
    return np.repeat(seg, np.diff(np.r_[starts, a.size])), list(index)


# ---- sessions --------------------------------------------------------------------------------------
def session_p50s(file_hash: np.ndarray, execute: np.ndarray, latency_ms: np.ndarray) -> dict[str, tuple[float, int]]:
    """{file: (p50 ms over its steady runs, runs used)}: each file's runs in execute order, leading
    warm-up runs dropped (``stats.leading_warmup``, the rule of ``diff`` and ``llm``)."""
    out = {}
    codes, names = factorize(text(file_hash))
    order = np.lexsort((execute, codes))
    fc, lat = codes[order], latency_ms[order]
    if fc.size == 0:
        return out
    cuts = np.flatnonzero(fc[1:] != fc[:-1]) + 1
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, fc.size]):
        one = _steady_p50(lat[lo:hi])
        if one is not None:
            out[names[fc[lo]]] = one
    return out


def _steady_p50(lat: np.ndarray) -> tuple[float, int, float, float] | None:
    """(p50, runs, first quartile, third quartile) of the steady runs (ms); None without one."""
    x = lat[np.isfinite(lat)]
    x = x[leading_warmup(x):]
    if x.size and median(x) > 0:
        q1, q3 = np.quantile(x, [0.25, 0.75])
        return float(median(x)), int(x.size), float(q1), float(q3)
    return None


def session_p50(execute: np.ndarray, latency_ms: np.ndarray) -> tuple[float, int] | None:
    """One file's (p50 ms over its steady runs, runs used), None without a timed run: the rule of
    :func:`session_p50s` for one file, so a reader can summarise each file as it reads it."""
    one = session_summary(execute, latency_ms)
    return None if one is None else one[:2]


def session_summary(execute: np.ndarray, latency_ms: np.ndarray) -> tuple[float, int, float, float] | None:
    """:func:`session_p50` and the quartiles of the same steady runs (the build table's IQR)."""
    order = np.argsort(np.asarray(execute, np.int64), kind="stable")
    return _steady_p50(np.asarray(latency_ms, np.float64)[order])


@dataclass(frozen=True)
class Session:
    """One collected file of a series, summarised: its p50 over steady runs (None: no timed run)."""
    file: str
    model: str
    soc: str
    build: str
    order_key: str
    p50_ms: float | None
    runs: int
    phase: str = ALL_PHASES              # the file's runs of this phase only
    q1_ms: float | None = None           # quartiles of its steady runs (None: not summarised)
    q3_ms: float | None = None
    also_builds: tuple = ()              # other build labels of the same bytes (collect --also-label)
    facts: tuple = ()                    # sorted (name, value) strings the dataset stores about the file


def build_order(keys_by_build: dict[str, list[str]]) -> list[str]:
    """Builds ordered by their smallest order key: numerically when every key is a number."""
    def num(s):
        try:
            v = float(s)
            return v if math.isfinite(v) else None
        except (TypeError, ValueError):
            return None

    numeric = all(num(k) is not None for ks in keys_by_build.values() for k in ks)
    first = {b: min(ks, key=num) if numeric else min(ks) for b, ks in keys_by_build.items()}
    return sorted(first, key=lambda b: ((num(first[b]) if numeric else first[b]), b))


# ---- the change test ---------------------------------------------------------------------------------
def detect(build_of_session: np.ndarray, y: np.ndarray, n_builds: int, alpha_per_test: float,
           min_effect_pct: float) -> tuple[list[dict], list[int]]:
    """Sequential test over builds 0..n_builds-1 of log values ``y`` (one per session, build index
    in ``build_of_session``). Returns per build {change_pct, p_value, verdict, significant_at} and
    the segment start of each build.

    A build whose sessions alone are not enough (one session, a small step) is often found one or
    two builds later, against a baseline it now belongs to: once build d is significant, the
    change is placed at the split of the builds since the baseline began that fits two levels
    best (least squares), and the baseline restarts there. ``significant_at`` names d."""
    results = [{"change_pct": None, "p_value": None, "verdict": "not tested", "significant_at": None,
                "lo_pct": None, "hi_pct": None} for _ in range(n_builds)]
    seg_of = [0] * n_builds
    start = 0
    for b in range(n_builds):
        cur = y[build_of_session == b]
        base_mask = (build_of_session >= start) & (build_of_session < b)
        base = y[base_mask]
        n_base_builds = len(np.unique(build_of_session[base_mask]))
        seg_of[b] = start
        if not (cur.size and n_base_builds >= MIN_BASELINE_BUILDS and base.size >= MIN_BASELINE_SESSIONS):
            continue
        diff, p = _t_test(base, cur)
        change = (math.exp(diff) - 1) * 100
        results[b].update(change_pct=change, p_value=p, verdict="no change")
        if not (p < alpha_per_test and abs(change) >= min_effect_pct):
            continue
        k = _best_split(build_of_session, y, start, b)
        before = y[(build_of_session >= start) & (build_of_session < k)]
        after = y[(build_of_session >= k) & (build_of_session <= b)]
        diff_k, p_k = _t_test(before, after)
        half = _half_width(before, after)
        for j in range(k, b + 1):      # builds after k: now the new baseline, their old tests void
            seg_of[j] = k
            results[j].update(change_pct=None, p_value=None, verdict="not tested", significant_at=None)
        results[k].update(change_pct=(math.exp(diff_k) - 1) * 100, p_value=p_k,
                          verdict="regression" if diff > 0 else "improvement", significant_at=b,
                          lo_pct=(math.exp(diff_k - half) - 1) * 100, hi_pct=(math.exp(diff_k + half) - 1) * 100)
        start = k
    return results, seg_of


def _t_test(base: np.ndarray, cur: np.ndarray) -> tuple[float, float]:
    """(difference of means, two-sided p) with the variance of ``base`` alone (df = its size - 1)."""
    sd = float(np.std(base, ddof=1))
    diff = float(cur.mean() - base.mean())
    se = sd * math.sqrt(1 / cur.size + 1 / base.size)
    if se > 0:
        return diff, t_two_sided_p(diff / se, base.size - 1)
    return diff, (1.0 if diff == 0 else 0.0)


def _half_width(base: np.ndarray, cur: np.ndarray) -> float:
    """Half the 95% interval of the step ``cur.mean() - base.mean()`` (log scale) with the variance
    of ``base`` alone, as :func:`_t_test` tests it (0 without a spread)."""
    if base.size < 2:
        return float("nan")
    sd = float(np.std(base, ddof=1))
    return t975(base.size - 1) * sd * math.sqrt(1 / cur.size + 1 / base.size)


def _best_split(build_of_session: np.ndarray, y: np.ndarray, start: int, end: int) -> int:
    """The build k in (start, end] where two levels ([start, k) and [k, end]) fit best."""
    best, best_k = math.inf, end
    for k in range(start + 1, end + 1):
        a = y[(build_of_session >= start) & (build_of_session < k)]
        c = y[(build_of_session >= k) & (build_of_session <= end)]
        if a.size == 0 or c.size == 0:
            continue
        sse = float(((a - a.mean()) ** 2).sum() + ((c - c.mean()) ** 2).sum())
        if sse < best - 1e-15:
            best, best_k = sse, k
    return best_k


def possible_tests(n_builds: int) -> int:
    """How many builds of a series can be tested (the m of the Bonferroni correction)."""
    return max(1, n_builds - MIN_BASELINE_BUILDS)


# ---- one series --------------------------------------------------------------------------------------
def series_trend(model: str, soc: str, runs: dict, ops: dict | None, alpha: float = ALPHA,
                 min_effect_pct: float = MIN_EFFECT_PCT) -> Series:
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
    return _series(str(model), str(soc), sessions, build_of_file, key_of_file, ops, alpha, min_effect_pct)


def _series(model: str, soc: str, sessions: dict, build_of_file: dict, key_of_file: dict, ops: dict | None,
            alpha: float, min_effect_pct: float) -> Series:
    """The trend of one series from its files' sessions ({file: (p50 ms, runs)}; files of
    ``build_of_file`` missing there had no timed run)."""
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
        points.append(BuildPoint(b, min(keys_by_build[b]), int(sel.sum()), sum(sessions[f][1] for f in fs),
                                 p50, lo, hi, **{k: v for k, v in res[i].items()
                                                 if k not in ("significant_at", "lo_pct", "hi_pct")}, q1_ms=q1, q3_ms=q3))
    changes = [{"build": builds[i], "previous_build": builds[i - 1], "change_pct": r["change_pct"],
                "p_value": r["p_value"], "verdict": r["verdict"], "significant_at": builds[r["significant_at"]],
                "lo_pct": r["lo_pct"], "hi_pct": r["hi_pct"]}
               for i, r in enumerate(res) if r["verdict"] in ("regression", "improvement")]
    out = Series(model, soc, points, None if sd is None else (math.exp(sd) - 1) * 100, df, m, changes, notes=notes)
    if ops is not None and len(ops.get("file_hash", ())):
        level0 = _level0(ops, files)      # once for both (labels cost a pass over every op row)
        out.op_changes = op_changes(ops, files, b_of, builds, sessions, alpha, min_effect_pct, out.notes, level0)
        out.placement_changes = placement_changes(ops, files, b_of, builds, level0)
    if len(builds) < MIN_BASELINE_BUILDS + 1:
        out.notes.append(f"{len(builds)} build(s): a change is judged from the {MIN_BASELINE_BUILDS + 1}rd build on "
                         f"(the baseline needs {MIN_BASELINE_BUILDS} builds and {MIN_BASELINE_SESSIONS} sessions)")
    return out


def _level0(ops: dict, files: list[str]) -> tuple:
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
               alpha: float, min_effect_pct: float, notes: list | None = None, level0=None) -> list[OpChange]:
    """Ops (level 0, time units, at least SUBSTANTIAL_SHARE of the latency in the first build)
    whose per-session p50 changed significantly; Bonferroni over ops x builds. At most
    MAX_OP_CANDIDATES ops (the largest median shares) are tested, so a series whose ops claim
    more than the whole latency costs bounded work (a note says so)."""
    idx, f_s, label = level0 if level0 is not None else _level0(ops, files)
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
            if r["verdict"] in ("regression", "improvement"):
                out.append(OpChange(str(lab), None if place is None else str(place), builds[i], builds[i - 1],
                                    r["change_pct"], r["p_value"], r["verdict"], builds[r["significant_at"]]))
    return sorted(out, key=lambda c: (builds.index(c.build), -abs(c.change_pct)))


def placement_changes(ops: dict, files: list[str], b_of: np.ndarray, builds: list[str],
                      level0=None) -> list[PlacementChange]:
    """Between consecutive builds (each as its first session), the ops whose backend changed,
    appeared or vanished, and the op count per backend."""
    idx, f_s, label = level0 if level0 is not None else _level0(ops, files)
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
        moved = [{"op": k, "before": a.get(k, None), "after": b.get(k, None)}
                 for k in sorted(set(a) | set(b)) if a.get(k, "<absent>") != b.get(k, "<absent>")]
        if moved:
            out.append(PlacementChange(builds[i], builds[i - 1], moved[:MAX_MOVED], _counts(a), _counts(b), len(moved)))
    return out


def _counts(placements: dict) -> dict:
    out: dict = {}
    for p in placements.values():
        out[p or "none"] = out.get(p or "none", 0) + 1
    return dict(sorted(out.items()))


def trend(runs: dict, ops: dict | None = None, alpha: float = ALPHA, min_effect_pct: float = MIN_EFFECT_PCT) -> Trend:
    """One :class:`Series` per model x SoC x phase found in ``runs`` (column dicts of numpy arrays;
    see :func:`series_trend`; ``phase`` optional), sorted by model, SoC, then phase."""
    rows = _series_rows(runs)
    op_rows = _series_rows(ops) if ops is not None else {}
    out = []
    for key in sorted(rows):
        r = {k: np.asarray(v)[rows[key]] for k, v in runs.items()}
        o = None
        if ops is not None:
            sel = op_rows.get(key, np.zeros(0, np.int64))
            o = {k: np.asarray(v)[sel] for k, v in ops.items()}
        out.append(series_trend(key[0], key[1], r, o, alpha, min_effect_pct))
        out[-1].phase = key[2]
    return Trend(out, alpha, min_effect_pct)


def trend_of_sessions(sessions: list[Session], ops: dict | None = None, alpha: float = ALPHA,
                      min_effect_pct: float = MIN_EFFECT_PCT) -> Trend:
    """:func:`trend` from files already summarised (:class:`Session`, e.g. by a reader that keeps
    one part in memory at a time): the same series, tests and changes as from the rows."""
    by_series: dict[tuple[str, str, str], list[Session]] = {}
    for x in sessions:
        by_series.setdefault((x.model, x.soc, x.phase), []).append(x)
    op_rows = _series_rows(ops) if ops is not None else {}
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
        out.append(_series(mo, so, done, build_of_file, key_of_file, o, alpha, min_effect_pct))
        out[-1].phase = ph
        out[-1].notes.extend(_label_notes(xs))
        out[-1].fact_changes = fact_changes(xs, [p.build for p in out[-1].builds])
    return Trend(out, alpha, min_effect_pct)


MAX_LABEL_NOTES = 20
MAX_FACT_CHANGES = 20        # names listed per build change


def fact_changes(xs: list[Session], builds: list[str]) -> list[FactChange]:
    """Between consecutive builds (each as its first file by order key), the stored facts that differ."""
    first: dict[str, Session] = {}
    for x in sorted(xs, key=lambda x: (x.order_key, x.file)):
        first.setdefault(x.build, x)
    out = []
    for prev, cur in zip(builds, builds[1:]):
        if prev not in first or cur not in first:
            continue
        a, b = dict(first[prev].facts), dict(first[cur].facts)
        changed = [{"name": k, "before": a.get(k), "after": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        if changed:
            out.append(FactChange(cur, prev, changed[:MAX_FACT_CHANGES]))
    return out


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


def phase_values(cols: dict, n: int) -> np.ndarray:
    """The rows' phase (object array): ``cols["phase"]`` with null as ``all``; all rows ``all``
    without the column (rows collected before phases were columns)."""
    if "phase" not in cols:
        return np.full(n, ALL_PHASES, object)
    a = np.asarray(cols["phase"], object)
    return np.where(np.equal(a, None), ALL_PHASES, text(a)).astype(object) if a.size else a


def _series_rows(cols: dict) -> dict[tuple[str, str, str], np.ndarray]:
    """{(model, soc, phase): row indices}, grouped by codes (no per-series scan of every row)."""
    m_codes, models = factorize(text(cols["model"]))
    s_codes, socs = factorize(text(cols["soc"]))
    p_codes, phases = factorize(phase_values(cols, m_codes.size))
    order = np.lexsort((p_codes, s_codes, m_codes))      # stable: rows keep their order within a series
    if not order.size:
        return {}
    m_o, s_o, p_o = m_codes[order], s_codes[order], p_codes[order]
    bounds = np.r_[0, np.flatnonzero((m_o[1:] != m_o[:-1]) | (s_o[1:] != s_o[:-1]) | (p_o[1:] != p_o[:-1])) + 1,
                   order.size]
    return {(models[m_codes[order[lo]]], socs[s_codes[order[lo]]], phases[p_codes[order[lo]]]): order[lo:hi]
            for lo, hi in zip(bounds[:-1], bounds[1:])}
