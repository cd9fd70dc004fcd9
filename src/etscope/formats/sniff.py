"""Tell what kind of file some bytes are, for error messages and auto-detection."""
from __future__ import annotations


def describe(head: bytes) -> str:
    """A short phrase naming the kind of file whose first bytes are ``head``."""
    if not head:
        return "an empty file"
    if head[4:8] == b"ED00" or head[8:12] == b"ED00":
        return "an ETDump"
    if head[4:6] == b"ET" or head[8:10] == b"ET":
        return "an ExecuTorch program (.pte)"
    if head[4:8] == b"BP00" or head[8:12] == b"BP00":
        return "a bundled ExecuTorch program"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "a zip archive (an ETRecord?)"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "a JSON file"
    if b"Msg Timestamp" in head[:200]:
        return "a QNN profile CSV"
    if head.startswith(b"\x80") and len(head) > 1 and head[1] <= 5:
        return "a Python pickle"
    return "an unrecognised file"
