"""Hostile datasets for ``etscope collect`` / ``trend`` / ``sql --dataset`` (issue 31): a
structure-aware generator for the long campaign.

``gen_dataset(rng, root, shape)`` fills the empty folder ``root`` with

    root/ds (or root/ds[x])   a dataset of layout etscope.dataset/2, written here with pyarrow
                              and json from the layout's description (not by etscope), then
                              damaged according to ``shape``
    root/dsx                  with shape ``glob_name``: the neighbour a glob ``ds[x]`` would match
    root/in/                  ETDumps (with ``<stem>.meta.json`` sidecars) to collect into it
    root/outside/             files no command may modify or delete (decoy Parquet among them)
    root/dataset.txt          the dataset's folder name (``dataset_of(root)``)

``commands(root, out)`` lists the CLI argument lists to run on it; ``protected(root)`` is the
snapshot of every file that must be unchanged afterwards (``outside/`` and ``in/``).
``shape=None`` picks one at random; ``SHAPES`` lists them. Self-contained: only pyarrow, json and
the ETDump builder of ``generators.py``.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generators import _op_events, build_etdump_shared  # noqa: E402

LAYOUT = "etscope.dataset/2"
MARKER = "_etscope_dataset.json"
SHAPES = ("symlinked_table", "symlinked_part", "symlinked_partition", "symlinked_manifest", "garbage_part",
          "dangling_part", "fifo_part", "folder_part", "wrong_schema", "foreign_rows", "huge_rows",
          "huge_rows_restated", "bad_entry", "deep_entry", "entry_points_outside", "journal_outside",
          "deep_sidecar", "huge_number_sidecar", "fifo_etdump", "glob_name", "long_partition", "layout1",
          "stray_files", "marker_symlink")


# ---- the layout, as documented in src/etscope/fleet/layout.py --------------------------------------------
def _value(v: str) -> str:
    out = "".join(c if c.isascii() and (c.isalnum() or c in "._+-") else
                  "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in v or "unknown")
    if set(out) == {"."}:
        out = out.replace(".", "%2E")
    if len(out) > 200:
        head = out[:180]
        cut = head.rfind("%", len(head) - 2)
        head = head[:cut] if cut >= 0 else head
        out = head + "~" + hashlib.sha256(v.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return out


def _part_path(table: str, h: str, partition: dict) -> str:
    if table == "rejects":
        return f"rejects/{h}.parquet"
    return f"{table}/" + "/".join(f"{k}={_value(partition.get(k, ''))}" for k in ("model", "soc", "build", "date")) \
        + f"/{h}.parquet"


def _file_tables(rng: random.Random, h: str, order_key: str) -> dict[str, pa.Table]:
    n_runs, n_ops = rng.randint(1, 6), rng.randint(1, 4)
    base = rng.uniform(1, 50)
    runs = pa.table({"execute": pa.array(range(n_runs), pa.int64()),
                     "latency_ms": pa.array([base * rng.uniform(0.95, 1.05) for _ in range(n_runs)]),
                     "file_hash": [h] * n_runs, "order_key": [order_key] * n_runs})
    ops = pa.table({"instruction_id": pa.array(range(n_ops), pa.int64()), "level": pa.array([0] * n_ops, pa.int64()),
                    "name": [f"op_{i}" for i in range(n_ops)], "occurrence": pa.array([0] * n_ops, pa.int64()),
                    "placement": [rng.choice(["cpu", "XnnpackBackend", None]) for _ in range(n_ops)],
                    "unit": ["ns"] * n_ops, "p50": pa.array([base * 1e6 / n_ops] * n_ops),
                    "file_hash": [h] * n_ops, "order_key": [order_key] * n_ops})
    files = pa.table({"file_hash": [h], "order_key": [order_key], "path": [f"/farm/{h[:8]}.etdump"],
                      "meta_json": ["{}"]})
    return {"runs": runs, "ops": ops, "files": files}


def _write_dataset(rng: random.Random, ds: Path, n_files: int, model: str = "cnn") -> list[dict]:
    ds.mkdir()
    (ds / "_manifest").mkdir()
    (ds / "_tmp").mkdir()
    (ds / MARKER).write_text(json.dumps({"layout": LAYOUT, "partitions": ["model", "soc", "build", "date"],
                                         "tables": ["runs", "ops", "events", "qnn", "files", "rejects"],
                                         "manifest": "_manifest"}))
    entries = []
    for i in range(n_files):
        h = hashlib.sha256(f"{ds}{i}{rng.random()}".encode()).hexdigest()
        partition = {"model": model, "soc": rng.choice(["sm8650", "sm8750"]), "build": f"b{i // 2}",
                     "date": "2026-11-30"}
        parts = {}
        for table, t in _file_tables(rng, h, str(i)).items():
            rel = _part_path(table, h, partition)
            (ds / rel).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(t, ds / rel, compression="zstd")
            parts[table] = {"path": rel, "rows": t.num_rows, "bytes": (ds / rel).stat().st_size}
        doc = {"layout": LAYOUT, "file_hash": h, "status": "added", "partition": partition, "order_key": str(i),
               "parts": parts}
        (ds / "_manifest" / f"{h}.json").write_text(json.dumps(doc))
        entries.append(doc)
    return entries


def _inputs(rng: random.Random, folder: Path, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        t, events = 1_000_000, []
        runs = []
        for _ in range(rng.randint(1, 4)):
            d = [rng.randint(10_000, 900_000) for _ in range(2)]
            events = [("P", "Method::execute", None, None, None, None, t, t + sum(d) + 2000)]
            events += _op_events(0, "convolution", t + 1000, d[0]) + _op_events(1, "add", t + 1000 + d[0], d[1])
            runs.append(dict(name="Execute", events=events))
            t += sum(d) + 10_000
        (folder / f"f{i}.etdump").write_bytes(build_etdump_shared(runs))
        (folder / f"f{i}.meta.json").write_text(json.dumps({"model": "cnn", "build": f"b{i}", "order": str(i)}))


def _decoys(outside: Path) -> None:
    outside.mkdir()
    pq.write_table(pa.table({"execute": [0], "latency_ms": [1e9], "file_hash": ["0" * 64]}),
                   outside / ("0" * 64 + ".parquet"))
    (outside / "precious.parquet").write_bytes(b"a user's file")
    (outside / "model=cnn").mkdir()
    (outside / "model=cnn" / "notes.txt").write_text("keep me")


# ---- damage -----------------------------------------------------------------------------------------------
def _some_part(rng: random.Random, ds: Path, entries: list[dict], table: str = "runs") -> tuple[Path, dict]:
    doc = rng.choice(entries)
    return ds / doc["parts"][table]["path"], doc


def _restate(ds: Path, doc: dict, table: str, part: Path) -> None:
    doc["parts"][table].update(bytes=part.stat().st_size, rows=pq.ParquetFile(part).metadata.num_rows)
    (ds / "_manifest" / f"{doc['file_hash']}.json").write_text(json.dumps(doc))


def _damage(rng: random.Random, root: Path, ds: Path, entries: list[dict], shape: str) -> None:
    outside = root / "outside"
    part, doc = _some_part(rng, ds, entries, rng.choice(["runs", "ops", "files"]))
    table = part.relative_to(ds).parts[0]
    if shape == "symlinked_table":
        t = ds / rng.choice(["runs", "ops", "files", "events", "rejects", "_tmp"])
        shutil.rmtree(t, ignore_errors=True)
        t.symlink_to(outside, target_is_directory=True)
    elif shape == "symlinked_partition":
        folder = part.parent.parent
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    elif shape == "symlinked_manifest":
        shutil.rmtree(ds / "_manifest")
        (ds / "_manifest").symlink_to(outside, target_is_directory=True)
    elif shape == "symlinked_part":
        part.unlink()
        part.symlink_to(outside / ("0" * 64 + ".parquet"))
    elif shape == "garbage_part":
        part.write_bytes(rng.choice([b"PAR1garbagePAR1", b"", b"PAR1", os.urandom(rng.randint(1, 4096))]))
        if rng.random() < 0.5:
            _restate_bytes(ds, doc, table, part)
    elif shape == "dangling_part":
        part.unlink()
        part.symlink_to(root / "nowhere.parquet")
    elif shape == "fifo_part":
        part.unlink()
        os.mkfifo(part)
    elif shape == "folder_part":
        part.unlink()
        part.mkdir()
        (part / "x.parquet").write_bytes(b"PAR1")
    elif shape == "wrong_schema":
        pq.write_table(pa.table({"file_hash": [doc["file_hash"]], "other": [rng.random()],
                                 "execute": ["not an int"]}), part)
        _restate(ds, doc, table, part)
    elif shape == "foreign_rows":
        pq.write_table(pq.read_table(part).set_column(
            pq.read_table(part).column_names.index("file_hash"), "file_hash",
            pa.array(["f" * 64] * pq.read_table(part).num_rows)), part)
        _restate(ds, doc, table, part)
    elif shape in ("huge_rows", "huge_rows_restated"):
        n = rng.choice([1_000_000, 5_000_000, 20_000_000])
        block = pa.table({"execute": pa.array([0] * 100_000, pa.int64()), "latency_ms": pa.array([1.0] * 100_000),
                          "file_hash": [doc["file_hash"]] * 100_000})
        runs_part = ds / doc["parts"]["runs"]["path"]
        with pq.ParquetWriter(runs_part, block.schema, compression="zstd") as w:
            for _ in range(n // 100_000):
                w.write_table(block, row_group_size=n)
        if shape == "huge_rows_restated":      # the manifest agrees: the budget counts these rows
            _restate(ds, doc, "runs", runs_part)
    elif shape == "bad_entry":
        e = ds / "_manifest" / f"{doc['file_hash']}.json"
        e.write_text(rng.choice(["", "{", "[]", json.dumps({**doc, "layout": "etscope.dataset/9"}),
                                 json.dumps({**doc, "file_hash": "0" * 64}), json.dumps({**doc, "parts": {}}),
                                 json.dumps({**doc, "parts": {"runs": {**doc["parts"]["runs"], "rows": -1}}})]))
    elif shape == "deep_entry":
        (ds / "_manifest" / f"{doc['file_hash']}.json").write_text("[" * rng.choice([1000, 100_000]))
    elif shape == "entry_points_outside":
        doc["parts"]["runs"]["path"] = rng.choice(["../outside/" + "0" * 64 + ".parquet", "/etc/passwd",
                                                   "runs/../../outside/precious.parquet"])
        (ds / "_manifest" / f"{doc['file_hash']}.json").write_text(json.dumps(doc))
    elif shape == "journal_outside":
        h = hashlib.sha256(b"journal").hexdigest()
        victim = rng.choice(entries)["parts"]["runs"]["path"]
        (ds / "_manifest" / f"{h}.pending").write_text(json.dumps({
            "layout": LAYOUT, "file_hash": h, "status": "added", "partition": {}, "order_key": "",
            "parts": {"runs": {"path": "../outside/precious.parquet", "rows": 1, "bytes": 1},
                      "ops": {"path": victim, "rows": 1, "bytes": 1}}}))
    elif shape == "deep_sidecar":
        (root / "in" / "f0.meta.json").write_text(rng.choice(["[" * 100_000, "{\"a\":" * 50_000]))
    elif shape == "huge_number_sidecar":
        (root / "in" / "f0.meta.json").write_text(rng.choice(['{"build": ' + "9" * 5000 + "}",
                                                              '{"order": 1e999999}', '{"build": -' + "1" * 4400 + "}"]))
    elif shape == "fifo_etdump":
        os.mkfifo(root / "in" / "pipe.etdump")
    elif shape == "stray_files":
        (ds / "runs" / "stray").mkdir(parents=True, exist_ok=True)
        (ds / "runs" / "stray" / "x.parquet").write_bytes(b"PAR1garbagePAR1")
        (ds / "runs" / ("e" * 64 + ".parquet")).symlink_to(outside / ("0" * 64 + ".parquet"))
        (ds / "_tmp" / "users-file.txt").write_text("not etscope's")
    elif shape == "layout1":
        (ds / "_collected").mkdir()
        for e in entries[:-1]:           # the last file's parts: no commit marker (not adopted, not deleted)
            (ds / "_collected" / e["file_hash"]).write_bytes(b"")
        shutil.rmtree(ds / "_manifest")
        (ds / MARKER).write_text(json.dumps({"layout": "etscope.dataset/1"}))
    elif shape == "marker_symlink":
        (outside / "marker.json").write_text((ds / MARKER).read_text())
        (ds / MARKER).unlink()
        (ds / MARKER).symlink_to(outside / "marker.json")


def _restate_bytes(ds: Path, doc: dict, table: str, part: Path) -> None:
    doc["parts"][table]["bytes"] = part.stat().st_size
    (ds / "_manifest" / f"{doc['file_hash']}.json").write_text(json.dumps(doc))


def gen_dataset(rng: random.Random, root: Path, shape: str | None = None) -> None:
    """Fill the empty folder ``root`` with a hostile dataset, its inputs and outside files."""
    shape = shape or rng.choice(SHAPES)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    _decoys(root / "outside")
    _inputs(rng, root / "in", rng.randint(1, 3))
    name = "ds[x]" if shape == "glob_name" else "ds"
    model = "m" * rng.randint(201, 2000) + rng.choice(["-a", "-b"]) if shape == "long_partition" else "cnn"
    entries = _write_dataset(rng, root / name, rng.randint(2, 8), model)
    if shape == "glob_name":
        _write_dataset(rng, root / "dsx", 2, "neighbour")
    else:
        _damage(rng, root, root / name, entries, shape)
    (root / "dataset.txt").write_text(name)
    (root / "shape.txt").write_text(shape)


def dataset_of(root: Path) -> Path:
    return Path(root) / (Path(root) / "dataset.txt").read_text()


def commands(root: Path, out: Path) -> list[list[str]]:
    """The CLI runs of one generated dataset (each expected: exit 0 or 2, no traceback, nothing
    in ``protected(root)`` changed)."""
    ds = str(dataset_of(root))
    return [["trend", "--dataset", ds, "--json"], ["trend", "--dataset", ds, "--html", f"{out}.html"],
            ["sql", "--dataset", ds, "SELECT count(*) FROM runs"],
            ["sql", "--dataset", ds, "SELECT model, count(*) FROM files GROUP BY model"],
            ["trend", "--dataset", ds, "--html", os.path.join(ds, MARKER)],
            ["collect", str(Path(root) / "in"), "--to", ds, "--workers", "1"],
            ["collect", "--adopt", "--to", ds], ["trend", "--dataset", ds],
            ["trend", "--dataset", ds, "--summary", "b0"], ["trend", "--dataset", ds, "--summary", "b0", "--json"]]


def protected(root: Path) -> dict[str, bytes]:
    """Every file that no command may change: the outside folder (decoys), the inputs and the
    neighbour dataset of ``glob_name``."""
    out = {}
    for sub in ("outside", "in", "dsx"):
        for p in sorted((Path(root) / sub).rglob("*")):
            if p.is_file() and not p.is_symlink():
                out[str(p.relative_to(root))] = p.read_bytes()
    return out
