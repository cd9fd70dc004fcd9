#!/usr/bin/env python3
"""Generator campaign: valid adversarial files (``generators.py``) through the CLI commands that
read them, each in a child process with a wall-time limit, its CPU time and peak RSS
(``ru_maxrss`` of that child, from ``os.wait4``) checked against the per-command budget
``a + b x input bytes`` (``BUDGETS``; SECURITY.md states the same numbers).

    python tests/fuzz/campaign.py --seeds 200                 # every kind, 200 seeds each
    python tests/fuzz/campaign.py --kind etdump --seeds 50 --commands 3

CI runs a small sample of this (``test_campaign.py``). Address-space limits are not used: numpy,
duckdb and pyarrow reserve large virtual ranges they never touch.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The package the children run (ETSCOPE_CAMPAIGN_SRC: another tree's src/, to measure before/after).
SRC = Path(os.environ.get("ETSCOPE_CAMPAIGN_SRC") or HERE.parents[1] / "src")

import fuzz_harness as H  # noqa: E402
import generators as G    # noqa: E402

ETDUMP = str(H.FIXTURES / "qnn_etdump" / "synthetic_qnn_cnn.etdump")

# Commands per input kind: {f} the generated file, {o} an output path, {e} a small real ETDump.
COMMANDS: dict[str, list[list[str]]] = {
    "etdump": [["summary", "{f}"], ["summary", "--json", "{f}"], ["ops", "--limit", "0", "{f}"],
               ["ops", "--json", "{f}"], ["report", "{f}", "-o", "{o}.html"], ["trace", "{f}", "-o", "{o}.json"],
               ["export", "{f}", "-o", "{o}"], ["export", "--format", "parquet", "{f}", "-o", "{o}"],
               ["sql", "{f}", "SELECT count(*) FROM events"], ["qnn", "{f}"], ["llm", "{f}"], ["diff", "{f}", "{f}"]],
    "qhas": [["qnn", "--qhas", "{f}"], ["qnn", "--json", "{e}", "--qhas", "{f}"],
             ["report", "{e}", "--qhas", "{f}", "-o", "{o}.html"], ["trace", "{e}", "--qhas", "{f}", "-o", "{o}.json"],
             ["export", "{e}", "--qhas", "{f}", "-o", "{o}"]],
    "optrace": [["qnn", "--optrace", "{f}"], ["qnn", "--json", "{e}", "--optrace", "{f}"],
                ["report", "{e}", "--optrace", "{f}", "-o", "{o}.html"],
                ["trace", "{e}", "--optrace", "{f}", "-o", "{o}.json"], ["export", "{e}", "--optrace", "{f}", "-o", "{o}"]],
    "qnn_csv": [["qnn", "--qnn-csv", "{f}"], ["qnn", "--json", "{e}", "--qnn-csv", "{f}"]],
    "qnn_text": [["qnn", "--qnn-csv", "{f}"], ["qnn", "--json", "{e}", "--qnn-csv", "{f}"]],
    "qnn_json": [["qnn", "--qnn-csv", "{f}"], ["qnn", "--json", "{e}", "--qnn-csv", "{f}"]],
    "etrecord": [["summary", "{e}", "--etrecord", "{f}"], ["ops", "--limit", "0", "{e}", "--etrecord", "{f}"],
                 ["report", "{e}", "--etrecord", "{f}", "-o", "{o}.html"]],
    "pte": [["summary", "{e}", "--pte", "{f}"], ["ops", "--json", "{e}", "--pte", "{f}"]],
}
SUFFIX = {"etdump": ".etdump", "qhas": ".qhas.json", "optrace": ".optrace.json", "qnn_csv": ".csv",
          "qnn_text": ".txt", "qnn_json": ".qnn.json", "etrecord": ".etrecord", "pte": ".pte"}


@dataclass(frozen=True)
class Budget:
    """CPU seconds ``s0 + s_per_mb x MB`` and peak RSS ``m0_mb + m_per_byte x bytes`` of one command."""
    s0: float
    s_per_mb: float
    m0_mb: float
    m_per_byte: float

    def seconds(self, n: int) -> float:
        return self.s0 + self.s_per_mb * n / 1e6

    def rss_mb(self, n: int) -> float:
        return self.m0_mb + self.m_per_byte * n / 1e6


# Measured (SECURITY.md, "Budgets per command"), on the generator campaign with the fixes of issue
# 13: the constant is the interpreter plus the command's libraries (rich/numpy ~40 MB, pyarrow for
# report/trace/export ~70-125 MB, duckdb for sql ~160 MB); the slopes are the worst measured,
# rounded up: CPU ~2 s/MB (QNN profile CSV), memory ~140 bytes per input byte on the densest valid
# ETDump (16 bytes an event, every event its own op-table row of ~2 kB). A quadratic path
# overshoots these by orders of magnitude on the reproducers (test_budgets.py).
CPU_S0, CPU_PER_MB, RSS_PER_BYTE = 2.0, 2.0, 150.0
BUDGETS: dict[str, Budget] = {
    "summary": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),
    "ops": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),
    "llm": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),
    "qnn": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),
    "diff": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),   # bootstrap memory: issue 13 item 5, fixed apart
    "report": Budget(CPU_S0, CPU_PER_MB, 150.0, RSS_PER_BYTE),
    "trace": Budget(CPU_S0, CPU_PER_MB, 150.0, RSS_PER_BYTE),
    "export": Budget(CPU_S0, CPU_PER_MB, 200.0, RSS_PER_BYTE),
    "sql": Budget(CPU_S0, CPU_PER_MB, 250.0, RSS_PER_BYTE),
}
DEFAULT_BUDGET = Budget(CPU_S0, CPU_PER_MB, 250.0, RSS_PER_BYTE)


def budget_for(argv: list[str]) -> Budget:
    return BUDGETS.get(argv[0], DEFAULT_BUDGET)


@dataclass
class Outcome:
    kind: str
    argv: list[str]
    size: int
    rc: int | None          # None: killed at the wall-time limit
    wall: float
    cpu: float
    rss_mb: float
    stderr: str

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.stderr

    def problems(self) -> list[str]:
        b = budget_for(self.argv)
        out = []
        if self.rc is None:
            out.append(f"killed after {self.wall:.0f} s wall")
        elif self.rc not in (0, 2):
            out.append(f"exit {self.rc}")
        if self.traceback:
            out.append("traceback")
        if self.rc == 2 and len(self.stderr.strip().splitlines()) != 1:
            out.append("error message is not one line")
        if self.cpu > b.seconds(self.size):
            out.append(f"cpu {self.cpu:.1f} s > {b.seconds(self.size):.1f} s")
        if self.rss_mb > b.rss_mb(self.size):
            out.append(f"peak RSS {self.rss_mb:.0f} MB > {b.rss_mb(self.size):.0f} MB")
        return out

    def describe(self) -> str:
        return (f"{self.kind} {' '.join(self.argv[:2])} {self.size / 1e3:.0f} kB: rc {self.rc}, cpu {self.cpu:.2f} s, "
                f"wall {self.wall:.2f} s, rss {self.rss_mb:.0f} MB")


def run_child(argv: list[str], wall_limit: float) -> tuple[int | None, float, float, float, str]:
    """Run ``python -m etscope.cli argv`` in a child: (exit code or None if killed, wall s, CPU s,
    peak RSS MB, stderr). CPU and peak RSS are that child's alone, from ``os.wait4`` in the small
    launcher ``measure.py`` (forked from this process, the child's ru_maxrss would start from ours)."""
    import json

    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="120", NO_COLOR="1")
    with tempfile.TemporaryDirectory(prefix="etscope-measure-") as d:
        err_path = Path(d) / "stderr"
        out = subprocess.run([sys.executable, str(HERE / "measure.py"), str(wall_limit), str(err_path), "--",
                              sys.executable, "-m", "etscope.cli", *argv], capture_output=True, env=env,
                             timeout=wall_limit + 60)
        if out.returncode != 0:
            raise RuntimeError(f"measure.py failed: {out.stderr.decode('utf-8', 'replace')[-2000:]}")
        m = json.loads(out.stdout)
        text = err_path.read_bytes().decode("utf-8", "replace")
    return m["rc"], m["wall"], m["cpu"], m["rss_mb"], text


def run_case(kind: str, data: bytes, argv_t: list[str], workdir: Path, wall_limit: float | None = None) -> Outcome:
    f = workdir / f"input{SUFFIX[kind]}"
    f.write_bytes(data)
    argv = [a.format(f=f, o=workdir / "out", e=ETDUMP) for a in argv_t]
    limit = wall_limit if wall_limit is not None else 3 * budget_for(argv).seconds(len(data)) + 20
    rc, wall, cpu, rss, err = run_child(argv, limit)
    return Outcome(kind, argv, len(data), rc, wall, cpu, rss, err)


def campaign(kinds, seeds, n_commands: int | None, first_seed: int = 0, log=H.log, skip=()):
    """Run ``seeds`` generated files per kind, each through ``n_commands`` commands sampled per seed
    (all when None; commands named in ``skip`` left out). Returns the outcomes."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="etscope-campaign-") as d:
        work = Path(d)
        for kind in kinds:
            for seed in range(first_seed, first_seed + seeds):
                rng = random.Random(f"{kind}-{seed}")
                data = G.GENERATORS[kind](rng)
                cmds = [c for c in COMMANDS[kind] if c[0] not in skip]
                if n_commands is not None:
                    cmds = rng.sample(cmds, min(n_commands, len(cmds)))
                for argv_t in cmds:
                    o = run_case(kind, data, argv_t, work)
                    outcomes.append(o)
                    if o.problems():
                        log(f"FAIL seed {seed}: {o.describe()}: {'; '.join(o.problems())}")
    return outcomes


def summarise(outcomes: list[Outcome]) -> str:
    """Counts and worst ratios per command (the table SECURITY.md keeps)."""
    by = collections.defaultdict(list)
    for o in outcomes:
        by[(o.kind, o.argv[0])].append(o)
    lines = [f"{'kind':9} {'command':8} {'cases':>5} {'fail':>4} {'max kB':>7} {'worst cpu/budget':>16} "
             f"{'worst rss/budget':>16} {'max cpu s':>9} {'max rss MB':>10}"]
    for (kind, cmd), os_ in sorted(by.items()):
        b = budget_for([cmd])
        lines.append(f"{kind:9} {cmd:8} {len(os_):5d} {sum(bool(o.problems()) for o in os_):4d} "
                     f"{max(o.size for o in os_) / 1e3:7.0f} "
                     f"{max(o.cpu / b.seconds(o.size) for o in os_):16.2f} "
                     f"{max(o.rss_mb / b.rss_mb(o.size) for o in os_):16.2f} "
                     f"{max(o.cpu for o in os_):9.2f} {max(o.rss_mb for o in os_):10.0f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", action="append", choices=sorted(G.GENERATORS), help="default: all")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--commands", type=int, default=None, help="commands sampled per seed (default: all)")
    ap.add_argument("--skip", action="append", default=[], help="leave out this command (e.g. diff)")
    ap.add_argument("--json", type=Path, help="write every outcome here (kind, argv, size, rc, cpu, wall, rss)")
    args = ap.parse_args(argv)
    t0 = time.time()
    outcomes = campaign(args.kind or sorted(G.GENERATORS), args.seeds, args.commands, args.first_seed,
                        skip=tuple(args.skip))
    H.log(summarise(outcomes))
    if args.json:
        import json
        args.json.write_text(json.dumps([{"kind": o.kind, "command": o.argv[0], "argv": o.argv[1:2], "size": o.size,
                                          "rc": o.rc, "cpu": round(o.cpu, 3), "wall": round(o.wall, 3),
                                          "rss_mb": round(o.rss_mb, 1), "problems": o.problems()}
                                         for o in outcomes], indent=0))
    bad = [o for o in outcomes if o.problems()]
    H.log(f"{len(outcomes)} cases, {len(bad)} failing, {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
