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


def to_ms(values: np.ndarray | float, unit: int):
    """Time values to milliseconds. Only ns and us are time; anything else is refused."""
    if unit == NS:
        return np.asarray(values, dtype=np.float64) / 1e6
    if unit == US:
        return np.asarray(values, dtype=np.float64) / 1e3
    raise ValueError(f"{NAMES[unit]} is not a time unit; convert through an explicit clock estimate")


def to_us(values: np.ndarray | float, unit: int):
    """Time values to microseconds. Only ns and us are time; anything else is refused."""
    if unit == NS:
        return np.asarray(values, dtype=np.float64) / 1e3
    if unit == US:
        return np.asarray(values, dtype=np.float64)
    raise ValueError(f"{NAMES[unit]} is not a time unit; convert through an explicit clock estimate")


def fmt_value(value: float, unit: int) -> str:
    """Human text for one value in its true unit."""
    if value != value:  # NaN
        return "n/a"
    if unit == NS:
        return fmt_ms(value / 1e6)
    if unit == US:
        return fmt_ms(value / 1e3)
    if unit == CYCLES:
        return f"{value:,.0f} cycles"
    if unit == BYTES:
        return fmt_bytes(value)
    if unit == COUNT:
        return f"{value:,.0f}"
    return f"{value:,.0f} (unit unknown)"


def fmt_ms(ms: float) -> str:
    if ms != ms:
        return "n/a"
    a = abs(ms)
    if a >= 1000:
        return f"{ms / 1000:.2f} s"
    if a >= 1:
        return f"{ms:.2f} ms"
    if a >= 0.001:
        return f"{ms * 1000:.1f} µs"
    return f"{ms * 1e6:.0f} ns"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
