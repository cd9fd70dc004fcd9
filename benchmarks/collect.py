#!/usr/bin/env python3
"""Benchmark of `etscope collect` (issue 18): 1,000 ETDumps of a few MB into one dataset.

    PYTHONPATH=src python benchmarks/collect.py [--files 1000] [--single 40] [--workers 2] [--json OUT]

Inputs, generated in a temporary folder (deleted at the end): three real tiny-Llama ETDumps of
tests/fixtures/real (llama, llama_nodebug, gen_llama) replicated to about 40,000 events each
(``replicate_etdump.py``: 2.4-3.3 MB), then copied ``--files`` times with varied metadata (a
``<stem>.meta.json`` sidecar: model from the source, SoC alternating sm8650/sm8750, a commit hash
every 20 files with its order key, a date). Each copy ends with 8 bytes of its own index, after
the flatbuffer, so every file has its own content hash (the reader ignores bytes past the
buffer); the parsing work is that of the real runs.

Measured:
  * single-file throughput: the first ``--single`` files collected one after the other in one
    process (no pool);
  * the whole batch with a pool of ``--workers`` processes: files/s against workers x single;
  * peak RSS of each worker process (``ru_maxrss``, reported by the worker with each file);
  * CPU seconds per file, single and pooled (workers + driver): on a machine shared with other
    work the wall-time ratio depends on their load, the CPU ratio does not;
  * a re-run over the same files: must add nothing;
  * a DuckDB query over the dataset (etscope sql --dataset) and etscope trend on it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCES = ("llama", "llama_nodebug", "gen_llama")


def make_inputs(folder: Path, n: int) -> tuple[list[Path], dict]:
    sys.path.insert(0, str(HERE))
    from replicate_etdump import replicate

    bases = {}
    for name in SOURCES:
        out = folder / f"_base_{name}.etdump"
        info = replicate(str(ROOT / "tests" / "fixtures" / "real" / f"{name}.etdump"), 40_000, str(out))
        bases[name] = (out.read_bytes(), info)
        out.unlink()
    files = []
    for i in range(n):
        name = SOURCES[i % len(SOURCES)]
        p = folder / f"run_{i:04d}.etdump"
        p.write_bytes(bases[name][0] + i.to_bytes(8, "little"))
        build = i // 20
        (folder / f"run_{i:04d}.meta.json").write_text(json.dumps({
            "model": name, "soc": ("sm8650", "sm8750")[i % 2], "commit": f"{(build * 2654435761) % 2**32:08x}",
            "order": str(build), "date": f"2026-11-{1 + build % 28:02d}"}))
        files.append(p)
    return files, {k: {"bytes": v[1]["bytes"], "events": v[1]["events"], "runs": v[1]["runs"]} for k, v in bases.items()}


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--single", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", dest="json_out", default=None)
    a = ap.parse_args(argv)
    from results import emit

    from etscope.fleet.collect import collect, counts
    from etscope.fleet.dataset import Dataset, query_dataset, trend_inputs
    from etscope.analysis.diff.trend import trend_of_sessions

    res = {"cpu_count": os.cpu_count(), "load_average_start": load(), "files": a.files, "workers": a.workers}
    tmp = Path(tempfile.mkdtemp(prefix="etscope-collect-bench-"))
    try:
        t = time.perf_counter()
        (tmp / "in").mkdir()
        files, bases = make_inputs(tmp / "in", a.files)
        res["generate_s"] = round(time.perf_counter() - t, 1)
        res["bases"] = bases
        res["input_bytes"] = sum(p.stat().st_size for p in files)
        print(f"generated {a.files} files, {res['input_bytes'] / 1e6:,.0f} MB in {res['generate_s']} s", file=sys.stderr)

        t = time.perf_counter()
        one = collect(files[:a.single], tmp / "single", workers=1)
        single_s = time.perf_counter() - t
        assert counts(one)["added"] == a.single, counts(one)
        res["single"] = {"files": a.single, "wall_s": round(single_s, 2), "files_per_s": a.single / single_s,
                         "mb_per_s": sum(p.stat().st_size for p in files[:a.single]) / 1e6 / single_s,
                         "per_file_s_median": sorted(o.seconds for o in one)[len(one) // 2],
                         "cpu_s_per_file": sum(o.cpu_seconds for o in one) / a.single}
        print(f"single: {res['single']}", file=sys.stderr)

        t, cpu0 = time.perf_counter(), time.process_time()
        out = collect(files, tmp / "ds", workers=a.workers)
        wall, driver_cpu = time.perf_counter() - t, time.process_time() - cpu0
        rss = [o.max_rss_bytes for o in out]
        res["pool"] = {"wall_s": round(wall, 1), "files_per_s": a.files / wall,
                       "mb_per_s": res["input_bytes"] / 1e6 / wall, "counts": counts(out),
                       "worker_peak_rss_mb_max": max(rss) / 2**20,
                       "worker_peak_rss_mb_median": sorted(rss)[len(rss) // 2] / 2**20,
                       "cpu_s_per_file": (sum(o.cpu_seconds for o in out) + driver_cpu) / a.files,
                       "driver_cpu_s": driver_cpu}
        # On a shared machine wall time depends on the others' load; CPU time per file does not:
        # the pool's efficiency is the single process's CPU per file over the pool's (workers + driver).
        res["pool"]["cpu_efficiency"] = res["single"]["cpu_s_per_file"] / res["pool"]["cpu_s_per_file"]
        res["pool"]["vs_workers_x_single"] = res["pool"]["files_per_s"] / (a.workers * res["single"]["files_per_s"])
        print(f"pool: {res['pool']}", file=sys.stderr)

        ds_bytes = sum(f.stat().st_size for f in (tmp / "ds").rglob("*.parquet"))
        res["dataset_mb"] = ds_bytes / 1e6
        t = time.perf_counter()
        again = collect(files, tmp / "ds", workers=a.workers)
        res["rerun"] = {"wall_s": round(time.perf_counter() - t, 1), "counts": counts(again),
                        "dataset_unchanged": sum(f.stat().st_size for f in (tmp / "ds").rglob("*.parquet")) == ds_bytes}
        print(f"rerun: {res['rerun']}", file=sys.stderr)

        t = time.perf_counter()
        q = query_dataset(Dataset(tmp / "ds"), "SELECT model, soc, count(DISTINCT build) builds, count(*) runs, "
                          "median(latency_ms) p50_ms FROM runs GROUP BY ALL ORDER BY ALL")
        res["sql_s"] = round(time.perf_counter() - t, 2)
        res["sql_rows"] = q.to_pylist()
        t = time.perf_counter()
        tr = trend_of_sessions(*trend_inputs(Dataset(tmp / "ds"), model="llama", soc="sm8650"))
        res["trend_s"] = round(time.perf_counter() - t, 2)
        res["trend_builds"] = len(tr.series[0].builds) if tr.series else 0
        res["load_average_end"] = load()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return emit(res, a.json_out)


if __name__ == "__main__":
    sys.exit(main())
