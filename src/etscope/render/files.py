"""Writing outputs: the rules live in ``etscope.paths`` (atomic temp + rename in the same folder,
devices / FIFOs written in place, ``-`` for standard output, never an input). Kept for the
renderers' imports."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Iterator

from etscope.paths import Output, atomic_paths, check_output, write_bytes, write_text, write_with

__all__ = ["Output", "Written", "atomic_path", "atomic_paths", "check_output", "write_bytes", "write_text",
           "write_with"]


@dataclass(frozen=True)
class Written:
    """A page written (``render.html.write_report`` and the like): where, and how many bytes."""
    path: object            # the path or ``paths.Output`` it was written to
    bytes: int


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temp path next to ``path``; on success it replaces ``path``, on error it is removed."""
    with atomic_paths([path]) as (tmp,):
        yield tmp
