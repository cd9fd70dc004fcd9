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

import hashlib
import json
import os
import resource
import time
from dataclasses import dataclass, replace

import pyarrow as pa

from etscope.errors import FormatError
from etscope.fleet.dataset import Dataset
from etscope.fleet.folder import UnsafeEntry
from etscope.fleet.jobs import (COMPANIONS, PROGRAM_COMPANIONS, FileKey, Job, content_hash, find_etdumps, jobs_for,
                                read_meta_file, resolved_meta)
from etscope.fleet.layout import Partition
from etscope.fleet.summaries import TABLE as SUMMARY, summary_table


@dataclass(frozen=True)
class Outcome:
    """What collecting one job did (``status``: added, skipped, rejected)."""
    etdump: str
    status: str
    file_hash: str = ""
    reason: str = ""
    rows: tuple[tuple[str, int], ...] = ()     # added: (table, rows) of each part
    seconds: float = 0.0
    cpu_seconds: float = 0.0              # CPU time of the worker on this file
    max_rss_bytes: int = 0
    build: str = ""                       # skipped as content already there: the build label it was given
    note: str = ""                        # skipped: under which labels the content is there (label_skipped)


@dataclass(frozen=True)
class Counts:
    """How many files a collect added, skipped (content already there) and rejected."""
    added: int
    skipped: int
    rejected: int


# ---- the per-file function ------------------------------------------------------------------------
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
    cols = {name: pa.array([_qnn_cell(getattr(p, name), typ) for p in parts], typ) for name, typ in QNN_COLUMNS}
    phase = {} if phases is None else {"phase": pa.array([name for name, _ in rows], pa.string())}
    return pa.table({**cols, **phase})


def _qnn_cell(v, typ):
    """A partition's field as a cell of ``typ`` (None for a missing, NaN or non-scalar value)."""
    if v is None or isinstance(v, (list, dict, tuple)) or (isinstance(v, float) and v != v):
        return None
    return str(v) if typ == pa.string() else int(v) if typ == pa.int64() else float(v)


def _with_file_columns(table: pa.Table, file_hash: str, order_key: str) -> pa.Table:
    n = table.num_rows
    table = table.append_column("file_hash", pa.array([file_hash] * n, pa.string()))
    return table.append_column("order_key", pa.array([order_key] * n, pa.string()))


def file_tables(job: Job, file_hash: str | None = None) -> tuple[FileKey, dict[str, pa.Table]]:
    """The pure per-file function: (partition values and order key, {table: Arrow table}) of one
    ETDump with its companions. Raises FormatError (or any error of a reader) on a bad file."""
    from etscope import api
    from etscope.analysis.views.tables import whole_phase
    from etscope.paths import display
    from etscope.render.json import dumps

    file_hash = file_hash or content_hash(job.etdump)
    comps = dict(job.companions)
    prog = job.program
    p = api.load(job.etdump, etrecord=prog.etrecord, pte=prog.pte, method=job.build_meta.method)
    # The token options of ``etscope llm`` with this .pte: the runs' phases are the ones it finds;
    # the other companions read by their kinds' readers (formats.kinds).
    r = api.results(p, llm_options=api.llm_options(prog.pte),
                    given={k: v for k, v in comps.items() if k not in PROGRAM_COMPANIONS})
    try:
        soc = r.soc
    except FormatError:
        soc = None
    key = resolved_meta(job, soc)
    tables = dict(api.tables_of(r))     # runs/events/ops: phase and method columns (analysis.views.tables)
    q = qnn_table(r.qnn, [(n, x.qnn) for n, x in r.by_phase()] or [(whole_phase(r.phases), r.qnn)])
    tables = {**tables, **({} if q is None else {"qnn": q}),
              SUMMARY: summary_table(r)}    # what ``etscope summary --json`` prints for the file (fleet.summaries)
    tables = {k: _with_file_columns(t, file_hash, key.order_key) for k, t in tables.items()}
    views = r.kind_views       # before the warnings: a view that fails says so there
    files = pa.table({
        "file_hash": [file_hash], "order_key": [key.order_key], "path": [display(job.etdump)],
        "bytes": pa.array([os.path.getsize(job.etdump)], pa.int64()),
        **{k: pa.array([display(comps[k]) if k in comps else None], pa.string()) for k in COMPANIONS},
        "meta_json": [json.dumps(job.meta_dict(), sort_keys=True)],
        "runs": pa.array([p.n_runs], pa.int64()), "events": pa.array([p.etdump.event_count], pa.int64()),
        "warnings": [json.dumps(list(p.profile.warnings) + list(r.notes))],
        # The views of companion kinds without an analysis of their own (formats.kinds ``view``).
        **{f"{name}_view_json": [dumps(v, indent=None)] for name, v in views.items()}})
    return key, {**tables, "files": files}


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
        key, tables = file_tables(job, file_hash)
    except MemoryError:
        return _reject(ds, job, file_hash, f"{shown}: out of memory while reading it", t0)
    except Exception as e:  # noqa: BLE001 - a bad file is a reject with its reason, never the end of the batch
        reason = str(e) if isinstance(e, FormatError) else f"{shown}: {type(e).__name__}: {e}"
        return _reject(ds, job, file_hash, reason, t0)
    try:
        ds.commit(file_hash, key.partition, key.order_key, tables)
    except UnsafeEntry as e:     # a link planted inside the dataset: refused, nothing written through it
        return Outcome(shown, "rejected", file_hash, f"{shown}: not written: {e}", **_costs(t0))
    return Outcome(shown, "added", file_hash, rows=tuple((k, t.num_rows) for k, t in tables.items()), **_costs(t0))


def given_build(job: Job) -> str:
    """The build label the job's metadata gives (``build``, else ``commit``); "" when none."""
    m = job.build_meta
    return str(m.build or m.commit or "")


def label_skipped(ds: Dataset, outcomes: list[Outcome], also_label: bool = False) -> list[Outcome]:
    """For each file skipped because its content is in the dataset under another build label:
    with ``also_label``, record the label in its manifest entry (``Dataset.add_build_label``: no
    part is duplicated); else say under which labels it is there and how to add this one. Runs
    in the collecting process after the workers (one writer of the manifest), so the entries of
    copies collected in this same batch are committed by then. Returns the outcomes, these with
    their ``note``."""
    return [_labelled(ds, o, also_label) for o in outcomes]


def _labelled(ds: Dataset, o: Outcome, also_label: bool) -> Outcome:
    if o.status != "skipped" or not o.build or not o.file_hash:
        return o
    e = ds.entry(o.file_hash)
    if e is None or e.status != "added":
        return o
    labels = e.labels
    shown = ", ".join(labels[:10]) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
    if o.build in labels:
        note = f"{o.etdump}: already in the dataset as build {shown}"
    elif also_label:
        try:
            ds.add_build_label(o.file_hash, o.build)
            note = f"{o.etdump}: same content as build {shown}; build {o.build} recorded for it too"
        except FormatError as why:
            note = f"{o.etdump}: build {o.build} not recorded ({why})"
    else:
        note = (f"{o.etdump}: same content already in the dataset as build {shown}, not as build {o.build}; "
                f"collect it again with --also-label to record build {o.build} for it too")
    return replace(o, note=note)


def _reject(ds: Dataset, job: Job, file_hash: str, reason: str, t0: tuple) -> Outcome:
    from etscope.paths import display
    from etscope.display import clean

    reason = clean(" ".join(reason.split()), 500)
    row = pa.table({"file_hash": [file_hash], "path": [display(job.etdump)], "reason": [reason],
                    "meta_json": [json.dumps(job.meta_dict(), sort_keys=True)]})
    try:
        ds.commit(file_hash, Partition(), "", {"rejects": row}, reject=True)
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
        return label_skipped(ds, out, also_label)


def counts(outcomes: list[Outcome]) -> Counts:
    return Counts(*(sum(o.status == s for o in outcomes) for s in ("added", "skipped", "rejected")))
