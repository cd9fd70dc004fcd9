"""A progress bar on stderr while big ETDumps are read (rich, transient: it leaves nothing behind).

Used by the CLI for inputs over ``THRESHOLD_BYTES``; stdout is never touched, so ``--json`` output
stays one clean object. Only on a terminal; ``ETSCOPE_PROGRESS=0`` turns it off, ``=1`` shows it for any size.
"""
from __future__ import annotations

import contextlib
import os
import sys

from etscope import units

THRESHOLD_BYTES = 50 * 1024 * 1024


def _size(paths) -> int:
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p) if p and os.path.isfile(p) else 0
        except OSError:
            pass
    return total


def _terminal_console():
    """rich's Console on stderr when rich calls stderr a terminal, else None: rich is imported only
    when stderr may be one (``_stderr_may_be_a_terminal``)."""
    if not _stderr_may_be_a_terminal():
        return None
    from rich.console import Console

    console = Console(stderr=True)
    return console if console.is_terminal else None


def _stderr_may_be_a_terminal() -> bool:
    """False when rich would surely find stderr is no terminal (redirected, and no TTY_COMPATIBLE
    or FORCE_COLOR in the environment to say otherwise): then rich is not even imported (~50 ms,
    on every big file read by a script or a pipe)."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE")
    if tty_compatible == "0":          # rich's own rules for these two, the way it reads them
        return False
    if tty_compatible == "1" or os.environ.get("FORCE_COLOR") is not None:
        return True                    # rich decides (and may still say no, in Jupyter)
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):   # no stderr, or a closed one
        return False


@contextlib.contextmanager
def reading(*paths):
    """Context giving a ``progress(done_events, total_events)`` callback, or None for small inputs."""
    force = os.environ.get("ETSCOPE_PROGRESS")
    size = _size(paths)
    console = None if force == "0" or (force != "1" and size < THRESHOLD_BYTES) else _terminal_console()
    if console is None:                # small, or redirected: no bar, nothing written
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    names = ", ".join(os.path.basename(str(p)) for p in paths if p)
    with Progress(TextColumn("[bold]reading[/] {task.description}"), BarColumn(),
                  TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=True, redirect_stdout=False,
                  redirect_stderr=False) as bar:
        task = bar.add_task(f"{names} ({units.bytes_to_mb(size):,.0f} MB)", total=None, counts="")

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, counts=f"{done:,}/{total:,} events")

        yield progress


@contextlib.contextmanager
def batch(label: str = "collecting"):
    """Context giving ``(set_total(n), advance(status))`` callbacks for a batch of files: a bar on
    stderr with the counts per status when stderr is a terminal (``ETSCOPE_PROGRESS=0``: never),
    else callbacks that do nothing."""
    console = None if os.environ.get("ETSCOPE_PROGRESS") == "0" else _terminal_console()
    if console is None:
        yield (lambda n: None), (lambda status: None)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    counts: dict[str, int] = {}
    with Progress(TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[counts]}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, redirect_stdout=False,
                  redirect_stderr=False) as bar:
        task = bar.add_task(label, total=None, counts="")

        def set_total(n: int) -> None:
            bar.update(task, total=n)

        def advance(status: str) -> None:
            counts[status] = counts.get(status, 0) + 1
            bar.update(task, advance=1, counts=", ".join(f"{v} {k}" for k, v in sorted(counts.items())))

        yield set_total, advance
