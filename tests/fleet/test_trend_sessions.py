"""trend from files summarised one part at a time (``trend_of_sessions``, what ``etscope trend``
reads) is the trend of the rows (``trend``), on generated series with changes, moved ops and two
series; and a series whose ops claim more than the whole latency tests at most MAX_OP_CANDIDATES."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.diff import trend as T
from etscope.render.json import to_jsonable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from trend_series import series  # noqa: E402


def _sessions(runs: dict) -> list:
    out = []
    fh = np.asarray(runs["file_hash"]).astype(str)
    for f in dict.fromkeys(fh.tolist()):
        sel = fh == f
        i = int(np.flatnonzero(sel)[0])
        one = T.session_summary(np.asarray(runs["execute"])[sel], np.asarray(runs["latency_ms"])[sel])
        out.append(T.Session(f, str(runs["model"][i]), str(runs["soc"][i]), str(runs["build"][i]),
                             str(runs["order_key"][i]), None if one is None else one[0], 0 if one is None else one[1],
                             q1_ms=None if one is None else one[2], q3_ms=None if one is None else one[3]))
    return out


def _cat(a: dict, b: dict) -> dict:
    return {k: np.concatenate([np.asarray(a[k]), np.asarray(b[k])]) for k in a}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sessions_give_the_trend_of_the_rows(seed):
    r1, o1 = series(seed, builds=10, change=(0, 1.3, 6), moved=(2, 4), model="m1", soc="s")
    r2, o2 = series(seed + 10, builds=7, model="m2", soc="s")
    runs, ops = _cat(r1, r2), _cat(o1, o2)
    want = to_jsonable(T.trend(runs, ops))
    got = to_jsonable(T.trend_of_sessions(_sessions(runs), ops))
    assert got == want
    assert want["series"][0]["changes"] and want["series"][0]["placement_changes"]


def test_ops_beyond_the_cap_are_noted_not_tested():
    runs, ops = series(4, builds=6)
    n = T.MAX_OP_CANDIDATES + 50
    fh = np.asarray(ops["file_hash"]).astype(str)
    extra = {k: [] for k in ops}
    for f in dict.fromkeys(fh.tolist()):
        i = int(np.flatnonzero(fh == f)[0])
        for j in range(n):
            for k in ops:
                extra[k].append(ops[k][i])
            extra["name"][-1] = f"op_{j}"
            extra["instruction_id"][-1] = 1000 + j
    ops = _cat(ops, {k: np.asarray(v) for k, v in extra.items()})
    s = T.trend_of_sessions(_sessions(runs), ops).series[0]
    assert any(f"the {T.MAX_OP_CANDIDATES} largest are tested" in note for note in s.notes)
