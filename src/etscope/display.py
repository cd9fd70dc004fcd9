"""How text from an input is shown: a file name as valid UTF-8 on one line with escapes for the rest
(``display``, used by ``errors`` and ``paths``), and any string with its control characters and
terminal escapes made harmless (``clean``, ``without_controls``: names, kernels, SQL cells)."""
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

# C0/C1 controls, Unicode bidi marks/overrides/isolates (which can reorder what a name displays as),
# line/paragraph separators (a new line in some viewers) and lone surrogates (not encodable as UTF-8).
# Tab and newline are kept. Compiled on first use (~1.5 ms): printable ASCII needs no pattern.
_CONTROL = ("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
            "\ud800-\udfff]")


def clean(s: object, limit: int = 200) -> str:
    text = without_controls(str(s))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def without_controls(s: str) -> str:
    """``s`` with control characters and bidi overrides replaced, nothing cut (for data embedded in
    the HTML report, shown there as text)."""
    if s.isascii() and s.replace("\t", " ").replace("\n", " ").isprintable():
        return s
    return re.compile(_CONTROL).sub("\N{REPLACEMENT CHARACTER}", s)     # re caches the compiled pattern
