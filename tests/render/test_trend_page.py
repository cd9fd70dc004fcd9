"""The trend page's decisions, made in Python before any drawing (issue 37 item 4): y ticks at
round values covering every whisker, a unit per series (µs below 1 ms), every build labelled or
thinned by the stated rule, change points explained in words (the step with its interval, ops per
backend as words, never a Python dict), one table row per build."""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.diff import trend as T
from etscope.render.trend_html import labelled_builds, nice_ticks, trend_page, trend_page_data, unit_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from trend_series import series  # noqa: E402

REPR = re.compile(r"\{'[^']*': \d+")        # {'XnnpackBackend': 4 ...


def _cat(a: dict, b: dict) -> dict:
    return {k: np.concatenate([np.asarray(a[k]), np.asarray(b[k])]) for k in a}


def two_series():
    r1, o1 = series(1, builds=12, change=(0, 1.3, 6), moved=(2, 4), model="mv2", soc="sm8650")
    r2, o2 = series(2, builds=120, base_ms=0.2, change=(1, 0.7, 60), model="tiny", soc="sm8750")
    return T.trend(_cat(r1, r2), _cat(o1, o2))


@pytest.mark.parametrize("lo,hi", [(0.0106, 0.217), (18.3, 25.9), (195.2, 195.2), (0.001, 1000.0), (3.3, 3.31)])
def test_ticks_are_round_and_cover(lo, hi):
    ticks = nice_ticks(lo, hi)
    assert 2 <= len(ticks) <= 6 and ticks[0] <= lo and ticks[-1] >= hi
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(abs(mantissa - m) < 1e-6 for m in (1, 2, 2.5, 5)), ticks
    assert all(abs((b - a) - step) < step * 1e-6 for a, b in zip(ticks, ticks[1:]))


def test_unit_per_series():
    assert unit_for(0.217) == ("µs", 1000.0) and unit_for(25.0) == ("ms", 1.0) and unit_for(2500.0) == ("s", 0.001)


@pytest.mark.parametrize("n,forced", [(12, set()), (120, {60}), (500, {3, 250, 251}), (1, set())])
def test_label_rule(n, forced):
    shown, k = labelled_builds(n, forced)
    if k == 1:
        assert shown == list(range(n))
        return
    assert forced <= set(shown) and n - 1 in shown
    regular = [i for i in shown if i not in forced and i != n - 1]
    assert all(i % k == 0 for i in regular)
    must = forced | {n - 1}
    # every k-th build is labelled unless a forced label is closer than k
    for i in range(0, n, k):
        assert i in shown or any(abs(i - j) < k for j in must)
    assert all(abs(i - j) >= k for i in regular for j in must)


def test_page_data_explains_changes_in_words():
    t = two_series()
    d = trend_page_data(t, "ds")
    s0, s1 = d["series"]
    assert s0["unit"] == "ms" and s1["unit"] == "µs"
    assert len(s0["builds"]) == 12 and len(s1["builds"]) == 120
    for s, ser in zip(d["series"], t.series):
        lo = min(v for p in ser.builds for v in (p.lo_ms, p.q1_ms, p.p50_ms))
        hi = max(v for p in ser.builds for v in (p.hi_ms, p.q3_ms, p.p50_ms))
        k = 1000.0 if s["unit"] == "µs" else 1.0
        assert s["ticks"][0] <= lo * k and s["ticks"][-1] >= hi * k      # no whisker clipped
    reg = next(m for m in s0["markers"] if m["kind"] == "regression")
    assert reg["build"] == "c006"
    assert re.search(r"p50 \+1\d\.\d% \(95% interval \+\d+\.\d% to \+\d+\.\d%\)", reg["explain"][0])
    place = next(m for m in s0["markers"] if m["kind"] == "placement")
    assert "XnnpackBackend 2 → 1 op, cpu 1 → 2 ops" in place["explain"][0]
    html = trend_page(t, "ds")
    assert not REPR.search(html) and "Content-Security-Policy" in html


def test_markup_in_names_stays_in_the_json_blob():
    r, o = series(3, builds=5, model="<img src=x onerror=alert(1)>", soc="s</script>")
    html = trend_page(T.trend(r, o), "d")
    assert "<img src=x" not in html and "</script>\"" not in html


def test_wide_intervals_get_a_log_axis_that_holds_them():
    """Two builds of one session each (the spread from 1 df: intervals over several decades): a log
    axis, ticks at powers of ten in their own unit, every whisker inside, a note saying why."""
    xs = [T.Session("f1", "llama", "x86", "b1", "1", 1.45, 2, q1_ms=1.26, q3_ms=1.63),
          T.Session("f2", "llama", "x86", "b2", "2", 0.54, 9, q1_ms=0.49, q3_ms=1.44)]
    t = T.trend_of_sessions(xs)
    (s,) = trend_page_data(t)["series"]
    p = t.series[0].builds
    assert s["log"] and s["axis_title"] == "p50 latency (log scale)"
    k = 1.0 if s["unit"] == "ms" else 1000.0
    assert s["ticks"][0] <= min(b.lo_ms for b in p) * k and s["ticks"][-1] >= max(b.hi_ms for b in p) * k
    assert all(math.log10(t / s["ticks"][0]) == pytest.approx(round(math.log10(t / s["ticks"][0])))
               for t in s["ticks"])
    assert "1 ms" in s["tick_labels"] and any("µs" in x or "ns" in x for x in s["tick_labels"])
    assert any("1 degree(s) of freedom only" in n for n in s["notes"])
    assert [b["p50_text"] for b in s["builds"]] == ["1.45 ms", "0.54 ms"]
