"""Phases in the dataset (issue 34): collect writes each run's phase and method, trend never pools
an LLM's prefill and decode (a series per phase, each file's phase a session of its own), and a
dataset collected before the columns existed is still read by trend and sql --dataset (its runs
one phase, ``all``, as they were summarised then)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from etscope.analysis.diff.trend import session_p50
from etscope.cli import main

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
FILES = {"gen_llama": "b1", "gen_llama_chunked": "b2"}     # two sessions of one program (gen_manifest.json)


def cli(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.stdout


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("phases")
    (d / "in").mkdir()
    files = {}
    for stem, build in FILES.items():
        shutil.copy(REAL / f"{stem}.etdump", d / "in" / f"{stem}.etdump")
        files[f"{stem}.etdump"] = {"build": build, "order": build[1:]}
    (d / "meta.json").write_text(json.dumps({"model": "llama", "soc": "x86", "files": files}))
    cli("collect", d / "in", "--to", d / "ds", "--meta-from", d / "meta.json", "--workers", "1")
    return d / "ds"


def _rows(ds: Path, sql: str) -> list[dict]:
    return json.loads(cli("sql", "--dataset", ds, sql, "--format", "json"))


def test_collected_runs_carry_the_llm_phases(dataset):
    for stem, build in FILES.items():
        llm = json.loads(cli("llm", REAL / f"{stem}.etdump", "--json"))["llm"]
        got = _rows(dataset, f"SELECT phase, list(execute ORDER BY execute) AS runs FROM runs WHERE build = '{build}' "
                             "GROUP BY phase")
        assert {r["phase"]: r["runs"] for r in got} == {p["name"]: p["runs"] for p in llm["phases"]}
        ops = _rows(dataset, f"SELECT DISTINCT phase FROM ops WHERE build = '{build}'")
        assert {r["phase"] for r in ops} == {"prefill", "decode"}


def test_trend_is_per_phase_never_pooled(dataset):
    t = json.loads(cli("trend", "--dataset", dataset, "--json"))
    assert sorted(s["phase"] for s in t["series"]) == ["decode", "prefill"]
    runs = _rows(dataset, "SELECT build, phase, execute, latency_ms FROM runs")
    for s in t["series"]:
        for b in s["builds"]:
            mine = [r for r in runs if r["build"] == b["build"] and r["phase"] == s["phase"]]
            want = session_p50(np.array([r["execute"] for r in mine]), np.array([r["latency_ms"] for r in mine]))
            assert b["p50_ms"] == pytest.approx(want[0], rel=1e-12) and b["runs"] == want[1]
    text = cli("trend", "--dataset", dataset)
    assert "llama on x86, prefill runs" in text and "llama on x86, decode runs" in text


def _strip_phase_columns(ds: Path) -> None:
    """Make the dataset as an etscope before issue 34 wrote it: no phase/method columns (the
    manifest's byte counts follow)."""
    for entry in (ds / "_manifest").glob("*.json"):
        doc = json.loads(entry.read_text())
        for part in doc["parts"].values():
            path = ds / part["path"]
            t = pq.read_table(path)
            keep = [c for c in t.column_names if c not in ("phase", "method")]
            if keep != t.column_names:
                pq.write_table(t.select(keep), path)
                part["bytes"] = path.stat().st_size
        entry.write_text(json.dumps(doc))


def test_a_dataset_without_the_columns_is_still_read(dataset, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(dataset, old)
    _strip_phase_columns(old)
    res = CliRunner().invoke(main, ["trend", "--dataset", str(old), "--json"])
    assert res.exit_code == 0 and "warning" not in res.stderr, res.output
    t = json.loads(res.stdout)
    assert [s["phase"] for s in t["series"]] == ["all"]        # its runs together, as before
    runs = _rows(old, "SELECT build, execute, latency_ms FROM runs")
    for b in t["series"][0]["builds"]:
        mine = [r for r in runs if r["build"] == b["build"]]
        want = session_p50(np.array([r["execute"] for r in mine]), np.array([r["latency_ms"] for r in mine]))
        assert b["p50_ms"] == pytest.approx(want[0], rel=1e-12)
    assert _rows(old, "SELECT count(*) AS n FROM runs")[0]["n"] == len(runs) == 32 + 14
    assert "phase" not in _rows(old, "SELECT * FROM runs LIMIT 1")[0]
    # A file collected now into that dataset: its rows have phases, the old rows null; trend keeps
    # the old runs together (all) and the new file's phases apart.
    (tmp_path / "new").mkdir()
    shutil.copy(REAL / "llama.etdump", tmp_path / "new" / "llama.etdump")
    cli("collect", tmp_path / "new", "--to", old, "--meta", "model=llama", "--meta", "soc=x86", "--meta", "build=b3",
        "--meta", "order=3", "--workers", "1")
    got = _rows(old, "SELECT build, phase, count(*) AS n FROM runs GROUP BY ALL ORDER BY ALL")
    assert [(r["build"], r["phase"], r["n"]) for r in got] == [
        ("b1", None, 32), ("b2", None, 14), ("b3", "decode", 23), ("b3", "prefill", 1)]
    t = json.loads(cli("trend", "--dataset", old, "--json"))
    assert sorted((s["phase"], [b["build"] for b in s["builds"]]) for s in t["series"]) == [
        ("all", ["b1", "b2"]), ("decode", ["b3"]), ("prefill", ["b3"])]


def test_a_phase_column_of_another_type_is_a_bad_part(dataset, tmp_path):
    """A part whose phase is not text (written by something else): skipped with one warning line,
    never a traceback; the other file's series stand."""
    import pyarrow as pa

    odd = tmp_path / "odd"
    shutil.copytree(dataset, odd)
    entry = next(e for e in (odd / "_manifest").glob("*.json") if "build=b1" in e.read_text())
    doc = json.loads(entry.read_text())
    part = doc["parts"]["runs"]
    t = pq.read_table(odd / part["path"])
    i = t.column_names.index("phase")
    pq.write_table(t.set_column(i, "phase", pa.array(np.arange(t.num_rows), pa.int64())), odd / part["path"])
    part["bytes"] = (odd / part["path"]).stat().st_size
    entry.write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["trend", "--dataset", str(odd), "--json"])
    assert res.exit_code == 0, res.output
    assert "column 'phase' is int64, expected str; part skipped" in res.stderr
    t = json.loads(res.stdout)
    assert sorted((s["phase"], [b["build"] for b in s["builds"]]) for s in t["series"]) == [
        ("decode", ["b2"]), ("prefill", ["b2"])]
