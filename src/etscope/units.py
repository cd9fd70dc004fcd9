"""Units are data: every value column carries one of these codes. Conversions live here only."""
from __future__ import annotations

import numpy as np

NS, US, CYCLES, BYTES, COUNT, UNKNOWN = range(6)
NAMES = ("ns", "us", "cycles", "bytes", "count", "unknown")

# QNN event names end in a unit suffix added by ExecuTorch's QnnProfiler (" (us)", " (bytes)",
# " (count)"); cycle events carry QNN's own "(cycles)" text. Nothing else is appended.
_SUFFIXES = ((" (us)", US), (" (bytes)", BYTES), (" (count)", COUNT), ("(cycles)", CYCLES))


def unit_from_suffix(name: str) -> int:
    for suffix, unit in _SUFFIXES:
        if name.endswith(suffix):
            return unit
    return UNKNOWN


# Conversions of numbers and numpy arrays alike (the type is kept): each is the one operation an
# inline conversion would do, so results are bit-identical to it.
def ns_to_ms(x):
    return x / 1e6


def ns_to_ms_in_place(a: np.ndarray) -> np.ndarray:
    """``ns_to_ms`` of a float array written over it (the same bits; no second array)."""
    return np.divide(a, 1e6, out=a)


def ns_to_us(x):
    return x / 1e3


def us_to_ms(x):
    return x / 1e3


def us_to_ns(x):
    return x * 1e3


def ms_to_us(x):
    return x * 1e3


def ms_to_ns(x):
    return x * 1e6


def per_s_from_ms(ms):
    """How many per second when each takes ``ms`` milliseconds (runs/s, tokens/s)."""
    return 1000.0 / ms


def clock_mhz(cycles, us):
    """The clock that runs ``cycles`` in ``us`` microseconds, in MHz (cycles per µs)."""
    return cycles / us


def mhz_to_ghz(x):
    return x / 1e3


def ghz_to_mhz(x):
    return x * 1e3


def bytes_to_kb(n):
    """Decimal kilobytes, as file sizes are shown (``fmt_bytes`` shows memory in KiB/MiB)."""
    return n / 1e3


def bytes_to_mb(n):
    """Decimal megabytes, as file sizes are shown."""
    return n / 1e6


def to_ms(values: np.ndarray | float, unit: int):
    """Time values to milliseconds. Only ns and us are time; anything else is refused."""
    if unit == NS:
        return ns_to_ms(np.asarray(values, dtype=np.float64))
    if unit == US:
        return us_to_ms(np.asarray(values, dtype=np.float64))
    raise ValueError(f"{NAMES[unit]} is not a time unit; convert through an explicit clock estimate")


def to_us(values: np.ndarray | float, unit: int):
    """Time values to microseconds. Only ns and us are time; anything else is refused."""
    if unit == NS:
        return ns_to_us(np.asarray(values, dtype=np.float64))
    if unit == US:
        return np.asarray(values, dtype=np.float64)
    raise ValueError(f"{NAMES[unit]} is not a time unit; convert through an explicit clock estimate")


def fmt_value(value: float, unit: int) -> str:
    """Human text for one value in its true unit."""
    if value != value:  # NaN
        return "n/a"
    if unit == NS:
        return fmt_ms(ns_to_ms(value))
    if unit == US:
        return fmt_ms(us_to_ms(value))
    if unit == CYCLES:
        return f"{value:,.0f} cycles"
    if unit == BYTES:
        return fmt_bytes(value)
    if unit == COUNT:
        return f"{value:,.0f}"
    return f"{value:,.0f} (unit unknown)"


def fmt_ms(ms: float | None) -> str:
    if ms is None or ms != ms:      # unknown (None) or NaN
        return "n/a"
    a = abs(ms)
    if a >= 1000:
        return f"{ms / 1000:.2f} s"
    if a >= 1:
        return f"{ms:.2f} ms"
    if a >= 0.001:
        return f"{ms * 1000:.1f} µs"
    return f"{ms * 1e6:.0f} ns"


def fmt_us(us: float) -> str:
    """Like fmt_ms from µs, but whole µs from 10 µs to 1 ms (QNN's µs values are whole): 46 µs."""
    if us == us and 10 <= abs(us) < 1000:
        return f"{us:,.0f} µs"
    return fmt_ms(us / 1000)


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
