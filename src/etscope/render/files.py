"""Writing outputs: the rules live in ``etscope.paths`` (atomic temp + rename in the same folder,
devices / FIFOs written in place, ``-`` for standard output, never an input). Kept for the
renderers' imports."""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

from etscope.paths import Output, atomic_paths, check_output, write_bytes, write_text, write_with

__all__ = ["Output", "atomic_path", "atomic_paths", "check_output", "write_bytes", "write_text", "write_with"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temp path next to ``path``; on success it replaces ``path``, on error it is removed."""
    with atomic_paths([path]) as (tmp,):
        yield tmp
