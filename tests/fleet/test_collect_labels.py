"""collect and content already in the dataset under another build label (issue 37 item 5): the
message names the labels it has (from the manifest) and how to add this one; ``--also-label``
records the label in the file's manifest entry (``also_builds``, an optional key of layout 2)
without copying any part; old entries without the key stay readable, a bad one is skipped; sql
shows the labels, trend counts the file once and says so. And a bad sidecar among good files:
the good ones are added, the bad one is a reject naming the sidecar, never ``--meta-from``."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from etscope.fleet import dataset as D
from etscope.fleet.collect import Counts, collect, counts
from test_collect import REAL, cli, listing, same


def _entry(ds, name="gen_cnn"):
    docs = [json.loads(p.read_text()) for p in (ds / "_manifest").glob("*.json")]
    return docs


@pytest.fixture
def two_copies(tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copy(REAL / "gen_cnn.etdump", a / "x.etdump")
    shutil.copy(REAL / "gen_cnn.etdump", b / "y.etdump")
    return a / "x.etdump", b / "y.etdump"


def test_same_content_other_label_says_which_labels(two_copies, tmp_path):
    x, y = two_copies
    ds = tmp_path / "ds"
    assert counts(collect([x], ds, meta={"model": "cnn", "build": "b1"}, workers=1)).added == 1
    before = listing(ds)
    r = cli("collect", y, "--to", ds, "--meta", "model=cnn", "--meta", "build=b2", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "1 already in the dataset" in r.stdout
    err = " ".join(r.stderr.split())
    assert "same content already in the dataset as build b1, not as build b2" in err
    assert "--also-label" in err
    assert same(before, listing(ds))                  # nothing written
    # the same label again: it says so, no hint
    r = cli("collect", y, "--to", ds, "--meta", "build=b1", "--workers", "1", "--json")
    assert json.loads(r.stdout)["labels"][0]["note"].endswith("already in the dataset as build b1")


def test_also_label_records_the_label_without_copying_parts(two_copies, tmp_path):
    x, y = two_copies
    ds = tmp_path / "ds"
    collect([x], ds, meta={"model": "cnn", "build": "b1", "order": "1"}, workers=1)
    before = listing(ds)
    r = cli("collect", y, "--to", ds, "--meta", "model=cnn", "--meta", "build=b2", "--also-label", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["added"], doc["skipped"]) == (0, 1)
    assert "build b2 recorded" in doc["labels"][0]["note"]
    after = listing(ds)
    changed = [k for k in after if k not in before or not same({k: before[k]}, {k: after[k]})]
    assert len(changed) == 1 and changed[0].startswith("_manifest/") and after.keys() == before.keys()
    (entry,) = _entry(ds)
    assert entry["also_builds"] == ["b2"] and entry["partition"]["build"] == "b1"
    # again: already there under both labels
    r = cli("collect", y, "--to", ds, "--meta", "build=b2", "--also-label", "--json")
    assert "as build b1, b2" in json.loads(r.stdout)["labels"][0]["note"]
    assert _entry(ds)[0]["also_builds"] == ["b2"]
    # sql shows the labels; trend counts the file once and says so
    r = cli("sql", "--dataset", ds, "SELECT build, also_builds FROM files", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"build": "b1", "also_builds": '["b2"]'}]
    r = cli("trend", "--dataset", ds, "--json")
    assert r.returncode == 0, r.stderr
    notes = json.loads(r.stdout)["series"][0]["notes"]
    assert any("also labelled b2" in n and "counted once, under b1" in n for n in notes)


def test_also_label_in_one_batch(two_copies, tmp_path):
    """Two copies in one batch, each with its own sidecar build: one is added, the other's label is
    recorded once the first is committed."""
    x, y = two_copies
    x.with_suffix(".meta.json").write_text('{"build": "b1", "order": "1"}')
    y.with_suffix(".meta.json").write_text('{"build": "b2", "order": "2"}')
    ds = tmp_path / "ds"
    out = collect([x.parent, y.parent], ds, meta={"model": "cnn"}, workers=2, also_label=True)
    assert counts(out) == Counts(added=1, skipped=1, rejected=0)
    (entry,) = _entry(ds)
    assert {entry["partition"]["build"], *entry["also_builds"]} == {"b1", "b2"}


def test_old_entries_read_and_bad_labels_skipped(two_copies, tmp_path):
    x, _ = two_copies
    ds = tmp_path / "ds"
    collect([x], ds, meta={"model": "cnn", "build": "b1"}, workers=1)
    (path,) = (ds / "_manifest").glob("*.json")
    doc = json.loads(path.read_text())
    assert "also_builds" not in doc              # no label: the entry is as before
    assert D.Dataset(ds).entry(doc["file_hash"]) is not None
    doc["also_builds"] = "b2"                    # not a list: the entry is bad, skipped with a warning
    path.write_text(json.dumps(doc))
    r = cli("trend", "--dataset", ds, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["series"] == []
    assert "manifest entry skipped (also_builds must be a list" in r.stderr


def test_bad_sidecar_among_good_files(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for i, name in enumerate(("cnn", "gen_cnn", "gen_llama_mixed")):
        shutil.copy(REAL / f"{name}.etdump", d / f"f{i}.etdump")
    (d / "f0.meta.json").write_text('{"build": "ok"}')
    (d / "f1.meta.json").write_text('{"build": ')
    os.mkdir(d / "f2.meta.json")                 # a folder named like a sidecar
    r = cli("collect", d, "--to", tmp_path / "ds", "--workers", "1", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["added"], doc["rejected"]) == (1, 2), doc
    reasons = {x["path"].rsplit("/", 1)[-1]: x["reason"] for x in doc["rejects"]}
    assert "f1.meta.json" in reasons["f1.etdump"] and "sidecar metadata is not valid JSON" in reasons["f1.etdump"]
    assert "f2.meta.json" in reasons["f2.etdump"]
    assert not any("--meta-from" in v for v in reasons.values())
