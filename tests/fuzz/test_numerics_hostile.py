"""``etscope numerics`` on hostile but VALID inputs (issue 31): each case from ``gen_numerics`` run
through the CLI in a child process: exit 0, or 2 with one line; no traceback, no Python/numpy
warning on stderr; CPU time and peak RSS within the numerics budget (``NUMERICS_BUDGET``, stated
in the notes' budget row: CPU 2 + 2 s per MB of all inputs, RSS 150 + 150 MB per MB).

Before the fixes: > 64 dims and a stride of 2**61 were numpy tracebacks; 1e200 vs 1 a ``math
domain error``; a zero point of 10**400 an ``OverflowError``; one debug handle shared by 16,000
nodes 29-49 s; 16,000 tensors over one 1 MB region 5-18 s.
"""
from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

import campaign as C
from gen_numerics import SHAPES, gen_numerics

NUMERICS_BUDGET = C.Budget(2.0, 2.0, 150.0, 150.0)     # CPU 2 + 2 s/MB, RSS 150 + 150 MB/MB


def _inputs_bytes(argv: list[str]) -> int:
    return sum(Path(a).stat().st_size for a in argv if a.startswith("/") and Path(a).is_file())


def run(argv: list[str], wall: float = 60.0):
    rc, wall_s, cpu, rss, err = C.run_child(argv, wall)
    size = _inputs_bytes(argv)
    problems = []
    if rc is None:
        problems.append(f"killed after {wall_s:.0f} s")
    elif rc not in (0, 2):
        problems.append(f"exit {rc}")
    if "Traceback" in err or "Warning" in err:
        problems.append("traceback or warning on stderr")
    if rc == 2 and len(err.strip().splitlines()) != 1:
        problems.append("error message is not one line")
    if cpu > NUMERICS_BUDGET.seconds(size):
        problems.append(f"cpu {cpu:.1f} s > {NUMERICS_BUDGET.seconds(size):.1f} s for {size} bytes")
    if rss > NUMERICS_BUDGET.rss_mb(size):
        problems.append(f"rss {rss:.0f} MB > {NUMERICS_BUDGET.rss_mb(size):.0f} MB")
    assert not problems, f"{argv}: {'; '.join(problems)}\n{err[-1500:]}"
    return rc, err


@pytest.mark.parametrize("seed", [0, 1])
def test_more_than_64_dims_is_one_line(tmp_path, seed):
    rc, err = run(gen_numerics(random.Random(seed), tmp_path, "many_dims"))
    assert rc == 2 and "dimensions" in err


@pytest.mark.parametrize("seed", range(4))
def test_a_stride_of_2_61_on_size_one_dims_is_read(tmp_path, seed):
    rc, _ = run(gen_numerics(random.Random(seed), tmp_path, "huge_stride"))
    assert rc == 0


@pytest.mark.parametrize("seed", range(3))
def test_1e200_against_1_gives_finite_metrics(tmp_path, seed):
    rc, _ = run(gen_numerics(random.Random(seed), tmp_path, "huge_values"))
    assert rc == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_zero_point_of_10_400_is_unavailable_not_a_crash(tmp_path, seed):
    rc, _ = run(gen_numerics(random.Random(seed), tmp_path, "huge_zero_point"))
    assert rc == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_one_debug_handle_over_16000_nodes_is_linear(tmp_path, seed):
    """Was 29 s (16,000 nodes, one tensor) to 49 s: every instruction gathered and sorted the
    16,000 nodes of its handle."""
    rc, _ = run(gen_numerics(random.Random(seed), tmp_path, "shared_handle"))
    assert rc == 0


@pytest.mark.parametrize("seed", range(4))
def test_16000_tensors_over_one_region_decode_it_once(tmp_path, seed):
    """Same region: decoded once (exit 0); overlapping distinct regions past 4 x the buffer:
    refused in one line."""
    rc, err = run(gen_numerics(random.Random(seed), tmp_path, "shared_region"))
    assert rc == 0 or "overlapping tensors" in err


@pytest.mark.parametrize("seed", range(2))
def test_thousands_of_nodes_from_one_source_pair_linearly(tmp_path, seed):
    rc, _ = run(gen_numerics(random.Random(seed), tmp_path, "shared_source"))
    assert rc == 0


@pytest.mark.parametrize("seed", range(4))
def test_hostile_tap_sidecars(tmp_path, seed):
    run(gen_numerics(random.Random(seed), tmp_path, "taps"))


@pytest.mark.parametrize("seed", range(6))
def test_plain_cases(tmp_path, seed):
    run(gen_numerics(random.Random(seed), tmp_path, "plain"))


def test_every_shape_is_generated(tmp_path):
    for k, shape in enumerate(SHAPES):
        argv = gen_numerics(random.Random(k), tmp_path / shape, shape)
        assert argv[0] == "numerics" and all(Path(a).is_file() for a in argv if a.startswith("/"))


# ---- values: the scaled sums against exact arithmetic ----------------------------------------------

def _metrics(tmp_path, cand, ref):
    from etscope.analysis.numerics.compare import compare
    from etscope.formats.debug_buffer import DebugBuffer
    from etscope.profile import load
    from gen_numerics import write_pair

    c = write_pair(tmp_path, "c", cand)
    r = write_pair(tmp_path, "r", ref)
    with DebugBuffer(c[1]) as bc, DebugBuffer(r[1]) as br:
        cmp = compare(load(c[0]), bc, load(r[0]), br, chunk=3)
    return [t.metrics for t in cmp.runs[0].tensors]


def test_huge_and_tiny_values_give_the_exact_metrics(tmp_path):
    n = 10
    m = _metrics(tmp_path, [np.full(n, 1e200), np.ones(n), np.full(n, 1e-310), np.full(n, 1e300)],
                 [np.ones(n), np.full(n, 1e200), np.full(n, 2e-310), np.full(n, -1e300)])
    # 1e200 vs 1: SNR 10 log10(1 / (1e200 - 1)**2) = -4000 dB, cosine 1, MSE 1e400 (past float64)
    assert m[0].snr_db == pytest.approx(-4000.0, abs=1e-9) and m[0].cosine == pytest.approx(1.0)
    assert math.isinf(m[0].mse) and m[0].rel_err == pytest.approx(1e200, rel=1e-12)
    assert m[0].max_abs == pytest.approx(1e200, rel=1e-12)
    # 1 vs 1e200: SNR 10 log10(1e400 / (1e200 - 1)**2) = 0 dB
    assert m[1].snr_db == pytest.approx(0.0, abs=1e-9) and m[1].rel_err == pytest.approx(1.0)
    # subnormals: 1e-310 vs 2e-310: SNR 10 log10(4) = 6.02 dB, cosine 1 (their squares underflow)
    assert m[2].snr_db == pytest.approx(10 * math.log10(4.0), rel=1e-3) and m[2].cosine == pytest.approx(1.0)
    # 1e300 vs -1e300: cosine -1, SNR 10 log10(1/4), max abs 2e300, MSE inf
    assert m[3].cosine == pytest.approx(-1.0) and m[3].snr_db == pytest.approx(10 * math.log10(0.25))
    assert m[3].max_abs == pytest.approx(2e300) and math.isinf(m[3].mse)


def test_huge_values_statistics(tmp_path):
    from etscope.analysis.numerics.tensors import numerics
    from etscope.formats.debug_buffer import DebugBuffer
    from etscope.profile import load
    from gen_numerics import write_pair

    x = np.array([1.7e308, -1.7e308, 1.7e308, 1e-310, 3.0])
    c = write_pair(tmp_path, "c", [x])
    with DebugBuffer(c[1]) as b:
        s = numerics(load(c[0]), b, chunk=2).rows[0].stats
    exact_mean = float(sum(map(_frac, x)) / len(x))
    assert s.mean == pytest.approx(exact_mean, rel=1e-12)
    mean = sum(map(_frac, x)) / len(x)
    exact_std = math.sqrt(float(sum((_frac(v) - mean) ** 2 for v in x) / len(x) / _frac(1e300) ** 2)) * 1e300
    assert s.std == pytest.approx(exact_std, rel=1e-12) and math.isfinite(s.std)


def _frac(v):
    from fractions import Fraction
    return Fraction(float(v))
