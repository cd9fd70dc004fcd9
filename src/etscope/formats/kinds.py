"""The input kinds etscope reads, told apart by their first bytes, and which command option reads
each: one registry, so that a file given in the wrong place is named with the option that reads
it (``summary chain8.profile.txt`` -> "a QNN profile text ...: etscope qnn --qnn-csv FILE").

Each kind's own module says what its bytes look like (``sniff``); this module only orders them
(most specific first) and words the hint. Sniffing reads at most the head it is given and never
fails.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from etscope.formats import optrace, qhas, qnn_csv, qnn_json, qnn_text, runtrace
from etscope.formats.qnn_names import head_text

HEAD_BYTES = 65536       # what the sniffers need: JSON kinds are told by keys near the top


@dataclass(frozen=True)
class InputKind:
    name: str                         # etdump | pte | etrecord | qnn_profile | qhas | ...
    title: str                        # "a QHAS JSON"
    read_by: str                      # the command and option that read it
    sniff: Callable[[bytes], bool]


def _etdump(head: bytes) -> bool:
    # formats.etdump's identifier, not imported: that reader's failure path asks this registry.
    return head[4:8] == b"ED00" or head[8:12] == b"ED00"


def _pte(head: bytes) -> bool:
    return any(head[o:o + 2] == b"ET" and head[o + 2:o + 4].isdigit() for o in (4, 8))


def _bundled(head: bytes) -> bool:
    return head[4:8] == b"BP00" or head[8:12] == b"BP00"


def _zip(head: bytes) -> bool:
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06"))


def _ort_profile(head: bytes) -> bool:
    """ONNX Runtime's profile (``profiling_file_path`` / ``enable_profiling``): a Chrome-trace JSON
    list whose events carry ``cat`` Session / Node."""
    t = head_text(head, HEAD_BYTES).lstrip()
    return t.startswith("[") and re.search(r'"cat"\s*:\s*"(Session|Node)"', t) is not None and '"ph"' in t


def _taps(head: bytes) -> bool:
    t = head_text(head, HEAD_BYTES)
    return t.lstrip().startswith("{") and re.search(r'"schema"\s*:\s*"etscope\.taps/', t) is not None


def _heap(head: bytes) -> bool:
    lines = [ln.strip() for ln in head_text(head, 4096).splitlines() if ln.strip()][:4]
    return bool(lines) and all(re.match(r"^[A-Za-z]+:[^,]+\(bytes\), *\d+$", ln) for ln in lines)


def _python_object_stream(head: bytes) -> bool:
    return head.startswith(b"\x80") and len(head) > 1 and head[1] <= 5


def _dataset(head: bytes) -> bool:
    return head.startswith(b"PAR1")


VIEWS = "summary, ops, qnn, llm, report, trace, export, sql, diff"
KINDS: tuple[InputKind, ...] = (
    InputKind("etdump", "an ETDump", f"the ETDUMP argument of etscope {VIEWS}", _etdump),
    InputKind("pte", "an ExecuTorch program (.pte)", "--pte (or: etscope program FILE)", _pte),
    InputKind("bundled_program", "a bundled ExecuTorch program (.bpte)",
              "no etscope option: give the .pte inside it with --pte", _bundled),
    InputKind("etrecord", "a zip archive (an ETRecord?)", "--etrecord", _zip),
    InputKind("qhas", "a QHAS JSON (QNN HTP analysis summary)", "etscope qnn --qhas FILE (or report --qhas)",
              qhas.sniff),
    InputKind("optrace", "a QNN optrace JSON", "etscope qnn --optrace FILE (or report --optrace)", optrace.sniff),
    InputKind("runtrace", "a QNN run trace JSON (RUN_TRACE)", "etscope qnn --runtrace FILE (or summary/report "
              "--runtrace)", runtrace.sniff),
    InputKind("qnn_profile", "a QNN profile CSV", "etscope qnn --qnn-csv FILE (or report --qnn-csv)", qnn_csv.sniff),
    InputKind("qnn_profile", "a QNN profile JSON (qnn-profile-viewer)", "etscope qnn --qnn-csv FILE (or report "
              "--qnn-csv)", qnn_json.sniff),
    InputKind("qnn_profile", "a QNN profile text (qnn-profile-viewer)", "etscope qnn --qnn-csv FILE (or report "
              "--qnn-csv)", qnn_text.sniff),
    InputKind("ort_profile", "an ONNX Runtime profile JSON", "etscope qnn --ort-profile FILE (or report "
              "--ort-profile)", _ort_profile),
    InputKind("taps", "an etscope tap sidecar (etscope.taps/1)", "etscope numerics --taps FILE", _taps),
    InputKind("qnn_heap", "a QNN DSP heap usage log", "etscope summary/qnn/report --qnn-heap FILE", _heap),
    InputKind("parquet", "a Parquet file (part of an etscope dataset?)", "etscope sql --dataset FOLDER / trend "
              "--dataset FOLDER (the dataset folder, not one part)", _dataset),
    InputKind("pickle", "a Python pickle", "nothing: etscope never unpickles", _python_object_stream),
)


def kind_of(head: bytes) -> InputKind | None:
    """The first kind whose sniffer accepts ``head`` (the file's first bytes), or None."""
    for k in KINDS:
        try:
            if k.sniff(head):
                return k
        except Exception:  # noqa: BLE001 - a sniffer must never turn a clear error into a traceback
            continue
    return None


def describe(head: bytes, expected: str | None = None) -> str:
    """A short phrase naming the kind of file whose first bytes are ``head``, with the option that
    reads it when that is not the ``expected`` kind."""
    if not head:
        return "an empty file"
    k = kind_of(head)
    if k is None:
        return "a JSON file of no kind etscope reads" if head.lstrip()[:1] in (b"{", b"[") else "an unrecognised file"
    if expected is not None and k.name == expected:
        return k.title
    return f"{k.title}: read it with {k.read_by}"
