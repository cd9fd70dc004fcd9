#!/usr/bin/env python3
"""Generator campaign: valid adversarial files (``generators.py``) through the CLI commands that
read them, each in a child process with a wall-time limit, its CPU time and peak RSS
(``ru_maxrss`` of that child, from ``os.wait4``) checked against the per-command budget
``a + b x input bytes`` (``BUDGETS``; SECURITY.md states the same numbers).

    python tests/fuzz/campaign.py --seeds 200                 # every kind, 200 seeds each
    python tests/fuzz/campaign.py --kind etdump --seeds 50 --commands 3
    python tests/fuzz/campaign.py --kind pte --seeds 20 --only program

Every command runs in a scratch folder (HOME and TMPDIR in it); its inputs are hashed before and
after, and the package source, this folder and the fixtures are checked for changes: a changed
input or outside file is a failure like a traceback. Kinds whose input is a folder, several files
or a query join through :func:`register_kind` (``numerics`` does).

CI runs a small sample of this (``test_campaign.py``). Address-space limits are not used: numpy,
duckdb and pyarrow reserve large virtual ranges they never touch.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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
    "pte": [["summary", "{e}", "--pte", "{f}"], ["ops", "--json", "{e}", "--pte", "{f}"],
            ["program", "{f}"], ["program", "--json", "{f}"], ["env:COLUMNS=80", "program", "{f}"],
            ["env:COLUMNS=", "program", "{f}"], ["env:COLUMNS=80", "program", "--json", "{f}"]],
    "runtrace": [["trace", "--runtrace", "{f}", "-o", "{o}.json"], ["qnn", "--runtrace", "{f}"],
                 ["qnn", "--json", "{e}", "--runtrace", "{f}"], ["summary", "{e}", "--runtrace", "{f}"],
                 ["report", "{e}", "--runtrace", "{f}", "-o", "{o}.html"],
                 ["trace", "{e}", "--runtrace", "{f}", "-o", "{o}.json"],
                 ["export", "{e}", "--runtrace", "{f}", "-o", "{o}"]],
    "ort_profile": [["qnn", "--ort-profile", "{f}"], ["qnn", "--json", "--ort-profile", "{f}"],
                    ["report", "--ort-profile", "{f}", "-o", "{o}.html"], ["summary", "{f}"]],
}
SUFFIX = {"etdump": ".etdump", "qhas": ".qhas.json", "optrace": ".optrace.json", "qnn_csv": ".csv",
          "qnn_text": ".txt", "qnn_json": ".qnn.json", "etrecord": ".etrecord", "pte": ".pte",
          "runtrace": ".runtrace.json", "ort_profile": ".ort_profile.json"}
# A template item "env:NAME=VALUE" before the command sets that variable for the child
# ("env:COLUMNS=" unsets it): the text views fit COLUMNS, and their cost once depended on it.
ENV_PREFIX = "env:"


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
    "program": Budget(CPU_S0, CPU_PER_MB, 100.0, RSS_PER_BYTE),
    "numerics": Budget(CPU_S0, CPU_PER_MB, 150.0, RSS_PER_BYTE),   # test_numerics_hostile.NUMERICS_BUDGET
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
    changed: list[str] = field(default_factory=list)   # inputs or watched files the command changed
    env: dict[str, str] = field(default_factory=dict)   # variables set for this command
    budget: "Budget | None" = None    # the kind's own budget (a dataset: per declared row), else the command's

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.stderr

    def problems(self) -> list[str]:
        b = self.budget or budget_for(self.argv)
        out = []
        if self.rc is None:
            out.append(f"killed after {self.wall:.0f} s wall")
        elif self.rc not in (0, 2):
            out.append(f"exit {self.rc}")
        if self.traceback:
            out.append("traceback")
        lines = [ln for ln in self.stderr.strip().splitlines() if ln.strip()]
        # etscope's own lines are fine (one-line warnings such as a skipped dataset part, "wrote
        # FILE"); a Python or numpy warning ("...Warning: ...", warnings.warn's source line) is not.
        stray = [ln for ln in lines if not ln.startswith(("etscope", "wrote "))
                 and re.search(r"\b\w*(Warning|Error)\b|^\s+warnings?\.|site-packages/", ln)]
        if stray:
            out.append("Python warning on stderr: " + stray[0][:120])
        errors = [ln for ln in lines if not ln.startswith("etscope: warning")]
        if self.rc == 2 and len(errors) != 1:
            out.append("error message is not one line")
        if self.cpu > b.seconds(self.size):
            out.append(f"cpu {self.cpu:.1f} s > {b.seconds(self.size):.1f} s")
        if self.rss_mb > b.rss_mb(self.size):
            out.append(f"peak RSS {self.rss_mb:.0f} MB > {b.rss_mb(self.size):.0f} MB")
        out += [f"changed {c}" for c in self.changed]
        return out

    def describe(self) -> str:
        env = "".join(f"{k}={v} " for k, v in self.env.items())
        return (f"{self.kind} {env}{' '.join(self.argv[:2])} {self.size / 1e3:.0f} kB: rc {self.rc}, "
                f"cpu {self.cpu:.2f} s, wall {self.wall:.2f} s, rss {self.rss_mb:.0f} MB")


def run_child(argv: list[str], wall_limit: float, env_overrides: dict[str, str] | None = None,
              cwd: Path | None = None) -> tuple[int | None, float, float, float, str]:
    """Run ``python -m etscope.cli argv`` in a child: (exit code or None if killed, wall s, CPU s,
    peak RSS MB, stderr). CPU and peak RSS are that child's alone, from ``os.wait4`` in the small
    launcher ``measure.py`` (forked from this process, the child's ru_maxrss would start from ours).
    ``env_overrides``: variables set for the child (an empty value unsets it); ``cwd``: its working
    folder (the campaign gives a scratch folder, with HOME and TMPDIR in it too)."""
    import json

    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="120", NO_COLOR="1")
    for k, v in (env_overrides or {}).items():
        if v:
            env[k] = v
        else:
            env.pop(k, None)
    with tempfile.TemporaryDirectory(prefix="etscope-measure-") as d:
        err_path = Path(d) / "stderr"
        out = subprocess.run([sys.executable, str(HERE / "measure.py"), str(wall_limit), str(err_path), "--",
                              sys.executable, "-m", "etscope.cli", *argv], capture_output=True, env=env,
                             timeout=wall_limit + 60, cwd=cwd)
        if out.returncode != 0:
            raise RuntimeError(f"measure.py failed: {out.stderr.decode('utf-8', 'replace')[-2000:]}")
        m = json.loads(out.stdout)
        text = err_path.read_bytes().decode("utf-8", "replace")
    return m["rc"], m["wall"], m["cpu"], m["rss_mb"], text


@dataclass(frozen=True)
class Generated:
    """One generated input of any kind: the template fields its commands use ({f} a file, {d} a
    folder, {q} a query, ...), the paths no command may change (hashed before and after every
    command; a folder: every file under it, new files included; a kind whose commands legitimately
    write into a folder, such as ``collect --to``, leaves that folder out) and the bytes its budget
    is computed from (all inputs together; for a dataset, what its parts declare)."""
    fields: dict[str, str]
    inputs: tuple[Path, ...]
    size: int
    # Ready commands (no templates) when the generator chooses them with the files (gen_numerics
    # returns its argv); the kind's templates are used when empty.
    commands: tuple[tuple[str, ...], ...] = ()
    # Budgets of this input's own measure (``size`` is then that measure, e.g. a dataset's declared
    # rows), per command name; commands not named use the byte budgets.
    budgets: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ExtraKind:
    """A generator kind that is not one file: ``make(rng, folder) -> Generated`` writes whatever
    it needs into ``folder`` (empty, inside the campaign's work folder) and says which template
    fields its ``commands`` use. See :func:`register_kind`."""
    make: Callable[[random.Random, Path], Generated]
    commands: list[list[str]]


EXTRA_KINDS: dict[str, ExtraKind] = {}


def register_kind(name: str, make: Callable[[random.Random, Path], Generated], commands: list[list[str]]) -> None:
    """Add a kind whose input is a folder, several files or a query string. E.g. the dataset
    generator (``gen_dataset(rng, root, shape)``) and the SQL one (``gen_sql(rng, shape) -> str``)::

        def make_dataset(rng, folder):
            gen_dataset(rng, folder / "ds", None)
            return Generated({"d": str(folder / "ds")}, (folder / "ds",), tree_bytes(folder / "ds"))

        register_kind("dataset", make_dataset, [["sql", "--dataset", "{d}", "SELECT count(*) FROM runs"],
                                                ["trend", "{d}"]])

        def make_sql(rng, folder):               # the query runs over a copy: it must not change
            q, f = gen_sql(rng, None), folder / "in.etdump"
            shutil.copy(ETDUMP, f)
            return Generated({"f": str(f), "q": q}, (folder,), f.stat().st_size + len(q.encode()))

        register_kind("sql", make_sql, [["sql", "{f}", "{q}"]])

    Templates may use {e} (a small real ETDump), {o} (an output path in the work folder) and the
    kind's own fields."""
    EXTRA_KINDS[name] = ExtraKind(make, commands)


def _make_numerics(rng: random.Random, folder: Path) -> Generated:
    """``gen_numerics`` (ETDump + debug buffer, sometimes an ETRecord and a reference pair) as a
    campaign kind: its own argv, the folder as the input that must not change."""
    from gen_numerics import gen_numerics

    argv = gen_numerics(rng, folder)
    return Generated({"d": str(folder)}, (folder,), tree_bytes(folder), (tuple(argv),))


register_kind("numerics", _make_numerics, [])


# A dataset's budgets count the rows its manifest declares (SECURITY.md, "Budgets per command"):
# trend CPU 1 s + 10 µs and RSS 150 MB + 900 B per declared row (its worst slope, level-0 ops rows
# with distinct names), sql --dataset CPU 1 s + 0.15 µs and RSS 200 MB + 45 B per row; rounded up
# here to 2 s + 10 µs / 250 MB + 900 B (trend) and 2 s + 1 µs / 250 MB + 70 B (sql). ``size`` is the
# declared rows plus the bytes of the files (collect reads the inputs: byte budget).
DATASET_BUDGETS = {"trend": Budget(2.0, 10.0, 250.0, 900.0), "sql": Budget(2.0, 1.0, 250.0, 70.0)}


def _declared_rows(ds: Path) -> int:
    """Rows the dataset's manifest entries declare for their parts (entries that do not parse: 0)."""
    import json

    rows = 0
    folder = ds / "_manifest"
    if folder.is_symlink() or not folder.is_dir():
        return 0
    for e in folder.glob("*.json"):
        try:
            if e.is_symlink() or not e.is_file() or e.stat().st_size > 1 << 20:
                continue
            doc = json.loads(e.read_text())
            for part in (doc.get("parts") or {}).values():
                n = part.get("rows") if isinstance(part, dict) else None
                rows += n if isinstance(n, int) and 0 <= n < 1 << 40 else 0
        except (ValueError, OSError, AttributeError, RecursionError):
            continue
    return rows


def _make_dataset(rng: random.Random, folder: Path) -> Generated:
    """``gen_dataset`` (a hostile dataset, its inputs, outside decoys) as a campaign kind: its own
    commands (trend, sql --dataset, collect into it, --adopt); the inputs, the decoys and the
    neighbour a glob would reach must not change (the dataset itself may: collect writes it)."""
    from gen_dataset import commands, dataset_of, gen_dataset

    gen_dataset(rng, folder)
    ds = dataset_of(folder)
    protect = tuple(p for p in (folder / "outside", folder / "in", folder / "dsx") if p.exists())
    size = _declared_rows(ds) + sum(tree_bytes(p) for p in (*protect, ds) if p.exists())
    return Generated({"d": str(ds)}, protect, size, tuple(tuple(c) for c in commands(folder, folder / "out")),
                     DATASET_BUDGETS)


register_kind("dataset", _make_dataset, [])


def _make_sql(rng: random.Random, folder: Path) -> Generated:
    """``gen_sql`` (a hostile query) over a copy of a small real ETDump; the paths the query names
    lie in the input folder, which no query may change (nor add a file to)."""
    import shutil

    from gen_sql import PATHS, gen_sql

    f = folder / "in.etdump"
    shutil.copy(ETDUMP, f)
    paths = [str(folder / p) if not (p.startswith("/") or "://" in p or p.startswith("~")) else p for p in PATHS]
    q = gen_sql(rng, None, paths=paths)
    return Generated({"f": str(f), "q": q}, (folder,), f.stat().st_size + len(q.encode()))


# "--" before the query: a generated query may start with "-".
register_kind("sql", _make_sql, [["sql", "{f}", "--", "{q}"], ["sql", "--format", "csv", "{f}", "--", "{q}"],
                                 ["sql", "--format", "json", "{f}", "--", "{q}"]])


def tree_bytes(path: Path) -> int:
    """Bytes of a file, or of every regular file under a folder (symlinks not followed)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def fingerprint(paths) -> dict[str, tuple]:
    """Path -> (size, mtime_ns, sha256) of every file at or under ``paths`` (symlinks as their
    target text): what a command must leave as it was."""
    import hashlib

    out: dict[str, tuple] = {}
    for root in paths:
        root = Path(root)
        if not root.exists() and not root.is_symlink():
            continue
        items = [root] if not root.is_dir() or root.is_symlink() else [root, *sorted(root.rglob("*"))]
        for p in items:
            if p.is_symlink():
                out[str(p)] = ("symlink", os.readlink(p))
            elif p.is_file():
                st = p.stat()
                out[str(p)] = (st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            elif p.is_dir():
                out[str(p)] = ("dir",)
    return out


def _changed(before: dict, after: dict) -> list[str]:
    return sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)})


# Folders no command may write to: the package source, the fuzz folder and the real fixtures the
# templates' {e} comes from (checked by name, size and mtime: cheap enough for every command).
def _watched() -> tuple[Path, ...]:
    return (SRC, HERE, Path(ETDUMP).parent)


def _shallow(paths) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for root in paths:
        for p in sorted(Path(root).rglob("*")):
            if "__pycache__" in p.parts or p.name.endswith(".pyc") or ".pytest_cache" in p.parts:
                continue
            st = p.lstat()
            out[str(p)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def split_env(argv_t: list[str]) -> tuple[dict[str, str], list[str]]:
    """Leading "env:NAME=VALUE" items of a template -> ({NAME: VALUE}, the command)."""
    env: dict[str, str] = {}
    i = 0
    while i < len(argv_t) and argv_t[i].startswith(ENV_PREFIX):
        name, _, value = argv_t[i][len(ENV_PREFIX):].partition("=")
        env[name] = value
        i += 1
    return env, argv_t[i:]


def run_generated(kind: str, gen: Generated, argv_t: list[str], workdir: Path,
                  wall_limit: float | None = None) -> Outcome:
    """One command on one generated input, in a scratch working folder (HOME and TMPDIR in it);
    the inputs and the watched folders fingerprinted before and after."""
    env, cmd_t = split_env(argv_t)
    fields = {"o": str(workdir / "out"), "e": ETDUMP, **gen.fields}
    argv = [a.format(**fields) for a in cmd_t]
    scratch = workdir / "cwd"
    scratch.mkdir(exist_ok=True)
    env = {"HOME": str(scratch), "TMPDIR": str(scratch), **env}
    # "bytes" are all inputs together: a file given twice (``diff {f} {f}``) is read twice
    size = gen.size * max(1, sum(a.count("{f}") for a in cmd_t)) if "f" in gen.fields else gen.size
    budget = gen.budgets.get(argv[0]) if argv else None
    limit = wall_limit if wall_limit is not None else 3 * (budget or budget_for(argv)).seconds(size) + 20
    inputs_before, watched_before = fingerprint(gen.inputs), _shallow(_watched())
    rc, wall, cpu, rss, err = run_child(argv, limit, env, cwd=scratch)
    changed = [f"input {p}" for p in _changed(inputs_before, fingerprint(gen.inputs))]
    changed += [f"outside file {p}" for p in _changed(watched_before, _shallow(_watched()))]
    return Outcome(kind, argv, size, rc, wall, cpu, rss, err, changed,
                   {k: v for k, v in env.items() if k not in ("HOME", "TMPDIR")}, budget)


def write_input(kind: str, data: bytes, workdir: Path) -> Generated:
    """A file kind's bytes written as the {f} of its commands."""
    f = workdir / f"input{SUFFIX[kind]}"
    f.write_bytes(data)
    return Generated({"f": str(f)}, (f,), len(data))


def run_case(kind: str, data: bytes, argv_t: list[str], workdir: Path, wall_limit: float | None = None) -> Outcome:
    return run_generated(kind, write_input(kind, data, workdir), argv_t, workdir, wall_limit)


def generate(kind: str, rng: random.Random, workdir: Path) -> tuple[Generated, list[list[str]]]:
    """A fresh input of ``kind`` in ``workdir`` and the command templates that read it."""
    if kind in EXTRA_KINDS:
        folder = workdir / f"input-{kind}"
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        folder.mkdir()
        extra = EXTRA_KINDS[kind]
        gen = extra.make(rng, folder)
        return gen, [list(c) for c in gen.commands] or extra.commands
    return write_input(kind, G.GENERATORS[kind](rng), workdir), COMMANDS[kind]


def campaign(kinds, seeds, n_commands: int | None, first_seed: int = 0, log=H.log, skip=(), only=()):
    """Run ``seeds`` generated inputs per kind, each through ``n_commands`` commands sampled per
    seed (all when None; commands named in ``skip`` left out; with ``only``, just those commands).
    Returns the outcomes."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="etscope-campaign-") as d:
        work = Path(d)
        for kind in kinds:
            for seed in range(first_seed, first_seed + seeds):
                rng = random.Random(f"{kind}-{seed}")
                gen, templates = generate(kind, rng, work)
                cmds = [c for c in templates if split_env(c)[1][0] not in skip
                        and (not only or split_env(c)[1][0] in only)]
                if n_commands is not None:
                    cmds = rng.sample(cmds, min(n_commands, len(cmds)))
                for argv_t in cmds:
                    o = run_generated(kind, gen, argv_t, work)
                    outcomes.append(o)
                    if o.problems():
                        log(f"FAIL seed {seed}: {o.describe()}: {'; '.join(o.problems())}")
    return outcomes


def summarise(outcomes: list[Outcome]) -> str:
    """Counts and worst ratios per command (the table SECURITY.md keeps)."""
    by = collections.defaultdict(list)
    for o in outcomes:
        by[(o.kind, "".join(f"{k}={v} " for k, v in o.env.items()) + o.argv[0])].append(o)
    lines = [f"{'kind':9} {'command':8} {'cases':>5} {'fail':>4} {'max kB':>7} {'worst cpu/budget':>16} "
             f"{'worst rss/budget':>16} {'max cpu s':>9} {'max rss MB':>10}"]
    for (kind, cmd), os_ in sorted(by.items()):
        b = budget_for([cmd.split()[-1]])
        lines.append(f"{kind:9} {cmd:8} {len(os_):5d} {sum(bool(o.problems()) for o in os_):4d} "
                     f"{max(o.size for o in os_) / 1e3:7.0f} "
                     f"{max(o.cpu / b.seconds(o.size) for o in os_):16.2f} "
                     f"{max(o.rss_mb / b.rss_mb(o.size) for o in os_):16.2f} "
                     f"{max(o.cpu for o in os_):9.2f} {max(o.rss_mb for o in os_):10.0f}")
    return "\n".join(lines)


def all_kinds() -> list[str]:
    return sorted(G.GENERATORS) + sorted(EXTRA_KINDS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", action="append", help="default: all (" + ", ".join(all_kinds()) + ")")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--commands", type=int, default=None, help="commands sampled per seed (default: all)")
    ap.add_argument("--skip", action="append", default=[], help="leave out this command (e.g. diff)")
    ap.add_argument("--only", action="append", default=[], help="run only this command (e.g. program)")
    ap.add_argument("--json", type=Path, help="write every outcome here (kind, argv, size, rc, cpu, wall, rss)")
    args = ap.parse_args(argv)
    t0 = time.time()
    unknown = set(args.kind or ()) - set(all_kinds())
    if unknown:
        ap.error(f"unknown kind(s) {sorted(unknown)}; known: {all_kinds()}")
    outcomes = campaign(args.kind or all_kinds(), args.seeds, args.commands, args.first_seed,
                        skip=tuple(args.skip), only=tuple(args.only))
    H.log(summarise(outcomes))
    if args.json:
        import json
        args.json.write_text(json.dumps([{"kind": o.kind, "command": o.argv[0], "env": o.env, "argv": o.argv[1:2],
                                          "size": o.size,
                                          "rc": o.rc, "cpu": round(o.cpu, 3), "wall": round(o.wall, 3),
                                          "rss_mb": round(o.rss_mb, 1), "problems": o.problems()}
                                         for o in outcomes], indent=0))
    bad = [o for o in outcomes if o.problems()]
    H.log(f"{len(outcomes)} cases, {len(bad)} failing, {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
