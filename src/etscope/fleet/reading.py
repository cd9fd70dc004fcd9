"""Reading a dataset back through its manifest: parts as Arrow tables, never a path reached by a
glob or by a query.

Each part named by a good manifest entry is opened without following links (``fleet.folder``)
and checked before its data is read: its size is the bytes the entry recorded, its footer
declares the rows the entry recorded (in row groups that add up), at most ``MAX_COLUMNS``
columns and at most ``MAX_UNCOMPRESSED_BASE + MAX_UNCOMPRESSED_PER_ROW x rows`` bytes
uncompressed, and the columns a command needs with usable types. So the work of a dataset
command is bounded by the rows the manifest records (a 0.3 MB part declaring 20 million rows is
skipped unless the entry says so too; then those rows are what the budget counts). A bad part
(corrupt, dangling, a link, a FIFO, a folder, another schema) is skipped with one warning line
naming it; at most ``MAX_WARNINGS`` lines, then a count.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, fields

import numpy as np
import pyarrow as pa

from etscope.errors import FormatError
from etscope.fleet.folder import Root
from etscope.fleet.layout import (load_json_bytes, ALL_TABLES, ENTRY, MANIFEST, MAX_ENTRY_BYTES, PARTITION_KEYS, REJECTS,
                                  EntryProblem, ManifestEntry, PartRef, parse_entry)
from etscope.paths import display

MAX_WARNINGS = 20
MAX_COLUMNS = 4096
MAX_UNCOMPRESSED_BASE = 64 << 20
MAX_UNCOMPRESSED_PER_ROW = 64 << 10
# pyarrow raises ArrowException subclasses that are also OSError / ValueError / TypeError ...
PART_ERRORS = (pa.ArrowException, OSError, ValueError, TypeError, IndexError, KeyError, NotImplementedError,
               OverflowError, RecursionError)

# Columns a command reads, with the kind of type each must have ("int", "float", "str").
TREND_RUNS_COLUMNS = {"execute": "int", "latency_ms": "float"}
TREND_OPS_COLUMNS = {"level": "int", "name": "str", "instruction_id": "int", "occurrence": "int",
                     "placement": "str", "unit": "str", "p50": "float"}
# What a part of each table must hold to be read by ``sql --dataset`` (other columns merge by name).
REQUIRED = {"runs": {"file_hash": "str", "execute": "int", "latency_ms": "float"},
            "ops": {"file_hash": "str", "level": "int", "name": "str"},
            "events": {"file_hash": "str", "name": "str", "value": "float"},
            "files": {"file_hash": "str", "path": "str"},
            "summary": {"file_hash": "str", "summary_json": "str"},
            REJECTS: {"file_hash": "str", "path": "str", "reason": "str"}}
# Read when a part has them (parts collected before they existed do not): the run's phase.
TREND_OPTIONAL = {"phase": "str"}
TREND_OPS = ("file_hash", "order_key", "model", "soc", "build", "level", "name", "instruction_id", "occurrence",
             "placement", "unit", "p50")
_KINDS = {"int": pa.types.is_integer, "float": lambda t: pa.types.is_floating(t) or pa.types.is_integer(t),
          "str": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)}


class Warnings:
    """Warning lines to ``warn`` (default: ``etscope: warning: ...`` on stderr), at most MAX_WARNINGS."""

    def __init__(self, warn=None):
        self.warn = warn or (lambda line: print(f"etscope: warning: {line}", file=sys.stderr))
        self.count = 0

    def __call__(self, line: str) -> None:
        from etscope.display import clean

        self.count += 1
        if self.count <= MAX_WARNINGS:
            self.warn(clean(" ".join(line.split()), 600))

    def close(self) -> None:
        if self.count > MAX_WARNINGS:
            self.warn(f"({self.count - MAX_WARNINGS} more part(s) skipped)")


class BadPart(Exception):
    pass


def entries(ds, r: Root, warn) -> list[ManifestEntry]:
    """The good manifest entries (sorted by hash); a bad one is skipped with a warning."""
    out = []
    for name in r.listdir(MANIFEST):
        m = ENTRY.match(name)
        if not m:
            continue
        rel = f"{MANIFEST}/{name}"
        try:
            doc = load_json_bytes(r.read_bytes(rel, MAX_ENTRY_BYTES), os.path.join(ds.root, rel), "manifest entry")
        except FormatError as e:
            warn(f"{e}; skipped")
            continue
        try:
            out.append(parse_entry(doc, m.group(1)))
        except EntryProblem as why:
            warn(f"{display(os.path.join(ds.root, rel))}: manifest entry skipped ({why})")
    return out


def _optional_present(pf, optional: dict) -> dict:
    """The ``optional`` columns the part has (checked like needed ones when present)."""
    schema = pf.schema_arrow
    return {c: k for c, k in (optional or {}).items() if schema.get_field_index(c) >= 0}


def _check_footer(pf, part: PartRef, need: dict) -> None:
    md = pf.metadata
    if md.num_rows != part.rows:
        raise BadPart(f"declares {md.num_rows} rows, the manifest recorded {part.rows}")
    if md.num_columns > MAX_COLUMNS:
        raise BadPart(f"declares {md.num_columns} columns (limit {MAX_COLUMNS})")
    groups = [md.row_group(i) for i in range(md.num_row_groups)]
    if sum(g.num_rows for g in groups) != part.rows:
        raise BadPart("its row groups do not add up to its rows")
    limit = MAX_UNCOMPRESSED_BASE + MAX_UNCOMPRESSED_PER_ROW * part.rows
    if sum(max(0, g.total_byte_size) for g in groups) > limit:
        raise BadPart(f"declares more than {limit} bytes uncompressed for {part.rows} rows")
    schema = pf.schema_arrow
    for col, kind in need.items():
        i = schema.get_field_index(col)
        if i < 0:
            raise BadPart(f"has no column {col!r}")
        t = schema.field(i).type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (pa.types.is_null(t) or _KINDS[kind](t)):
            raise BadPart(f"column {col!r} is {t}, expected {kind}")


def read_part(ds, r: Root, part: PartRef, warn, need: dict | None = None,
              every_column: bool = False, dictionary: tuple = (), optional: dict | None = None) -> pa.Table | None:
    """One part of a manifest entry as an Arrow table (only the ``need`` columns, and those of
    ``optional`` it has, unless ``every_column``), checked against the entry first; None (and one
    warning) when it is bad."""
    import pyarrow.parquet as pq

    shown = display(os.path.join(ds.root, part.path))
    try:
        with r.open_file(part.path) as f:
            size = os.fstat(f.fileno()).st_size
            if size != part.bytes:
                raise BadPart(f"is {size} bytes, the manifest recorded {part.bytes}")
            pf = pq.ParquetFile(f)
            wanted = None if need is None else {**need, **_optional_present(pf, optional)}
            _check_footer(pf, part, wanted or {})
            if dictionary:      # constant per part: 4 bytes a row instead of the string
                present = [c for c in dictionary if pf.schema_arrow.get_field_index(c) >= 0]
                pf = pq.ParquetFile(f, read_dictionary=present) if present else pf
            t = pf.read(columns=None if every_column or wanted is None else list(wanted), use_threads=False)
        if t.num_rows != part.rows:
            raise BadPart(f"holds {t.num_rows} rows, the manifest recorded {part.rows}")
        return t
    except FormatError as e:          # fleet.folder: a link, FIFO, folder, missing file ...
        warn(f"{e}; part skipped")
    except BadPart as e:
        warn(f"{shown}: {e}; part skipped")
    except MemoryError:
        warn(f"{shown}: out of memory while reading it; part skipped")
    except PART_ERRORS as e:
        warn(f"{shown}: not a readable Parquet part ({type(e).__name__}: {str(e)[:200]}); part skipped")
    return None


def _with_partition(t: pa.Table, e: ManifestEntry, table: str) -> pa.Table:
    """The part with its entry's partition values as columns (as a Hive reader adds them from the
    folder names, but the full values); a column of the part with such a name is replaced."""
    if table == REJECTS:
        return t
    zeros = pa.array(np.zeros(t.num_rows, np.int32))
    for k, v in zip(PARTITION_KEYS, e.partition.values()):
        if k in t.column_names:
            t = t.drop_columns([k])
        # one value per part: a dictionary column (4 bytes a row, whatever the value's length)
        t = t.append_column(k, pa.DictionaryArray.from_arrays(zeros, pa.array([v or ""], pa.string())))
    if table == "files":       # other build labels of the same bytes (collect --also-label), JSON text
        if "also_builds" in t.column_names:
            t = t.drop_columns(["also_builds"])
        also = list(e.also_builds)
        t = t.append_column("also_builds", pa.array([json.dumps(also) if also else None] * t.num_rows, pa.string()))
    return t


def _own_rows(t: pa.Table, file_hash: str) -> bool:
    import pyarrow.compute as pc

    col = t.column("file_hash")
    if pa.types.is_null(col.type):
        return t.num_rows == 0
    if t.num_rows == 0:
        return True
    if pa.types.is_dictionary(col.type):      # check the distinct values, then that no row is null
        col = col.combine_chunks()
        if col.null_count:
            return False
        used = pc.unique(col.indices)
        col = col.dictionary.take(used)
    return bool(pc.all(pc.fill_null(pc.equal(col.cast(pa.string()), file_hash), False)).as_py())


def dataset_tables(ds, warn=None) -> dict[str, pa.Table]:
    """{table: Arrow table} of every table with good parts (``rejects`` always, maybe empty):
    the parts of the manifest's good entries, partition columns added, schemas merged by column
    name; a part whose columns cannot merge with the others' is skipped with a warning."""
    ds.require()
    w = Warnings(warn)
    pieces: dict[str, list[pa.Table]] = {t: [] for t in ALL_TABLES}
    schemas: dict[str, pa.Schema] = {}
    with ds.open() as r:
        for e in entries(ds, r, w):
            for part in e.parts:
                table = part.table
                t = read_part(ds, r, part, w, REQUIRED.get(table, {"file_hash": "str"}), every_column=True,
                              dictionary=("file_hash", "order_key"))
                if t is None:
                    continue
                if not _own_rows(t, e.file_hash):
                    w(f"{display(os.path.join(ds.root, part.path))}: holds rows of another file "
                      "(file_hash is not its own); part skipped")
                    continue
                t = _with_partition(t, e, table)
                try:
                    merged = t.schema if table not in schemas else pa.unify_schemas(
                        [schemas[table], t.schema], promote_options="permissive")
                except PART_ERRORS as why:
                    w(f"{display(os.path.join(ds.root, part.path))}: its columns do not merge with "
                      f"the other parts' ({str(why)[:200]}); part skipped")
                    continue
                schemas[table] = merged
                pieces.setdefault(table, []).append(t)
    w.close()
    out = {}
    for table, ts in pieces.items():
        if ts:
            try:
                out[table] = pa.concat_tables(ts, promote_options="permissive")
            except PART_ERRORS as e:
                raise FormatError(f"{display(ds.root)}: the {table} parts cannot be merged ({str(e)[:200]})") from None
    if REJECTS not in out:
        out[REJECTS] = pa.table({c: pa.array([], pa.string()) for c in ("file_hash", "path", "reason", "meta_json")})
    return out


def _arrays(t: pa.Table, spec: dict) -> dict[str, np.ndarray]:
    """The ``spec`` columns of one part as numpy arrays (int64, float64 with NaN for nulls, or
    object arrays of strings and None)."""
    out = {}
    for name, kind in spec.items():
        c = t.column(name)
        if c.null_count == 0 and kind != "str":     # no fill_null copy
            out[name] = c.cast(pa.int64() if kind == "int" else pa.float64()).to_numpy(zero_copy_only=False)
            continue
        if kind == "str":      # one Python string per distinct value, shared by its rows
            d = c.cast(pa.string()).combine_chunks().dictionary_encode()
            values = np.empty(len(d.dictionary) + 1, object)
            values[:-1] = d.dictionary.to_pylist()
            out[name] = values[d.indices.fill_null(len(d.dictionary)).to_numpy(zero_copy_only=False)]
        elif kind == "int":
            out[name] = c.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        else:
            out[name] = c.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False).astype(np.float64,
                                                                                                  copy=False)
    return out


@dataclass(frozen=True)
class StoredRuns:
    """What trend reads of one runs part, one element per run."""
    execute: np.ndarray          # int64: the run's execute index
    latency_ms: np.ndarray       # float64, NaN for null
    phase: np.ndarray            # object: the run's phase (``all`` in parts collected before phases)


@dataclass(frozen=True)
class StoredOps:
    """What trend reads of level-0 ops rows, one element per row (of one part, or concatenated)."""
    level: np.ndarray            # int64
    name: np.ndarray             # object: strings and None
    instruction_id: np.ndarray   # int64
    occurrence: np.ndarray       # int64
    placement: np.ndarray        # object
    unit: np.ndarray             # object
    p50: np.ndarray              # float64, NaN for null
    phase: np.ndarray            # object (``all`` in parts collected before phases)

    @property
    def size(self) -> int:
        return self.level.size


def stored_runs(t: pa.Table) -> StoredRuns:
    """A runs part's columns (checked by ``read_part`` against TREND_RUNS_COLUMNS) as numpy arrays."""
    from etscope.analysis.diff.trend import phase_values

    cols = _arrays(t, _with_optional(t, TREND_RUNS_COLUMNS))
    return StoredRuns(cols["execute"], cols["latency_ms"], phase_values(cols, cols["execute"].size))


def stored_level0_ops(t: pa.Table) -> StoredOps:
    """The level-0 rows of an ops part (checked by ``read_part`` against TREND_OPS_COLUMNS) as numpy arrays."""
    import pyarrow.compute as pc

    from etscope.analysis.diff.trend import phase_values

    level0 = t.filter(pc.fill_null(pc.equal(t.column("level"), 0), False))
    cols = _arrays(level0, _with_optional(level0, TREND_OPS_COLUMNS))
    return StoredOps(cols["level"], cols["name"], cols["instruction_id"], cols["occurrence"], cols["placement"],
                     cols["unit"], cols["p50"], phase_values(cols, cols["level"].size))


def _trend_ops(files: list[ManifestEntry], parts: list[StoredOps]) -> dict[str, np.ndarray]:
    """The ops rows of ``files`` (``parts``: their level-0 rows, in the same order) as the column
    dict ``analysis.diff.trend`` reads: the file's hash, order key, model, SoC and build per row
    (object arrays sharing one string per file: 8 bytes a row, whatever the length of a value),
    then the :class:`StoredOps` concatenated."""
    counts = np.asarray([p.size for p in parts], np.int64)

    def per_row(values) -> np.ndarray:
        return np.repeat(np.array(list(values) + [""], object)[:-1], counts)

    return {"file_hash": per_row(e.file_hash for e in files), "order_key": per_row(e.order_key for e in files),
            "model": per_row(e.partition.model or "" for e in files),
            "soc": per_row(e.partition.soc or "" for e in files),
            "build": per_row(e.partition.build or "" for e in files),
            **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(StoredOps)}}


def trend_inputs(ds, model: str | None = None, soc: str | None = None, warn=None):
    """What ``analysis.diff.trend.trend_of_sessions`` reads, for one model and/or SoC (selected from
    the manifest: other series' parts are not opened): a :class:`~etscope.analysis.diff.trend.Session`
    per file, its runs summarised as soon as its part is read (one part's rows in memory at a
    time), and the level-0 ops rows as numpy columns (None without any). A file whose runs are
    several phases (its rows' ``phase``: an LLM's prefill and decode) is a session per phase, never
    pooled; a part without the column (collected before it existed) is phase ``all``. A file whose
    runs or ops part is bad is left out whole (one warning per part)."""
    from etscope.analysis.diff.trend import Session, factorize, session_summary

    ds.require()
    w = Warnings(warn)
    sessions, ops_p, op_files = [], [], []
    with ds.open() as r:
        for e in entries(ds, r, w):
            part = e.partition
            runs_part, ops_part = e.part("runs"), e.part("ops")
            if e.status != "added" or runs_part is None:
                continue
            if (model is not None and part.model != model) or (soc is not None and part.soc != soc):
                continue
            runs = read_part(ds, r, runs_part, w, TREND_RUNS_COLUMNS, optional=TREND_OPTIONAL)
            if runs is None:
                continue
            ops = None
            if ops_part is not None:
                ops = read_part(ds, r, ops_part, w, TREND_OPS_COLUMNS, optional=TREND_OPTIONAL)
                if ops is None:
                    continue
            try:
                runs_a = stored_runs(runs)
                del runs
                if ops is not None:
                    ops = stored_level0_ops(ops)
            except PART_ERRORS as why:
                w(f"{display(os.path.join(ds.root, runs_part.path))}: values out of range "
                  f"({type(why).__name__}: {str(why)[:200]}); file skipped")
                continue
            facts = file_facts(ds, r, e, w)
            codes, phases = factorize(runs_a.phase)
            for k, phase in enumerate(phases or [None]):      # a file without runs: one session, no p50
                sel = codes == k
                one = session_summary(runs_a.execute[sel], runs_a.latency_ms[sel])
                sessions.append(Session(e.file_hash, part.model or "", part.soc or "", part.build or "", e.order_key,
                                        None if one is None else one[0],
                                        0 if one is None else one[1], **({"phase": phase} if phase else {}),
                                        **({} if one is None else {"q1_ms": one[2], "q3_ms": one[3]}),
                                        also_builds=e.also_builds, facts=facts))
            del runs_a
            if ops is not None:
                ops_p.append(ops)
                op_files.append(e)
    w.close()
    if not ops_p:
        return sessions, None
    return sessions, _trend_ops(op_files, ops_p)


# Metadata keys that are the partition or the order, not facts about the program or the device.
NOT_FACTS = {"model", "soc", "device", "build", "commit", "date", "order", "time"}
MAX_FACTS = 50
MAX_FACT_CHARS = 200
MAX_META_JSON = 64 << 10


def file_facts(ds, r: Root, e: ManifestEntry, warn) -> tuple:
    """What the dataset stores about a file's program and environment, as sorted (name, value)
    strings: its metadata (``files.meta_json``: the keys given with ``--meta``, a sidecar or
    ``--meta-from``, but the partition and order keys) and the HTP clock its QNN rows used (the
    median over its partitions, with its source). Bounded: at most MAX_FACTS keys, values cut at
    MAX_FACT_CHARS; a part or a value that cannot be read gives no facts (the part's warning)."""
    from etscope.display import clean

    out: dict[str, str] = {}
    files, qnn = e.part("files"), e.part("qnn")
    if files is not None:
        t = read_part(ds, r, files, warn, {"file_hash": "str"}, optional={"meta_json": "str"})
        if t is not None and "meta_json" in t.column_names and t.num_rows:
            text = t.column("meta_json")[0].as_py()
            try:
                meta = load_json_bytes(text.encode("utf-8", "surrogatepass"), "meta_json", "metadata") \
                    if isinstance(text, str) and len(text) <= MAX_META_JSON else None
            except FormatError:
                meta = None
            if isinstance(meta, dict):
                for k in sorted(meta)[:MAX_FACTS + len(NOT_FACTS)]:
                    v = meta[k]
                    if k not in NOT_FACTS and isinstance(v, (str, int, float)) and len(out) < MAX_FACTS:
                        out[clean(str(k), 80)] = clean(str(v), MAX_FACT_CHARS)
    if qnn is not None:
        t = read_part(ds, r, qnn, warn, {}, optional={"clock_mhz_used": "float", "clock_source": "str"})
        if t is not None and "clock_mhz_used" in t.column_names:
            mhz = t.column("clock_mhz_used").cast(pa.float64()).to_numpy(zero_copy_only=False)
            mhz = mhz[np.isfinite(mhz)]
            if mhz.size:
                src = [x for x in (t.column("clock_source").to_pylist() if "clock_source" in t.column_names else [])
                       if isinstance(x, str)]
                out.update({"HTP clock": f"{float(np.median(mhz)):.0f} MHz" + (f" ({clean(src[0], 60)})" if src else "")})
    return tuple(sorted(out.items()))


def _with_optional(t: pa.Table, spec: dict) -> dict:
    """``spec`` and the TREND_OPTIONAL columns ``t`` has."""
    return {**spec, **{c: k for c, k in TREND_OPTIONAL.items() if c in t.column_names}}
