"""A STATS tap (statistics reduced on the device) against the other side's full tensor.

ExecuTorch's ``STATS`` reducer (``devtools/intermediate_output_tap/_reducers.py``, 1.5.1) turns a
tensor into 13 float32 fields: min, max, mean, abs_max, abs_mean, std (population, as
sqrt|E[x^2] - E[x]^2|), rms, l1_norm, l2_norm, nan_count, inf_count, zero_count and p99_abs (the
ceil(n/100)-th largest |x|). The same fields are computed here from the reference tensor (float64;
chunked like every statistic, p99_abs by one partial sort, only for tensors up to ``P99_MAX``
elements) and set side by side with the tap's; the largest relative difference over the value
fields is reported. There is no divergence threshold for fields: the pair is shown, not judged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from etscope.analysis.numerics.identity import TensorId, TensorTap
from etscope.analysis.numerics.tensors import as_float
from etscope.formats.debug_buffer import chunks, decodable

STATS_FIELDS = ("min", "max", "mean", "abs_max", "abs_mean", "std", "rms", "l1_norm", "l2_norm", "nan_count",
                "inf_count", "zero_count", "p99_abs")
P99_MAX = 1 << 24
_COUNTS = ("nan_count", "inf_count", "zero_count")


@dataclass(frozen=True)
class FieldComparison:
    fields: tuple[tuple[str, float, float | None], ...]   # (field, tap value, reference value or None)
    worst: tuple[str, float] | None                        # (field, relative difference) over value fields

    def note(self) -> str:
        shown = ", ".join(f"{f} {a:.6g}/{'—' if b is None else f'{b:.6g}'}" for f, a, b in self.fields[:6])
        tail = (f"; largest relative difference {self.worst[1]:.3g} ({self.worst[0]})" if self.worst else "")
        return f"STATS tap vs the reference tensor's statistics (tap/reference): {shown}{tail}; not judged"


def reference_stats(view: np.ndarray, scalar_type: int, chunk: int) -> dict[str, float | None]:
    """The STATS fields of a tensor (see the module doc), in float64."""
    n = int(view.size)
    mn, mx = math.inf, -math.inf
    s = s2 = s1 = 0.0
    nan = inf = zero = 0
    for c in chunks(view, chunk):
        x = as_float(c, scalar_type)
        nan += int(np.count_nonzero(np.isnan(x)))
        inf += int(np.count_nonzero(np.isinf(x)))
        zero += int(np.count_nonzero(x == 0))
        with np.errstate(invalid="ignore", over="ignore"):
            if x.size:
                mn, mx = min(mn, float(np.min(x))), max(mx, float(np.max(x)))
            s += float(np.sum(x))
            s1 += float(np.sum(np.abs(x)))
            s2 += float(np.dot(x, x))
    if n == 0:
        return dict.fromkeys(STATS_FIELDS)
    mean, ms = s / n, s2 / n
    p99 = None
    if n <= P99_MAX:
        a = np.abs(as_float(np.asarray(view).reshape(-1), scalar_type))
        k = max(1, (n + 99) // 100)
        p99 = float(np.partition(a, n - k)[n - k])
    return {"min": mn, "max": mx, "mean": mean, "abs_max": max(abs(mn), abs(mx)), "abs_mean": s1 / n,
            "std": math.sqrt(abs(ms - mean * mean)), "rms": math.sqrt(ms), "l1_norm": s1, "l2_norm": math.sqrt(s2),
            "nan_count": float(nan), "inf_count": float(inf), "zero_count": float(zero), "p99_abs": p99}


def compare_fields(tap_values: np.ndarray, fields: tuple[str, ...], ref: dict[str, float | None]) -> FieldComparison:
    vals = [float(v) for v in np.asarray(tap_values, dtype=np.float64).reshape(-1)]
    rows, worst = [], None
    for f, a in zip(fields, vals):
        b = ref.get(f)
        rows.append((f, a, b))
        if b is None or f in _COUNTS or not (math.isfinite(a) and math.isfinite(b)):
            continue
        rel = abs(a - b) / max(abs(b), 1e-30) if a != b else 0.0
        if worst is None or rel > worst[1]:
            worst = (f, rel)
    return FieldComparison(tuple(rows), worst)


def reduced_tap_note(tap: TensorTap, c: TensorId, buf_c, pc, r: TensorId, buf_r, pr, chunk: int) -> str:
    """A reduced tap facing a full tensor (``numerics.compare``): STATS fields side by side, other
    reducers only named."""
    tapped, full, b_t, b_f, p_t, p_f = (c, r, buf_c, buf_r, pc, pr) if c.tap is tap else (r, c, buf_r, buf_c, pr, pc)
    st_t = int(p_t.etdump.tensors.columns["scalar_type"][tapped.index])
    st_f = int(p_f.etdump.tensors.columns["scalar_type"][full.index])
    if tap.reducer != "STATS" or tuple(tap.fields) != STATS_FIELDS or tapped.shape != (len(STATS_FIELDS),) \
            or not (decodable(st_t) and decodable(st_f)):
        return f"{tap.reducer} tap: statistics reduced on the device, not compared with a tensor"
    ref = reference_stats(b_f.array(p_f.etdump.tensors, full.index), st_f, chunk)
    vals = as_float(np.asarray(b_t.array(p_t.etdump.tensors, tapped.index)), st_t)
    note = compare_fields(vals, tap.fields, ref).note()
    return note if c.tap is tap else note.replace("(tap/reference)", "(candidate tensor/reference tap)")
