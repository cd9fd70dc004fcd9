"""How a file name is shown to the user: valid UTF-8 text on one line, escapes for the rest (used
by ``errors`` and ``paths``, which both name files)."""
from __future__ import annotations

import os
import re

_UNSAFE_CHARS = ("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:          # surrogateescape: the original byte
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def display(path) -> str:
    """A file name as shown to the user: valid UTF-8 text on one line, escapes for the rest."""
    if path is None:
        return ""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    if text.isascii() and text.isprintable():
        return text
    return re.compile(_UNSAFE_CHARS).sub(_escape, text)     # re caches the compiled pattern
