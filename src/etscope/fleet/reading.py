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

import numpy as np
import pyarrow as pa

from etscope.errors import FormatError
from etscope.fleet.folder import Root
from etscope.fleet.layout import (load_json_bytes, ALL_TABLES, ENTRY, MANIFEST, MAX_ENTRY_BYTES, PARTITION_KEYS, REJECTS, check_entry)
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
        from etscope.render.safe import clean

        self.count += 1
        if self.count <= MAX_WARNINGS:
            self.warn(clean(" ".join(line.split()), 600))

    def close(self) -> None:
        if self.count > MAX_WARNINGS:
            self.warn(f"({self.count - MAX_WARNINGS} more part(s) skipped)")


class BadPart(Exception):
    pass


def entries(ds, r: Root, warn) -> list[dict]:
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
        why = check_entry(doc, m.group(1))
        if why:
            warn(f"{display(os.path.join(ds.root, rel))}: manifest entry skipped ({why})")
            continue
        out.append(doc)
    return out


def _optional_present(pf, optional: dict) -> dict:
    """The ``optional`` columns the part has (checked like needed ones when present)."""
    schema = pf.schema_arrow
    return {c: k for c, k in (optional or {}).items() if schema.get_field_index(c) >= 0}


def _check_footer(pf, part: dict, need: dict) -> None:
    md = pf.metadata
    if md.num_rows != part["rows"]:
        raise BadPart(f"declares {md.num_rows} rows, the manifest recorded {part['rows']}")
    if md.num_columns > MAX_COLUMNS:
        raise BadPart(f"declares {md.num_columns} columns (limit {MAX_COLUMNS})")
    groups = [md.row_group(i) for i in range(md.num_row_groups)]
    if sum(g.num_rows for g in groups) != part["rows"]:
        raise BadPart("its row groups do not add up to its rows")
    limit = MAX_UNCOMPRESSED_BASE + MAX_UNCOMPRESSED_PER_ROW * part["rows"]
    if sum(max(0, g.total_byte_size) for g in groups) > limit:
        raise BadPart(f"declares more than {limit} bytes uncompressed for {part['rows']} rows")
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


def read_part(ds, r: Root, doc: dict, table: str, warn, need: dict | None = None,
              every_column: bool = False, dictionary: tuple = (), optional: dict | None = None) -> pa.Table | None:
    """One part of a manifest entry as an Arrow table (only the ``need`` columns, and those of
    ``optional`` it has, unless ``every_column``), checked against the entry first; None (and one
    warning) when it is bad."""
    import pyarrow.parquet as pq

    part = doc["parts"][table]
    shown = display(os.path.join(ds.root, part["path"]))
    try:
        with r.open_file(part["path"]) as f:
            size = os.fstat(f.fileno()).st_size
            if size != part["bytes"]:
                raise BadPart(f"is {size} bytes, the manifest recorded {part['bytes']}")
            pf = pq.ParquetFile(f)
            wanted = None if need is None else {**need, **_optional_present(pf, optional)}
            _check_footer(pf, part, wanted or {})
            if dictionary:      # constant per part: 4 bytes a row instead of the string
                present = [c for c in dictionary if pf.schema_arrow.get_field_index(c) >= 0]
                pf = pq.ParquetFile(f, read_dictionary=present) if present else pf
            t = pf.read(columns=None if every_column or wanted is None else list(wanted), use_threads=False)
        if t.num_rows != part["rows"]:
            raise BadPart(f"holds {t.num_rows} rows, the manifest recorded {part['rows']}")
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


def _with_partition(t: pa.Table, doc: dict, table: str) -> pa.Table:
    """The part with its entry's partition values as columns (as a Hive reader adds them from the
    folder names, but the full values); a column of the part with such a name is replaced."""
    if table == REJECTS:
        return t
    zeros = pa.array(np.zeros(t.num_rows, np.int32))
    for k in PARTITION_KEYS:
        if k in t.column_names:
            t = t.drop_columns([k])
        # one value per part: a dictionary column (4 bytes a row, whatever the value's length)
        t = t.append_column(k, pa.DictionaryArray.from_arrays(zeros, pa.array([doc["partition"].get(k, "")], pa.string())))
    if table == "files":       # other build labels of the same bytes (collect --also-label), JSON text
        if "also_builds" in t.column_names:
            t = t.drop_columns(["also_builds"])
        also = doc.get("also_builds")
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
        for doc in entries(ds, r, w):
            for table in doc["parts"]:
                t = read_part(ds, r, doc, table, w, REQUIRED.get(table, {"file_hash": "str"}), every_column=True,
                              dictionary=("file_hash", "order_key"))
                if t is None:
                    continue
                if not _own_rows(t, doc["file_hash"]):
                    w(f"{display(os.path.join(ds.root, doc['parts'][table]['path']))}: holds rows of another file "
                      "(file_hash is not its own); part skipped")
                    continue
                t = _with_partition(t, doc, table)
                try:
                    merged = t.schema if table not in schemas else pa.unify_schemas(
                        [schemas[table], t.schema], promote_options="permissive")
                except PART_ERRORS as e:
                    w(f"{display(os.path.join(ds.root, doc['parts'][table]['path']))}: its columns do not merge with "
                      f"the other parts' ({str(e)[:200]}); part skipped")
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


def _series_columns(docs: list[dict], counts: list[int]) -> dict[str, np.ndarray]:
    """Per-row columns that are constant per file, as object arrays sharing one string per file
    (8 bytes a row, whatever the length of a value)."""
    counts_a = np.asarray(counts, np.int64)
    out = {"file_hash": np.repeat(np.array([d["file_hash"] for d in docs] + [""], object)[:-1], counts_a),
           "order_key": np.repeat(np.array([d["order_key"] for d in docs] + [""], object)[:-1], counts_a)}
    for k in ("model", "soc", "build"):
        out[k] = np.repeat(np.array([d["partition"].get(k, "") for d in docs] + [""], object)[:-1], counts_a)
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


def _concat(parts: list[dict], spec: dict) -> dict[str, np.ndarray]:
    dtypes = {"str": object, "int": np.int64, "float": np.float64}
    return {c: (np.concatenate([p[c] for p in parts]) if parts else np.zeros(0, dtypes[k])) for c, k in spec.items()}


def trend_inputs(ds, model: str | None = None, soc: str | None = None, warn=None):
    """What ``analysis.diff.trend.trend_of_sessions`` reads, for one model and/or SoC (selected from
    the manifest: other series' parts are not opened): a :class:`~etscope.analysis.diff.trend.Session`
    per file, its runs summarised as soon as its part is read (one part's rows in memory at a
    time), and the level-0 ops rows as numpy columns (None without any). A file whose runs are
    several phases (its rows' ``phase``: an LLM's prefill and decode) is a session per phase, never
    pooled; a part without the column (collected before it existed) is phase ``all``. A file whose
    runs or ops part is bad is left out whole (one warning per part)."""
    import pyarrow.compute as pc

    from etscope.analysis.diff.trend import Session, factorize, phase_values, session_summary

    ds.require()
    w = Warnings(warn)
    sessions, ops_p, op_docs = [], [], []
    with ds.open() as r:
        for doc in entries(ds, r, w):
            part = doc["partition"]
            if doc["status"] != "added" or "runs" not in doc["parts"]:
                continue
            if (model is not None and part.get("model") != model) or (soc is not None and part.get("soc") != soc):
                continue
            runs = read_part(ds, r, doc, "runs", w, TREND_RUNS_COLUMNS, optional=TREND_OPTIONAL)
            if runs is None:
                continue
            ops = None
            if "ops" in doc["parts"]:
                ops = read_part(ds, r, doc, "ops", w, TREND_OPS_COLUMNS, optional=TREND_OPTIONAL)
                if ops is None:
                    continue
            try:
                runs_a = _arrays(runs, _with_optional(runs, TREND_RUNS_COLUMNS))
                del runs
                if ops is not None:
                    level0 = ops.filter(pc.fill_null(pc.equal(ops.column("level"), 0), False))
                    ops = _arrays(level0, _with_optional(level0, TREND_OPS_COLUMNS))
                    ops["phase"] = phase_values(ops, ops["level"].size)
            except PART_ERRORS as e:
                w(f"{display(os.path.join(ds.root, doc['parts']['runs']['path']))}: values out of range "
                  f"({type(e).__name__}: {str(e)[:200]}); file skipped")
                continue
            facts = file_facts(ds, r, doc, w)
            codes, phases = factorize(phase_values(runs_a, runs_a["execute"].size))
            for k, phase in enumerate(phases or [None]):      # a file without runs: one session, no p50
                sel = codes == k
                one = session_summary(runs_a["execute"][sel], runs_a["latency_ms"][sel])
                sessions.append(Session(doc["file_hash"], part.get("model", ""), part.get("soc", ""),
                                        part.get("build", ""), doc["order_key"], None if one is None else one[0],
                                        0 if one is None else one[1], **({"phase": phase} if phase else {}),
                                        **({} if one is None else {"q1_ms": one[2], "q3_ms": one[3]}),
                                        also_builds=tuple(doc.get("also_builds", ())), facts=facts))
            del runs_a
            if ops is not None:
                ops_p.append(ops)
                op_docs.append(doc)
    w.close()
    if not ops_p:
        return sessions, None
    ops = _series_columns(op_docs, [p["level"].size for p in ops_p])
    ops.update(_concat(ops_p, {**TREND_OPS_COLUMNS, "phase": "str"}))
    return sessions, ops


# Metadata keys that are the partition or the order, not facts about the program or the device.
NOT_FACTS = {"model", "soc", "device", "build", "commit", "date", "order", "time"}
MAX_FACTS = 50
MAX_FACT_CHARS = 200
MAX_META_JSON = 64 << 10


def file_facts(ds, r: Root, doc: dict, warn) -> tuple:
    """What the dataset stores about a file's program and environment, as sorted (name, value)
    strings: its metadata (``files.meta_json``: the keys given with ``--meta``, a sidecar or
    ``--meta-from``, but the partition and order keys) and the HTP clock its QNN rows used (the
    median over its partitions, with its source). Bounded: at most MAX_FACTS keys, values cut at
    MAX_FACT_CHARS; a part or a value that cannot be read gives no facts (the part's warning)."""
    from etscope.render.safe import clean

    out: dict[str, str] = {}
    if "files" in doc["parts"]:
        t = read_part(ds, r, doc, "files", warn, {"file_hash": "str"}, optional={"meta_json": "str"})
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
    if "qnn" in doc["parts"]:
        t = read_part(ds, r, doc, "qnn", warn, {}, optional={"clock_mhz_used": "float", "clock_source": "str"})
        if t is not None and "clock_mhz_used" in t.column_names:
            mhz = t.column("clock_mhz_used").cast(pa.float64()).to_numpy(zero_copy_only=False)
            mhz = mhz[np.isfinite(mhz)]
            if mhz.size:
                src = [x for x in (t.column("clock_source").to_pylist() if "clock_source" in t.column_names else [])
                       if isinstance(x, str)]
                out["HTP clock"] = f"{float(np.median(mhz)):.0f} MHz" + (f" ({clean(src[0], 60)})" if src else "")
    return tuple(sorted(out.items()))


def _with_optional(t: pa.Table, spec: dict) -> dict:
    """``spec`` and the TREND_OPTIONAL columns ``t`` has."""
    return {**spec, **{c: k for c, k in TREND_OPTIONAL.items() if c in t.column_names}}
