"""Session-level noise for `etscope diff`: is a change bigger than what re-running the same program
gives, is it localised to some ops, and are the two programs identical?

Two sessions (separate processes, or separate loads on a phone) of one unchanged program differ
by more than the runs inside one session do: clock and thermal state, load from other work, which
cores the threads land on. With one session per side that spread is unknown, so a whole-run change
is only called a regression/improvement when it is larger than the between-session allowance, or
when it is localised (some ops changed far beyond how the rest shifted). Otherwise the verdict is
``inconclusive``.

The allowances are measured (benchmarks/diff_false_alarms.py; method and numbers in
BENCHMARKS.md, "diff: false alarms on re-runs of one program"): 60 sessions of one XNNPACK CNN
on the 2-core shared VM that runs this project's tests, calibrated on half of the sessions and
checked on the other half. A phone (DVFS, thermal throttling, big/little cores) may differ either
way: measure it there and pass ``session_allowance_pct`` (``--session-allowance``).
"""
from __future__ import annotations

import math

import numpy as np

from etscope.arrays import median
from etscope import units
from etscope.analysis.diff.result import OpShift, ProgramIdentity, SessionNoise

# Two sessions of one program: the ratio of their p50 latencies stayed within x(1 + this/100) in
# 99% of the calibration pairs (BENCHMARKS.md).
SESSION_ALLOWANCE_PCT = 160.0
# One op's ratio against the common shift of the others (median of the ops' log ratios): 99% of
# the calibration pairs stayed within x(1 + this/100).
OP_ALLOWANCE_PCT = 200.0
# With several sessions per side the allowance also serves as a prior on the session spread,
# worth this many degrees of freedom next to the sessions' own: a few back-to-back sessions that
# happen to agree cannot claim a spread far below the measured one (BENCHMARKS.md).
PRIOR_DF = 2
SUBSTANTIAL_SHARE = 0.05   # ops below this share of the base p50 latency are not judged (µs timers)
OP_ALPHA = 0.01


def session_sd(allowance_pct: float) -> float:
    """SD of one session's log p50 implied by the allowance: the allowance is the 99th percentile
    of |log ratio| of two sessions, i.e. 2.576 SDs of a difference of two sessions."""
    return math.log(1 + allowance_pct / 100) / (2.576 * math.sqrt(2))


def op_shifts(samples_base: dict, samples_new: dict, base_latency_ms: float, p_value) -> tuple[OpShift, ...]:
    """Ratio new/base of the p50 of each instruction (DELEGATE_CALL or CPU op) present on both
    sides with at least SUBSTANTIAL_SHARE of the base latency; ``p_value(a, b)`` is the rank test."""
    rows = []
    for key, x in samples_base.items():
        y = samples_new.get(key)
        if y is None or x["role"] == "delegate_internal" or x["unit"] != "ns":
            continue
        a, b = x["values"][np.isfinite(x["values"])], y["values"][np.isfinite(y["values"])]
        if a.size == 0 or b.size == 0:
            continue
        pa, pb = float(median(a)), float(median(b))
        share = pa / units.ms_to_ns(base_latency_ms) if base_latency_ms else 0.0
        if pa <= 0 or pb <= 0 or share < SUBSTANTIAL_SHARE:
            continue
        rows.append((x["name"], x["placement"], pa, pb, pb / pa, share, p_value(a, b)))
    if not rows:
        return ()
    common = float(median([math.log(r[4]) for r in rows]))
    return tuple(OpShift(*r, vs_common=math.exp(math.log(r[4]) - common)) for r in rows)


def judge_one_session_each(change_pct: float, lo_pct: float, hi_pct: float, shifts: tuple[OpShift, ...],
                           allowance_pct: float, op_allowance_pct: float | None = None) -> SessionNoise:
    """Verdict for a change that is significant within the sessions, with one session per side.

    ``regression``/``improvement`` when even the near end of the 95% interval is beyond the
    between-session allowance (a ratio outside [1/(1+a), 1+a]), or when the change is localised:
    some op's ratio is beyond the op allowance from the common shift of the others (rank test
    p < OP_ALPHA) while another op is within it. Else ``inconclusive``."""
    band = 1 + allowance_pct / 100
    op_band = math.log(1 + (OP_ALLOWANCE_PCT if op_allowance_pct is None else op_allowance_pct) / 100)
    lo_r, hi_r = 1 + lo_pct / 100, 1 + hi_pct / 100
    beyond = bool(lo_r > band or hi_r < 1 / band)
    off = [r for r in shifts if abs(math.log(r.vs_common)) > op_band and r.p_value == r.p_value
           and r.p_value < OP_ALPHA]
    alike = [r for r in shifts if abs(math.log(r.vs_common)) <= op_band]
    localised = bool(off and alike)
    direction = "regression" if change_pct > 0 else "improvement"
    return SessionNoise(verdict=direction if beyond or localised else "inconclusive", beyond_allowance=beyond,
                        localised=localised, localised_ops=tuple(r.name for r in off) if localised else (),
                        uniform_shift=bool(shifts) and not off, allowance_ratio=(1 / band, band))


def shift_text(shifts: tuple[OpShift, ...]) -> str:
    """"CPU +12%, XnnpackBackend +15% / +18%": the ratio of each judged op, grouped by placement."""
    by: dict[str, list[str]] = {}
    for r in shifts:
        by.setdefault(r.placement or "?", []).append(f"{(r.ratio - 1) * 100:+.0f}%")
    return ", ".join(f"{k} {' / '.join(v)}" for k, v in by.items())


def program_identity(base, new, samples_base: dict, samples_new: dict) -> ProgramIdentity:
    """Are the two runs' programs identical, as far as the files tell?

    With both .pte files: the executed method's instructions (kind, operator, backend) and the
    SHA-256 of every delegate blob. Without: the ETDumps' structure only (instructions and the
    names of the delegates' per-op events), which cannot see inside a blob (a wider conv has the
    same events), so ``identical`` is then None when the structure matches."""
    struct_b, struct_n = _etdump_structure(base, samples_base), _etdump_structure(new, samples_new)
    if struct_b != struct_n:
        return ProgramIdentity(identical=False, basis="ETDump structure (instructions or delegate events differ)")
    pb, pn = base.sources.get("pte"), new.sources.get("pte")
    if base.pte is None or new.pte is None or not pb or not pn:
        return ProgramIdentity(identical=None, basis="ETDump structure only: same instructions and delegate events; the delegate blobs "
                         "are not in an ETDump (--pte-base/--pte-new compare them)")
    from etscope.formats.pte import delegate_blob_digests

    mb, mn = _pte_method(base), _pte_method(new)
    if mb is None or mn is None:
        return ProgramIdentity(identical=None, basis="the .pte files do not name the method that ran")
    ib = [(i.kind, i.operator, i.backend_id) for i in mb.instructions]
    in_ = [(i.kind, i.operator, i.backend_id) for i in mn.instructions]
    if ib != in_:
        return ProgramIdentity(identical=False, basis=f".pte method {mb.name!r}: instructions differ")
    db, dn = delegate_blob_digests(pb, base.pte), delegate_blob_digests(pn, new.pte)
    blobs_b = [db.get((mb.name, d.index)) for d in mb.delegates]
    blobs_n = [dn.get((mn.name, d.index)) for d in mn.delegates]
    if blobs_b != blobs_n:
        return ProgramIdentity(identical=False, basis=f".pte method {mb.name!r}: same instructions, different delegate blobs")
    return ProgramIdentity(identical=True, basis=f".pte method {mb.name!r}: same {len(ib)} instructions and "
                                        f"{len(blobs_b)} byte-identical delegate blob(s) (SHA-256)")


def _pte_method(profile):
    names = [m.name for m in profile.pte.methods]
    name = profile.method or (names[0] if len(names) == 1 else None)
    return next((m for m in profile.pte.methods if m.name == name), None)


def _etdump_structure(profile, samples: dict) -> tuple:
    ins = tuple((i.id, i.kind, i.backend, i.kernel) for i in sorted(profile.instructions.values(), key=lambda i: i.id))
    return ins, tuple(sorted(k for k, v in samples.items() if v["role"] == "delegate_internal"))
