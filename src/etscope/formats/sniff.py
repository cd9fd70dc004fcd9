"""Tell what kind of file some bytes are, for error messages and auto-detection (the registry of
input kinds is ``formats.kinds``)."""
from __future__ import annotations

from etscope.formats.kinds import HEAD_BYTES, describe, kind_of

__all__ = ["HEAD_BYTES", "describe", "kind_of", "wrong_kind"]


def wrong_kind(path, expected: str) -> str | None:
    """When the file at ``path`` is of a known kind other than ``expected`` (a ``kinds`` name):
    "this is <kind>: read it with <option>"; else None. Never fails."""
    from etscope.paths import open_input

    try:
        with open_input(path, "input") as fh:
            head = fh.read(HEAD_BYTES)
    except Exception:  # noqa: BLE001 - only a hint: the reader's own error stands
        return None
    k = kind_of(head)
    if k is None or k.name == expected:
        return None
    return f"this is {describe(head)}"
