#!/usr/bin/env python3
"""False alarms and detection of `etscope trend` on generated build series.

    PYTHONPATH=src python benchmarks/trend_false_alarms.py [--seeds 1000] [--json OUT]

Series from tests/analysis/trend_series.py (20 builds x 3 sessions x 10 runs; between-session SD
3% on the log scale, run SD 2%, one 3x warm-up run per session). Without a change: the share of
series where trend reports any latency change (false alarm) and any op change. With a step at
build c012 on the op that is 30% of the latency: the share found at all, found exactly at c012
(and nowhere else), and the op found at c012, per step size.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
from results import emit  # noqa: E402
from trend_series import series  # noqa: E402

from etscope.analysis.diff.trend import trend


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args(argv)
    out = {"seeds": a.seeds, "builds": 20, "sessions_per_build": 3, "session_sd": 0.03, "runs": 10}
    lat = ops = 0
    for seed in range(a.seeds):
        s = trend(*series(100_000 + seed)).series[0]
        lat += bool(s.changes)
        ops += bool(s.op_changes)
    out["null"] = {"latency_false_alarm_rate": lat / a.seeds, "op_false_alarm_rate": ops / a.seeds}
    out["planted"] = []
    n = a.seeds // 2
    for factor in (1.1, 1.15, 1.25, 1.5):
        found = exact = op = 0
        for seed in range(n):
            s = trend(*series(200_000 + seed, change=(1, factor, 12))).series[0]
            found += bool(s.changes)
            exact += [c.build for c in s.changes] == ["c012"]
            op += any(c.op == "native_call_cumsum.out" and c.build == "c012" for c in s.op_changes)
        out["planted"].append({"op_factor": factor, "latency_step_pct": round((factor - 1) * 30, 1), "series": n,
                               "found": found / n, "exactly_at_c012": exact / n, "op_at_c012": op / n})
    return emit(out, a.json_out)


if __name__ == "__main__":
    sys.exit(main())
