"""The rules for every file etscope reads or writes, in one place (every command and reader uses them).

Inputs
  * must be regular files once symlinks are resolved: a FIFO, device, socket or directory is
    refused before anything is read (a FIFO would block, ``/dev/zero`` never ends);
  * are opened read-only and non-blocking (a FIFO swapped in after the check cannot block), and
    their size is checked against the reader's limit before reading.
Outputs
  * are never an input: same path, hard link or symlink to one (device + inode compared), also each
    file an export writes into its folder;
  * ``-`` is standard output wherever a command writes one file;
  * an existing character device or FIFO the user names (``/dev/null``) is opened and written in
    place, never replaced; any other special file is refused;
  * a regular file is written atomically: a temp file in the same folder, then ``os.replace``
    (through a symlink: next to the file it points to, so the link stays);
  * parent folders are never created; a failure is one ``FormatError`` line and leaves nothing;
  * never inside an etscope dataset (a folder holding ``DATASET_MARKER``, found among the
    output's ancestors, as named and with links resolved): only ``etscope collect`` writes there.
Names
  * file names are shown escaped (``display``): undecodable bytes as ``\\xNN``, controls and
    invisible direction / line-separator characters as ``\\uNNNN``: valid UTF-8, one line.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from typing import BinaryIO, Callable, Iterable, Iterator, Sequence

from etscope.errors import FormatError

STDOUT = "-"
# The marker file of an etscope dataset (etscope.fleet): only `etscope collect` writes inside a
# folder holding it, so every output check refuses a path below one.
DATASET_MARKER = "_etscope_dataset.json"

# C0/C1 controls, direction marks/overrides/isolates, line/paragraph separators, lone surrogates
# (undecodable bytes of a file name, from os.fsdecode). Compiled on first use: most names are
# printable ASCII and need no pattern (compiling it costs ~1 ms of every command).
from etscope.display import display  # noqa: E402,F401 - one definition, shown by paths' users


# ---- inputs -----------------------------------------------------------------------------------------
def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(mode: int, what: str) -> str:
    return f"is {_kind(mode)}, not a regular {what} file"


def check_input(path, what: str = "input") -> os.stat_result:
    """Stat ``path`` (following symlinks) and refuse anything but an existing regular file."""
    if path is None or os.fspath(path) == "":
        raise FormatError(f"empty file name given for the {what} file")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise FormatError("dangling symlink (its target does not exist)", display(path)) from None
        raise FormatError("no such file", display(path)) from None
    except OSError as e:
        raise FormatError(f"cannot read: {e.strerror or e}", display(path)) from None
    if not stat.S_ISREG(st.st_mode):
        raise FormatError(_not_regular(st.st_mode, what), display(path))
    return st


def check_inputs(paths: Iterable) -> None:
    for p in paths:
        if p is not None:
            check_input(p)


def open_input(path, what: str = "input", max_bytes: int | None = None) -> BinaryIO:
    """Open a regular file read-only. Non-blocking open, then ``fstat`` on the open descriptor, so
    what is checked is what is read (no race with a FIFO swapped in). ``max_bytes``: refuse a
    larger file before reading a byte."""
    name = display(path)
    if os.fspath(path) == "":
        raise FormatError(f"empty file name given for the {what} file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise FormatError("no such file" if not os.path.islink(path)
                          else "dangling symlink (its target does not exist)", name) from None
    except IsADirectoryError:
        raise FormatError(f"is a directory, not a regular {what} file", name) from None
    except PermissionError:
        raise FormatError("permission denied", name) from None
    except OSError as e:
        raise FormatError(f"cannot open: {e.strerror or e}", name) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FormatError(_not_regular(st.st_mode, what), name)
        if max_bytes is not None and st.st_size > max_bytes:
            raise FormatError(f"{what} is {st.st_size} bytes, more than the {max_bytes}-byte limit", name)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# ---- outputs ----------------------------------------------------------------------------------------
def _ids(paths: Iterable) -> dict[tuple[int, int], str]:
    ids = {}
    for p in paths:
        if p is None or os.fspath(p) in ("", STDOUT):
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue
        ids[(st.st_dev, st.st_ino)] = os.fspath(p)
    return ids


class Output:
    """Where one output goes: ``kind`` is ``stdout``, ``special`` (an existing character device or
    FIFO, written in place) or ``file`` (``target``: the path written atomically, symlinks
    resolved)."""

    def __init__(self, path, kind: str, target: str | None = None):
        self.path = os.fspath(path)
        self.kind = kind
        self.target = target

    @property
    def shown(self) -> str:
        return "standard output" if self.kind == "stdout" else display(self.path)


def dataset_holding(path) -> str | None:
    """The etscope dataset folder ``path`` lies in (an ancestor holding ``DATASET_MARKER``, the
    path as named or with its links resolved), or None."""
    path = os.fspath(path)
    seen = set()
    for p in (os.path.abspath(path), os.path.realpath(path)):
        d = os.path.dirname(p)
        while d not in seen:
            seen.add(d)
            if os.path.lexists(os.path.join(d, DATASET_MARKER)):
                return d
            up = os.path.dirname(d)
            if up == d:
                break
            d = up
    return None


def refuse_inside_dataset(path, what: str = "-o") -> None:
    """Raise when ``path`` is inside an etscope dataset (its marker included): a dataset is
    written by ``etscope collect`` only; a report or export there would replace or corrupt a part."""
    d = dataset_holding(path)
    if d is not None:
        raise FormatError(f"is inside the etscope dataset {display(d)}; only etscope collect writes there, "
                          f"choose another {what}", display(path))


def check_output(path, inputs: Iterable = (), what: str = "-o", allow_stdout: bool = True) -> Output:
    """Check an output path before any work is done (raise ``FormatError``, nothing written)."""
    if path is None or os.fspath(path) == "":
        raise FormatError(f"empty output file name ({what})")
    path = os.fspath(path)
    if path == STDOUT:
        if not allow_stdout:
            raise FormatError(f"{what} -: this command writes several files; give a folder")
        return Output(path, "stdout")
    name = display(path)
    inputs = list(inputs)
    refuse_inside_dataset(path, what)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise FormatError("cannot write: a parent in the path is not a folder", name) from None
    except OSError as e:
        raise FormatError(f"cannot write: {e.strerror or e}", name) from None
    if st is not None:
        if (st.st_dev, st.st_ino) in _ids(inputs):
            raise FormatError(f"output is one of the input files (same file); inputs are never written, "
                              f"choose another {what}", name)
        if stat.S_ISDIR(st.st_mode):
            raise FormatError(f"is a directory; {what} needs a file name", name)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return Output(path, "special", os.path.realpath(path))
        if not stat.S_ISREG(st.st_mode):
            raise FormatError(f"is {_kind(st.st_mode)}; refusing to write or replace it", name)
    target = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
    folder = os.path.dirname(target)
    _check_folder(folder, name)
    return Output(path, "file", target)


def _check_folder(folder: str, name: str) -> None:
    """The folder an output goes into must exist (never created) and be writable."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        raise FormatError("cannot write: its folder does not exist (folders are not created)", name) from None
    except NotADirectoryError:
        raise FormatError("cannot write: a parent in the path is not a folder", name) from None
    except OSError as e:
        raise FormatError(f"cannot write: {e.strerror or e}", name) from None
    if not stat.S_ISDIR(st.st_mode):
        raise FormatError("cannot write: its parent is not a folder", name)
    import tempfile   # here, not at the top: its import (random, shutil) costs every read-only command

    try:   # create and remove a probe: /proc, /sys, read-only mounts fail here, before any work
        fd, probe = tempfile.mkstemp(prefix=".etscope-probe.", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise FormatError(f"cannot write: cannot create a file in its folder ({e.strerror or e})", name) from None


def check_output_dir(folder, names: Sequence[str], inputs: Iterable = (), what: str = "-o") -> list[Output]:
    """An export folder: it may be created (its parent must exist); no file written into it may be
    an input. Returns the outputs of the files ``names`` inside it."""
    if folder is None or os.fspath(folder) == "":
        raise FormatError(f"empty output folder name ({what})")
    folder = os.fspath(folder)
    if folder == STDOUT:
        raise FormatError(f"{what} -: this command writes several files; give a folder")
    name = display(folder)
    refuse_inside_dataset(os.path.join(folder, "x"), what)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise FormatError(f"is not a folder; {what} needs a folder to write the files into", name)
    if not os.path.isdir(folder):
        _check_folder(os.path.dirname(os.path.abspath(folder)), name)
        return [Output(os.path.join(folder, n), "file", os.path.join(os.path.abspath(folder), n)) for n in names]
    inputs = list(inputs)
    outs = [check_output(os.path.join(folder, n), inputs, what=what, allow_stdout=False) for n in names]
    for o in outs:
        if o.kind != "file":
            raise FormatError(f"is {_kind(os.stat(o.path).st_mode)}; export writes regular files", display(o.path))
    return outs


def _oserror(e: OSError, out_name: str) -> FormatError:
    return FormatError(f"cannot write: {e.strerror or e}", out_name)


def write_bytes(out: Output | str, data: bytes, inputs: Iterable = ()) -> None:
    """Write ``data`` to one output following the rules above (checks again just before)."""
    if not isinstance(out, Output):
        out = check_output(out, inputs)
    if out.kind == "stdout":
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(data.decode("utf-8"))
        else:
            sys.stdout.flush()
            stream.write(data)
        sys.stdout.flush()
        return
    if out.kind == "special":
        try:   # no O_CREAT: if the device went away, nothing is created in its place
            fd = os.open(out.target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except OSError as e:
            raise _oserror(e, out.shown) from None
        return
    with atomic_paths([out]) as (tmp,):
        with open(tmp, "wb") as f:
            f.write(data)


def write_text(out: Output | str, text: str, inputs: Iterable = ()) -> int:
    """Write UTF-8 text; returns the number of bytes."""
    data = text.encode("utf-8", "backslashreplace")
    write_bytes(out, data, inputs)
    return len(data)


@contextlib.contextmanager
def atomic_paths(outputs: Sequence[Output | str], make_folder: bool = False) -> Iterator[list[str]]:
    """Temp paths next to each output (regular files), moved into place only once every one is
    written: a failed or interrupted run leaves none of them. ``make_folder``: the outputs' one
    folder may be created (an export's folder; never its parents) and is removed again on failure."""
    targets = [o.target if isinstance(o, Output) else os.path.abspath(os.fspath(o)) for o in outputs]
    if not targets:
        yield []
        return
    shown = [o.shown if isinstance(o, Output) else display(o) for o in outputs]
    created = []
    try:
        for d in dict.fromkeys(os.path.dirname(t) for t in targets):
            if make_folder and not os.path.isdir(d):
                os.mkdir(d)          # FileNotFoundError when its parent is missing: never makedirs
                created.append(d)
    except OSError as e:
        raise _oserror(e, display(targets[0])) from None
    import tempfile

    tmps = []
    try:
        try:
            for t in targets:
                fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(t) + ".", suffix=".tmp",
                                           dir=os.path.dirname(t))
                os.close(fd)
                tmps.append(tmp)
        except OSError as e:
            raise _oserror(e, shown[len(tmps)]) from None
        yield list(tmps)
        try:
            for tmp in tmps:
                os.chmod(tmp, 0o644)
            for tmp, t in zip(tmps, targets):
                os.replace(tmp, t)
        except OSError as e:
            raise _oserror(e, shown[0]) from None
    except BaseException as e:
        for tmp in tmps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        if isinstance(e, OSError) and not isinstance(e, FormatError):
            if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO):
                raise _oserror(e, shown[0]) from None
        raise


def write_with(out: Output | str, writer: Callable[[str], None], inputs: Iterable = ()) -> None:
    """``writer(tmp_path)`` writes a regular file; moved into place atomically (a device or
    standard output gets the bytes written there)."""
    if not isinstance(out, Output):
        out = check_output(out, inputs)
    if out.kind == "file":
        with atomic_paths([out]) as (tmp,):
            writer(tmp)
        return
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "out")
        writer(tmp)
        with open(tmp, "rb") as f:
            write_bytes(out, f.read())
