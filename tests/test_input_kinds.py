"""The registry of input kinds (issue 33 item 3): every kind's option is on the commands the registry
names, and a new kind added to a copy of the package by touching three source files (its registry
entry, its reader, its view) reaches the CLI option, the notebook, ``collect`` and a view, with the
hostile-input guarantees of the others (a wrong kind names the right option; a bad file is one line
and exit 2)."""
from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from etscope.cli import main
from etscope.formats import kinds as K

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "etscope"
ETDUMP = ROOT / "tests" / "fixtures" / "real" / "cnn.etdump"


# ---- the registry as it is --------------------------------------------------------------------------
def test_every_kind_option_is_on_the_commands_the_registry_names():
    for kind in K.KINDS:
        if kind.option is None:
            continue
        for name in kind.option.commands:
            params = {p.name: p for p in main.commands[name].params}
            assert kind.option.param in params, (kind.name, name)
            p = params[kind.option.param]
            assert p.opts == [kind.option.flag] and p.multiple == kind.option.multiple and p.help == kind.option.help


def test_no_command_takes_a_kind_option_the_registry_does_not_give_it():
    flags = {k.option.flag: k for k in K.KINDS if k.option is not None}
    for name, command in main.commands.items():
        for p in command.params:
            for flag in set(p.opts) & set(flags):
                assert name in flags[flag].option.commands, (name, flag)


def test_every_per_side_option_is_on_its_command_with_the_registry_help():
    """``diff --runtrace-base/--runtrace-new`` and ``numerics --reference-taps`` come from the registry."""
    assert [s.flag for s in K.side_flags_of("diff")] == ["--runtrace-base", "--runtrace-new"]
    assert [s.flag for s in K.side_flags_of("numerics")] == ["--reference-taps"]
    for name in K.SIDES:
        params = {p.name: p for p in main.commands[name].params}
        for s in K.side_flags_of(name):
            p = params[s.param]
            assert p.opts == [s.flag] and p.multiple == s.kind.option.multiple and p.help == s.help, s.flag
    sides = {s.flag: name for name in K.SIDES for s in K.side_flags_of(name)}
    for name, command in main.commands.items():
        for p in command.params:
            for flag in set(p.opts) & set(sides):
                assert sides[flag] == name, (name, flag)


def test_a_command_must_name_its_per_side_options():
    from etscope.cli.kind_options import side_options

    def diff_without_runtraces(base, new):
        return None

    with pytest.raises(TypeError, match="--runtrace-base, --runtrace-new"):
        side_options("diff")(diff_without_runtraces)


@pytest.mark.parametrize("command", ["qnn", "report", "trace", "export", "sql"])
def test_the_usage_error_without_inputs_lists_exactly_the_registry_flags(command):
    """Given nothing, a view names what it could read: the registry's flags of the kinds it reads
    without an ETDump (``qnn``: all of its kinds; the others: the kinds they hand on in ``given``)."""
    import inspect

    from click.testing import CliRunner

    args = [command] + (["SELECT 1"] if command == "sql" else [])
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    line = next(ln for ln in r.output.splitlines() if "give an ETDump" in ln)
    listed = re.findall(r"--[a-z-]+", line)
    named = inspect.signature(main.commands[command].callback).parameters
    want = [k.option.flag for k in K.options_of(command) if command == "qnn" or k.option.param not in named]
    assert listed == want and len(want) >= 4


def test_registry_names_are_unique_and_point_the_right_way():
    """Readers live in formats, views in the analysis the Results may import (not diff/numerics),
    and every reference resolves."""
    names = [k.name for k in K.KINDS]
    assert len(names) == len(set(names))
    flags = [k.option.flag for k in K.KINDS if k.option is not None]
    assert len(flags) == len(set(flags))
    suffixes = [k.companion for k in K.KINDS if k.companion is not None]
    assert len(suffixes) == len(set(suffixes))
    for k in K.KINDS:
        if k.reader is not None:
            assert k.reader.startswith("etscope.formats.") and callable(K.resolve(k.reader)), k.name
        if k.view is not None:
            assert k.view.startswith("etscope.analysis.") and not k.view.startswith(
                ("etscope.analysis.diff", "etscope.analysis.numerics")), k.name
        for form in k.forms:
            assert callable(K.resolve(form.sniff)), k.name


def test_collect_reads_the_registry_companions_in_the_former_order():
    """The dataset's ``files`` columns (one per companion) keep their names and order."""
    from etscope.fleet.jobs import COMPANIONS

    assert list(COMPANIONS.items()) == [("etrecord", ".etrecord"), ("pte", ".pte"), ("qhas", ".qhas.json"),
                                        ("optrace", ".optrace.json"), ("runtrace", ".runtrace.json")]


def test_the_notebook_takes_the_kinds_by_the_cli_names():
    """``etscope.load(etdump, runtrace=...)`` gives the summary ``etscope summary --runtrace`` prints."""
    from click.testing import CliRunner

    import etscope
    from etscope.render.json import dumps

    etd = ROOT / "tests" / "fixtures" / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
    rt = ROOT / "tests" / "fixtures" / "shared" / "qnn-device" / "chain8_sm8650.runtrace.json"
    cli = CliRunner().invoke(main, ["summary", str(etd), "--runtrace", str(rt), "--json"])
    assert cli.exit_code == 0, cli.output
    p = etscope.load(etd, runtrace=str(rt))
    assert json.loads(dumps(etscope.api.summary(p))) == json.loads(cli.output)
    assert json.loads(cli.output)["qnn"] != json.loads(dumps(etscope.api.summary(etscope.load(etd))))["qnn"]


# ---- a new kind, added the way a contributor would -------------------------------------------------
# 1. its entry in the registry (formats/kinds.py)
ENTRY = '''    InputKind("npu_counters", (Form("a synthetic NPU counters text", "etscope.formats.npu_counters:sniff"),),
              reader="etscope.formats.npu_counters:read_npu_counters",
              option=Option("--npu-counters", "npu_counters", "NPU counters per run (synthetic_npu_counters text).",
                            ("summary",)),
              companion=".npu.txt", view="etscope.analysis.views.npu_counters:counters_view"),
'''

# 2. its reader (formats/npu_counters.py): bytes -> columns
READER = '''"""A synthetic NPU counter log: a header line, then ``run,counter,value`` rows."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from etscope.errors import FormatError
from etscope.formats.qnn_names import read_input_bytes

MAGIC = b"# npu-counters v1"
MAX_BYTES = 16 << 20


def sniff(head: bytes) -> bool:
    return head.startswith(MAGIC)


@dataclass(frozen=True)
class NpuCounters:
    run: np.ndarray        # int64
    counter: tuple         # names, one per row
    value: np.ndarray      # int64


def read_npu_counters(path) -> NpuCounters:
    name = os.fspath(path)
    data = read_input_bytes(path, max_bytes=MAX_BYTES, what="NPU counters")
    if not data.startswith(MAGIC):
        raise FormatError("not an NPU counters text (expected a '# npu-counters v1' first line)", file=name)
    runs, counters, values = [], [], []
    for lineno, raw in enumerate(data.split(b"\\n")[1:], start=2):
        line = raw.strip()
        if not line:
            continue
        parts = line.split(b",")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit() or len(parts[2]) > 18:
            raise FormatError(f"line {lineno}: expected 'run,counter,value' (whole numbers)", file=name)
        runs.append(int(parts[0]))
        counters.append(parts[1].decode("ascii", "replace")[:80])
        values.append(int(parts[2]))
    return NpuCounters(np.asarray(runs, dtype=np.int64), tuple(counters), np.asarray(values, dtype=np.int64))
'''

# 3. its view (analysis/views/npu_counters.py): read data (with the Results) -> a typed view
VIEW = '''"""Per NPU counter: its total and its mean per run over the runs it was logged in."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CounterRow:
    counter: str
    runs: int
    total: int
    mean_per_run: float


@dataclass(frozen=True)
class NpuCountersView:
    schema: str
    etdump_runs: int | None
    counters: tuple


def counters_view(results, data) -> NpuCountersView:
    rows = []
    for name in sorted(set(data.counter)):
        pick = [i for i, c in enumerate(data.counter) if c == name]
        runs = len({int(data.run[i]) for i in pick})
        total = int(sum(int(data.value[i]) for i in pick))
        rows.append(CounterRow(name, runs, total, total / runs))
    return NpuCountersView("etscope.npu_counters/1",
                           results.profile.n_runs if results.profile is not None else None, tuple(rows))
'''

COUNTERS = b"# npu-counters v1\n0,mac_ops,100\n0,dma_bytes,4096\n1,mac_ops,300\n1,dma_bytes,2048\n"
WANT = {"schema": "etscope.npu_counters/1", "etdump_runs": 10,
        "counters": [{"counter": "dma_bytes", "runs": 2, "total": 6144, "mean_per_run": 3072.0},
                     {"counter": "mac_ops", "runs": 2, "total": 400, "mean_per_run": 200.0}]}


def package_copy(root: Path, edits: dict[str, tuple[str, str]], new: dict[str, str]) -> Path:
    """A copy of the package under ``root``/etscope where each ``edits`` file has its one
    ``anchor`` replaced (path -> (anchor, replacement)) and each ``new`` file is written; ``root``."""
    pkg = root / "etscope"
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, (anchor, replacement) in edits.items():
        text = (pkg / rel).read_text()
        assert text.count(anchor) == 1, rel
        (pkg / rel).write_text(text.replace(anchor, replacement))
    for rel, text in new.items():
        (pkg / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the package with the new kind: the registry entry, the reader and the view."""
    anchor = '    InputKind("parquet",'
    return package_copy(tmp_path_factory.mktemp("kind") / "src", {"formats/kinds.py": (anchor, ENTRY + anchor)},
                        {"formats/npu_counters.py": READER, "analysis/views/npu_counters.py": VIEW})


def _changed(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out = [str(Path(a.name) / n) for n in cmp.left_only + cmp.right_only + cmp.diff_files]
    for sub, c in cmp.subdirs.items():
        out += [str(Path(a.name) / x) for x in _changed(a / sub, b / sub)]
    return out


def run(tree: Path, *args, code: str | None = None, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(tree))
    argv = [sys.executable, *(["-c", code] if code else ["-m", "etscope.cli"]), *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_a_new_kind_touches_three_source_files(tree):
    assert sorted(_changed(SRC, tree / "etscope")) == ["etscope/analysis/views/npu_counters.py",
                                                        "etscope/formats/kinds.py",
                                                        "etscope/formats/npu_counters.py"]


def test_the_new_kind_reaches_the_cli_option_and_a_view(tree, tmp_path):
    f = tmp_path / "c.npu.txt"
    f.write_bytes(COUNTERS)
    proc = run(tree, "summary", "--help")
    assert "--npu-counters" in proc.stdout and "NPU counters per run" in proc.stdout
    assert "--npu-counters" not in run(tree, "qnn", "--help").stdout      # only the commands the entry names
    proc = run(tree, "summary", ETDUMP, "--npu-counters", f, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["npu_counters"] == WANT
    # Without it, the summary is what it was (the view is there only when the file is given).
    proc = run(tree, "summary", ETDUMP, "--json")
    assert "npu_counters" not in json.loads(proc.stdout)


def test_the_new_kind_reaches_the_notebook(tree, tmp_path):
    f = tmp_path / "c.npu.txt"
    f.write_bytes(COUNTERS)
    code = ("import sys, etscope\nfrom etscope.render.json import dumps\n"
            "p = etscope.load(sys.argv[1], npu_counters=sys.argv[2])\nprint(dumps(p.input_view('npu_counters')))")
    proc = run(tree, ETDUMP, f, code=code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == WANT


def test_the_new_kind_reaches_collect(tree, tmp_path):
    """A companion beside the ETDump (``<stem>.npu.txt``) is read and its view stored with the file."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(ETDUMP, folder / "cnn.etdump")
    (folder / "cnn.npu.txt").write_bytes(COUNTERS)
    proc = run(tree, "collect", folder, "--to", tmp_path / "ds", "--workers", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["added"] == 1
    proc = run(tree, "sql", "--dataset", tmp_path / "ds", "SELECT npu_counters, npu_counters_view_json FROM files",
               "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["npu_counters"].endswith("cnn.npu.txt")
    assert json.loads(row["npu_counters_view_json"]) == WANT
    # A bad companion is a reject with its reader's reason, not the end of the batch.
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "real" / "gen_cnn.etdump", bad / "gen_cnn.etdump")
    (bad / "gen_cnn.npu.txt").write_bytes(b"# npu-counters v1\nnot,a,row\n")
    proc = run(tree, "collect", bad, "--to", tmp_path / "ds", "--workers", "1", "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["rejected"] == 1, proc.stderr
    assert doc["rejects"][0]["reason"].endswith("gen_cnn.npu.txt: line 2: expected 'run,counter,value' (whole numbers)")


def test_the_new_kind_keeps_the_hostile_input_guarantees(tree, tmp_path):
    good, bad = tmp_path / "c.npu.txt", tmp_path / "bad.npu.txt"
    good.write_bytes(COUNTERS)
    bad.write_bytes(b"# npu-counters v1\n0,mac_ops,-5\n")
    # A bad file: one line naming it, exit 2.
    proc = run(tree, "summary", ETDUMP, "--npu-counters", bad)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"etscope: {bad}: line 2: expected 'run,counter,value' (whole numbers)"]
    # Given to another kind's option, it is named with its own.
    proc = run(tree, "summary", ETDUMP, "--runtrace", good)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "a synthetic NPU counters text: read it with etscope summary --npu-counters FILE" in proc.stderr
    # Another kind given to it names that kind's option.
    heap = tmp_path / "heap.txt"
    heap.write_bytes(b"DSP:before_context_created (bytes), 100\nDSP:after_context_created (bytes), 200\n")
    proc = run(tree, "summary", ETDUMP, "--npu-counters", heap)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "a QNN DSP heap usage log: read it with etscope summary/qnn/report --qnn-heap FILE" in proc.stderr
