"""Manifest entries as typed values (issue 33 item 1): each entry's raw JSON is checked and parsed
once (``layout.parse_entry``) into a frozen ManifestEntry, and written by one function
(``layout.entry_bytes``) whose bytes are those etscope wrote before (layout etscope.dataset/2), so
datasets collected before read and rewrite unchanged. The user's metadata is parsed once into a
BuildMeta with its job; collect's counts are a typed result."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil

import pytest

from etscope.fleet import dataset as D
from etscope.fleet.collect import Counts, collect, counts, given_build
from etscope.fleet.jobs import BuildMeta, Job, jobs_for, resolved_meta
from etscope.fleet.layout import (EntryProblem, ManifestEntry, Partition, PartRef, entry, entry_bytes, parse_entry,
                                  part_path)
from test_collect import REAL

H = "51b3f0a58cc061b6508578010aeaa836bad0b6d22c09f5327d5d026137a9b3c0"
R = "240c186c556ba80b9f2dbde342715bf9117e9b26f59168b6f933150c02825b90"
P = "model=mm/soc=unknown/build=g1/date=2026-12-05"
# Written by etscope before entries were typed (collect, then collect --also-label twice; a reject).
ADDED_BEFORE = (
    '{"also_builds": ["yy", "zz"], "file_hash": "' + H + '", "layout": "etscope.dataset/2", "order_key": "3", '
    '"partition": {"build": "g1", "date": "2026-12-05", "model": "mm", "soc": "unknown"}, "parts": {'
    + ", ".join(f'"{t}": {{"bytes": {b}, "path": "{t}/{P}/{H}.parquet", "rows": {n}}}'
                for t, b, n in (("events", 12743, 212), ("files", 4178, 1), ("ops", 8282, 14), ("runs", 5329, 10),
                                ("summary", 2086, 1)))
    + '}, "status": "added"}\n').encode()
REJECT_BEFORE = (
    '{"file_hash": "' + R + '", "layout": "etscope.dataset/2", "order_key": "", "partition": {}, "parts": '
    '{"rejects": {"bytes": 2229, "path": "rejects/' + R + '.parquet", "rows": 1}}, "status": "rejected"}\n').encode()


def test_entries_written_before_parse_and_write_back_byte_identical():
    e = parse_entry(json.loads(ADDED_BEFORE), H)
    assert e.partition == Partition("mm", "unknown", "g1", "2026-12-05") and e.order_key == "3"
    assert e.tables == ("events", "files", "ops", "runs", "summary") and e.also_builds == ("yy", "zz")
    assert e.part("runs") == PartRef("runs", f"runs/{P}/{H}.parquet", 10, 5329) and e.part("qnn") is None
    assert e.labels == ("g1", "yy", "zz")
    assert entry_bytes(e) == ADDED_BEFORE
    r = parse_entry(json.loads(REJECT_BEFORE), R)
    assert r.status == "rejected" and r.partition == Partition() and r.labels == ("unknown",)
    assert entry_bytes(r) == REJECT_BEFORE
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.status = "rejected"


def test_a_partition_without_some_values_keeps_them_absent():
    """An entry may name fewer partition values (each then reads as "", its folder as ``unknown``):
    written back, the absent ones stay absent; its build label is ``unknown``."""
    partition = Partition(model="m")
    doc = json.loads(entry_bytes(entry(H, "added", partition, "k", (PartRef("runs", part_path("runs", H, partition),
                                                                           1, 2),))))
    assert doc["partition"] == {"model": "m"} and doc["parts"]["runs"]["path"].startswith("runs/model=m/soc=unknown/")
    e = parse_entry(doc, H)
    assert e.partition == partition and e.labels == ("unknown",)
    assert "also_builds" not in doc


def test_also_builds_are_stored_sorted_and_once():
    e = entry(H, "added", Partition("m", "s", "b", "d"), 7, (), ["z", "a", "z"])
    assert e.also_builds == ("a", "z") and e.order_key == "7"
    assert json.loads(entry_bytes(e))["also_builds"] == ["a", "z"]


def _runs(d: dict, **kv) -> dict:
    return {**d, "parts": {**d["parts"], "runs": {**d["parts"]["runs"], **kv}}}


@pytest.mark.parametrize("change, why", [
    (lambda d: [], "not a JSON object"),
    (lambda d: {**d, "layout": "etscope.dataset/3"}, "layout 'etscope.dataset/3', expected 'etscope.dataset/2'"),
    (lambda d: {**d, "file_hash": "0" * 64}, "its file_hash is not its name"),
    (lambda d: {**d, "status": "maybe"}, "status is neither 'added' nor 'rejected'"),
    (lambda d: {**d, "partition": {**d["partition"], "build": None}}, "partition must map model/soc/build/date to strings"),
    (lambda d: {**d, "order_key": 3}, "order_key must be a string"),
    (lambda d: {**d, "also_builds": [""]}, "also_builds must be a list of at most 1000 build labels"),
    (lambda d: {**d, "parts": {}}, "parts must be a non-empty object"),
    (lambda d: {**d, "parts": {**d["parts"], "rejects": d["parts"]["runs"]}}, "unexpected table 'rejects'"),
    (lambda d: _runs(d, path="../../etc/passwd"), "part 'runs' is not where the layout puts it"),
    (lambda d: _runs(d, rows=True), "part 'runs': rows must be a count"),
    (lambda d: _runs(d, bytes=-1), "part 'runs': bytes must be a count"),
])
def test_a_bad_entry_says_what_is_wrong(change, why):
    with pytest.raises(EntryProblem) as e:
        parse_entry(change(json.loads(ADDED_BEFORE)), H)
    assert str(e.value) == why


def test_collect_writes_entries_the_reader_writes_back_unchanged(tmp_path):
    shutil.copy(REAL / "gen_cnn.etdump", tmp_path / "a.etdump")
    (tmp_path / "b.etdump").write_bytes(b"not an etdump")
    ds = tmp_path / "ds"
    assert counts(collect([tmp_path / "a.etdump", tmp_path / "b.etdump"], ds, meta={"build": "b1"}, workers=1)) \
        == Counts(added=1, skipped=0, rejected=1)
    found = sorted((ds / "_manifest").glob("*.json"))
    assert len(found) == 2
    for p in found:
        e = parse_entry(json.loads(p.read_bytes()), p.stem)
        assert isinstance(e, ManifestEntry) and entry_bytes(e) == p.read_bytes()
    added = next(e for e in (D.Dataset(ds).entry(p.stem) for p in found) if e.status == "added")
    assert D.Dataset(ds).add_build_label(added.file_hash, "b0") == ("b1", "b0")
    after = (ds / "_manifest" / f"{added.file_hash}.json").read_bytes()
    assert after == entry_bytes(dataclasses.replace(added, also_builds=("b0",)))


def test_metadata_is_parsed_once_with_its_job(tmp_path):
    p = tmp_path / "x.etdump"
    shutil.copy(REAL / "gen_cnn.etdump", p)
    (tmp_path / "x.meta.json").write_text(json.dumps({"device": "pixel", "commit": "c0ffee", "time": "2026-10-01T08:00",
                                                      "rig": "r7"}))
    (job,) = jobs_for([str(p)], {"model": "m"})
    assert job.build_meta == BuildMeta(model="m", device="pixel", commit="c0ffee", time="2026-10-01T08:00")
    assert job.meta_dict()["rig"] == "r7"           # every key is kept for files.meta_json
    key = resolved_meta(job)
    assert key.partition == Partition("m", "pixel", "c0ffee", "2026-10-01") and key.order_key == "2026-10-01T08:00"
    assert given_build(job) == "c0ffee"
    bare = Job(str(p))
    assert bare.build_meta == BuildMeta() and given_build(bare) == ""
    assert resolved_meta(bare).partition.model == "unknown"
    assert os.path.exists(p)
