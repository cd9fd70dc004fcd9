"""The dataset on disk: Hive-partitioned Parquet that Spark, Trino and DuckDB read unchanged.

    DATASET/
      _etscope_dataset.json                      layout marker {"layout": LAYOUT, "tables": [...]}
      runs/model=M/soc=S/build=B/date=D/<sha256>.parquet
      ops/...     events/...     qnn/...         same partitions, one file per collected ETDump
      files/...                                  one row per collected ETDump (its index entry)
      rejects/<sha256>.parquet                   one row per file that could not be collected
      _collected/<sha256>                        commit marker: the file is in the dataset

A file's tables are written under ``_tmp/`` and renamed into their partitions; the marker is
renamed last. A collect interrupted between renames leaves parts without a marker: the next
collect deletes them before it starts (``remove_uncommitted``), so readers never see half a file
for long and a re-run never doubles one. Names starting with ``_`` or ``.`` are skipped by Spark,
Trino's Hive connector and the ``**/*.parquet`` globs below. One collect at a time per dataset
(``_etscope.lock``).

Partition values are the metadata given (``model``, ``soc``, ``build``); characters other than
letters, digits and ``._-+`` are percent-encoded (as Hive/Spark escape them), so no value can
make a path outside its table.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from etscope.errors import FormatError

LAYOUT = "etscope.dataset/1"
MARKER = "_etscope_dataset.json"
PARTITION_KEYS = ("model", "soc", "build", "date")
TABLES = ("runs", "ops", "events", "qnn", "files")     # files last: its part is the index entry
REJECTS = "rejects"
COLLECTED = "_collected"
TMP = "_tmp"
LOCK = "_etscope.lock"
UNKNOWN = "unknown"
_SAFE = re.compile(r"[^A-Za-z0-9._+\-]")
_HASH = re.compile(r"^[0-9a-f]{64}$")


def partition_value(value) -> str:
    """A metadata value as a Hive partition directory value: percent-encoded outside
    ``[A-Za-z0-9._+-]``; empty or dot-only values cannot name a directory, so they are encoded too."""
    s = UNKNOWN if value is None or str(value) == "" else str(value)
    s = _SAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), s)
    if set(s) == {"."}:
        s = s.replace(".", "%2E")
    return s[:200]


def partition_dir(meta: dict) -> str:
    """``model=M/soc=S/build=B/date=D`` for a file's metadata."""
    return "/".join(f"{k}={partition_value(meta.get(k))}" for k in PARTITION_KEYS)


class Dataset:
    """A dataset folder (created on first collect)."""

    def __init__(self, root):
        self.root = os.path.abspath(os.fspath(root))

    # ---- layout ----
    def table_dir(self, table: str) -> str:
        return os.path.join(self.root, table)

    def marker_path(self, file_hash: str) -> str:
        return os.path.join(self.root, COLLECTED, file_hash)

    def is_dataset(self) -> bool:
        return os.path.isfile(os.path.join(self.root, MARKER))

    def create(self) -> None:
        """Make the folder a dataset (its parent must exist; an existing non-dataset folder that is
        not empty is refused, so a typo cannot scatter parts into an unrelated folder)."""
        if self.is_dataset():
            return
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise FormatError(f"{self.root}: --to must be a folder (a dataset), not a file")
        if os.path.isdir(self.root) and os.listdir(self.root):
            raise FormatError(f"{self.root}: folder is not empty and is not an etscope dataset "
                              f"(no {MARKER}); give a new or empty folder")
        try:
            os.makedirs(os.path.join(self.root, COLLECTED), exist_ok=True)
            os.makedirs(os.path.join(self.root, TMP), exist_ok=True)
            with open(os.path.join(self.root, MARKER), "w", encoding="utf-8") as f:
                json.dump({"layout": LAYOUT, "partitions": list(PARTITION_KEYS), "tables": list(TABLES) + [REJECTS]}, f)
                f.write("\n")
        except OSError as e:
            raise FormatError(f"{self.root}: cannot create the dataset ({e.strerror or e})") from None

    def require(self) -> None:
        if not self.is_dataset():
            raise FormatError(f"{self.root}: not an etscope dataset (no {MARKER}; make one with etscope collect)")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One collect at a time: an exclusive lock file, removed at the end."""
        path = os.path.join(self.root, LOCK)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            raise FormatError(f"{path}: another collect is writing this dataset (delete the file if none is)") from None
        try:
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    # ---- the index ----
    def is_collected(self, file_hash: str) -> bool:
        return os.path.exists(self.marker_path(file_hash))

    def claim(self, file_hash: str) -> bool:
        """Take the file for this collect (False: another worker has the same content in hand).
        Claims live in ``_tmp``, which every collect clears before it starts."""
        try:
            os.close(os.open(os.path.join(self.root, TMP, file_hash + ".claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            return False

    def collected(self) -> set[str]:
        d = os.path.join(self.root, COLLECTED)
        return {n for n in os.listdir(d) if _HASH.match(n)} if os.path.isdir(d) else set()

    def parts(self, table: str) -> list[str]:
        """The committed-or-not Parquet parts of a table (sorted)."""
        out = []
        for dirpath, dirnames, filenames in os.walk(self.table_dir(table)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
            out += [os.path.join(dirpath, f) for f in sorted(filenames)
                    if f.endswith(".parquet") and not f.startswith(("_", "."))]
        return out

    def remove_uncommitted(self) -> int:
        """Delete the parts of files whose commit marker is missing (an interrupted collect) and
        the staging folder; returns how many parts were removed."""
        done = self.collected()
        removed = 0
        for table in TABLES + (REJECTS,):
            for p in self.parts(table):
                if os.path.basename(p)[:-len(".parquet")] not in done:
                    os.unlink(p)
                    removed += 1
        shutil.rmtree(os.path.join(self.root, TMP), ignore_errors=True)
        os.makedirs(os.path.join(self.root, TMP), exist_ok=True)
        return removed

    # ---- writing one file's tables: the commit ----
    def commit(self, file_hash: str, meta: dict, tables: dict[str, pa.Table], reject: bool = False) -> None:
        """Write ``tables`` ({table name: Arrow table}) of one collected file into their
        partitions (``rejects`` for a reject, unpartitioned), then the marker. Each part is
        written under ``_tmp`` and renamed; the marker last."""
        import pyarrow.parquet as pq

        if not _HASH.match(file_hash):
            raise ValueError(f"not a sha256 hex digest: {file_hash!r}")
        stage = tempfile.mkdtemp(prefix=file_hash[:16] + ".", dir=os.path.join(self.root, TMP))
        try:
            moves = []
            for name, table in tables.items():
                tmp = os.path.join(stage, name + ".parquet")
                pq.write_table(table, tmp, compression="zstd")
                folder = (self.table_dir(REJECTS) if reject else
                          os.path.join(self.table_dir(name), *partition_dir(meta).split("/")))
                moves.append((name == "files", tmp, os.path.join(folder, file_hash + ".parquet")))
            for _, tmp, target in sorted(moves, key=lambda m: m[0]):     # the index entry last
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            marker = os.path.join(stage, "marker")
            with open(marker, "wb"):
                pass
            os.replace(marker, self.marker_path(file_hash))
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    # ---- reading ----
    def glob(self, table: str) -> str | None:
        """A DuckDB/Spark glob of a table's parts, or None when it has none."""
        if not self.parts(table):
            return None
        if table == REJECTS:
            return os.path.join(self.table_dir(table), "*.parquet")
        return os.path.join(self.table_dir(table), "**", "*.parquet")

    def views_sql(self) -> list[str]:
        """``CREATE VIEW`` statements for every table that has parts (DuckDB): hive partition
        columns decoded from the paths, schemas merged by column name (the runs table has one
        column per backend)."""
        out = []
        for table in TABLES + (REJECTS,):
            g = self.glob(table)
            if g is None:
                continue
            lit = "'" + g.replace("'", "''") + "'"
            hive = "false" if table == REJECTS else "true"
            out.append(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({lit}, hive_partitioning={hive}, "
                       f"union_by_name=true, hive_types_autocast=false)")
        return out

    def connect(self):
        """An in-memory DuckDB connection with a view per table."""
        import duckdb

        self.require()
        con = duckdb.connect(database=":memory:")
        for stmt in self.views_sql():
            con.execute(stmt)
        return con


TREND_RUNS = ("file_hash", "order_key", "model", "soc", "build", "execute", "latency_ms")
TREND_OPS = ("file_hash", "order_key", "model", "soc", "build", "level", "name", "instruction_id", "occurrence",
             "placement", "unit", "p50")


def trend_inputs(ds: Dataset, model: str | None = None, soc: str | None = None) -> tuple[dict, dict | None]:
    """The runs and (level-0) ops columns ``analysis.trend`` reads, as numpy arrays, for one model
    and/or SoC (partition filters: DuckDB reads only those folders)."""
    from etscope.render.sql import run

    where, params = [], []
    for col, val in (("model", model), ("soc", soc)):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(str(val))
    con = ds.connect()
    try:
        if ds.glob("runs") is None:
            return {c: np.array([]) for c in TREND_RUNS}, None
        cond = (" WHERE " + " AND ".join(where)) if where else ""
        runs = run(con, f"SELECT {', '.join(TREND_RUNS)} FROM runs{cond}", params)
        ops = None
        if ds.glob("ops") is not None:
            ocond = " WHERE level = 0" + ("".join(" AND " + w for w in where))
            ops = run(con, f"SELECT {', '.join(TREND_OPS)} FROM ops{ocond}", params)
    finally:
        con.close()
    return _numpy(runs), (_numpy(ops) if ops is not None else None)


def _numpy(table: pa.Table) -> dict:
    return {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}


def query_dataset(ds: Dataset, sql: str) -> pa.Table:
    """``etscope sql --dataset``: DuckDB over the dataset's views; an Arrow table."""
    from etscope.render.sql import run

    con = ds.connect()
    try:
        return run(con, sql)
    finally:
        con.close()
