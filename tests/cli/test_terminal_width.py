"""Every text view at 80 columns (issue 21 item 1): on a pseudo-terminal no line is wider than 80
cells and every QNN name keeps its ``:OpId_N`` tail; piped, nothing is shortened or left out
("…" never appears), COLUMNS is honoured when set and there is no width limit when it is not.

The views run in one subprocess per mode (a driver calling the CLI for each), so the output
really goes to a pty or a pipe, as a user's would.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.cells import cell_len

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REAL, Q, QF, D = FIX / "real", FIX / "qnn_etdump", FIX / "qnn", FIX / "diff"
LLM_Q = Q / "synthetic_qnn_llm"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
OPID = re.compile(r"\bOpId_\d+\b")

VIEWS = {
    "summary": ["summary", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"),
                "--pte", str(REAL / "llama.pte")],
    "summary-qnn": ["summary", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord"],
    "ops": ["ops", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--pte",
            str(REAL / "llama.pte")],
    "ops-qnn": ["ops", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord", "--limit", "0", "--sort", "cycles"],
    "qnn": ["qnn", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord", "--top", "0"],
    "qnn-files": ["qnn", str(Q / "synthetic_qnn_chain8_device.etdump"), "--qhas", str(QF / "chain8_sm8650.qhas.json"),
                  "--optrace", str(QF / "chain8_sm8650.optrace.json"), "--runtrace",
                  str(QF / "chain8_sm8650.runtrace.json"), "--sort", "mean"],
    "llm": ["llm", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--pte",
            str(REAL / "llama.pte")],
    "llm-qnn": ["llm", str(FIX / "qnn_hybrid" / "synthetic_qnn_4shard.etdump"), "--etrecord",
                str(FIX / "qnn_hybrid" / "synthetic_qnn_4shard.etrecord")],
    "diff": ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_slower.etdump")],
    "diff-placement": ["diff", str(D / "diff_conv_xnnpack.etdump"), str(D / "diff_conv_cpu.etdump"),
                       "--etrecord-base", str(D / "diff_conv_xnnpack.etrecord"),
                       "--etrecord-new", str(D / "diff_conv_cpu.etrecord")],
    "program": ["program", str(REAL / "llama.pte")],
    "sql": ["sql", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord",
            "SELECT name, op_type, placement, total, unit, source FROM ops ORDER BY total DESC", "--limit", "0"],
}
SEP = "=====etscope-view "

DRIVER = f"""
import json, sys
from etscope.cli import main
for name, args in json.loads(sys.argv[1]).items():
    print({SEP!r} + name, flush=True)
    try:
        main(args, standalone_mode=False)
    except SystemExit:
        pass
    sys.stdout.flush()
"""


def _env(columns: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    env["TERM"] = "xterm-256color"
    if columns is not None:
        env["COLUMNS"] = columns
    return env


def _run_pty(env: dict, cols: int = 80, views: dict = VIEWS) -> str:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, json.dumps(views)], stdout=slave, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], 120)
        if not r:
            proc.kill()
            raise AssertionError("no output from the views within 120 s")
        try:
            data = os.read(master, 65536)
        except OSError:          # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read().decode()
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def _run_pipe(env: dict) -> str:
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(VIEWS)], capture_output=True, env=env,
                          stdin=subprocess.PIPE, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8")


def _views(text: str, views: dict = VIEWS) -> dict[str, str]:
    parts = text.split(SEP)[1:]
    out = {p.split("\n", 1)[0].strip(): p.split("\n", 1)[1] for p in parts}
    assert set(out) == set(views)
    return out


@pytest.fixture(scope="module")
def expected_opids() -> set[str]:
    """Every OpId_N the QNN fixture's per-op rows name (from the JSON view)."""
    import etscope
    from etscope import api

    q = api.qnn(etscope.load(f"{LLM_Q}.etdump", etrecord=f"{LLM_Q}.etrecord"))
    ids = {m for p in q["partitions"] for o in p["ops"] for m in OPID.findall(o["qnn_name"])}
    assert len(ids) > 20
    return ids


def _check_opids(views: dict, expected: set[str]) -> None:
    for name in ("ops-qnn", "qnn", "sql"):
        text = views[name]
        assert set(OPID.findall(text)) == expected, name
        # intact: each tail is ":OpId_N" or " OpId_N" (never cut inside, e.g. "pId_2" or "OpId_" + "…")
        assert not re.search(r"(?<![:\w ])pId_\d|OpId_(?!\d)", text), name


def test_terminal_80_columns(expected_opids):
    out = ANSI.sub("", _run_pty(_env("80")))
    views = _views(out)
    for name, text in views.items():
        wide = [ln for ln in text.split("\n") if cell_len(ln) > 80]
        assert not wide, (name, wide[:3])
    _check_opids(views, expected_opids)
    assert "…" in views["ops"]            # names shortened in the middle and the 60-row limit said
    assert "more rows (--limit 0 shows all)" in views["ops"]


def test_terminal_without_columns_uses_the_terminal_size():
    some = {k: VIEWS[k] for k in ("ops", "qnn")}
    views = _views(ANSI.sub("", _run_pty(_env(None), cols=72, views=some)), some)
    assert max(cell_len(ln) for text in views.values() for ln in text.split("\n")) <= 72


def test_piped_with_columns_wraps_and_cuts_nothing(expected_opids):
    out = _run_pipe(_env("80"))
    assert "\x1b[" not in out and "…" not in out
    views = _views(out)
    for name, text in views.items():
        wide = [ln for ln in text.split("\n") if cell_len(ln) > 80]
        assert not wide, (name, wide[:3])
    _check_opids(views, expected_opids)


def test_piped_without_columns_has_no_width_limit(expected_opids):
    out = _run_pipe(_env(None))
    assert "…" not in out
    views = _views(out)
    _check_opids(views, expected_opids)
    import etscope
    from etscope.analysis.results import Results

    # One line per row, every row: the ops table of the llama has all its rows (the terminal shows 60).
    rows = Results(etscope.load(REAL / "llama.etdump", etrecord=REAL / "llama.etrecord", pte=REAL / "llama.pte")).ops
    body = views["ops"].split("\n")
    rule = next(i for i, ln in enumerate(body) if ln.startswith("-----"))
    assert len([ln for ln in body[rule + 1:] if ln.strip()]) == len(rows)
    assert any(cell_len(ln) > 120 for ln in body)      # as wide as it needs
