"""Writing outputs atomically: a temp file in the target's directory, then ``os.replace``.

A reader (a browser, Perfetto, a notebook) never sees a half-written file, and an interrupted run
leaves the previous output in place. Several files that belong together (an export) are all
written first and moved into place together.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Callable, Iterator, Sequence


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temp path next to ``path``; on success it replaces ``path``, on error it is removed."""
    with atomic_paths([path]) as (tmp,):
        yield tmp


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


def write_with(path: str | os.PathLike, writer: Callable[[str], None]) -> None:
    """Call ``writer(tmp_path)`` and move the result into place."""
    with atomic_path(path) as tmp:
        writer(tmp)


@contextlib.contextmanager
def atomic_paths(paths: Sequence[str | os.PathLike]) -> Iterator[list[str]]:
    """Temp paths for several outputs, moved into place only once every one is written: an
    interrupted or failed run leaves none of them (nor a directory this created)."""
    paths = [os.path.abspath(os.fspath(p)) for p in paths]
    created = []
    for directory in dict.fromkeys(os.path.dirname(p) for p in paths):
        missing = []
        while directory and not os.path.isdir(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for d in reversed(missing):
            os.mkdir(d)
            created.append(d)
    tmps = []
    try:
        for p in paths:
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(p) + ".", suffix=".tmp",
                                       dir=os.path.dirname(p))
            os.close(fd)
            tmps.append(tmp)
        yield list(tmps)
        for tmp in tmps:
            os.chmod(tmp, 0o644)
        for tmp, p in zip(tmps, paths):
            os.replace(tmp, p)
    except BaseException:
        for tmp in tmps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        raise
