"""``etscope collect``: many ETDumps into one dataset (layout in ``fleet.dataset``).

The work per file is one pure function, :func:`file_tables` (an ETDump and its companions -> Arrow
tables), built from the same loader and analyses as every other command (``etscope.api``): the
dataset's ``events``/``ops``/``runs`` tables are exactly what ``etscope export`` writes for that
file, plus ``file_hash`` and ``order_key``. :func:`collect_one` adds the dataset side (skip a
content hash already collected, commit the parts, or record a reject) and returns a small summary,
so an engine only maps it over jobs: a local process pool, or ``distributed`` (Dask) when the
files sit on storage every worker reads.
"""
from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import os
import resource
import time
from dataclasses import dataclass, field

import pyarrow as pa

from etscope.formats.kinds import companions
from etscope.errors import FormatError
from etscope.fleet.dataset import Dataset
from etscope.fleet.folder import UnsafeEntry
from etscope.fleet.summaries import TABLE as SUMMARY, summary_table

ETDUMP_SUFFIXES = (".etdump", ".etdp")
# Companion files found next to an ETDump by name: <stem><suffix>: the program's, then the input
# kinds the registry reads beside an ETDump (formats.kinds: QHAS, optrace, runtrace, ...).
PROGRAM_COMPANIONS = {"etrecord": ".etrecord", "pte": ".pte"}
COMPANIONS = {**PROGRAM_COMPANIONS, **{k.name: k.companion for k in companions()}}
SIDECAR = ".meta.json"          # <stem>.meta.json: that file's metadata (and companion paths)
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Job:
    """One ETDump to collect: its path, its companions and its metadata (strings)."""
    etdump: str
    meta: tuple = ()                      # sorted (key, value) pairs
    companions: tuple = ()                # sorted (kind, path) pairs
    problem: str = ""                     # why its metadata could not be read (a reject, not the end of the batch)

    def meta_dict(self) -> dict:
        return dict(self.meta)


@dataclass
class Outcome:
    """What collecting one job did (``status``: added, skipped, rejected)."""
    etdump: str
    status: str
    file_hash: str = ""
    reason: str = ""
    rows: dict = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0              # CPU time of the worker on this file
    max_rss_bytes: int = 0
    build: str = ""                       # skipped as content already there: the build label it was given
    note: str = ""                        # skipped: under which labels the content is there (label_skipped)


# ---- finding the files and their metadata -----------------------------------------------------------
def find_etdumps(patterns) -> list[str]:
    """ETDumps named by folders (searched recursively for *.etdump / *.etdp), globs or paths;
    sorted, each once. A pattern matching nothing is an error."""
    out: list[str] = []
    for pat in patterns:
        pat = os.fspath(pat)
        if os.path.isdir(pat):
            found = [os.path.join(d, f) for d, _, fs in os.walk(pat) for f in fs if f.endswith(ETDUMP_SUFFIXES)]
        elif os.path.exists(pat):
            found = [pat]
        else:
            found = [p for p in glob.glob(pat, recursive=True) if os.path.isfile(p)]
        if not found:
            raise FormatError(f"{pat}: no ETDump found (give folders, globs or files)")
        out += found
    return sorted(dict.fromkeys(os.path.abspath(p) for p in out))


MAX_META_BYTES = 64 << 20


def read_meta_file(path, what: str = "--meta-from") -> tuple[dict, dict]:
    """A ``--meta-from`` manifest (or a ``<stem>.meta.json`` sidecar, ``what``): a JSON object
    whose keys are metadata for every file, except ``files``: {ETDump path or file name:
    {metadata and companion paths}}. Companion paths are relative to the file's folder. Returns
    (defaults, per-file). Bad text, deep nesting, huge numbers, other shapes: one FormatError
    line naming the file and ``what``."""
    from etscope.fleet.layout import load_json_bytes
    from etscope.paths import display, open_input

    with open_input(path, what, max_bytes=MAX_META_BYTES) as f:
        doc = load_json_bytes(f.read(MAX_META_BYTES + 1), display(path), what)
    if not isinstance(doc, dict):
        raise FormatError(f"{what} must hold a JSON object", display(path))
    per_file = doc.get("files", {})
    if not isinstance(per_file, dict) or not all(isinstance(v, dict) for v in per_file.values()):
        raise FormatError(f"{what}: 'files' must map file names to objects", display(path))
    base = os.path.dirname(os.path.abspath(path))
    defaults = {k: v for k, v in doc.items() if k != "files"}
    return _resolve(defaults, base, path, what), {k: _resolve(v, base, path, what) for k, v in per_file.items()}


def _resolve(meta: dict, base: str, path, what: str) -> dict:
    from etscope.paths import display

    out = {}
    for k, v in meta.items():
        if isinstance(v, (dict, list)):
            raise FormatError(f"{what}: metadata {display(str(k)[:80])!r}: expected a string or number, "
                              f"got {type(v).__name__}", display(path))
        v = "" if v is None else str(v)
        out[str(k)] = os.path.join(base, v) if k in COMPANIONS and v else v
    return out


def jobs_for(etdumps: list[str], meta: dict | None = None, meta_from: tuple[dict, dict] | None = None) -> list[Job]:
    """A job per ETDump. Metadata, later overriding earlier: the manifest's defaults, ``meta``
    (``--meta``), ``<stem>.meta.json`` beside the file, the manifest's entry for the file.
    Companions: named in the metadata, else ``<stem>.etrecord`` / ``.pte`` and the registry's
    companion suffixes (``.qhas.json``, ``.optrace.json``, ``.runtrace.json``, ...) when they exist."""
    defaults, per_file = meta_from or ({}, {})
    out = []
    for path in etdumps:
        stem = _stem(path)
        m = dict(defaults)
        m.update(meta or {})
        sidecar = stem + SIDECAR
        problem = ""
        if os.path.lexists(sidecar):
            try:
                m.update(read_meta_file(sidecar, "sidecar metadata")[0])
            except FormatError as e:
                problem = str(e)
        for key in (path, os.path.basename(path)):
            m.update(per_file.get(key, {}))
        comps = {k: m.pop(k) for k in list(m) if k in COMPANIONS}
        for kind, suffix in COMPANIONS.items():
            if kind not in comps and os.path.isfile(stem + suffix):
                comps[kind] = stem + suffix
        out.append(Job(path, tuple(sorted(m.items())), tuple(sorted((k, v) for k, v in comps.items() if v)), problem))
    return out


def _stem(path: str) -> str:
    for suffix in ETDUMP_SUFFIXES:
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return os.path.splitext(path)[0]


def content_hash(path: str) -> str:
    """SHA-256 of a regular file (a FIFO, device or folder: FormatError, never a blocking read)."""
    from etscope.paths import open_input

    h = hashlib.sha256()
    with open_input(path, "ETDump") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# ---- the per-file function ------------------------------------------------------------------------
def resolved_meta(job: Job, soc: dict | None = None) -> dict:
    """The file's partition values and order key: ``model``, ``soc`` (else ``device``, else the
    .pte's QNN compile spec), ``build`` (else ``commit``), ``date`` (else the order key's date,
    else the file's modification date, UTC) and ``order`` (else ``time``, else ``date``, else the
    modification time)."""
    m = job.meta_dict()
    mtime = dt.datetime.fromtimestamp(os.stat(job.etdump).st_mtime, dt.timezone.utc)
    order = m.get("order") or m.get("time") or m.get("date") or mtime.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    date = m.get("date") or (order[:10] if _is_iso_date(order[:10]) else mtime.strftime("%Y-%m-%d"))
    spec_soc = soc.soc_model if soc is not None else None
    return {"model": m.get("model") or "unknown",
            "soc": m.get("soc") or m.get("device") or (str(spec_soc) if spec_soc else "unknown"),
            "build": m.get("build") or m.get("commit") or "unknown", "date": date, "order_key": order}


def _is_iso_date(s: str) -> bool:
    try:
        dt.date.fromisoformat(s)
        return True
    except ValueError:
        return False


QNN_COLUMNS = (("key", pa.string()), ("instruction_id", pa.int64()), ("runs", pa.int64()),
               ("delegate_call_ms", pa.float64()), ("qnn_execute_us", pa.float64()), ("rpc_us", pa.float64()),
               ("qnn_accel_us", pa.float64()), ("accel_us", pa.float64()), ("accel_excl_wait_us", pa.float64()),
               ("accel_cycles", pa.float64()), ("clock_mhz_est", pa.float64()), ("clock_mhz_measured", pa.float64()),
               ("clock_mhz_used", pa.float64()), ("clock_source", pa.string()), ("ops_matched_to_graph", pa.int64()))


def qnn_table(qnn, phases: list[tuple[str, object]] | None = None) -> pa.Table | None:
    """One row per QNN partition of ``analysis.qnn.qnn_report`` (its scalar fields); None without one.
    ``phases``: [(phase name, that phase's report)]: one block of rows per phase (p50s over that
    phase's runs, never pooled), with a ``phase`` column."""
    blocks = phases if phases is not None else [(None, qnn)]
    rows = [(name, p) for name, q in blocks for p in (q.partitions if q is not None else ())]
    if not rows:
        return None
    parts = [p for _, p in rows]
    cols = {}
    for name, typ in QNN_COLUMNS:
        vals = []
        for p in parts:
            v = getattr(p, name)
            if isinstance(v, (list, dict, tuple)) or (isinstance(v, float) and v != v):
                v = None
            vals.append(None if v is None else (str(v) if typ == pa.string() else
                                                 int(v) if typ == pa.int64() else float(v)))
        cols[name] = pa.array(vals, typ)
    if phases is not None:
        cols["phase"] = pa.array([name for name, _ in rows], pa.string())
    return pa.table(cols)


def _with_file_columns(table: pa.Table, file_hash: str, order_key: str) -> pa.Table:
    n = table.num_rows
    table = table.append_column("file_hash", pa.array([file_hash] * n, pa.string()))
    return table.append_column("order_key", pa.array([order_key] * n, pa.string()))


def file_tables(job: Job, file_hash: str | None = None) -> tuple[dict, dict[str, pa.Table]]:
    """The pure per-file function: (partition metadata, {table: Arrow table}) of one ETDump with
    its companions. Raises FormatError (or any error of a reader) on a bad file."""
    from etscope import api
    from etscope.analysis.views.tables import whole_phase
    from etscope.paths import display
    from etscope.render.json import dumps

    file_hash = file_hash or content_hash(job.etdump)
    comps = dict(job.companions)
    p = api.load(job.etdump, etrecord=comps.get("etrecord"), pte=comps.get("pte"), method=job.meta_dict().get("method"))
    # The token options of ``etscope llm`` with this .pte: the runs' phases are the ones it finds;
    # the other companions read by their kinds' readers (formats.kinds).
    r = api.results(p, llm_options=api.llm_options(comps.get("pte")),
                    given={k: v for k, v in comps.items() if k not in PROGRAM_COMPANIONS})
    try:
        soc = r.soc
    except FormatError:
        soc = None
    meta = resolved_meta(job, soc)
    tables = dict(api.tables_of(r))     # runs/events/ops: phase and method columns (analysis.views.tables)
    q = qnn_table(r.qnn, [(n, x.qnn) for n, x in r.by_phase()] or [(whole_phase(r.phases), r.qnn)])
    if q is not None:
        tables["qnn"] = q
    tables[SUMMARY] = summary_table(r)      # what ``etscope summary --json`` prints for the file (fleet.summaries)
    tables = {k: _with_file_columns(t, file_hash, meta["order_key"]) for k, t in tables.items()}
    views = r.kind_views       # before the warnings: a view that fails says so there
    tables["files"] = pa.table({
        "file_hash": [file_hash], "order_key": [meta["order_key"]], "path": [display(job.etdump)],
        "bytes": pa.array([os.path.getsize(job.etdump)], pa.int64()),
        **{k: pa.array([display(comps[k]) if k in comps else None], pa.string()) for k in COMPANIONS},
        "meta_json": [json.dumps(job.meta_dict(), sort_keys=True)],
        "runs": pa.array([p.n_runs], pa.int64()), "events": pa.array([p.etdump.event_count], pa.int64()),
        "warnings": [json.dumps(list(p.profile.warnings) + list(r.notes))],
        # The views of companion kinds without an analysis of their own (formats.kinds ``view``).
        **{f"{name}_view_json": [dumps(v, indent=None)] for name, v in views.items()}})
    return meta, tables


def collect_one(job: Job, root: str) -> Outcome:
    """Collect one job into the dataset at ``root``: skipped when its content hash is there,
    else its tables committed, else (any error) one row in ``rejects``. Never raises for a bad file."""
    from etscope.paths import display

    t0 = (time.perf_counter(), time.process_time())
    ds = Dataset(root)
    shown = display(job.etdump)
    if job.problem:      # a bad sidecar: the reject is keyed by the path and the reason, not the content
        key = hashlib.sha256(("meta:" + job.etdump + "\0" + job.problem).encode("utf-8", "surrogateescape")).hexdigest()
        if ds.is_collected(key) or not ds.claim(key):
            return Outcome(shown, "skipped", key, **_costs(t0))
        return _reject(ds, job, key, job.problem, t0)
    try:
        file_hash = content_hash(job.etdump)
    except (OSError, FormatError) as e:
        file_hash = hashlib.sha256(("path:" + job.etdump).encode("utf-8", "surrogateescape")).hexdigest()
        if ds.is_collected(file_hash) or not ds.claim(file_hash):
            return Outcome(shown, "skipped", file_hash, **_costs(t0))
        reason = str(e) if isinstance(e, FormatError) else f"{shown}: cannot read ({e.strerror or e})"
        return _reject(ds, job, file_hash, reason, t0)
    if ds.is_collected(file_hash) or not ds.claim(file_hash):     # in the dataset, or a copy in this batch
        return Outcome(shown, "skipped", file_hash, build=given_build(job), **_costs(t0))
    try:
        meta, tables = file_tables(job, file_hash)
    except MemoryError:
        return _reject(ds, job, file_hash, f"{shown}: out of memory while reading it", t0)
    except Exception as e:  # noqa: BLE001 - a bad file is a reject with its reason, never the end of the batch
        reason = str(e) if isinstance(e, FormatError) else f"{shown}: {type(e).__name__}: {e}"
        return _reject(ds, job, file_hash, reason, t0)
    try:
        ds.commit(file_hash, meta, tables)
    except UnsafeEntry as e:     # a link planted inside the dataset: refused, nothing written through it
        return Outcome(shown, "rejected", file_hash, f"{shown}: not written: {e}", **_costs(t0))
    return Outcome(shown, "added", file_hash, rows={k: t.num_rows for k, t in tables.items()}, **_costs(t0))


def given_build(job: Job) -> str:
    """The build label the job's metadata gives (``build``, else ``commit``); "" when none."""
    m = job.meta_dict()
    return str(m.get("build") or m.get("commit") or "")


def label_skipped(ds: Dataset, outcomes: list[Outcome], also_label: bool = False) -> None:
    """For each file skipped because its content is in the dataset under another build label:
    with ``also_label``, record the label in its manifest entry (``Dataset.add_build_label``: no
    part is duplicated); else say under which labels it is there and how to add this one. Runs
    in the collecting process after the workers (one writer of the manifest), so the entries of
    copies collected in this same batch are committed by then."""
    for o in outcomes:
        if o.status != "skipped" or not o.build or not o.file_hash:
            continue
        doc = ds.entry(o.file_hash)
        if doc is None or doc["status"] != "added":
            continue
        from etscope.fleet.layout import labels_of

        labels = labels_of(doc)
        shown = ", ".join(labels[:10]) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
        if o.build in labels:
            o.note = f"{o.etdump}: already in the dataset as build {shown}"
        elif also_label:
            try:
                ds.add_build_label(o.file_hash, o.build)
                o.note = f"{o.etdump}: same content as build {shown}; build {o.build} recorded for it too"
            except FormatError as e:
                o.note = f"{o.etdump}: build {o.build} not recorded ({e})"
        else:
            o.note = (f"{o.etdump}: same content already in the dataset as build {shown}, not as build {o.build}; "
                      f"collect it again with --also-label to record build {o.build} for it too")


def _reject(ds: Dataset, job: Job, file_hash: str, reason: str, t0: tuple) -> Outcome:
    from etscope.paths import display
    from etscope.display import clean

    reason = clean(" ".join(reason.split()), 500)
    row = pa.table({"file_hash": [file_hash], "path": [display(job.etdump)], "reason": [reason],
                    "meta_json": [json.dumps(job.meta_dict(), sort_keys=True)]})
    try:
        ds.commit(file_hash, {}, {"rejects": row}, reject=True)
    except UnsafeEntry as e:
        reason = f"{reason} (not recorded: {e})"
    return Outcome(display(job.etdump), "rejected", file_hash, reason, **_costs(t0))


def _costs(t0: tuple) -> dict:
    """Wall and CPU seconds since ``t0`` and the peak resident memory of this (worker) process
    (bytes; Linux reports kB)."""
    return {"seconds": time.perf_counter() - t0[0], "cpu_seconds": time.process_time() - t0[1],
            "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


# ---- engines ---------------------------------------------------------------------------------------
def run_local(jobs: list[Job], root: str, workers: int, on_done=None) -> list[Outcome]:
    """Map :func:`collect_one` over the jobs in a process pool (in this process when workers is 1)."""
    out: list[Outcome] = []
    if workers <= 1:
        for j in jobs:
            out.append(collect_one(j, root))
            if on_done:
                on_done(out[-1])
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["etscope.fleet.collect", "etscope.api"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(collect_one, j, root) for j in jobs]
        for f in as_completed(futures):
            out.append(f.result())
            if on_done:
                on_done(out[-1])
    return out


def run_dask(jobs: list[Job], root: str, scheduler, on_done=None) -> list[Outcome]:
    """Map :func:`collect_one` over the jobs on a Dask cluster (``scheduler``: its address, or a
    ``distributed.Client``). Every worker must see the files and the dataset at the same paths."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise FormatError("--engine dask needs Dask: pip install 'etscope[fleet]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler) if own else scheduler
    except (OSError, TimeoutError, ValueError) as e:
        raise FormatError(f"{scheduler}: cannot reach the Dask scheduler ({e})") from None
    try:
        futures = client.map(collect_one, jobs, root=root, pure=False)
        out = []
        for f in as_completed(futures):
            out.append(f.result())
            if on_done:
                on_done(out[-1])
            f.release()
        return out
    finally:
        if own:
            client.close()


def collect(patterns, to, meta: dict | None = None, meta_from=None, engine: str = "local",
            workers: int | None = None, scheduler=None, on_done=None, on_total=None, adopt: bool = False,
            warn=None, also_label: bool = False) -> list[Outcome]:
    """Find the ETDumps, then collect each into the dataset ``to`` (created when missing, never
    its parents; a layout-1 dataset is adopted when ``adopt``, else refused). ``on_total(n)``
    is told the number of files, ``on_done(outcome)`` each result, ``warn(line)`` warnings.
    A file whose content is there under another build label gets a ``note`` (``label_skipped``;
    with ``also_label`` the label is recorded)."""
    files = find_etdumps(patterns) if patterns else []
    manifest = read_meta_file(meta_from) if meta_from else None
    jobs = jobs_for(files, meta, manifest)
    ds = Dataset(to)
    said = ds.prepare(adopt=adopt)
    ds.check_folders()          # a refused dataset says only why (not "nothing to adopt" first)
    for line in said:
        if warn:
            warn(line)
    with ds.lock():
        ds.recover()
        if on_total:
            on_total(len(jobs))
        if engine == "dask":
            out = run_dask(jobs, ds.root, scheduler, on_done)
        else:
            out = run_local(jobs, ds.root, workers or os.cpu_count() or 1, on_done)
        label_skipped(ds, out, also_label)
        return out


def counts(outcomes: list[Outcome]) -> dict:
    return {s: sum(o.status == s for o in outcomes) for s in ("added", "skipped", "rejected")}
