"""What the etscope command sets for its own process before a command runs (a library user's
process is left alone).

- glibc's allocator gives large freed blocks back to the kernel at once, so each of the many
  temporary columns of a big file (a few MB each) comes back as fresh zeroed pages: on 10M events
  that was 600k page faults and more system time than the reading itself. Keeping freed memory
  (trim threshold), growing the heap in larger steps (top pad) and serving blocks up to 32 MB
  from the heap remove most of them; peak memory does not change (measured in BENCHMARKS.md).
- numpy asks the kernel for transparent huge pages on every array of 4 MB or more; each first
  touch then zeroes (and may compact memory for) a 2 MB page. etscope's big arrays are short-lived
  columns, so that is pure cost: on 10M events it was 1.3 s of the 1.6 s of system time
  (``summary`` 3.5 s -> 2.5 s without it, same peak memory). Timed back to back, huge pages can
  look faster (a 2 MB page is one fault, and the pages the last process freed are still warm):
  on another VM 400 MB of columns took 0.05 s with them right after a run but 0.70-0.85 s after
  20 s idle, against 0.15-0.19 s without them either way. A user runs one command, cold.
- Python's cycle collector runs after every 700 net new container objects, scanning the younger
  ones (and every tenth time, more): the analyses of a big file build tens of thousands of rows
  (dicts, lists) that refcounting frees, so those passes find nothing. On 10M events they were
  ~140 collections, 45 ms of ``report`` and 30 ms of ``llm``; after 100,000 they are a handful.
  Cycles are still collected (and ``report`` collects once before rendering).
- OpenBLAS starts a thread per core when numpy is imported; etscope does no linear algebra worth
  threads, and on a busy machine those threads cost CPU time at every start.
- Once a command has written everything, tearing the interpreter down (freeing every module and
  array one by one) is ~10 ms of a 0.2 s command: the process ends at once instead, after
  flushing its output. Not after ``collect``, whose worker pools clean up at exit.
"""
from __future__ import annotations

import os
import sys

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_NEEDS_CLEAN_EXIT = {"collect"}
_GC_YOUNG_OBJECTS = 100_000       # net new containers between cycle collections (Python's default: 700)

command: str | None = None      # the subcommand being run (set by the command group)


def tune() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # both read when numpy is imported
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    import gc

    gc.set_threshold(_GC_YOUNG_OBJECTS, *gc.get_threshold()[1:])
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt      # glibc; musl has none (AttributeError)
    except (OSError, AttributeError):
        return
    for param, value in ((_M_TRIM_THRESHOLD, 256 << 20), (_M_TOP_PAD, 64 << 20), (_M_MMAP_THRESHOLD, 32 << 20)):
        mallopt(param, value)


def finish(done: SystemExit) -> None:
    """End the process with ``done``'s exit code: at once (output flushed) after a command that
    leaves nothing to clean up, else the ordinary way."""
    if command in _NEEDS_CLEAN_EXIT or command is None:
        raise done
    code = done.code
    if code is not None and not isinstance(code, int):
        raise done                      # a message to print: the ordinary way
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe (`| head`) or a closed stream
            pass
    os._exit(code or 0)
