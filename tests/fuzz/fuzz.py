#!/usr/bin/env python3
"""Long fuzzing run with a time budget (the CI tests in this folder run a fixed, small budget).

    python tests/fuzz/fuzz.py --minutes 30                 # all readers + the pipeline, round robin
    python tests/fuzz/fuzz.py --minutes 5 --reader qnn_text --seed 7

Each input is a mutated seed file (or, for ``--structured``, a hypothesis-built input as in the
tests). A failure (anything but a result or FormatError, or over the time/memory budget) is
minimised (chunks removed while it still fails the same way) and written to
``tests/fuzz/crashers/new/<reader>_<n>.bin``. Prints inputs tried and failures per reader at the end.
"""
from __future__ import annotations

import argparse
import collections
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_harness as H  # noqa: E402


def signature(why: str) -> str:
    """A failure's kind without its numbers: "took 3.2 s (budget 2 s)" -> "took # s"."""
    return re.sub(r"\d+(\.\d+)?", "#", why.split(":")[0].split(" (")[0])[:40]


def _signature(reader: str, data: bytes) -> str | None:
    try:
        H.check(reader, data, measure_memory=False)
        return None
    except H.FuzzFailure as e:
        return signature(e.why)


def minimise(reader: str, data: bytes, why: str, deadline: float) -> bytes:
    """Remove chunks (halves, quarters, ...) while the input still fails with the same signature."""
    if why.startswith(("took", "peak memory", "no result")):
        return data          # resource failures shrink poorly and slowly: keep the input as found
    chunk = max(1, len(data) // 2)
    while chunk >= 1 and time.time() < deadline:
        i, changed = 0, False
        while i < len(data) and time.time() < deadline:
            cand = data[:i] + data[i + chunk:]
            if cand and _signature(reader, cand) == why:
                data, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return data


def pipeline_check(data: bytes) -> str:
    from test_fuzz_pipeline import run_pipeline  # noqa: PLC0415
    path = H._tmp_file(".etdump", data)
    return H.run_contract("pipeline", lambda: run_pipeline(path), data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--reader", action="append", choices=[*H.READERS, "pipeline"],
                    help="reader(s) to fuzz (default: all, and the pipeline)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", type=Path, default=H.CRASHERS / "new")
    ap.add_argument("--memory-every", type=int, default=5, help="measure memory on every Nth input")
    args = ap.parse_args(argv)

    readers = args.reader or [*H.READERS, "pipeline"]
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    H.log(f"fuzzing {', '.join(readers)} for {args.minutes:g} min, seed {seed}")
    deadline = time.time() + 60 * args.minutes
    tried: collections.Counter = collections.Counter()
    outcomes: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures: dict[str, list[str]] = collections.defaultdict(list)
    seen: set[tuple[str, str]] = set()
    i = 0
    while time.time() < deadline:
        reader = readers[i % len(readers)]
        i += 1
        base = "etdump" if reader == "pipeline" else reader
        seeds = H.READERS[base].seeds
        if not seeds:
            continue
        data = H.mutate(base, H.seed_bytes(rng.choice(seeds)), rng)
        tried[reader] += 1
        try:
            if reader == "pipeline":
                outcomes[reader][pipeline_check(data)] += 1
            else:
                outcomes[reader][H.check(reader, data, measure_memory=i % args.memory_every == 0)] += 1
        except H.FuzzFailure as e:
            why = signature(e.why)
            if (reader, why) in seen:
                continue
            seen.add((reader, why))
            small = data if reader == "pipeline" else minimise(reader, data, why, time.time() + 60)
            path = H.save_crasher(reader, small, args.out)
            failures[reader].append(f"{e.why} -> {path}")
            H.log(f"FAIL {reader}: {e.why} ({len(data)} -> {len(small)} bytes) saved {path}")
    H.log(f"\n{'reader':10} {'inputs':>8} {'ok':>8} {'error':>8}  failures")
    for r in readers:
        H.log(f"{r:10} {tried[r]:8d} {outcomes[r]['ok']:8d} {outcomes[r]['error']:8d}  {len(failures[r])}")
        for f in failures[r]:
            H.log(f"    {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
