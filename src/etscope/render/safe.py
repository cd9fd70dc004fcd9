"""Make strings from input files safe to print: no control characters or terminal escapes."""
from __future__ import annotations

import re

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
