"""etscope collect / sql --dataset / trend on datasets made from real and generated ETDumps."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from etdump_series import write_series
from etscope.fleet import dataset as D
from etscope.fleet.collect import Counts, collect, counts, file_tables
from etscope.fleet.jobs import find_etdumps, jobs_for

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real"
QNN = ROOT / "tests" / "fixtures" / "qnn_etdump"


def listing(root: Path) -> dict[str, object]:
    """Every file of a dataset (but the lock and staging): Parquet parts as their tables, others as bytes."""
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != D.TMP]
        for f in files:
            p = Path(dirpath) / f
            rel = str(p.relative_to(root))
            out[rel] = pq.read_table(p) if f.endswith(".parquet") else p.read_bytes()
    return out


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (a[k].equals(b[k]) if hasattr(a[k], "equals") else a[k] == b[k]) for k in a)


def cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), ETSCOPE_PROGRESS="0")
    return subprocess.run([sys.executable, "-m", "etscope.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Real ETDumps (CPU, XNNPACK, LLM, QNN) with their companions, and one bad file."""
    d = tmp_path_factory.mktemp("in")
    for name in ("cnn.etdump", "cnn.etrecord", "cnn.pte", "gen_cnn.etdump", "gen_llama_mixed.etdump"):
        shutil.copy(REAL / name, d / name)
    shutil.copy(QNN / "synthetic_qnn_cnn.etdump", d / "qnn_cnn.etdump")
    (d / "broken.etdump").write_bytes(b"not an etdump at all")
    return d


def test_collect_then_rerun_adds_nothing(inputs, tmp_path):
    ds = tmp_path / "ds"
    out = collect([inputs], ds, meta={"model": "cnn", "build": "b1"}, workers=2)
    assert counts(out) == Counts(added=4, skipped=0, rejected=1)
    before = listing(ds)
    again = collect([inputs], ds, meta={"model": "cnn", "build": "b1"}, workers=2)
    assert counts(again) == Counts(added=0, skipped=5, rejected=0)     # a rejected file is not retried either
    assert same(before, listing(ds))
    # the same bytes under another name and other metadata are the same file: skipped
    shutil.copy(inputs / "gen_cnn.etdump", tmp_path / "copy.etdump")
    assert counts(collect([tmp_path / "copy.etdump"], ds, meta={"build": "b2"}, workers=1)).skipped == 1
    assert same(before, listing(ds))


def test_tables_are_the_export_tables_plus_file_columns(inputs, tmp_path):
    ds = tmp_path / "ds"
    collect([inputs / "cnn.etdump"], ds, meta={"model": "cnn", "soc": "x86", "build": "abc", "order": "1"}, workers=1)
    from etscope import api

    want = api.load(str(inputs / "cnn.etdump"), etrecord=str(inputs / "cnn.etrecord"), pte=str(inputs / "cnn.pte")).tables
    for name in ("runs", "ops", "events"):
        got = D.query_dataset(D.Dataset(ds), f"SELECT * EXCLUDE (file_hash, order_key, model, soc, build, date) FROM {name}")
        assert got.num_rows == want[name].num_rows > 0
        assert got.column("p50" if name == "ops" else "execute" if name == "runs" else "value").to_pylist() == \
            want[name].column("p50" if name == "ops" else "execute" if name == "runs" else "value").to_pylist()
    files = [tuple(r.values()) for r in
             D.query_dataset(D.Dataset(ds), "SELECT etrecord, pte, order_key, model, soc, build FROM files").to_pylist()]
    assert files[0][0].endswith("cnn.etrecord") and files[0][1].endswith("cnn.pte")     # companions by name
    assert files[0][2:] == ("1", "cnn", "x86", "abc")
    parts = D.Dataset(ds).parts("runs")
    assert [Path(p).parent.relative_to(ds / "runs").as_posix() for p in parts] == \
        ["model=cnn/soc=x86/build=abc/date=" + Path(parts[0]).parent.name.split("=")[1]]


def test_rejects_record_the_reason_and_never_abort(inputs, tmp_path):
    ds = tmp_path / "ds"
    collect([inputs], ds, workers=1)
    rows = D.query_dataset(D.Dataset(ds), "SELECT path, reason FROM rejects").to_pylist()
    assert len(rows) == 1 and rows[0]["path"].endswith("broken.etdump")
    assert "broken.etdump" in rows[0]["reason"] and "ED00" in rows[0]["reason"]
    assert D.query_dataset(D.Dataset(ds), "SELECT count(*) n FROM files").to_pylist() == [{"n": 4}]


def test_interrupted_commit_leaves_nothing_visible_after_the_next_collect(inputs, tmp_path, monkeypatch):
    """A commit killed between its renames leaves parts without a marker: the next collect deletes
    them and collects the file again, whole."""
    ds = tmp_path / "ds"
    real_replace = os.replace
    calls = {"n": 0}

    def dying_replace(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:       # the marker, the journal, the first part, then dies
            raise KeyboardInterrupt
        real_replace(*a, **k)

    monkeypatch.setattr(D.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        collect([inputs / "gen_cnn.etdump"], ds, meta={"model": "m"}, workers=1)
    monkeypatch.setattr(D.os, "replace", real_replace)
    dset = D.Dataset(ds)
    on_disk = [p for t in D.TABLES for p in (ds / t).rglob("*.parquet")] if (ds / "runs").exists() else []
    torn = [p for t in D.TABLES if (ds / t).exists() for p in (ds / t).rglob("*.parquet")]
    assert len(torn) == 1 and dset.collected() == set()   # torn: a part, no manifest entry
    assert sorted(p.name for p in (ds / "_manifest").iterdir()) == [torn[0].stem + ".pending"]   # the journal
    assert dset.parts("runs") == [] and not (ds / D.LOCK).exists()
    del on_disk
    out = collect([inputs / "gen_cnn.etdump"], ds, meta={"model": "other"}, workers=1)
    assert counts(out).added == 1
    assert [Path(p).parts[-5] for p in dset.parts("runs")] == ["model=other"]
    assert [p.parts[-5] for p in (ds / "runs").rglob("*.parquet")] == ["model=other"]   # the torn part is gone
    for t in ("runs", "ops", "events", "files"):
        assert len(dset.parts(t)) == 1


def test_meta_precedence_sidecar_and_manifest(inputs, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for n in ("a", "b"):
        shutil.copy(inputs / "gen_cnn.etdump", d / f"{n}.etdump")
    (d / "b.etdump").write_bytes((d / "b.etdump").read_bytes())
    (d / "a.meta.json").write_text(json.dumps({"build": "from-sidecar", "order": "7"}))
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"model": "default-model", "build": "default-build",
                                    "files": {"b.etdump": {"build": "from-manifest", "soc": "sm8750"}}}))
    jobs = {Path(j.etdump).name: j.meta_dict() for j in
            jobs_for(find_etdumps([d]), {"soc": "cli-soc"}, __import__("etscope.fleet.collect", fromlist=["x"]).read_meta_file(manifest))}
    assert jobs["a.etdump"] == {"model": "default-model", "build": "from-sidecar", "order": "7", "soc": "cli-soc"}
    assert jobs["b.etdump"] == {"model": "default-model", "build": "from-manifest", "soc": "sm8750"}


def test_partition_values_cannot_escape_their_table():
    assert D.partition_value("../../etc") == "..%2F..%2Fetc"
    assert D.partition_value("..") == "%2E%2E" and D.partition_value("") == "unknown"
    assert "/" not in D.partition_value("a/b=c d\u202e")


def test_file_tables_is_pure(inputs):
    """The per-file function gives equal tables on every call (what lets any engine run it)."""
    job = jobs_for([str(inputs / "gen_cnn.etdump")], {"model": "m", "order": "1"})[0]
    m1, t1 = file_tables(job)
    m2, t2 = file_tables(job)
    assert m1 == m2 and t1.keys() == t2.keys() and all(t1[k].equals(t2[k]) for k in t1)


def test_same_dataset_through_a_dask_local_cluster(inputs, tmp_path):
    distributed = pytest.importorskip("distributed")
    local = tmp_path / "local"
    collect([inputs], local, meta={"model": "cnn", "order": "5", "date": "2026-11-30"}, workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        out = collect([inputs], tmp_path / "dask", meta={"model": "cnn", "order": "5", "date": "2026-11-30"},
                      engine="dask", scheduler=cluster.scheduler_address)
    assert counts(out) == Counts(added=4, skipped=0, rejected=1)
    assert same(listing(local), listing(tmp_path / "dask"))


def test_trend_end_to_end_finds_the_planted_commit(tmp_path):
    """Generated ETDumps (sidecar metadata: commit hashes that do not sort, an order key): op
    native_call_add.out 30% slower from the 6th build on (commit 9aab)."""
    write_series(tmp_path / "in", seed=1, slower=(1.3, 5))
    r = cli("collect", tmp_path / "in", "--to", tmp_path / "ds", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "16 added" in r.stdout
    r = cli("trend", "--dataset", tmp_path / "ds", "--json", "--html", tmp_path / "t.html")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    s = doc["series"][0]
    assert (s["model"], s["soc"]) == ("cnn", "sm8650")
    assert [b["build"] for b in s["builds"]][:3] == ["0000", "1eef", "3dde"]          # in order, not sorted by hash
    assert [(c["build"], c["verdict"]) for c in s["changes"]] == [("9aab", "regression")]
    assert [(o["op"], o["build"]) for o in s["op_changes"]] == [("native_call_add.out", "9aab")]
    page = (tmp_path / "t.html").read_text()
    blob = json.loads(page.split('id="etscope-data">', 1)[1].split("</script>", 1)[0])     # drawn by the page's script
    assert [x["title"] for x in blob["series"]] == ["cnn on sm8650"]
    assert [(m["build"], m["kind"]) for m in blob["series"][0]["markers"]] == [("9aab", "regression")]
    # what one session per side cannot tell: diff across the same commits is inconclusive
    r = cli("diff", tmp_path / "in" / "run_04_0.etdump", tmp_path / "in" / "run_05_0.etdump", "--json")
    assert json.loads(r.stdout)["verdict"] == "inconclusive"
    r = cli("sql", "--dataset", tmp_path / "ds", "SELECT build, count(*) n FROM files WHERE soc = 'sm8650' "
            "GROUP BY build ORDER BY min(order_key::INT)", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[5] == {"build": "9aab", "n": 2}
    r = cli("trend", "--dataset", tmp_path / "ds", "--model", "nope", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["series"] == []


def test_same_series_without_change_reports_none(tmp_path):
    write_series(tmp_path / "in", seed=2)
    assert cli("collect", tmp_path / "in", "--to", tmp_path / "ds", "--workers", "1").returncode == 0
    s = json.loads(cli("trend", "--dataset", tmp_path / "ds", "--json").stdout)["series"][0]
    assert s["changes"] == [] and s["op_changes"] == [] and s["placement_changes"] == []


def test_html_escapes_dataset_strings(tmp_path):
    from etscope.analysis.diff.trend import trend
    from etscope.render.trend_html import trend_page

    sys.path.insert(0, str(ROOT / "tests" / "analysis"))
    from trend_series import series

    runs, ops = series(1, builds=4, model="<script>alert(1)</script>", soc='"><img src=x>')
    page = trend_page(trend(runs, ops))
    assert "<script>alert" not in page and "<img" not in page and "&lt;script&gt;" in page


def test_cli_errors_are_one_line_exit_2(tmp_path):
    r = cli("collect", tmp_path / "missing", "--to", tmp_path / "ds")
    assert r.returncode == 2 and "no ETDump found" in r.stderr and "Traceback" not in r.stderr
    r = cli("sql", "--dataset", tmp_path, "SELECT 1")
    assert r.returncode == 2 and "not an etscope dataset" in r.stderr
    r = cli("trend", "--dataset", tmp_path / "nope")
    assert r.returncode == 2 and "not an etscope dataset" in r.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("mine")
    shutil.copy(REAL / "gen_cnn.etdump", tmp_path / "a.etdump")
    r = cli("collect", tmp_path / "a.etdump", "--to", tmp_path / "full")
    assert r.returncode == 2 and "not empty" in r.stderr
    r = cli("collect", tmp_path / "a.etdump", "--to", tmp_path / "ds", "--engine", "dask")
    assert r.returncode == 2 and "--scheduler" in r.stderr


def test_copies_in_one_batch_are_collected_once(tmp_path):
    """Two workers holding the same content at once: one commits it, the other skips it (no part
    in a second partition)."""
    for i in range(4):
        shutil.copy(REAL / "gen_cnn.etdump", tmp_path / f"c{i}.etdump")
        (tmp_path / f"c{i}.meta.json").write_text(json.dumps({"build": f"b{i}"}))
    out = collect([tmp_path], tmp_path / "ds", workers=2)
    assert counts(out) == Counts(added=1, skipped=3, rejected=0)
    assert len(D.Dataset(tmp_path / "ds").parts("runs")) == 1
