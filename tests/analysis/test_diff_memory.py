"""`etscope diff` memory stays bounded whatever the run count (issue 13, item 5): the bootstrap
once held a resamples x runs matrix (40k runs, 800 kB of ETDump -> 1.3 GB). Peak RSS of the whole
command is measured in a child process (ru_maxrss from wait4)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.diff import intervals as diff

ROOT = Path(__file__).resolve().parents[2]


def _many_run_etdump(path: Path, runs: int, seed: int) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import fuzz_harness

    rng = np.random.default_rng(seed)
    lat = rng.integers(90_000, 110_000, runs)
    ev = [{"name": "Default", "events": [("P", "Method::init", -1, 0, None, None, None, 10, 20)]}]
    t = 1_000
    for d in lat.tolist():
        ev.append({"name": "Execute", "events": [("P", "Method::execute", -1, 0, None, None, None, t, t + d)]})
        t += d + 1_000
    data = fuzz_harness.build_etdump(ev)
    path.write_bytes(data)
    return len(data)


def _peak_rss_mb(args, tmp_path) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        p = subprocess.Popen([sys.executable, "-m", "etscope.cli", *args], stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss / 1024, (tmp_path / "err").read_text()[-500:]


def test_bootstrap_medians_are_drawn_in_bounded_blocks(monkeypatch):
    # Same draws whatever the block size: the chunking changes memory, not the answer.
    v = np.random.default_rng(3).normal(100, 5, 1001)
    whole = diff.bootstrap_medians(v, 200, np.random.default_rng(7))
    monkeypatch.setattr(diff, "BOOTSTRAP_CHUNK_VALUES", 1001 * 7)
    seen = []

    class Spy:
        def __init__(self, rng):
            self.rng = rng

        def integers(self, lo, hi, size):
            seen.append(int(np.prod(size)))
            return self.rng.integers(lo, hi, size)

    chunked = diff.bootstrap_medians(v, 200, Spy(np.random.default_rng(7)))
    assert max(seen) <= 1001 * 7
    assert np.allclose(np.sort(whole), np.sort(chunked), rtol=0.02)  # same distribution


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs wait4")
def test_diff_of_40k_run_etdumps_stays_within_the_memory_budget(tmp_path):
    pytest.importorskip("flatbuffers")
    a = tmp_path / "a.etdump"
    size = _many_run_etdump(a, 40_000, 1)   # compared with itself: the bootstrap runs all the same
    base_rc, base_mb, _ = _peak_rss_mb(["summary", "--json", str(a)], tmp_path)   # the interpreter + numpy + etscope
    rc, peak_mb, err = _peak_rss_mb(["diff", "--json", str(a), str(a)], tmp_path)
    assert base_rc == 0 and rc == 0, err
    # SECURITY.md's budget (50 x input + 50 MB; of one input, though diff reads it twice) on top of what
    # loading one file costs.
    budget = base_mb + (50 * size) / 2 ** 20 + 50
    assert peak_mb < budget, (peak_mb, base_mb, size)
    print(f"diff of a 40k-run ETDump with itself: peak RSS {peak_mb:.0f} MB (summary of one: {base_mb:.0f} MB)")
