"""Running sums for tensor statistics and pair metrics that cannot overflow or underflow float64.

A debug tensor may hold values near 1e308 (or 1e-310): their squares and power sums leave float64's
range, and SNR, cosine, relative error, mean and std became inf, 0 or NaN (with numpy warnings and
a ``math domain error``). So values are summed in units of a power of two (multiplying by a power
of two is exact for normal numbers), one per quantity: while every magnitude lies within
``2**-SAFE_EXP .. 2**SAFE_EXP`` the unit stays 1 and the sums are exactly the plain ones; the first
chunk with values decides the unit (its largest magnitude when out of range), a later chunk
larger than the range moves it up and the sums made so far are rescaled.

Pairs: the candidate's and the reference's powers each have their own unit (so 1e200 against 1
keeps both: SNR -4000 dB, cosine 1), their dot product the product of the two, the error the larger
of the two. Ratios are computed from the scaled sums and the units' exponents, so SNR, cosine and
relative error are finite whenever the true value fits in float64 (relative error and MSE are inf
only when the true value exceeds it, e.g. values 1e300 apart).
"""
from __future__ import annotations

import math

import numpy as np

SAFE_EXP = 400          # squares of 2**400 summed over 2**62 elements stay below 2**1023
MIN_SCALE = 2.0 ** -1000   # a normal number whose inverse is finite (subnormal values scale up fine)
_LOG10_2 = math.log10(2.0)


def pow2_scale(m: float) -> float:
    """The power of two at or just below ``m`` (> 0, finite; so m / it < 2), at least ``MIN_SCALE``."""
    return max(math.ldexp(1.0, math.frexp(m)[1] - 1), MIN_SCALE)


class Scale:
    """A running power-of-two unit (see the module doc); ``fit`` per chunk."""

    def __init__(self):
        self.unit = 1.0
        self.started = False

    def fit(self, peak: float) -> float:
        """Adopt a chunk whose largest finite magnitude is ``peak``: returns old unit / new unit
        (1.0 when unchanged), the factor for values already summed in units of it."""
        if not (peak > 0.0 and math.isfinite(peak)):
            return 1.0
        lo, hi = math.ldexp(1.0, -SAFE_EXP), math.ldexp(1.0, SAFE_EXP)
        new = self.unit
        if not self.started:             # the first values decide: 1 unless out of range
            self.started = True
            if not (lo <= peak <= hi):
                new = pow2_scale(peak)
        elif peak > self.unit * hi:      # only ever up: later smaller values fit or are negligible
            new = pow2_scale(peak)
        f = self.unit / new
        self.unit = new
        return f

    @property
    def inverse(self) -> float:
        return 1.0 / self.unit


def peak(a: np.ndarray) -> float:
    """Largest magnitude of a finite array (0 when empty)."""
    return float(np.max(np.abs(a))) if a.size else 0.0


def _rescaled(v: float, f: float, power: int) -> float:
    """``v * f**power`` (v is 0 until values were summed; then units only grow: f <= 1)."""
    return v * f ** power if v and f != 1.0 else v


class PairSums:
    """cc = sum(a*a), rr = sum(b*b), dot = sum(a*b), dd = sum((a-b)**2), max |a-b|, each in its unit."""

    def __init__(self):
        self.a, self.b, self.d = Scale(), Scale(), Scale()
        self.cc = self.rr = self.dot = self.dd = 0.0
        self.max_abs = 0.0

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        pa, pb = peak(a), peak(b)
        fa, fb, fd = self.a.fit(pa), self.b.fit(pb), self.d.fit(max(pa, pb))
        self.cc = _rescaled(self.cc, fa, 2)
        self.rr = _rescaled(self.rr, fb, 2)
        self.dot = _rescaled(_rescaled(self.dot, fa, 1), fb, 1)
        self.dd = _rescaled(self.dd, fd, 2)
        sa = a if self.a.unit == 1.0 else a * self.a.inverse
        sb = b if self.b.unit == 1.0 else b * self.b.inverse
        d = (a - b) if self.d.unit == 1.0 else a * self.d.inverse - b * self.d.inverse
        self.cc += float(np.dot(sa, sa))
        self.rr += float(np.dot(sb, sb))
        self.dot += float(np.dot(sa, sb))
        self.dd += float(np.dot(d, d))
        if d.size:
            self.max_abs = max(self.max_abs, float(np.abs(d).max()) * self.d.unit)

    @property
    def plain(self) -> bool:
        """Every unit 1: the sums are the plain float64 sums."""
        return self.a.unit == self.b.unit == self.d.unit == 1.0

    def log10_ratio(self, num: float, num_unit: float, den: float, den_unit: float) -> float:
        """log10((num * num_unit**2) / (den * den_unit**2)) for num, den > 0."""
        return (math.log10(num) - math.log10(den)
                + 2.0 * _LOG10_2 * (math.frexp(num_unit)[1] - math.frexp(den_unit)[1]))

    def cosine(self) -> float:
        cc, rr, dot = self.cc, self.rr, self.dot
        if cc == 0.0 and rr == 0.0:
            return 1.0
        if cc == 0.0 or rr == 0.0:
            return 0.0
        prod = cc * rr
        if self.plain and 1e-300 < prod < 1e300:
            return dot / math.sqrt(prod)
        return max(-1.0, min(1.0, dot / (math.sqrt(cc) * math.sqrt(rr))))

    def snr_db(self) -> float:
        if self.dd == 0.0:
            return math.inf
        if self.rr == 0.0:
            return -math.inf
        if self.plain:
            ratio = self.rr / self.dd
            if 0.0 < ratio < math.inf:
                return 10.0 * math.log10(ratio)
        return 10.0 * self.log10_ratio(self.rr, self.b.unit, self.dd, self.d.unit)

    def rel_err(self) -> float:
        if self.dd == 0.0:
            return 0.0
        if self.rr == 0.0:
            return math.inf
        if self.plain:
            ratio = self.dd / self.rr
            if 0.0 < ratio < math.inf:
                return math.sqrt(ratio)
        e = 0.5 * self.log10_ratio(self.dd, self.d.unit, self.rr, self.b.unit)
        return math.inf if e > 308.0 else 10.0 ** e

    def mse(self, n: int) -> float:
        if not n:
            return 0.0
        u = self.d.unit
        return self.dd * u * u / n if self.dd else 0.0
