"""units.py: the one place durations, clocks and sizes are converted."""
from __future__ import annotations

import numpy as np
import pytest

from etscope import units


def test_time_conversions_keep_the_type_and_round_trip():
    a = np.array([1.0, 2_500_000.0, np.nan])
    assert units.ns_to_ms(a).tolist()[:2] == [1e-6, 2.5]
    assert isinstance(units.ns_to_ms(2_000_000), float) and units.ns_to_ms(2_000_000) == 2.0
    assert units.ns_to_us(1500) == 1.5 and units.us_to_ms(1500) == 1.5
    assert units.ms_to_us(1.5) == 1500 and units.ms_to_ns(1.5) == 1_500_000 and units.us_to_ns(2) == 2000
    x = 123456.789
    assert units.ms_to_ns(units.ns_to_ms(x)) == pytest.approx(x)


def test_ns_to_ms_in_place_gives_the_same_bits_in_the_same_array():
    a = np.random.default_rng(0).integers(0, 10 ** 12, 10_000).astype(np.float64)
    expected = units.ns_to_ms(a)
    out = units.ns_to_ms_in_place(a)
    assert out is a and np.array_equal(out.view(np.int64), expected.view(np.int64))


def test_clock_from_cycles_and_time():
    assert units.clock_mhz(1_000_000, 1000.0) == 1000.0            # 1M cycles in 1 ms: 1 GHz
    assert units.mhz_to_ghz(units.clock_mhz(1_000_000, 1000.0)) == 1.0
    assert units.ghz_to_mhz(1.5) == 1500.0


def test_rate_from_time_per_item():
    assert units.per_s_from_ms(4.0) == 250.0                        # 4 ms per token: 250 tokens/s
    a = np.array([0.5, 8.0])
    assert units.per_s_from_ms(a).tolist() == [2000.0, 125.0]


def test_to_ms_refuses_what_is_not_time():
    assert units.to_ms([2_000_000], units.NS).tolist() == [2.0]
    assert units.to_ms([2000], units.US).tolist() == [2.0]
    with pytest.raises(ValueError, match="cycles is not a time unit"):
        units.to_ms([1], units.CYCLES)
    with pytest.raises(ValueError, match="bytes is not a time unit"):
        units.to_us([1], units.BYTES)


def test_sizes_and_formatting():
    assert units.bytes_to_mb(2_500_000) == 2.5 and units.bytes_to_kb(1500) == 1.5
    assert units.fmt_value(1_500_000, units.NS) == "1.50 ms"
    assert units.fmt_value(1500, units.US) == "1.50 ms"
    assert units.fmt_value(1500, units.CYCLES) == "1,500 cycles"
    assert units.fmt_value(float("nan"), units.NS) == "n/a"
    assert units.fmt_bytes(2048) == "2.0 KiB"
    assert units.unit_from_suffix("Accelerator (execute) time (cycles)") == units.CYCLES
    assert units.unit_from_suffix("QNN (execute) time (us)") == units.US
