#!/usr/bin/env python3
"""Peak memory of `etscope numerics` on a 1 GB debug buffer (and a 1 GB reference), bounded?

    python benchmarks/numerics_memory.py [--dir /tmp/etscope-numerics-bench] [--gb 1]

Makes (when missing) a synthetic candidate/reference pair with ``tools/synth_debug_buffer.py
--big``: 8 float32 tensors of 128 MB each per buffer (one run, 8 instructions), the candidate =
the reference + noise growing 4x per tensor. Then runs, each in its own child process, with wall time
and peak RSS (``os.wait4`` rusage ``ru_maxrss``):

* ``etscope summary --json`` on the candidate ETDump: the process and ETDump baseline;
* ``etscope numerics CAND --debug-buffer CAND.bin --json``: statistics of 1 GB;
* ``etscope numerics CAND ... --reference REF --reference-buffer REF.bin --json``: 2 GB compared.

The stated bound: peak RSS <= baseline + 64 MB working set (chunks of 2**20 elements: a few float64
temporaries of 8 MB each). Results are printed and written to ``benchmarks/numerics_memory.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKING_SET_MB = 64


def measured(args: list[str]) -> dict:
    """One child, peak RSS from wait4 (communicate() would reap it first, so read the pipe here)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "etscope.cli", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()      # the outputs are small; stderr read after (no deadlock for these sizes)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    p.returncode = code
    if code != 0:
        raise SystemExit(f"etscope {' '.join(args)} failed ({code}): {err.decode()[-2000:]}")
    return {"wall_s": round(wall, 2), "rss_mb": round(ru.ru_maxrss / 1024, 1), "stdout": out.decode()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/etscope-numerics-bench"))
    ap.add_argument("--gb", type=float, default=1.0)
    a = ap.parse_args(argv)
    cand, cbin = a.dir / "synthetic_big_cand.etdump", a.dir / "synthetic_big_cand.bin"
    ref, rbin = a.dir / "synthetic_big_ref.etdump", a.dir / "synthetic_big_ref.bin"
    made = None
    if not all(p.exists() for p in (cand, cbin, ref, rbin)):
        t = time.perf_counter()
        subprocess.run([sys.executable, str(REPO / "tools" / "synth_debug_buffer.py"), "--big", str(a.dir),
                        "--gb", str(a.gb)], check=True)
        made = round(time.perf_counter() - t, 1)
    base = measured(["summary", str(cand), "--json"])
    stats = measured(["numerics", str(cand), "--debug-buffer", str(cbin), "--json"])
    cmp_ = measured(["numerics", str(cand), "--debug-buffer", str(cbin), "--reference", str(ref),
                     "--reference-buffer", str(rbin), "--json"])
    d = json.loads(cmp_.pop("stdout"))
    s = json.loads(stats.pop("stdout"))
    base.pop("stdout")
    curve = [(t["name"], round(t["snr_db"], 2)) for t in d["runs"][0]["tensors"]]
    res = {
        "machine": {"python": platform.python_version(), "cores": os.cpu_count(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
        "buffer_bytes": {"candidate": cbin.stat().st_size, "reference": rbin.stat().st_size},
        "generated_s": made,
        "baseline_summary": base, "numerics_stats": stats, "numerics_compare": cmp_,
        "bound_mb": round(base["rss_mb"] + WORKING_SET_MB, 1),
        "stats_tensors": len(s["tensors"]), "compare_curve_snr_db": curve,
        "first_divergence": d["first_divergence"],
    }
    res["within_bound"] = stats["rss_mb"] <= res["bound_mb"] and cmp_["rss_mb"] <= res["bound_mb"]
    (REPO / "benchmarks" / "numerics_memory.json").write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))
    return 0 if res["within_bound"] else 1


if __name__ == "__main__":
    sys.exit(main())
