"""`etscope trend` as text (issue 37 item 5 of the trend part): placement changes as words
("XnnpackBackend 2 → 1 op, cpu 1 → 2 ops"), never a Python dict; the step with its interval; the
lines fit an 80-column terminal."""
from __future__ import annotations

import io
import re

from rich.console import Console

from etscope.render.trend_text import render_trend
from test_trend_page import REPR, two_series


def test_trend_text_in_words_at_80_columns():
    buf = io.StringIO()
    render_trend(two_series(), Console(file=buf, width=80, force_terminal=False, color_system=None))
    out = buf.getvalue()
    assert not REPR.search(out) and "{'" not in out, out
    assert "ops per backend XnnpackBackend 2 → 1 op, cpu 1 → 2 ops" in " ".join(out.split())
    assert re.search(r"regression: p50 \+1\d\.\d% \(95% interval \+\d+\.\d% to \+\d+\.\d%\)", " ".join(out.split()))
    assert max(len(line) for line in out.splitlines()) <= 80
