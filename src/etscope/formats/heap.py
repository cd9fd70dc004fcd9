"""QNN HTP DSP heap profile (``htp_heap_usage.txt``) reader.

Written by ExecuTorch's QNN backend (``QnnProfile::ProfileDataToFile`` in
``backends/qualcomm/runtime/backends/QnnProfiler.cpp``; ``backends/qualcomm/debugger/README.md``,
"ExecuTorch QNN HTP Heap Profiling") when the runtime option ``qnn_runtime_heap_profiling_path``
(``qnn_executor_runner --heap_profiling_path``) names a file and the QNN profile level is not off.
One line per QNN profile event, ``<identifier><unit suffix>, <value>\\n``:

    DSP:before_context_created (bytes), 928212
    DSP:after_context_freed (bytes), 928212

* the *before* line is written when the first HTP context is created from a context binary, and
  truncates the file; the *after* line is appended when the last context is freed. A process that
  ends (or crashes) before freeing its contexts leaves the first line only;
* the unit suffix is QNN's event unit (`` (bytes)`` here; `` (us)``, `` (count)`` or nothing for
  other units): anything but bytes is not a heap size and is rejected;
* values are QNN's ``uint64`` event values, in decimal.

Blank lines and CRLF line ends are accepted (upstream's own reader skips blank lines). Anything
else is rejected with the file and line. Never imports torch; the file is read read-only and
size-capped.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from etscope.errors import FormatError
from etscope.formats.qnn_names import read_input_bytes

BEFORE = "DSP:before_context_created"
AFTER = "DSP:after_context_freed"
MAX_BYTES = 64 << 10          # the real file is two short lines
_U64_MAX = (1 << 64) - 1
_LINE = re.compile(r"^(?P<name>[^,()]+?)(?: \((?P<unit>[A-Za-z]+)\))?, *(?P<value>\S+)$")


@dataclass(frozen=True)
class HeapProfile:
    path: str
    before_bytes: int
    after_bytes: int | None            # None: the contexts were never freed (first line only)
    before_line: int
    after_line: int | None

    @property
    def difference_bytes(self) -> int | None:
        """Heap still held after the last context was freed, relative to before the first one was
        created (upstream: typically 0 or more)."""
        return None if self.after_bytes is None else self.after_bytes - self.before_bytes


def read_heap(path: str | os.PathLike) -> HeapProfile:
    name = os.fspath(path)
    data = read_input_bytes(path, max_bytes=MAX_BYTES, what="QNN heap profile")
    return parse_heap(data, name)


def parse_heap(data: bytes, name: str = "<heap profile>") -> HeapProfile:
    if not data.strip():
        raise FormatError("empty QNN heap profile (expected a 'DSP:before_context_created (bytes), N' line)",
                          file=name)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise FormatError(f"line {line}: not a QNN heap profile (non-ASCII byte)", file=name) from None
    values: dict[str, tuple[int, int]] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r").strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise FormatError(f"line {lineno}: expected '<DSP:event> (bytes), <value>', got {line[:60]!r}",
                              file=name)
        event, unit, value_text = m["name"], m["unit"], m["value"]
        if event not in (BEFORE, AFTER):
            raise FormatError(f"line {lineno}: unknown heap event {event[:60]!r} (expected {BEFORE} or {AFTER})",
                              file=name)
        if unit != "bytes":
            raise FormatError(f"line {lineno}: {event} is in {unit or 'no unit'}, not bytes", file=name)
        if not value_text.isdigit():
            raise FormatError(f"line {lineno}: {event} value {value_text[:30]!r} is not a byte count", file=name)
        value = int(value_text)
        if value > _U64_MAX:
            raise FormatError(f"line {lineno}: {event} value {value_text[:30]} does not fit QNN's 64-bit value",
                              file=name)
        if event in values:
            raise FormatError(f"line {lineno}: second {event} line (first on line {values[event][1]}); the "
                              "writer truncates the file at each first context creation", file=name)
        if event == AFTER and BEFORE not in values:
            raise FormatError(f"line {lineno}: {AFTER} before any {BEFORE} line", file=name)
        values[event] = (value, lineno)
    if BEFORE not in values:   # only reachable with blank-only content, handled above; kept for safety
        raise FormatError(f"no {BEFORE} line", file=name)
    before, before_line = values[BEFORE]
    after, after_line = values.get(AFTER, (None, None))
    return HeapProfile(path=name, before_bytes=before, after_bytes=after, before_line=before_line,
                       after_line=after_line)
