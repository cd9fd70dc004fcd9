"""Every text view at 80 columns (issue 21 item 1): on a pseudo-terminal no line is wider than 80
cells and every QNN name keeps its ``:OpId_N`` tail; piped, nothing is shortened or left out
("…" never appears), COLUMNS is honoured when set and there is no width limit when it is not.

The views run in one subprocess per mode (a driver calling the CLI for each), so the output
really goes to a pty or a pipe, as a user's would; standard error goes to the same place (the
views' warnings and collect's reject lines follow the same width rules).

Every text view of every command is here: summary (with the DSP heap lines), ops (by instruction
and --by module), qnn (with heap lines), llm, diff, program, sql, numerics (statistics and
comparison), collect's summary and reject lines, trend. ``test_every_command_has_a_view`` fails
when a command is added without one.
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
REAL, Q, QF, D, N = FIX / "real", FIX / "qnn_etdump", FIX / "qnn", FIX / "diff", FIX / "numerics"
LLM_Q = Q / "synthetic_qnn_llm"
HYBRID_PTE = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
OPID = re.compile(r"\bOpId_\d+\b")

VIEWS = {
    "summary": ["summary", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"),
                "--pte", str(REAL / "llama.pte")],
    "summary-qnn": ["summary", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord"],
    "ops": ["ops", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--pte",
            str(REAL / "llama.pte"), "--phase", "all"],
    "ops-phases": ["ops", str(FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"), "--pte", str(HYBRID_PTE)],
    "ops-qnn": ["ops", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord", "--limit", "0", "--sort", "cycles"],
    "qnn": ["qnn", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord", "--top", "0"],
    "qnn-files": ["qnn", str(Q / "synthetic_qnn_chain8_device.etdump"), "--qhas", str(QF / "chain8_sm8650.qhas.json"),
                  "--optrace", str(QF / "chain8_sm8650.optrace.json"), "--runtrace",
                  str(QF / "chain8_sm8650.runtrace.json"), "--sort", "mean"],
    "llm": ["llm", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--pte",
            str(REAL / "llama.pte")],
    "llm-qnn": ["llm", str(FIX / "qnn_hybrid" / "synthetic_qnn_4shard.etdump"), "--etrecord",
                str(FIX / "qnn_hybrid" / "synthetic_qnn_4shard.etrecord")],
    # Several sessions (issue 34): the per-file table, file-named warm-up and the counted-once warning.
    "llm-files": ["llm", str(REAL / "gen_llama.etdump"), str(REAL / "gen_llama_chunked.etdump"),
                  str(REAL / "gen_llama.etdump")],
    "diff": ["diff", str(D / "diff_same_00.etdump"), str(D / "diff_slower.etdump")],
    "diff-placement": ["diff", str(D / "diff_conv_xnnpack.etdump"), str(D / "diff_conv_cpu.etdump"),
                       "--etrecord-base", str(D / "diff_conv_xnnpack.etrecord"),
                       "--etrecord-new", str(D / "diff_conv_cpu.etrecord")],
    "program": ["program", str(REAL / "llama.pte")],
    "sql": ["sql", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord",
            "SELECT name, op_type, placement, total, unit, source FROM ops ORDER BY total DESC", "--limit", "0"],
    "modules": ["ops", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--by", "module"],
    "summary-heap": ["summary", str(REAL / "cnn.etdump"), "--pte", str(REAL / "cnn.pte"), "--qnn-heap",
                     str(QF / "synthetic_htp_heap_usage.txt")],
    "qnn-heap": ["qnn", f"{LLM_Q}.etdump", "--etrecord", f"{LLM_Q}.etrecord", "--qnn-heap",
                 str(QF / "synthetic_htp_heap_usage_not_freed.txt")],
    "numerics": ["numerics", str(N / "num_q8.etdump"), "--debug-buffer", str(N / "num_q8.debugbuf"),
                 "--etrecord", str(N / "num_q8.etrecord")],
    "numerics-compare": ["numerics", str(N / "num_cpu.etdump"), "--debug-buffer", str(N / "num_cpu.debugbuf"),
                         "--etrecord", str(N / "num_cpu.etrecord"), "--reference", str(N / "num_q8.etdump"),
                         "--reference-buffer", str(N / "num_q8.debugbuf"), "--reference-etrecord",
                         str(N / "num_q8.etrecord")],
}
# A reject line names the file: long enough to need wrapping at 80 columns.
BROKEN = "a_broken_upload_from_the_device_farm_nightly_run_of_the_third_of_december_pixel_8_pro.etdump"


@pytest.fixture(scope="module")
def views(tmp_path_factory) -> dict:
    """VIEWS plus the dataset views: collect (a good file and a broken one) and trend (a build series)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fleet"))
    from etdump_series import write_series

    from etscope.fleet.collect import collect

    tmp = tmp_path_factory.mktemp("views")
    write_series(tmp / "series", seed=1, slower=(1.3, 5))
    collect([tmp / "series"], tmp / "trend_ds", workers=1)
    (tmp / "in").mkdir()
    (tmp / "in" / "cnn.etdump").write_bytes((REAL / "cnn.etdump").read_bytes())
    (tmp / "in" / BROKEN).write_bytes(b"not an etdump at all")
    return {**VIEWS, "collect": ["collect", str(tmp / "in"), "--to", str(tmp / "ds_@RUN@"), "--workers", "1"],
            "trend": ["trend", "--dataset", str(tmp / "trend_ds")]}


def test_every_command_has_a_view(views):
    """Each command with a text view is exercised above (report, export, trace and demo write files)."""
    from etscope.cli import main

    covered = {args[0] for args in views.values()}
    assert set(main.commands) - covered <= {"report", "export", "trace", "demo"}, set(main.commands) - covered
SEP = "=====etscope-view "

# "@RUN@" in an argument: a name of this run's own (collect writes a new dataset each run).
DRIVER = f"""
import json, os, sys
from etscope.cli import main
for name, args in json.loads(sys.argv[1]).items():
    print({SEP!r} + name, flush=True)
    try:
        main([a.replace("@RUN@", str(os.getpid())) for a in args], standalone_mode=False)
    except SystemExit:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
"""


def _env(columns: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    env["TERM"] = "xterm-256color"
    env["ETSCOPE_PROGRESS"] = "0"
    if columns is not None:
        env["COLUMNS"] = columns
    return env


def _run_pty(env: dict, views: dict, cols: int = 80) -> str:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, json.dumps(views)], stdout=slave, stderr=slave,
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
    out = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert proc.returncode == 0, out[-2000:]
    return out


def _run_pipe(env: dict, views: dict) -> str:
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(views)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=env, stdin=subprocess.PIPE, timeout=300)
    assert proc.returncode == 0, proc.stdout.decode()[-2000:]
    return proc.stdout.decode("utf-8")


def _views(text: str, views: dict) -> dict[str, str]:
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
    ids = {m for p in q.partitions for o in p.ops for m in OPID.findall(o.qnn_name)}
    assert len(ids) > 20
    return ids


def _check_opids(views: dict, expected: set[str]) -> None:
    """Every op id is shown: whole (``:OpId_85``) or, where a narrow column would leave the name
    too little of its start, as the number after the ellipsis (``aten_linear…_85``)."""
    for name in ("ops-qnn", "qnn", "sql"):
        text = views[name]
        shown = set(OPID.findall(text)) | {f"OpId_{n}" for n in re.findall(r"…_(\d+)\b", text)}
        assert shown == expected, name
        # intact: each tail is ":OpId_N" or " OpId_N" (never cut inside, e.g. "pId_2" or "OpId_" + "…")
        assert not re.search(r"(?<![:\w ])pId_\d|OpId_(?!\d)", text), name


def _check_content(views: dict) -> None:
    """What each view must say whatever the width (a table printed as an object repr, a missing
    view or a traceback fails here)."""
    assert "Time per source module" in views["modules"] and "TransformerBlock" in views["modules"]
    assert "Method::execute" in views["modules"] and "framework overhead" in views["modules"]
    assert "before the first context was created" in views["summary-heap"]
    assert "after the last context was freed" in views["qnn-heap"]
    assert "Intermediate outputs: 90 tensors" in views["numerics"] and "first divergence" in views["numerics-compare"]
    assert "rejected" in views["collect"] and "extract_etdump" not in views["collect"]
    assert "9aab" in views["trend"] and "regression" in views["trend"] and "object at 0x" not in views["trend"]
    files = " ".join(views["llm-files"].split())      # words wrapped at any width
    assert "joined by phase name" in files and "counted once" in files and "(group 2)" not in files
    assert "Traceback" not in "".join(views.values())


def _check_width(got: dict, width: int) -> None:
    for name, text in got.items():
        wide = [ln for ln in text.split("\n") if cell_len(ln) > width]
        assert not wide, (name, wide[:3])


def _unbroken(text: str) -> str:
    """``text`` with its lines joined (a long name piped at COLUMNS=80 is wrapped, not cut)."""
    return "".join(text.split("\n"))


def test_terminal_80_columns(expected_opids, views):
    out = ANSI.sub("", _run_pty(_env("80"), views))
    got = _views(out, views)
    _check_width(got, 80)
    _check_opids(got, expected_opids)
    _check_content(got)
    assert "…" in got["ops"]            # names shortened in the middle and the 60-row limit said
    assert "more rows (--limit 0 shows all)" in got["ops"]
    # Module names shortened in the middle: the start and the end kept ("_empty_nn…metadata_hook").
    assert re.search(r"_empty_nn\S*…\S*hook", got["modules"]), got["modules"][:2000]


def test_terminal_without_columns_uses_the_terminal_size(views):
    some = {k: views[k] for k in ("ops", "qnn", "modules", "trend")}
    got = _views(ANSI.sub("", _run_pty(_env(None), some, cols=72)), some)
    assert max(cell_len(ln) for text in got.values() for ln in text.split("\n")) <= 72


def test_piped_with_columns_wraps_and_cuts_nothing(expected_opids, views):
    out = _run_pipe(_env("80"), views)
    assert "\x1b[" not in out and "…" not in out
    got = _views(out, views)
    _check_width(got, 80)
    _check_opids(got, expected_opids)
    _check_content(got)
    assert BROKEN in _unbroken(got["collect"])
    # A table name too long for its column goes on over the next line, whole.
    m = re.search(r"(_empty_nn\S*)[^\n]*\n\s*(\S*)", got["modules"])
    assert m and m[1] + m[2] == "_empty_nn_module_stack_from_metadata_hook", got["modules"][:1500]


def test_piped_without_columns_has_no_width_limit(expected_opids, views):
    out = _run_pipe(_env(None), views)
    assert "…" not in out
    got = _views(out, views)
    _check_opids(got, expected_opids)
    _check_content(got)
    assert BROKEN in got["collect"] and "_empty_nn_module_stack_from_metadata_hook" in got["modules"]
    # numerics lists every tensor when piped (the terminal shows 60)
    assert "more (--limit 0" not in got["numerics"]
    views = got
    import etscope
    from etscope.analysis.results import Results

    # One line per row, every row: the ops table of the llama has all its rows (the terminal shows 60).
    rows = Results(etscope.load(REAL / "llama.etdump", etrecord=REAL / "llama.etrecord", pte=REAL / "llama.pte")).ops
    body = views["ops"].split("\n")
    rule = next(i for i, ln in enumerate(body) if ln.startswith("-----"))
    assert len([ln for ln in body[rule + 1:] if ln.strip()]) == len(rows)
    assert any(cell_len(ln) > 120 for ln in body)      # as wide as it needs


VIT = Q / "synthetic_qnn_vit_2part"
VIT_VIEWS = {"qnn-vit": ["qnn", f"{VIT}.etdump", "--etrecord", f"{VIT}.etrecord", "--top", "0"],
             "ops-vit": ["ops", f"{VIT}.etdump", "--etrecord", f"{VIT}.etrecord"]}


def test_two_partition_vit_at_80_columns_keeps_heads_tails_and_fallbacks():
    """Issue 35 item 7, on a pty: every QNN op row of the two-partition ViT keeps the start of its
    name (``aten_…``) and its op id (whole or ``…_85``), never ``at…:OpId_85 (cycles)``; ``ops``
    keeps its row limit and still lists both CPU fallbacks."""
    import etscope
    from etscope import api

    got = _views(ANSI.sub("", _run_pty(_env("80"), VIT_VIEWS)), VIT_VIEWS)
    _check_width(got, 80)
    q = api.qnn(etscope.load(f"{VIT}.etdump", etrecord=f"{VIT}.etrecord"))
    ops = [o.qnn_name for p in q.partitions for o in p.ops]
    rows = [ln for ln in got["qnn-vit"].split("\n") if re.match(r"^\S+(…_\d+|:OpId_\d+ \(cycles\))\s", ln)]
    assert len(rows) >= len(ops)
    from etscope.render.screen import MIN_HEAD, tail_of

    for ln in rows:
        name = ln.split()[0]
        head = name.split("…")[0]
        full = next(o for o in ops if o.startswith(head))
        # the head is kept: MIN_HEAD cells of the start (or all of it when shorter)
        assert len(head) >= min(MIN_HEAD, len(full) - len(tail_of(full))), ln
    shown = set(OPID.findall(got["qnn-vit"])) | {f"OpId_{n}" for n in re.findall(r"…_(\d+)\b", got["qnn-vit"])}
    assert shown >= {m for o in ops for m in OPID.findall(o)}
    assert not re.search(r"^\S{1,4}…:OpId_", got["qnn-vit"], re.M)
    ops_text = got["ops-vit"]
    assert "more rows (--limit 0 shows all)" in ops_text
    for cpu in ("native_call_sum.IntList_out", "native_call_pow.Tensor_Scalar_out"):
        assert cpu in ops_text
