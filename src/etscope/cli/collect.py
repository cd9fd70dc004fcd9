"""`etscope collect`: many ETDumps into one Hive-partitioned Parquet dataset (etscope.fleet)."""
from __future__ import annotations

import sys

import click

from etscope.cli.common import EXIT_BAD_INPUT


def _meta_pairs(ctx, param, values):
    out = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value (got {v!r})")
        out[key.strip()] = val
    return out


@click.command()
@click.argument("inputs", nargs=-1, type=str)
@click.option("--to", "dataset", required=True, type=str,
              help="Dataset folder (created when missing; its parent folder must exist).")
@click.option("--adopt", is_flag=True,
              help="Adopt a dataset written by an older etscope (layout etscope.dataset/1): write the manifest of "
                   "its parts from its commit markers (nothing is moved or deleted). Inputs are optional with it.")
@click.option("--meta", multiple=True, callback=_meta_pairs,
              help="key=value for every file (repeatable): model, soc (or device), build (or commit), date, "
                   "order (how builds follow each other), or any other key (kept in files.meta_json).")
@click.option("--meta-from", "meta_from", type=str,
              help="JSON manifest: metadata for every file, and under \"files\" per file name (with etrecord/"
                   "pte/qhas/optrace/runtrace paths). <stem>.meta.json beside an ETDump is read too.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: a process pool on this machine; dask: an existing Dask cluster (--scheduler).")
@click.option("--scheduler", type=str, help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (with --engine dask).")
@click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: the CPU count).")
@click.option("--also-label", "also_label", is_flag=True,
              help="A file whose content is already in the dataset under another build label: record this build "
                   "label for it too (in its manifest entry; its data is not copied).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: counts and the rejects.")
def collect(inputs, dataset, adopt, meta, meta_from, engine, scheduler, workers, also_label, as_json):
    """Collect ETDumps (folders, globs or files) into a Parquet dataset: runs, ops, events, qnn,
    files and rejects tables, partitioned by model/soc/build/date, with a manifest of the parts
    (layout etscope.dataset/2). Files already collected (same content) are skipped; bad files
    (and bad <stem>.meta.json sidecars) are recorded in the rejects table with the reason.
    Only collect writes inside a dataset; it never follows a link inside it and deletes only
    parts it wrote (those of an interrupted collect)."""
    from etscope.fleet.collect import collect as run_collect
    from etscope.fleet.collect import counts
    from etscope.render.progress import batch

    if engine == "dask" and not scheduler:
        raise click.UsageError("--engine dask needs --scheduler ADDRESS")
    if scheduler and engine != "dask":
        raise click.UsageError("--scheduler goes with --engine dask")
    if not inputs and not adopt:
        raise click.UsageError("give ETDumps to collect (folders, globs or files)")

    def warn(line: str) -> None:
        click.echo(f"etscope: {line}", err=True)

    with batch("collecting") as (set_total, advance):
        outcomes = run_collect(inputs, dataset, meta=meta, meta_from=meta_from, engine=engine, workers=workers,
                               scheduler=scheduler, on_total=set_total, on_done=lambda o: advance(o.status),
                               adopt=adopt, warn=warn, also_label=also_label)
    if not inputs:       # --adopt alone
        return
    n = counts(outcomes)
    rejects = sorted((o for o in outcomes if o.status == "rejected"), key=lambda o: o.etdump)
    notes = sorted((o for o in outcomes if o.note), key=lambda o: o.etdump)
    if as_json:
        from etscope.cli.common import emit_json

        emit_json({"schema": "etscope.collect/1", "dataset": dataset,
                   "added": n.added, "skipped": n.skipped, "rejected": n.rejected,
                   "rejects": [{"path": o.etdump, "reason": o.reason} for o in rejects],
                   "labels": [{"path": o.etdump, "build": o.build, "note": o.note} for o in notes]})
    else:
        from etscope.render.text import screen, shown

        # The shared Screen: the lines fit the terminal; piped (or in a log) nothing is cut.
        screen().print(f"{len(outcomes)} file(s): {n.added} added, {n.skipped} already in the dataset, "
                       f"{n.rejected} rejected")
        err = screen(stderr=True)
        for o in rejects[:20]:
            err.print("rejected: " + shown(o.reason))
        if len(rejects) > 20:
            err.print(f"({len(rejects) - 20} more in the rejects table)")
        for o in notes[:20]:
            err.print(shown(o.note))
        if len(notes) > 20:
            err.print(f"({len(notes) - 20} more such files; --json lists them all)")
    if not outcomes:
        sys.exit(EXIT_BAD_INPUT)
