"""CI sample of the hostile-SQL generator (gen_sql.py): every shape through the library's
``query()`` and the three writers in a scratch folder, and one query per shape through the CLI.
Each ends refused in one line or written, and no file in the folder (or the canary outside it)
is created or changed. The long campaign runs the same over ``etscope sql ETDUMP QUERY``."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gen_sql import MAX_QUERY, SHAPES, gen_sql

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CANARY = Path("/tmp/etscope-sql-canary")
SEEDS = int(os.environ.get("ETSCOPE_FUZZ_SCALE", "1")) * 6


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    shutil.copy(REAL / "cnn.etdump", tmp_path / "in.etdump")
    (tmp_path / "scratch.txt").write_text("secret\n")
    CANARY.write_text("canary")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _state(folder: Path) -> dict:
    out = {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}
    return out | {"canary": CANARY.read_bytes()}


def test_queries_fit_in_one_argument():
    for seed in range(200):
        q = gen_sql(random.Random(seed))
        assert len(q.encode("utf-8")) <= MAX_QUERY and "\x00" not in q


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_through_the_library(folder, shape):
    from etscope.cli.common import load_results
    from etscope.render.sql import csv_text, json_text, sql_table
    from etscope.sql.engine import SqlError, query
    from etscope.render.sql_cells import UnwritableError

    tables = load_results("in.etdump", None, None, None, {}).tables.named()
    before = _state(folder)
    for seed in range(SEEDS):
        q = gen_sql(random.Random(seed), shape)
        try:
            result = query(tables, q)
        except SqlError as err:
            assert "\n" not in str(err)
        else:
            for write in (csv_text, json_text, lambda t: sql_table(t, None)):
                try:
                    write(result)
                except UnwritableError:
                    pass
        assert _state(folder) == before, q[:200]


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_through_the_cli(folder, shape):
    before = _state(folder)
    rng = random.Random(1000 + SHAPES.index(shape))
    q = gen_sql(rng, shape)
    fmt = rng.choice(["table", "csv", "json"])
    proc = subprocess.run([sys.executable, "-m", "etscope.cli", "sql", "in.etdump", "--format", fmt, "--", q],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    assert len(proc.stderr.splitlines()) <= 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert _state(folder) == before, q[:200]
