"""The dataset folder as a tree etscope owns: every path inside it is walked one component at a
time from a descriptor of the dataset's root (``openat`` with ``O_NOFOLLOW``), so a symlink
anywhere inside (a table folder, a partition folder, a part, the manifest folder, the staging
folder) is refused, never followed out of the dataset; a FIFO or device is never opened blocking
and never read. The root itself is the folder the user named (a link there is the user's choice).

Paths inside the dataset are relative POSIX strings (``runs/model=m/.../<sha256>.parquet``); a
component that is empty, ``.``, ``..`` or holds a ``/`` or NUL is refused before any system call.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

from etscope.errors import FormatError
from etscope.paths import display

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOCTTY", 0))


class UnsafeEntry(FormatError):
    """A path inside the dataset is a symlink, a special file or not what the layout says."""


def components(rel: str) -> list[str]:
    parts = rel.split("/")
    for c in parts:
        if c in ("", ".", "..") or "\x00" in c or "\\" in c:
            raise UnsafeEntry(f"{display(rel)}: not a path inside the dataset")
    return parts


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _refusal(root: str, shown: str, e: OSError) -> UnsafeEntry:
    if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        why = "is a symlink or not a folder (etscope never follows links inside a dataset)"
    elif e.errno == errno.ENOENT:
        why = "is missing"
    else:
        why = f"cannot be opened ({e.strerror or e})"
    return UnsafeEntry(f"{display(os.path.join(root, shown))}: {why}")


class Root:
    """An open dataset root; ``close()`` (or ``with``) releases the descriptor."""

    def __init__(self, root: str):
        self.path = root
        try:
            self.fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise FormatError(f"{display(root)}: cannot open the dataset folder ({e.strerror or e})") from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Root:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- folders ----
    def open_dir(self, rel: str, create: bool = False) -> int:
        """A descriptor of the folder ``rel`` (made, one level at a time, when ``create``)."""
        fd = os.dup(self.fd)
        done = []
        try:
            for c in components(rel):
                done.append(c)
                try:
                    nxt = os.open(c, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(c, 0o755, dir_fd=fd)
                    nxt = os.open(c, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return fd
        except OSError as e:
            os.close(fd)
            raise _refusal(self.path, "/".join(done), e) from None

    @contextlib.contextmanager
    def folder(self, rel: str, create: bool = False) -> Iterator[int]:
        fd = self.open_dir(rel, create)
        try:
            yield fd
        finally:
            os.close(fd)

    def lstat(self, rel: str) -> os.stat_result | None:
        """The entry itself (a link is not followed); None when it does not exist."""
        head, _, name = rel.rpartition("/")
        try:
            with (self.folder(head) if head else self.folder_root()) as d:
                return os.stat(name, dir_fd=d, follow_symlinks=False)
        except UnsafeEntry:
            return None
        except FileNotFoundError:
            return None

    @contextlib.contextmanager
    def folder_root(self) -> Iterator[int]:
        yield self.fd

    def listdir(self, rel: str) -> list[str]:
        """Names in the folder ``rel`` (``""``: the root; sorted); [] when it does not exist."""
        if rel == "":
            return sorted(os.listdir(self.fd))
        if self.lstat(rel) is None:
            return []
        with self.folder(rel) as d:
            return sorted(os.listdir(d))

    # ---- files ----
    def open_file(self, rel: str, max_bytes: int | None = None):
        """A regular file opened read-only (binary file object); anything else is UnsafeEntry."""
        components(rel)
        head, _, name = rel.rpartition("/")
        with (self.folder(head) if head else self.folder_root()) as d:
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=d)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise UnsafeEntry(f"{display(os.path.join(self.path, rel))}: is a symlink "
                                      "(etscope never follows links inside a dataset)") from None
                raise _refusal(self.path, rel, e) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafeEntry(f"{display(os.path.join(self.path, rel))}: is {_kind(st.st_mode)}, not a regular file")
            if max_bytes is not None and st.st_size > max_bytes:
                raise UnsafeEntry(f"{display(os.path.join(self.path, rel))}: is {st.st_size} bytes, more than the "
                                  f"{max_bytes}-byte limit")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read_bytes(self, rel: str, max_bytes: int) -> bytes:
        with self.open_file(rel, max_bytes) as f:
            return f.read(max_bytes + 1)

    def create_file(self, rel: str):
        """A new file (exclusive create, never through a link) opened for writing."""
        head, _, name = rel.rpartition("/")
        with (self.folder(head, create=True) if head else self.folder_root()) as d:
            try:
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                             | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=d)
            except OSError as e:
                raise _refusal(self.path, rel, e) from None
        return os.fdopen(fd, "wb")

    def write_new(self, rel: str, data: bytes) -> None:
        with self.create_file(rel) as f:
            f.write(data)

    def replace(self, src: str, dst: str, make_folder: bool = False) -> None:
        """Rename ``src`` to ``dst`` (both inside the dataset). ``rename`` never follows a link at
        its target: a link planted at ``dst`` is replaced, its target untouched."""
        sh, _, sn = src.rpartition("/")
        dh, _, dn = dst.rpartition("/")
        with (self.folder(sh) if sh else self.folder_root()) as s, \
                (self.folder(dh, create=make_folder) if dh else self.folder_root()) as d:
            os.replace(sn, dn, src_dir_fd=s, dst_dir_fd=d)

    def unlink_file(self, rel: str) -> bool:
        """Remove ``rel`` when it is a regular file etscope wrote (never a link's target, never a
        folder); False when it is not there or not a regular file."""
        head, _, name = rel.rpartition("/")
        try:
            with (self.folder(head) if head else self.folder_root()) as d:
                st = os.stat(name, dir_fd=d, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    return False
                os.unlink(name, dir_fd=d)
                return True
        except (UnsafeEntry, FileNotFoundError):
            return False
