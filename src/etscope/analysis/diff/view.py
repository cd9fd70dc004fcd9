"""What a diff page (``etscope diff --html``) and the report's "Compared with base" section show:
the result of ``analysis.diff.compare.compare`` with the per-run ``Method::execute`` latency of both sides
(the diff result has only their p50), the options used and the input paths."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from etscope import units


@dataclass
class DiffView:
    diff: dict                 # analysis.diff.compare.compare
    series: dict | None        # base / new: ms per run; sessions: runs per session; warmup: indices;
                               # a phase-split diff: {"phases": {name: that, of the phase's runs}}
    inputs: dict[str, str]
    options: dict = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)   # base / new: file name(s), for titles


def _label(paths: list[str]) -> str:
    """``a.etdump``, or ``a.etdump + 2 more sessions``: the file names a title shows."""
    names = [os.path.basename(p) or p for p in paths]
    if not names:
        return ""
    more = len(names) - 1
    return names[0] + (f" + {more} more session{'s' if more > 1 else ''}" if more else "")


def _paths(v) -> list[str]:
    return [str(x) for x in v] if isinstance(v, (list, tuple)) else [str(v)]


def _sessions(p) -> list:
    return [] if p is None else list(p) if isinstance(p, (list, tuple)) else [p]


def _series(diff: dict, base, new, runs: dict | None = None) -> dict:
    """ms per run of each side (its sessions one after the other), runs per session, and the
    indices of the leading warm-up runs the comparison left out. ``runs``: per side, per session,
    the runs to show (a phase's); None: every run."""
    dropped = (diff.get("latency") or {}).get("warmup_runs_dropped") or {}
    series: dict = {"base": [], "new": [], "sessions": {}, "warmup": {}}
    for side, p in (("base", base), ("new", new)):
        vals: list = []
        warm: list[int] = []
        lens: list[int] = []
        drop = dropped.get(side) if isinstance(dropped, dict) else None
        picks = (runs or {}).get(side) if runs is not None else None
        k = 0         # sessions that have these runs (the comparison's warm-up counts are per such session)
        for i, q in enumerate(_sessions(p)):
            lat = np.asarray(q.runs["latency_ns"])
            if picks is not None:
                sel = [int(r) for r in (picks[i] if i < len(picks) else []) if 0 <= int(r) < len(lat)]
                if not sel:
                    continue
                lat = lat[sel]
            w = int(drop[k]) if isinstance(drop, list) and k < len(drop) and drop[k] else 0
            k += 1
            warm += range(len(vals), len(vals) + min(w, len(lat)))
            vals += [float(x) for x in units.to_ms(lat, units.NS)]
            lens.append(len(lat))
        series[side], series["sessions"][side], series["warmup"][side] = vals, lens, warm
    return series


def diff_view(diff: dict, base=None, new=None, options: dict | None = None) -> DiffView:
    """``base`` / ``new``: the Profiles compared, or lists of Profiles (sessions; their runs are
    concatenated in order). ``series``: ``base`` / ``new`` (ms per run), ``sessions`` (runs per
    session) and ``warmup`` (indices of the leading warm-up runs the analysis left out, from
    ``latency.warmup_runs_dropped``)."""
    series = None
    if base is not None or new is not None:
        phases = [e for e in diff.get("phases") or [] if e.get("latency")]
        if phases:      # each phase's own runs (``runs``: its run indices per session of a side)
            series = {"phases": {e["name"]: _series(e, base, new, e.get("runs")) for e in phases}}
        else:
            series = _series(diff, base, new)
    # The CLI gives each side's ETDumps as a list (one per session): shown as the paths, not a repr.
    given = {str(k): _paths(v) for k, v in (diff.get("inputs") or {}).items()}
    inputs = {k: ", ".join(v) for k, v in given.items()}
    labels = {}
    for side, p in (("base", base), ("new", new)):
        sess = _sessions(p)
        for k, v in (sess[0].sources.items() if sess else ()):
            inputs.setdefault(side if k == "etdump" else f"{side} {k}", str(v))
        if len(sess) > 1:
            inputs.setdefault(f"{side} sessions", str(len(sess)))
        files = given.get(side) or [q.sources["etdump"] for q in sess if q.sources.get("etdump")]
        labels[side] = _label(files) or side
    return DiffView(diff=diff, series=series, inputs=inputs, options=dict(options or {}), labels=labels)
