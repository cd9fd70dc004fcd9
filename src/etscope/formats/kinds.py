"""The registry of input kinds: every kind of file etscope reads, in one place (issue 33 item 3, in
the spirit of Perfetto's single registration point). Each kind declares

- how its bytes look (``forms``: a title and a sniffer each), so that a file given in the wrong
  place is named with the option that reads it (``summary chain8.profile.txt`` -> "a QNN profile
  text ...: etscope qnn --qnn-csv FILE");
- its ``reader`` (path -> the read, columnar data);
- its command-line ``option`` and the commands that take it (``cli.kind_options`` makes the click
  options from it; the notebook's ``etscope.inputs`` takes the same names);
- its ``companion`` suffix: ``<stem><suffix>`` beside an ETDump is read by ``etscope collect``;
- what it ``feeds``: the name of the analyses' input (``analysis.results.Results.feed``), and,
  for a kind with no dedicated analysis there, its ``view`` (results, data -> a typed view shown
  in ``summary --json`` and stored by ``collect``).

So a new kind is one entry here, its reader module (formats) and its view (analysis); the CLI,
the notebook API, collect and the renderers take it from here. Readers and views are named as
``"module:function"`` and imported when used: importing this registry (the CLI does, to make its
options) stays light, and a view named here is resolved by the analysis layer, never by formats.

Sniffing reads at most the head it is given and never fails.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable

from etscope.formats.qnn_names import head_text

HEAD_BYTES = 65536       # what the sniffers need: JSON kinds are told by keys near the top

QNN_PIN_HELP = ("Repeatable, one per QNN partition (context binary); joined to its partition by op names, "
                "or pinned as METHOD:INSTRUCTION=FILE.")


def resolve(ref: str | Callable) -> Callable:
    """A ``"module:function"`` reference of this registry (or a function) -> the function. The
    references are constants of the package, never text from an input; even so only etscope's own
    modules can be named (tests/fuzz/test_attacks.py checks that this is the one dynamic import)."""
    if callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    if not module.startswith("etscope.") or not attr.isidentifier():
        raise ValueError(f"not a function of etscope: {ref!r}")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Form:
    """One way a kind's bytes look (a QNN profile is CSV, text or JSON)."""
    title: str                        # "a QHAS JSON"
    sniff: str | Callable[[bytes], bool]


@dataclass(frozen=True)
class SideOption:
    """A kind's option once per side of a command that reads two runs (``SIDES``: ``diff``'s base and
    new, ``numerics``' reference): ``diff --runtrace-base/--runtrace-new``. ``help`` may name the side
    as ``{side}``."""
    command: str
    help: str


@dataclass(frozen=True)
class Option:
    """A kind's command-line option: ``flag`` (``--qnn-csv``), the click parameter name (``qnn_csv``),
    its help, the commands that take it, whether it is repeatable (one file per partition,
    ``METHOD:INSTR=FILE`` pins allowed), and its options per side of the commands reading two runs."""
    flag: str
    param: str
    help: str
    commands: tuple[str, ...]
    multiple: bool = False
    sides: tuple[SideOption, ...] = ()


# How a command that reads two runs names a kind's option per side: (side, flag) with the kind's
# ``{flag}`` (``--runtrace``) or its ``{name}`` (``runtrace``).
SIDES = {"diff": (("base", "{flag}-base"), ("new", "{flag}-new")),
         "numerics": (("reference", "--reference-{name}"),)}


@dataclass(frozen=True)
class SideFlag:
    """One side's option of a kind (``--runtrace-base``), made from the kind's ``SideOption``."""
    kind: "InputKind"
    side: str
    flag: str
    help: str

    @property
    def param(self) -> str:
        return self.flag[2:].replace("-", "_")


@dataclass(frozen=True)
class InputKind:
    name: str                         # etdump | pte | etrecord | qnn_profile | qhas | ...
    forms: tuple[Form, ...]
    read_by: str = ""                 # the command and option that read it (default: from ``option``)
    reader: str | Callable | None = None   # path -> the data ("module:function")
    option: Option | None = None
    companion: str | None = None      # <stem><companion> beside an ETDump: read by etscope collect
    feeds: str | None = None          # the analyses' input name (Results.feed); default: ``name``
    view: str | Callable | None = None     # (results, data) -> typed view, for a kind without a dedicated analysis
    wrong_kind_hint: bool = True      # a refusal of a file of another known kind names that kind's option

    @property
    def title(self) -> str:
        return self.forms[0].title

    @property
    def input_name(self) -> str:
        return self.feeds or self.name

    @property
    def reads_by(self) -> str:
        if self.read_by or self.option is None:
            return self.read_by
        first, *more = self.option.commands
        return f"etscope {first} {self.option.flag} FILE" + (f" (or {'/'.join(more)} {self.option.flag})" if more else "")

    def read(self, path):
        """The kind's data read from ``path`` by its reader."""
        return resolve(self.reader)(path)


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
QNN_VIEWS = ("qnn", "report", "trace", "export", "sql")     # the views that take QNN files (alone or with an ETDump)

# Most specific first: the first kind whose sniffer accepts a head is its kind.
KINDS: tuple[InputKind, ...] = (
    InputKind("etdump", (Form("an ETDump", _etdump),), f"the ETDUMP argument of etscope {VIEWS}"),
    InputKind("pte", (Form("an ExecuTorch program (.pte)", _pte),), "--pte (or: etscope program FILE)"),
    InputKind("bundled_program", (Form("a bundled ExecuTorch program (.bpte)", _bundled),),
              "no etscope option: give the .pte inside it with --pte"),
    InputKind("etrecord", (Form("a zip archive (an ETRecord?)", _zip),), "--etrecord"),
    InputKind("qhas", (Form("a QHAS JSON (QNN HTP analysis summary)", "etscope.formats.qhas:sniff"),),
              "etscope qnn --qhas FILE (or report --qhas)", reader="etscope.formats.qhas:read_qhas",
              option=Option("--qhas", "qhas", "QHAS JSON (*_qnn_htp_analysis_summary.json): utilisation, VTCM, "
                            "DRAM. " + QNN_PIN_HELP, QNN_VIEWS, multiple=True),
              companion=".qhas.json"),
    InputKind("optrace", (Form("a QNN optrace JSON", "etscope.formats.optrace:sniff"),),
              "etscope qnn --optrace FILE (or report --optrace)", reader="etscope.formats.optrace:read_optrace",
              option=Option("--optrace", "optrace", "QNN optrace JSON (HMX/HVX per op). " + QNN_PIN_HELP, QNN_VIEWS,
                            multiple=True),
              companion=".optrace.json"),
    InputKind("runtrace", (Form("a QNN run trace JSON (RUN_TRACE)", "etscope.formats.runtrace:sniff"),),
              "etscope qnn --runtrace FILE (or summary/report --runtrace)",
              reader="etscope.formats.runtrace:read_runtrace",
              option=Option("--runtrace", "runtrace", "QNN runtrace JSON (*_runtrace.json, RUN_TRACE): the measured "
                            "HTP clock, used instead of the estimate to turn cycles into µs.", ("summary",) + QNN_VIEWS,
                            sides=(SideOption("diff", "QNN runtrace JSON of the {side} run: its measured HTP clock."),)),
              companion=".runtrace.json"),
    InputKind("qnn_profile", (Form("a QNN profile CSV", "etscope.formats.qnn_csv:sniff"),
                              Form("a QNN profile JSON (qnn-profile-viewer)", "etscope.formats.qnn_json:sniff"),
                              Form("a QNN profile text (qnn-profile-viewer)", "etscope.formats.qnn_text:sniff")),
              "etscope qnn --qnn-csv FILE (or report --qnn-csv)",
              # The reader tells CSV, text and JSON apart and names a wrong kind itself.
              reader="etscope.formats.qnn_profile_files:read_qnn_profile", wrong_kind_hint=False,
              option=Option("--qnn-csv", "qnn_csv", "QNN profile from qnn-profile-viewer or ONNX Runtime: CSV, text "
                            "or JSON.", QNN_VIEWS)),
    InputKind("ort_profile", (Form("an ONNX Runtime profile JSON", _ort_profile),),
              "etscope qnn --ort-profile FILE (or report --ort-profile)",
              reader="etscope.formats.ort_profile:read_ort_profile", feeds="ort",
              option=Option("--ort-profile", "ort_profile", "ONNX Runtime's profile JSON of the session "
                            "(enable_profiling): model_run, each QNN partition's EP kernel time and the CPU-fallback "
                            "nodes; with --qnn-csv (the QNN profile ORT wrote beside it) the partitions join QNN's own "
                            "levels.", ("qnn", "report"))),
    InputKind("taps", (Form("an etscope tap sidecar (etscope.taps/1)", _taps),),
              option=Option("--taps", "taps", "Intermediate-output tap sidecar (etscope.taps/1 JSON, written next to "
                            "the program with one line: json.dump({\"schema\": \"etscope.taps/1\", \"taps\": "
                            "[dataclasses.asdict(s) for s in specs]}, open(\"model.taps.json\", \"w\"))): which program "
                            "outputs are taps of which nodes.", ("numerics",),
                            sides=(SideOption("numerics", "The reference's tap sidecar."),))),
    InputKind("qnn_heap", (Form("a QNN DSP heap usage log", _heap),), "etscope summary/qnn/report --qnn-heap FILE",
              reader="etscope.formats.heap:read_heap", wrong_kind_hint=False,
              option=Option("--qnn-heap", "qnn_heap", "QNN HTP DSP heap profile (htp_heap_usage.txt): heap "
                            "before/after the QNN contexts, shown beside planned CPU memory and VTCM.",
                            ("summary", "qnn", "report"))),
    InputKind("parquet", (Form("a Parquet file (part of an etscope dataset?)", _dataset),),
              "etscope sql --dataset FOLDER / trend --dataset FOLDER (the dataset folder, not one part)"),
    InputKind("pickle", (Form("a Python pickle", _python_object_stream),), "nothing: etscope never unpickles"),
)


def kind_named(name: str) -> InputKind:
    return next(k for k in KINDS if k.name == name)


def options_of(command: str) -> tuple[InputKind, ...]:
    """The kinds whose option the command ``command`` takes, in registry order."""
    return tuple(k for k in KINDS if k.option is not None and command in k.option.commands)


def side_flags_of(command: str) -> tuple[SideFlag, ...]:
    """The per-side options of ``command`` (a command of ``SIDES``), kind by kind in registry order,
    then side by side."""
    out = []
    for k in KINDS:
        for so in (k.option.sides if k.option is not None else ()):
            if so.command == command:
                out += [SideFlag(k, side, pattern.format(flag=k.option.flag, name=k.option.flag[2:]),
                                 so.help.format(side=side)) for side, pattern in SIDES[command]]
    return tuple(out)


def companions() -> tuple[InputKind, ...]:
    """The kinds ``etscope collect`` reads beside an ETDump (``<stem><companion>``), in registry order."""
    return tuple(k for k in KINDS if k.companion is not None and k.reader is not None)


def _form_of(head: bytes) -> tuple[InputKind, Form] | None:
    for k in KINDS:
        for form in k.forms:
            try:
                if resolve(form.sniff)(head):
                    return k, form
            except Exception:  # noqa: BLE001 - a sniffer must never turn a clear error into a traceback
                continue
    return None


def kind_of(head: bytes) -> InputKind | None:
    """The first kind whose sniffer accepts ``head`` (the file's first bytes), or None."""
    found = _form_of(head)
    return None if found is None else found[0]


def describe(head: bytes, expected: str | None = None) -> str:
    """A short phrase naming the kind of file whose first bytes are ``head``, with the option that
    reads it when that is not the ``expected`` kind."""
    if not head:
        return "an empty file"
    found = _form_of(head)
    if found is None:
        return "a JSON file of no kind etscope reads" if head.lstrip()[:1] in (b"{", b"[") else "an unrecognised file"
    k, form = found
    if expected is not None and k.name == expected:
        return form.title
    return f"{form.title}: read it with {k.reads_by}"
