"""Write the synthetic QNN HTP DSP heap profiles in tests/fixtures/qnn/ the way ExecuTorch does.

ExecuTorch's QNN backend (``QnnProfile::ProfileDataToFile``, backends/qualcomm/runtime/backends/
QnnProfiler.cpp @cff6f4dd) writes one line per heap event, ``identifier + unit suffix + ", " +
value + "\\n"``: the ``DSP:before_context_created`` line when the first context is created (the
file is truncated), the ``DSP:after_context_freed`` line appended when the last is freed. Values
are the reference result upstream quotes from an SM8850 device (backends/qualcomm/debugger/
README.md, "Reference result": 928212 bytes before and after).

    python tools/make_heap_fixture.py      # from the repository root
"""
from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "qnn"
BEFORE, AFTER, BYTES = "DSP:before_context_created", "DSP:after_context_freed", " (bytes)"
SM8850_BEFORE = SM8850_AFTER = 928212   # upstream's reference measurement


def write_event(path: Path, identifier: str, value: int, truncate: bool) -> None:
    with open(path, "w" if truncate else "a", newline="\n") as f:   # std::ios::trunc / std::ios::app
        f.write(f"{identifier}{BYTES}, {value}\n")


def main() -> None:
    full = OUT / "synthetic_htp_heap_usage.txt"
    write_event(full, BEFORE, SM8850_BEFORE, truncate=True)     # first context created
    write_event(full, AFTER, SM8850_AFTER, truncate=False)      # last context freed
    # A process that ends before its contexts are freed leaves the first line only.
    cut = OUT / "synthetic_htp_heap_usage_not_freed.txt"
    write_event(cut, BEFORE, SM8850_BEFORE, truncate=True)
    for p in (full, cut):
        print("wrote", p.relative_to(OUT.parents[2]))


if __name__ == "__main__":
    main()
