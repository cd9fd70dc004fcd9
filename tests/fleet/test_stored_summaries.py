"""Each collected file's summary stored in the dataset (issue 37: a build links to its stored
summary). The stored document is what ``etscope summary --json`` prints for the same file (read
from the real fixtures by the CLI itself, not restated here); a dataset collected before
summaries were stored still trends and says so; a stored summary that is not what etscope wrote
(oversized, not JSON, wrong types) is one clear line and exit 2 where it is asked for, one warning
and a note on its build on the page. ``ETSCOPE_CAMPAIGN_SRC`` runs the same tests on another tree."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from test_dataset_hostile import REAL, ROOT, clean_stderr, cli, parts
from etdump_series import write_series

QNN = ROOT / "tests" / "fixtures" / "qnn_etdump"


def said(r, warnings_allowed: bool = True) -> list[str]:
    """``clean_stderr`` of the run but the line saying where the page was written."""
    class Run:
        stderr = "\n".join(ln for ln in r.stderr.splitlines() if not ln.startswith("wrote "))
    return clean_stderr(Run, warnings_allowed)


def page_blob(path: Path) -> dict:
    page = path.read_text(encoding="utf-8")
    return json.loads(page.split('id="etscope-data">', 1)[1].split("</script>", 1)[0])


@pytest.fixture(scope="module")
def real_ds(tmp_path_factory) -> tuple[Path, Path]:
    """Real ETDumps with their companions, one build each: a CNN with ETRecord and .pte, an LLM
    whose runs are two phases (with its .pte), a QNN program (with its ETRecord)."""
    d = tmp_path_factory.mktemp("real")
    (d / "in").mkdir()
    for src, name, build in ((REAL / "cnn", "cnn", "c1"), (REAL / "gen_llama", "llama", "l1"),
                             (QNN / "synthetic_qnn_cnn", "qnn", "q1")):
        for suffix in (".etdump", ".etrecord", ".pte"):
            if src.with_name(src.name + suffix).exists():
                shutil.copy(src.with_name(src.name + suffix), d / "in" / f"{name}{suffix}")
        (d / "in" / f"{name}.meta.json").write_text(json.dumps({"model": name, "build": build, "order": "1"}))
    r = cli("collect", d / "in", "--to", d / "ds", "--workers", "1")
    assert r.returncode == 0 and "3 added" in r.stdout, r.stderr
    return d / "in", d / "ds"


@pytest.mark.parametrize("name,build", [("cnn", "c1"), ("llama", "l1"), ("qnn", "q1")])
def test_stored_summary_is_what_summary_json_prints(real_ds, name, build):
    inputs, ds = real_ds
    companions = [x for suffix, flag in ((".etrecord", "--etrecord"), (".pte", "--pte"))
                  if (inputs / f"{name}{suffix}").exists() for x in (flag, inputs / f"{name}{suffix}")]
    want = cli("summary", inputs / f"{name}.etdump", *companions, "--json")
    assert want.returncode == 0, want.stderr
    r = cli("trend", "--dataset", ds, "--summary", build, "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [f["build"] for f in got["files"]] == [build]
    assert got["files"][0]["summary"] == json.loads(want.stdout)
    if name == "llama":                 # two phases, each with its own summary
        assert [p["name"] for p in got["files"][0]["summary"]["phases"]] == ["prefill", "decode"]


def test_stored_summary_prints_as_summary_text(real_ds):
    inputs, ds = real_ds
    want = cli("summary", inputs / "cnn.etdump", "--etrecord", inputs / "cnn.etrecord", "--pte", inputs / "cnn.pte")
    r = cli("trend", "--dataset", ds, "--summary", "c1")
    assert r.returncode == 0 and not clean_stderr(r), r.stderr
    head, _, body = r.stdout.partition("\n")
    assert head.startswith("build c1 · cnn on unknown · file ")
    assert body == want.stdout            # the summary renderer, on the stored document


def test_stored_summary_part_is_small(real_ds):
    """The cost: one Parquet part per file (the document as compact JSON, zstd; no dictionary page
    or statistics repeating it)."""
    _, ds = real_ds
    sizes = {p.parent.parent.parent.parent.name: p.stat().st_size for p in parts(ds, "summary")}
    docs = {f["model"]: len(json.dumps(f["summary"], separators=(",", ":")))
            for b in ("c1", "l1", "q1") for f in json.loads(cli("trend", "--dataset", ds, "--summary", b,
                                                                    "--json").stdout)["files"]}
    assert sizes["model=cnn"] < docs["cnn"] + 1500        # a 2 kB document: ~2 kB on disk
    assert sizes["model=llama"] < docs["llama"] / 4         # a 175 kB document: ~22 kB


def test_page_links_each_build_to_its_stored_summary(real_ds, tmp_path):
    """Each series' builds carry the card of their stored summary; the LLM's prefill and decode
    series each show their own phase's figures."""
    _, ds = real_ds
    r = cli("trend", "--dataset", ds, "--html", tmp_path / "t.html")
    assert r.returncode == 0 and not said(r), r.stderr
    stored = json.loads(cli("trend", "--dataset", ds, "--summary", "l1", "--json").stdout)["files"][0]["summary"]
    by_phase = {p["name"]: p["summary"] for p in stored["phases"]}
    from etscope.render.trend_summary_card import runs_phrase
    from etscope.units import fmt_ms

    for s in page_blob(tmp_path / "t.html")["series"]:
        (b,) = s["builds"]
        card = b["summary"]
        assert b["anchor"] == card["anchor"] and card["anchor"].startswith("build-")
        assert card["note"] == "" and card["headline"].startswith("Method::execute")
        if s["model"] == "llama":
            lat = by_phase[s["phase"]]["runs"]["latency_ms"]
            assert card["phase"] == f"{s['phase']} phase"
            runs = by_phase[s["phase"]]["runs"]
            over = runs_phrase(runs["count"], (runs.get("warmup") or {}).get("count", 0))
            assert f"{fmt_ms(lat['p50'])} p50 over {over}" in card["headline"]


def strip_summaries(ds: Path) -> None:
    """The dataset as a collect before this change wrote it: no summary part in any entry."""
    for e in (ds / "_manifest").glob("*.json"):
        doc = json.loads(e.read_text())
        doc["parts"].pop("summary", None)
        e.write_text(json.dumps(doc, sort_keys=True) + "\n")
    shutil.rmtree(ds / "summary", ignore_errors=True)


@pytest.fixture(scope="module")
def series_in(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("series")
    write_series(d, seed=1, builds=5, sessions=2, runs=6, slower=(1.3, 3))
    return d


@pytest.fixture()
def series_ds(series_in, tmp_path) -> Path:
    r = cli("collect", series_in, "--to", tmp_path / "ds", "--workers", "1")
    assert r.returncode == 0, r.stderr
    return tmp_path / "ds"


def test_old_dataset_without_summaries_still_trends(series_ds, tmp_path):
    before = json.loads(cli("trend", "--dataset", series_ds, "--json").stdout)
    strip_summaries(series_ds)
    r = cli("trend", "--dataset", series_ds, "--json", "--html", tmp_path / "t.html")
    assert r.returncode == 0 and not said(r, warnings_allowed=False), r.stderr
    assert json.loads(r.stdout) == before
    s = page_blob(tmp_path / "t.html")["series"][0]
    notes = {b["summary"]["note"] for b in s["builds"]}
    assert len(notes) == 1 and "collected before etscope stored each file's summary" in notes.pop()
    assert all(b["summary"]["headline"] == "" for b in s["builds"])
    r = cli("trend", "--dataset", series_ds, "--summary", s["builds"][0]["build"])
    assert r.returncode == 2 and len(clean_stderr(r)) == 1 and "collected before" in r.stderr, r.stderr
    r = cli("trend", "--dataset", series_ds)
    assert r.returncode == 0 and "--summary BUILD" in r.stdout


def _rewrite_summary(ds: Path, text, rows: int = 1) -> Path:
    """The first summary part replaced by ``text`` (``rows`` times), its entry restated (so the
    check that fires is the one on the stored text, not the part's recorded size)."""
    part = parts(ds, "summary")[0]
    pq.write_table(pa.table({"summary_json": pa.array([text] * rows, pa.string()),
                             "file_hash": [part.stem] * rows}), part)
    e = ds / "_manifest" / (part.stem + ".json")
    doc = json.loads(e.read_text())
    doc["parts"]["summary"].update(bytes=part.stat().st_size, rows=rows)
    e.write_text(json.dumps(doc))
    return part


def _valid(ds: Path) -> dict:
    part = parts(ds, "summary")[0]
    return json.loads(pq.read_table(part).column("summary_json")[0].as_py())


def _with(doc: dict, path: str, value) -> str:
    d = json.loads(json.dumps(doc))
    *head, last = path.split(".")
    x = d
    for k in head:
        x = x[int(k)] if k.isdigit() else x[k]
    x[int(last) if last.isdigit() else last] = value
    return json.dumps(d)


HOSTILE = {
    "oversized": lambda doc: " " * (16 << 20) + json.dumps(doc),
    "not_json": lambda doc: "{'schema': 'etscope.summary/1'}",
    "nested": lambda doc: "[" * 100_000 + "]" * 100_000,
    "huge_number": lambda doc: json.dumps(doc).replace('"count": ', '"count": ' + "9" * 5000, 1),
    "not_an_object": lambda doc: "[1, 2, 3]",
    "count_is_text": lambda doc: _with(doc, "runs.count", "eight"),
    "share_is_text": lambda doc: _with(doc, "breakdown.0.share", "99%"),
    "kind_unknown": lambda doc: _with(doc, "breakdown.0.kind", "<script>"),
    "no_runs": lambda doc: json.dumps({k: v for k, v in doc.items() if k != "runs"}),
    "qnn_only": lambda doc: _with(doc, "qnn_only", {"missing": []}),
    "bounds_missing": lambda doc: _with(doc, "qnn", [{"clock_mhz_est": 900.0, "clock_bound": "between",
                                                       "clock_mhz_bounds": [None, None], "ops": 1}]),
    "two_rows": None,
}


@pytest.mark.parametrize("bad", sorted(HOSTILE))
def test_hostile_stored_summary_is_one_line_exit_2(series_ds, tmp_path, bad):
    doc = _valid(series_ds)
    part = _rewrite_summary(series_ds, json.dumps(doc), rows=2) if bad == "two_rows" else \
        _rewrite_summary(series_ds, HOSTILE[bad](doc))
    build = json.loads((series_ds / "_manifest" / (part.stem + ".json")).read_text())["partition"]["build"]
    r = cli("trend", "--dataset", series_ds, "--summary", build)
    lines = clean_stderr(r)
    assert r.returncode == 2 and len(lines) == 1 and not r.stdout.strip(), (bad, r.stderr, r.stdout[:300])
    assert part.name in lines[0] or bad == "bounds_missing" and "cannot be shown" in lines[0], lines
    r = cli("trend", "--dataset", series_ds, "--summary", build, "--json")
    if bad == "bounds_missing":         # the shape is a summary's: JSON gives it back; only the text renderer trips
        assert r.returncode == 0 and json.loads(r.stdout)["files"][0]["summary"]["qnn"][0]["clock_bound"] == "between"
    else:
        lines = clean_stderr(r)
        assert r.returncode == 2 and len(lines) == 1 and part.name in lines[0] and not r.stdout.strip(), r.stderr
    # the page: one warning naming the part; the build's card says its summary is not shown
    r = cli("trend", "--dataset", series_ds, "--html", tmp_path / "t.html")
    lines = said(r)
    assert r.returncode == 0, r.stderr
    if bad != "bounds_missing":         # a shape the page's digest reads well: only the text renderer trips
        assert len([x for x in lines if x.startswith("etscope: warning: ")]) == 1 and part.name in lines[0], lines
        cards = [b["summary"] for b in page_blob(tmp_path / "t.html")["series"][0]["builds"] if b["summary"]]
        assert sum(c["note"].startswith("stored summary not shown") for c in cards) == 1


def test_only_the_latest_builds_are_embedded(series_ds, monkeypatch):
    """A long series embeds the latest PER_SERIES builds' summaries; the page says how many are left
    out and how to see one."""
    sys.path.insert(0, str(ROOT / "src"))
    from etscope.analysis.diff.trend import trend_of_sessions
    from etscope.fleet.dataset import Dataset, trend_inputs
    from etscope.fleet.summaries import build_summaries
    from etscope.render.trend_html import trend_page_data

    ds = Dataset(series_ds)
    sessions, ops = trend_inputs(ds)
    t = trend_of_sessions(sessions, ops)
    s = trend_page_data(t, "ds", summaries=build_summaries(ds, sessions, t, per_series=2), dataset_arg="ds")["series"][0]
    assert [b["anchor"] is not None for b in s["builds"]] == [False, False, False, True, True]
    assert "the latest 2 builds' summaries are on this page, the 3 before them are left out" in s["summaries_hint"]
    assert "etscope trend --dataset ds --summary BUILD" in s["summaries_hint"]


def test_stored_strings_stay_text_on_the_page(series_ds, tmp_path):
    """A stored kernel name is shown as text: escaped in the page's data, never markup."""
    xss = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"
    doc = _valid(series_ds)
    _rewrite_summary(series_ds, _with(doc, "fallback_ops.0.kernel", xss))
    r = cli("trend", "--dataset", series_ds, "--html", tmp_path / "t.html")
    assert r.returncode == 0 and not said(r), r.stderr
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<img" not in page and "<script>alert" not in page
    names = [o["name"] for b in page_blob(tmp_path / "t.html")["series"][0]["builds"] for o in b["summary"]["ops"]]
    assert xss in names


def test_a_collect_killed_at_any_rename_leaves_no_summary_behind(tmp_path, monkeypatch):
    """The summary part is committed with the file's other parts: a collect killed at any rename
    (before or after the summary part moved in) leaves nothing the next collect keeps, and that
    collect adds the file whole, its summary readable."""
    import os

    from etscope.fleet import dataset as D
    from etscope.fleet.collect import collect, counts
    from etscope.fleet.summaries import summaries_of_build

    src = tmp_path / "gen_cnn.etdump"
    shutil.copy(REAL / "gen_cnn.etdump", src)
    real_replace = os.replace
    calls = {"n": 0}

    def counting(*a, **k):
        calls["n"] += 1
        real_replace(*a, **k)

    monkeypatch.setattr(D.os, "replace", counting)
    collect([src], tmp_path / "whole", meta={"build": "b"}, workers=1)
    renames = calls["n"]          # the marker, the journal, each part, the entry
    assert renames >= 7
    for kill in range(3, renames + 1):
        ds = tmp_path / f"ds{kill}"
        calls["n"] = 0

        def dying(*a, _kill=kill, **k):
            calls["n"] += 1
            if calls["n"] == _kill:
                raise KeyboardInterrupt
            real_replace(*a, **k)

        monkeypatch.setattr(D.os, "replace", dying)
        with pytest.raises(KeyboardInterrupt):
            collect([src], ds, meta={"build": "b"}, workers=1)
        monkeypatch.setattr(D.os, "replace", real_replace)
        assert D.Dataset(ds).collected() == set()
        assert counts(collect([src], ds, meta={"build": "b"}, workers=1)).added == 1
        assert len(list((ds / "summary").rglob("*.parquet"))) == 1, kill
        ((c, doc),) = summaries_of_build(D.Dataset(ds), "b")
        assert doc["inputs"]["etdump"] == str(src)
