"""The dataset is a folder etscope owns (issue 31): a test per defect found by the hostile
campaign. Each drives the CLI in a child process (``ETSCOPE_CAMPAIGN_SRC`` picks another tree's
``src/``, so the same tests run against the code before the fix and fail there) and checks: exit
code, one clear line, no traceback or Python warning on stderr, files outside the dataset and
inputs untouched."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etdump_series import write_series

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(os.environ.get("ETSCOPE_CAMPAIGN_SRC") or ROOT / "src")
REAL = ROOT / "tests" / "fixtures" / "real"


def cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(SRC), ETSCOPE_PROGRESS="0", PYTHONWARNINGS="default")
    try:
        return subprocess.run([sys.executable, "-m", "etscope.cli", *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"etscope {' '.join(map(str, args))}: still running after {timeout} s (blocked)")


def clean_stderr(r, warnings_allowed: bool = True) -> list[str]:
    """stderr lines, checked: no traceback, no Python warning, every line etscope's own."""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in r.stderr and "Warning:" not in r.stderr, r.stderr
    for ln in lines:
        assert ln.startswith("etscope: ") or ln.startswith("rejected: ") or ln.startswith("("), ln
        if not warnings_allowed:
            assert not ln.startswith("etscope: warning"), ln
    return lines


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def parts(ds: Path, table: str) -> list[Path]:
    return sorted(p for p in (ds / table).rglob("*.parquet") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def series(tmp_path_factory) -> Path:
    """Eight generated ETDumps (4 builds x 2 sessions) with sidecar metadata."""
    d = tmp_path_factory.mktemp("series")
    write_series(d, seed=3, builds=4, sessions=2, runs=6)
    return d


@pytest.fixture()
def ds(series, tmp_path) -> Path:
    """A fresh dataset collected from the series."""
    r = cli("collect", series, "--to", tmp_path / "ds", "--workers", "1")
    assert r.returncode == 0, r.stderr
    return tmp_path / "ds"


def runs_count(ds: Path):
    r = cli("sql", "--dataset", ds, "SELECT count(*) AS n FROM runs", "--format", "json")
    return r, (json.loads(r.stdout)[0]["n"] if r.returncode == 0 and r.stdout.strip() else None)


def decoys(folder: Path) -> dict[str, bytes]:
    """Parquet files outside the dataset, one under the name collect would give a part."""
    folder.mkdir()
    pq.write_table(pa.table({"x": [1, 2, 3]}), folder / "precious.parquet")
    (folder / "notes.parquet").write_bytes(b"my own file, not etscope's")
    sub = folder / "model=cnn" / "soc=sm8650"
    sub.mkdir(parents=True)
    pq.write_table(pa.table({"execute": [0], "latency_ms": [1e9]}), sub / ("0" * 64 + ".parquet"))
    return snapshot(folder)


# ---- never follows a link out of the dataset; never deletes what it did not write ------------------------
@pytest.mark.parametrize("table", ["runs", "ops", "files", "rejects"])
def test_symlinked_table_folder_collect_refuses_and_outside_files_survive(ds, series, tmp_path, table):
    outside = tmp_path / "outside"
    before = decoys(outside)
    shutil.rmtree(ds / table, ignore_errors=True)
    (ds / table).symlink_to(outside, target_is_directory=True)
    extra = tmp_path / "extra"
    write_series(extra, seed=9, builds=1, sessions=1)
    r = cli("collect", extra, "--to", ds, "--workers", "1")
    assert snapshot(outside) == before                       # nothing outside deleted or written
    assert r.returncode == 2 and "symlink" in r.stderr and str(ds / table) in r.stderr, r.stderr
    clean_stderr(r)
    assert len(r.stderr.strip().splitlines()) == 1


def test_symlinked_table_folder_is_not_read(ds, tmp_path):
    """Readers do not follow the link either: the decoy rows never reach sql or trend."""
    outside = tmp_path / "outside"
    decoys(outside)
    shutil.move(ds / "runs", tmp_path / "runs.moved")
    (ds / "runs").symlink_to(tmp_path / "runs.moved", target_is_directory=True)
    r, n = runs_count(ds)
    assert r.returncode in (0, 2) and n in (None, 0), (r.stdout, r.stderr)
    lines = clean_stderr(r)
    assert lines and all("runs" in ln for ln in lines) and len(lines) <= 21
    r = cli("trend", "--dataset", ds, "--json")
    clean_stderr(r)
    assert r.returncode == 0 and json.loads(r.stdout)["series"] == []


def test_symlinked_part_is_not_followed(ds, tmp_path):
    outside = tmp_path / "outside"
    before = decoys(outside)
    part = parts(ds, "runs")[0]
    part.unlink()
    part.symlink_to(outside / "model=cnn" / "soc=sm8650" / ("0" * 64 + ".parquet"))
    r, n = runs_count(ds)
    assert r.returncode == 0, r.stderr
    lines = clean_stderr(r)
    assert len(lines) == 1 and "warning" in lines[0] and part.name in lines[0] and "symlink" in lines[0]
    assert n == 7 * 6                                         # the 7 other sessions' runs; no decoy row
    r = cli("trend", "--dataset", ds, "--json")
    assert r.returncode == 0 and len(clean_stderr(r)) == 1
    assert sum(b["sessions"] for b in json.loads(r.stdout)["series"][0]["builds"]) == 7
    assert snapshot(outside) == before


def test_a_journal_naming_files_outside_deletes_nothing(ds, series, tmp_path):
    """An interrupted commit's journal is trusted only for parts of its own hash, where the layout
    puts them: a planted journal naming other files (outside, or another file's parts) deletes none."""
    outside = tmp_path / "outside"
    before = decoys(outside)
    inside = snapshot(ds)
    h = "ab" * 32
    (ds / "_manifest").mkdir(exist_ok=True)
    victim = parts(ds, "runs")[0].relative_to(ds).as_posix()
    (ds / "_manifest" / f"{h}.pending").write_text(json.dumps({
        "layout": "etscope.dataset/2", "file_hash": h, "status": "added", "partition": {}, "order_key": "",
        "parts": {"runs": {"path": "../outside/precious.parquet", "rows": 1, "bytes": 1},
                  "ops": {"path": victim, "rows": 1, "bytes": 1}}}))
    (ds / "_tmp").mkdir(exist_ok=True)
    (ds / "_tmp" / "mine.txt").write_text("a user's file in the staging folder")
    r = cli("collect", REAL / "gen_cnn.etdump", "--to", ds, "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert snapshot(outside) == before
    assert (ds / victim).exists() and (ds / "_tmp" / "mine.txt").exists()
    assert all((ds / k).exists() for k in inside if not k.startswith("_tmp/"))    # claims are etscope's


# ---- the path is literal --------------------------------------------------------------------------------
def test_dataset_path_with_glob_characters_reads_only_itself(series, tmp_path):
    for name, src, model in (("one", "gen_cnn", "neighbour"), ("two", "cnn", "mine")):
        shutil.copy(REAL / f"{src}.etdump", tmp_path / f"{name}.etdump")
    assert cli("collect", tmp_path / "one.etdump", "--to", tmp_path / "dsx", "--meta", "model=neighbour").returncode == 0
    assert cli("collect", tmp_path / "two.etdump", "--to", tmp_path / "ds[x]", "--meta", "model=mine").returncode == 0
    r = cli("sql", "--dataset", tmp_path / "ds[x]", "SELECT DISTINCT model FROM runs", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"model": "mine"}]
    r = cli("trend", "--dataset", tmp_path / "ds[x]", "--json")
    assert r.returncode == 0 and [s["model"] for s in json.loads(r.stdout)["series"]] == ["mine"]


# ---- no output written into a dataset but by collect ---------------------------------------------------
def test_trend_html_into_a_part_or_the_marker_is_refused(ds, tmp_path):
    before = snapshot(ds)
    for target in (parts(ds, "runs")[0], ds / "_etscope_dataset.json", ds / "runs" / "page.html", ds / "new.html"):
        r = cli("trend", "--dataset", ds, "--html", target)
        assert r.returncode == 2, (target, r.stderr)
        assert "inside the etscope dataset" in r.stderr and "collect" in r.stderr
        assert len(clean_stderr(r)) == 1 and r.stdout == ""          # refused before any work
    r = cli("report", REAL / "gen_cnn.etdump", "-o", ds / "files" / "r.html")
    assert r.returncode == 2 and "inside the etscope dataset" in r.stderr
    r = cli("export", REAL / "gen_cnn.etdump", "-o", ds / "exported")
    assert r.returncode == 2 and "inside the etscope dataset" in r.stderr
    assert snapshot(ds) == before
    r, n = runs_count(ds)
    assert r.returncode == 0 and n == 8 * 6 and clean_stderr(r, warnings_allowed=False) == []


def test_collect_to_never_creates_parent_folders(tmp_path):
    r = cli("collect", REAL / "gen_cnn.etdump", "--to", tmp_path / "missing" / "ds")
    assert r.returncode == 2 and "does not exist" in r.stderr
    clean_stderr(r)
    assert not (tmp_path / "missing").exists()


# ---- reads past a bad part -----------------------------------------------------------------------------
def _entry(ds: Path, part: Path) -> Path:
    return ds / "_manifest" / (part.stem + ".json")


def _restate(ds: Path, part: Path, table: str) -> None:
    """Make the manifest entry agree with a replaced part's bytes and rows (so the check that
    fires is the one under test, not the size check)."""
    e = _entry(ds, part)
    if not e.exists():          # a tree without the manifest (the code before it): nothing to restate
        return
    doc = json.loads(e.read_text())
    doc["parts"][table]["bytes"] = part.stat().st_size
    doc["parts"][table]["rows"] = pq.ParquetFile(part).metadata.num_rows
    e.write_text(json.dumps(doc))


@pytest.mark.parametrize("bad", ["garbage", "garbage_restated", "dangling", "fifo", "folder", "wrong_schema",
                                 "truncated"])
def test_a_bad_part_is_one_warning_naming_it(ds, tmp_path, bad):
    part = parts(ds, "runs")[2]
    part.unlink()
    if bad.startswith("garbage"):
        part.write_bytes(b"PAR1garbagePAR1")
        if bad == "garbage_restated" and _entry(ds, part).exists():
            e = _entry(ds, part)
            doc = json.loads(e.read_text())
            doc["parts"]["runs"]["bytes"] = part.stat().st_size
            e.write_text(json.dumps(doc))
    elif bad == "dangling":
        part.symlink_to(tmp_path / "nowhere.parquet")
    elif bad == "fifo":
        os.mkfifo(part)
    elif bad == "folder":
        part.mkdir()
        (part / "inner.parquet").write_bytes(b"PAR1")
    elif bad == "wrong_schema":
        pq.write_table(pa.table({"file_hash": [part.stem], "something": ["else"]}), part)
        _restate(ds, part, "runs")
    elif bad == "truncated":
        pq.write_table(pa.table({"x": list(range(100))}), tmp_path / "t.parquet")
        part.write_bytes((tmp_path / "t.parquet").read_bytes()[:-40])
    r, n = runs_count(ds)
    assert r.returncode == 0, r.stderr
    lines = clean_stderr(r)
    assert len(lines) == 1 and lines[0].startswith("etscope: warning: ") and part.name in lines[0], lines
    assert n == 7 * 6
    r = cli("trend", "--dataset", ds, "--json")
    assert r.returncode == 0 and len(clean_stderr(r)) == 1, r.stderr
    assert sum(b["sessions"] for b in json.loads(r.stdout)["series"][0]["builds"]) == 7


def test_unexpected_folders_and_files_are_not_read(ds):
    (ds / "runs" / "model=cnn" / "stray").mkdir()
    (ds / "runs" / "model=cnn" / "stray" / "x.parquet").write_bytes(b"PAR1garbagePAR1")
    pq.write_table(pa.table({"execute": [0], "latency_ms": [5.0], "file_hash": ["f" * 64]}),
                   ds / "runs" / ("f" * 64 + ".parquet"))
    os.mkfifo(ds / "runs" / "pipe.parquet")
    r, n = runs_count(ds)
    assert r.returncode == 0 and n == 8 * 6 and clean_stderr(r, warnings_allowed=False) == []


def test_a_corrupt_manifest_entry_is_one_warning(ds):
    e = sorted((ds / "_manifest").glob("*.json"))[0]
    e.write_text("[" * 100_000)
    r, n = runs_count(ds)
    lines = clean_stderr(r)
    assert r.returncode == 0 and n == 7 * 6 and len(lines) == 1 and e.name in lines[0]


# ---- work bounded by the rows the manifest records -------------------------------------------------------
def test_a_part_declaring_more_rows_than_recorded_is_skipped_before_reading(ds, tmp_path):
    """A few hundred kB of Parquet declaring millions of rows (one repeated value): skipped from
    its footer (the manifest recorded 6 rows), so trend's memory stays that of the real rows."""
    part = parts(ds, "runs")[0]
    n = 3_000_000
    big = pa.table({"execute": pa.array([0] * 100_000, pa.int64()), "latency_ms": pa.array([1.0] * 100_000)})
    with pq.ParquetWriter(tmp_path / "big.parquet", big.schema, compression="zstd") as w:
        for _ in range(n // 100_000):
            w.write_table(big, row_group_size=n)
    assert (tmp_path / "big.parquet").stat().st_size < 1 << 20
    shutil.copy(tmp_path / "big.parquet", part)
    e = _entry(ds, part)
    if e.exists():
        doc = json.loads(e.read_text())
        doc["parts"]["runs"]["bytes"] = part.stat().st_size    # same size as recorded: only the rows differ
        e.write_text(json.dumps(doc))
    r = cli("trend", "--dataset", ds, "--json")
    assert r.returncode == 0, r.stderr
    lines = clean_stderr(r)
    assert len(lines) == 1 and f"declares {n} rows" in lines[0] and "recorded 6" in lines[0]


# ---- collect's inputs --------------------------------------------------------------------------------------
def test_a_fifo_named_etdump_is_rejected_not_waited_for(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(REAL / "gen_cnn.etdump", d / "good.etdump")
    os.mkfifo(d / "pipe.etdump")
    r = cli("collect", d, "--to", tmp_path / "ds", "--workers", "1", "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["added"], doc["rejected"]) == (1, 1)
    assert "FIFO" in doc["rejects"][0]["reason"] and "pipe.etdump" in doc["rejects"][0]["reason"]
    clean_stderr(r)


@pytest.mark.parametrize("sidecar, expect", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"build": ' + "7" * 5000 + "}", "not valid JSON"),
    ("{not json", "not valid JSON"),
    ('{"model": {"nested": 1}}', "expected a string or number"),
], ids=["deep", "huge_int", "not_json", "nested_value"])
def test_a_bad_sidecar_is_a_reject_and_the_batch_goes_on(tmp_path, sidecar, expect):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(REAL / "gen_cnn.etdump", d / "a.etdump")
    shutil.copy(REAL / "cnn.etdump", d / "b.etdump")
    (d / "a.meta.json").write_text(sidecar)
    r = cli("collect", d, "--to", tmp_path / "ds", "--workers", "1", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["added"], doc["rejected"]) == (1, 1), doc
    reason = doc["rejects"][0]["reason"]
    assert "a.meta.json" in reason and "sidecar" in reason and expect in reason and "--meta-from" not in reason
    clean_stderr(r)
    r = cli("sql", "--dataset", tmp_path / "ds", "SELECT path, reason FROM rejects", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["path"].endswith("a.etdump")
    # fixed sidecar: the file is collected on the next run
    (d / "a.meta.json").write_text('{"build": "b1"}')
    r = cli("collect", d, "--to", tmp_path / "ds", "--workers", "1", "--json")
    assert json.loads(r.stdout)["added"] == 1


@pytest.mark.parametrize("manifest, expect", [("[" * 100_000, "nested too deeply"),
                                              ('{"build": ' + "9" * 5000 + "}", "not valid JSON")],
                         ids=["deep", "huge_int"])
def test_a_deep_or_huge_meta_from_is_one_line(tmp_path, manifest, expect):
    (tmp_path / "m.json").write_text(manifest)
    r = cli("collect", REAL / "gen_cnn.etdump", "--to", tmp_path / "ds", "--meta-from", tmp_path / "m.json")
    assert r.returncode == 2 and "--meta-from" in r.stderr and expect in r.stderr
    assert len(clean_stderr(r)) == 1


def test_long_partition_values_stay_distinct(tmp_path):
    common = "m" * 300
    names = [common + "-float", common + "-int8"]
    for i, name in enumerate(names):
        shutil.copy(REAL / ("gen_cnn.etdump" if i == 0 else "cnn.etdump"), tmp_path / f"{i}.etdump")
        r = cli("collect", tmp_path / f"{i}.etdump", "--to", tmp_path / "ds", "--meta", f"model={name}")
        assert r.returncode == 0, r.stderr
    r = cli("sql", "--dataset", tmp_path / "ds", "SELECT DISTINCT model FROM runs ORDER BY model", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert [row["model"] for row in json.loads(r.stdout)] == names          # the full values, two of them
    folders = {p.name for p in (tmp_path / "ds" / "runs").iterdir()}
    assert len(folders) == 2 and all(len(f) <= 210 for f in folders)
    r = cli("trend", "--dataset", tmp_path / "ds", "--model", names[1], "--json")
    assert [s["model"] for s in json.loads(r.stdout)["series"]] == [names[1]]


# ---- a dataset written before the manifest ----------------------------------------------------------------
def _as_layout_1(ds: Path) -> None:
    """The same dataset as etscope.dataset/1 wrote it: commit markers, no manifest."""
    (ds / "_collected").mkdir()
    for e in (ds / "_manifest").glob("*.json"):
        (ds / "_collected" / e.stem).write_bytes(b"")
    shutil.rmtree(ds / "_manifest")
    marker = json.loads((ds / "_etscope_dataset.json").read_text())
    marker["layout"] = "etscope.dataset/1"
    marker.pop("manifest", None)
    (ds / "_etscope_dataset.json").write_text(json.dumps(marker))


def test_a_pre_manifest_dataset_is_refused_then_adopted(ds, tmp_path):
    want = cli("trend", "--dataset", ds, "--json")
    assert want.returncode == 0
    _as_layout_1(ds)
    stray = ds / "runs" / "model=cnn" / "soc=sm8650" / "build=0000" / "date=2026-11-30" / ("e" * 64 + ".parquet")
    pq.write_table(pa.table({"x": [1]}), stray)             # a part without a commit marker: not adopted, kept
    for args in (("trend", "--dataset", ds), ("sql", "--dataset", ds, "SELECT 1"),
                 ("collect", REAL / "gen_cnn.etdump", "--to", ds)):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "etscope collect --adopt --to" in r.stderr and len(clean_stderr(r)) == 1
    r = cli("collect", "--adopt", "--to", ds)
    assert r.returncode == 0, r.stderr
    assert "adopted 8 collected file(s)" in r.stderr and stray.exists()
    got = cli("trend", "--dataset", ds, "--json")
    assert got.returncode == 0 and clean_stderr(got, warnings_allowed=False) == []
    assert json.loads(got.stdout) == json.loads(want.stdout)
    r = cli("collect", REAL / "gen_cnn.etdump", "--to", ds)        # and collects again
    assert r.returncode == 0 and "1 added" in r.stdout, r.stderr


def test_sql_dataset_tables_are_arrow_from_the_manifest(ds):
    """``sql --dataset`` gets tables etscope builds (Arrow), not paths for the query to reach."""
    sys.path.insert(0, str(SRC))
    from etscope.fleet.dataset import Dataset, dataset_tables

    tables = dataset_tables(Dataset(ds))
    assert isinstance(tables["runs"], pa.Table) and tables["runs"].num_rows == 8 * 6
    assert {"model", "soc", "build", "date"} <= set(tables["runs"].column_names)
    assert tables["rejects"].num_rows == 0
