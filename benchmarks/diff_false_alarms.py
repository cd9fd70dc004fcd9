#!/usr/bin/env python3
"""How often `etscope diff` calls a re-run of the same program a change, and the between-session
allowances it uses (etscope.analysis.diff.noise), measured on real sessions.

Input: sessions of ONE unchanged program, each a separate process (tools/make_diff_sessions.py
sessions --pte tests/fixtures/diff/diff_same.pte --n 60 --out DIR). The sessions are split in time
order: the first half calibrates, the second half (and, with --also, another set such as the
committed tests/fixtures/diff/diff_same_*.etdump from another day) is judged.

* Calibration, over every pair of calibration sessions (one session per side): the 99th
  percentile of |log(p50 ratio)| (whole run) -> SESSION_ALLOWANCE_PCT; the 99th percentile of the
  largest |log| deviation of one substantial op's p50 ratio from the median of the ops' log ratios
  -> OP_ALLOWANCE_PCT.
* False alarms: `diff.compare(a, b, fail_on_regression_pct=5)` on every ordered pair of judged
  sessions with the calibrated allowances: verdicts, gate failures; also the old rule (significant
  within-session interval = a verdict) and groups of 3 sessions per side (t interval on the sessions' p50s with the allowance as a prior).
* Detection: the same judged sessions against the committed variants (diff_slower: width 32;
  diff_faster: width 4; and with --conv the conv-on-CPU program) as the new side.

    PYTHONPATH=src python benchmarks/diff_false_alarms.py "DIR/session_*.etdump" \\
        --also "tests/fixtures/diff/diff_same_*.etdump" --json out.json
"""
from __future__ import annotations

import argparse
import glob
import itertools
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from etscope.analysis.diff import compare as diff
from etscope.analysis.diff import noise as diff_noise
from etscope.profile import load

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "diff"
SHIPPED = (diff_noise.SESSION_ALLOWANCE_PCT, diff_noise.OP_ALLOWANCE_PCT)


def _pair_stats(a, b):
    sa, na = diff.steady_latency_ms(a)
    sb, nb = diff.steady_latency_ms(b)
    xa, xb = diff.steady_samples([a], [na]), diff.steady_samples([b], [nb])
    whole = abs(math.log(np.median(sb) / np.median(sa)))
    shifts = diff_noise.op_shifts(xa, xb, float(np.median(sa)), diff.mann_whitney_p)
    dev = max((abs(math.log(r["vs_common"])) for r in shifts), default=0.0)
    return whole, dev


def calibrate(profiles) -> dict:
    w, d = zip(*[_pair_stats(a, b) for a, b in itertools.combinations(profiles, 2)])
    q = {k: float(np.percentile(v, 99)) for k, v in (("whole", w), ("op", d))}
    return {"pairs": len(w), "session_allowance_pct": (math.exp(q["whole"]) - 1) * 100,
            "op_allowance_pct": (math.exp(q["op"]) - 1) * 100,
            "whole_ratio_percentiles": {p: math.exp(float(np.percentile(w, p))) for p in (50, 90, 95, 99, 100)}}


def judge(profiles, allowance, op_allowance) -> dict:
    diff_noise.OP_ALLOWANCE_PCT = op_allowance
    verdicts, gate, old = Counter(), 0, 0
    for a, b in itertools.permutations(profiles, 2):
        d = diff.compare(a, b, fail_on_regression_pct=5, session_allowance_pct=allowance)
        verdicts[d["verdict"]] += 1
        gate += d["gate"]["fail"]
        old += d["latency"]["significant"]
    n = sum(verdicts.values())
    return {"ordered_pairs": n, "verdicts": dict(verdicts),
            "false_alarms": verdicts["regression"] + verdicts["improvement"],
            "false_alarm_rate": (verdicts["regression"] + verdicts["improvement"]) / n,
            "gate_fail_5pct": gate, "old_rule_false_alarms": old, "old_rule_rate": old / n}


def groups(profiles, allowance, k=3, interleaved=False) -> dict:
    """Disjoint groups of k sessions per side: consecutive sessions (run back to back, as a CI job
    would), or interleaved (session i, i+m, i+2m: spread over the whole measurement)."""
    m = len(profiles) // k
    g = ([[profiles[i + j * m] for j in range(k)] for i in range(m)] if interleaved
         else [profiles[i:i + k] for i in range(0, len(profiles) - k + 1, k)])
    verdicts, gate = Counter(), 0
    for a, b in itertools.permutations(g, 2):
        d = diff.compare(a, b, fail_on_regression_pct=5, session_allowance_pct=allowance)
        verdicts[d["verdict"]] += 1
        gate += d["gate"]["fail"]
    return {"sessions_per_side": k, "interleaved": interleaved, "ordered_pairs": sum(verdicts.values()), "verdicts": dict(verdicts),
            "gate_fail_5pct": gate}


def detect(profiles, allowance, variants) -> dict:
    out = {}
    for name, new in variants.items():
        c = Counter(diff.compare(a, new, session_allowance_pct=allowance)["verdict"] for a in profiles)
        out[name] = dict(c)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sessions", help="glob of the session ETDumps (time order = name order)")
    ap.add_argument("--also", help="glob of another set of sessions of one program, judged only")
    ap.add_argument("--conv", help="directory of tools/make_diff_sessions.py conv-fallback (detection)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args(argv)
    files = sorted(glob.glob(args.sessions))
    ps = [load(f) for f in files]
    half = len(ps) // 2
    cal, ev = ps[:half], ps[half:]
    c = calibrate(cal)
    allowance, op_allowance = c["session_allowance_pct"], c["op_allowance_pct"]
    res = {"sessions": len(ps), "calibration": c, "judged": judge(ev, allowance, op_allowance),
           "judged_with_shipped_defaults": {
               "session_allowance_pct": SHIPPED[0], "op_allowance_pct": SHIPPED[1], **judge(ev, *SHIPPED)},
           "judged_groups_of_3": groups(ev, allowance),
           "judged_groups_of_3_interleaved": groups(ev, allowance, interleaved=True),
           # Not out of sample (these sessions set the allowance), but a second period of time:
           "calibration_half_groups_of_3": groups(cal, allowance),
           "calibration_half_groups_of_3_interleaved": groups(cal, allowance, interleaved=True)}
    if args.also:
        other = [load(f) for f in sorted(glob.glob(args.also))]
        res["judged_also"] = {"glob": args.also, **judge(other, *SHIPPED)}
    variants = {n: load(FIX / f"diff_{n}.etdump") for n in ("slower", "faster") if (FIX / f"diff_{n}.etdump").exists()}
    if args.conv:
        variants["conv_cpu"] = load(Path(args.conv) / "diff_conv_cpu.etdump")
    diff_noise.OP_ALLOWANCE_PCT = SHIPPED[1]
    res["detection_one_session_each"] = detect(ev, SHIPPED[0], variants)
    m = len(ev) // 3
    res["detection_groups_of_3_vs_one_new_session"] = {
        name: dict(Counter(diff.compare(ev[i:i + 3], new, session_allowance_pct=SHIPPED[0])["verdict"]
                           for i in range(0, 3 * m, 3))) for name, new in variants.items()}
    print(json.dumps(res, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
