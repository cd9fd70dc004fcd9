"""What the etscope command sets for its own process before a command runs (a library user's
process is left alone).

- glibc's allocator gives large freed blocks back to the kernel at once, so each of the many
  temporary columns of a big file (a few MB each) comes back as fresh zeroed pages: on 10M events
  that was 600k page faults and more system time than the reading itself. Keeping freed memory
  (trim threshold), growing the heap in larger steps (top pad) and serving blocks up to 32 MB
  from the heap remove most of them; peak memory does not change (measured in BENCHMARKS.md).
- numpy asks the kernel for transparent huge pages on every array of 4 MB or more; each first
  touch then zeroes a 2 MB page, one fault instead of 512. Where the kernel has free 2 MB blocks
  that is a gain (10M ``summary`` 1.5 s -> 1.2 s, system time 0.45 -> 0.21 s); where it must
  first compact memory to make one, a loss (another VM, fragmented: 1.3 s of the 1.6 s of system
  time, ``summary`` 3.5 s -> 2.5 s without). So huge pages are left on only when /proc/buddyinfo
  shows at least HUGE_PAGES_FREE_MIN bytes of free blocks of that size; peak memory is the same.
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

command: str | None = None      # the subcommand being run (set by the command group)


HUGE_PAGES_FREE_MIN = 1 << 30    # about twice the peak memory of a command on 10M events


def tune() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # both read when numpy is imported
    if not sys.platform.startswith("linux"):
        return
    if "NUMPY_MADVISE_HUGEPAGE" not in os.environ and free_huge_page_bytes() < HUGE_PAGES_FREE_MIN:
        os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"
    _set_malloc_options()


def _set_malloc_options() -> None:
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt      # glibc; musl has none (AttributeError)
    except (OSError, AttributeError):
        return
    for param, value in ((_M_TRIM_THRESHOLD, 256 << 20), (_M_TOP_PAD, 64 << 20), (_M_MMAP_THRESHOLD, 32 << 20)):
        mallopt(param, value)


def free_huge_page_bytes(buddyinfo: str = "/proc/buddyinfo",
                         huge_page: str = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") -> int:
    """Bytes the kernel holds free in blocks of a transparent huge page or larger (0 when it does
    not say: huge pages are then turned off)."""
    try:
        with open(huge_page) as fh:
            huge = int(fh.read())
        with open(buddyinfo) as fh:
            lines = fh.read().splitlines()
    except (OSError, ValueError):
        return 0
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    total = 0
    for line in lines:               # "Node 0, zone   Normal  <free blocks of order 0> <order 1> ..."
        counts = line.split("zone", 1)[-1].split()[1:]
        for order, count in enumerate(counts):
            if (page << order) >= huge and count.isdigit():
                total += int(count) * (page << order)
    return total


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
