"""The one exception users see: a problem with an input file."""
from __future__ import annotations


class FormatError(Exception):
    """An input file is missing, truncated, of the wrong kind or inconsistent.

    ``str(err)`` is one line: ``<file>: <what is wrong> [at byte N]``.
    """

    def __init__(self, what: str, file: str | None = None, offset: int | None = None):
        self.what = what
        self.file = file
        self.offset = offset
        super().__init__(self._line())

    def _line(self) -> str:
        where = f" at byte {self.offset}" if self.offset is not None else ""
        from etscope.display import display   # file names shown escaped (valid UTF-8, one line)

        prefix = f"{display(self.file)}: " if self.file else ""
        return f"{prefix}{self.what}{where}"

    def with_file(self, file: str) -> "FormatError":
        """Return the same error naming ``file`` (readers raise without knowing the path)."""
        if self.file:
            return self
        return FormatError(self.what, file, self.offset)


class MismatchError(FormatError):
    """Two inputs that should describe the same program do not (e.g. .pte vs ETDump)."""
