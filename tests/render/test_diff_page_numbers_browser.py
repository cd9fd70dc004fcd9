"""Issue 33 item 1: every number the diff page shows comes from the analysis, over the runs the
verdict uses. The page used to say two base p50s at once (verdict cards: the sessions pooled; the
steady-runs table: session 1 alone, because the browser recomputed quantiles from a per-run series
cut at 5,000 runs). Here a multi-session pair whose first base session alone has more than 5,000
runs (synthetic ETDumps written below: base session 1 uniform over 1-2 ms, session 2 at 3 ms, so the
pooled p50 is not session 1's) is opened in headless Chromium and every p50 on the page (verdict
cards, runs-table, the chart's p50 labels) must equal ``diff --json``'s, as must the table's other
statistics equal the steady runs' own."""
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from views_helpers import open_report

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))


def _etdump(path: Path, latencies_ms: list[float]) -> Path:
    """An ETDump of one Execute run per latency: Method::execute and one CPU op (an add) inside it."""
    from generators import build_etdump_shared

    runs, t = [], 0
    for ms in latencies_ms:
        ns = int(round(ms * 1e6))
        runs.append(dict(name="Execute", events=[
            ("P", "Method::execute", None, None, None, None, t, t + ns),
            ("P", "OPERATOR_CALL", 0, 0, None, None, t + 10, t + ns - 10),
            ("P", "native_call_add.out", 0, 0, None, None, t + 10, t + ns - 10)]))
        t += ns + 1000
    path.write_bytes(build_etdump_shared(runs))
    return path


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    pytest.importorskip("flatbuffers")
    d = tmp_path_factory.mktemp("synthetic_sessions")
    rng = random.Random(33)
    return {
        "base1": _etdump(d / "synthetic_base_s1.etdump", [1.0 + rng.random() for _ in range(6000)]),
        "base2": _etdump(d / "synthetic_base_s2.etdump", [3.0 + rng.random() * 0.01 for _ in range(3000)]),
        "new1": _etdump(d / "synthetic_new_s1.etdump", [1.2 + rng.random() for _ in range(400)]),
        "new2": _etdump(d / "synthetic_new_s2.etdump", [1.3 + rng.random() for _ in range(400)]),
    }


def _card_value(page, name: str) -> float:
    return float(page.locator(f'#diff-verdict .stat[data-stat="{name}"]').get_attribute("data-value"))


def test_page_numbers_are_the_json_numbers_for_several_sessions(browser, tmp_path, sessions):
    out = tmp_path / "d.html"
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(sessions["base1"]), str(sessions["new1"]),
                           "--base-also", str(sessions["base2"]), "--new-also", str(sessions["new2"]),
                           "--json", "--html", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lat = json.loads(proc.stdout)["latency"]
    assert lat["base_sessions"] == 2 and lat["new_sessions"] == 2
    # The pooled p50 is not session 1's: a page reading session 1 alone would show another number.
    s1 = subprocess.run([sys.executable, "-m", "etscope.cli", "diff", str(sessions["base1"]), str(sessions["new1"]),
                         "--json"], capture_output=True, text=True)
    assert abs(json.loads(s1.stdout)["latency"]["base_p50_ms"] - lat["base_p50_ms"]) > 0.1
    messages, dialogs = [], []
    page = open_report(browser, out, messages, dialogs)
    try:
        assert not [m for m in messages if m[0] in ("error", "pageerror", "request")]
        # One base p50 on the page: the verdict card's and the steady-runs table's (the first card,
        # the table's first row: read as any version of the page lays them out).
        card = page.locator("#diff-verdict .cards .stat").first.locator(".v").inner_text()
        table = page.locator("#diff-runs table.diff-run-stats tr").nth(1).locator("td.p50").inner_text()
        assert table == card, f"steady-runs table says base p50 {table}, the verdict card {card}"
        # the verdict cards: the analysis' p50s, as the JSON has them
        assert _card_value(page, "base-p50") == lat["base_p50_ms"]
        assert _card_value(page, "new-p50") == lat["new_p50_ms"]
        cards = {side: page.locator(f'#diff-verdict .stat[data-stat="{side}-p50"] .v').inner_text()
                 for side in ("base", "new")}
        # the steady-runs table: the same p50 (as text, formatted alike), over the same runs
        for side in ("base", "new"):
            row = page.locator(f'#diff-runs table.diff-run-stats tr[data-side="{side}"]')
            assert row.locator("td.p50").inner_text() == cards[side]
            assert int(row.locator("td.steady").inner_text()) == lat[f"{side}_runs"]
            assert int(row.locator("td.warmup").inner_text()) == sum(lat["warmup_runs_dropped"][side])
            label = page.locator(f"#diff-runs svg.diff-series text.p50-label").all_text_contents()
            assert f"{side} p50 {cards[side]}" in label
        # the data the script drew from: the analysis' statistics of every steady run, not a cut series
        blob = page.eval_on_selector("#etscope-data", "e => JSON.parse(e.textContent)")
        for side, files in (("base", ("base1", "base2")), ("new", ("new1", "new2"))):
            stats = blob["series"]["stats"][side]
            assert stats["p50"] == lat[f"{side}_p50_ms"]
            assert blob["series"]["runs"][side] == sum(len(_runs(sessions[f])) for f in files)
            steady = np.concatenate([_runs(sessions[f])[w:] for f, w in zip(files, lat["warmup_runs_dropped"][side])])
            assert stats["steady_runs"] == steady.size
            assert stats["p10"] == pytest.approx(np.percentile(steady, 10), rel=1e-12)
            assert stats["p90"] == pytest.approx(np.percentile(steady, 90), rel=1e-12)
            assert stats["mean"] == pytest.approx(steady.mean(), rel=1e-12)
            assert (stats["min"], stats["max"]) == pytest.approx((steady.min(), steady.max()), rel=1e-12)
            assert sum(blob["series"]["histogram"][side]) == steady.size
        # drawn: every 2nd of the 9,000 base runs (both sessions), said so
        assert len(blob["series"]["base"]) == 4500 and blob["series"]["step"] == {"base": 2, "new": 1}
        assert "base: 4500 of its 9000 runs drawn (one in 2, every session)" in page.locator("#diff-runs .runs-cut").inner_text()
    finally:
        page.close()


def _runs(path: Path) -> np.ndarray:
    from etscope import profile as P

    return np.asarray(P.load(path).runs["latency_ns"], dtype=np.float64) / 1e6
