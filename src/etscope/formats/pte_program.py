"""What a ``.pte`` holds, as :func:`etscope.formats.pte.read_pte` returns it: the program, its
methods with their instructions and stack traces, delegates with their compile specs, and segments.
Plain frozen data; the reader and its bounds checks are in ``formats.pte``."""
from __future__ import annotations

import string
from dataclasses import dataclass, field

_PRINTABLE = set(string.printable) - set("\x0b\x0c")
_SPEC_TEXT_MAX = 256


@dataclass(frozen=True)
class PteFrame:
    """One frame of an instruction's stack trace (only when exported with ``emit_stacktrace``)."""

    filename: str | None
    lineno: int
    name: str | None


@dataclass(frozen=True)
class PteInstruction:
    """One instruction of chain 0, in execution order.

    ``index`` is the ``instruction_id`` that ETDump events and the ETRecord maps use.
    """

    index: int
    kind: str  # "kernel" | "delegate" | "move" | "jump" | "free" | "none" | "unknown_<type>"
    op_index: int | None = None        # kernel: index into PteMethod.operators
    operator: str | None = None        # kernel: e.g. "aten::cumsum.out"
    delegate_index: int | None = None  # delegate: index into PteMethod.delegates
    backend_id: str | None = None      # delegate: e.g. "XnnpackBackend", "QnnBackend"
    args: tuple[int, ...] = ()         # kernel/delegate: value indices (inputs then outputs)
    # move: (from, to); jump: (cond value, destination instruction); free: (value,)
    frames: tuple[PteFrame, ...] = ()  # stack trace, innermost last; usually empty


@dataclass(frozen=True)
class PteDelegate:
    """A lowered partition: backend id, compile specs and where its processed blob is."""

    index: int
    backend_id: str
    compile_specs: dict[str, bytes]
    location: str          # "inline" (Program.backend_delegate_data) | "segment"
    data_index: int        # index into that list
    blob_size: int         # bytes of the processed blob
    blob_offset: int       # absolute byte offset of the blob in the file

    @property
    def compile_specs_text(self) -> dict[str, str]:
        """Compile specs with values shown as text when printable, else as hex."""
        return {k: spec_value_text(v) for k, v in self.compile_specs.items()}


@dataclass(frozen=True)
class PteMethod:
    name: str
    instructions: list[PteInstruction]  # chain 0
    chains: int
    operators: list[str]                # "name.overload" (or "name" when overload is empty)
    delegates: list[PteDelegate]
    non_const_buffer_sizes: list[int]   # planned memory per mem id ([0] is unused by the runtime)
    inputs: int
    outputs: int
    num_values: int

    @property
    def delegate_calls(self) -> list[PteInstruction]:
        return [i for i in self.instructions if i.kind == "delegate"]

    @property
    def kernel_calls(self) -> list[PteInstruction]:
        return [i for i in self.instructions if i.kind == "kernel"]

    @property
    def planned_memory_bytes(self) -> int:
        """Bytes of memory planned for activations (sum over mem ids >= 1)."""
        return int(sum(self.non_const_buffer_sizes[1:]))


@dataclass(frozen=True)
class PteSegment:
    index: int
    offset: int  # absolute offset in the file
    size: int


@dataclass(frozen=True)
class PteProgram:
    name: str                      # file name (for messages)
    version: int
    methods: list[PteMethod]
    file_size: int
    program_size: int              # bytes of the flatbuffer (incl. extended header)
    extended_header: bool
    segment_base_offset: int       # 0 when there are no segments
    segments: list[PteSegment]
    constant_segment: int | None   # segment index holding constant tensors, if any
    constant_bytes: int            # size of the constant data (segment or inline buffers)
    named_data: dict[str, int] = field(default_factory=dict)  # key -> segment index

    def method(self, name: str) -> PteMethod:
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(name)


def spec_value_text(value: bytes) -> str:
    """A compile-spec value for people: text if it decodes to printable UTF-8, else hex."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c in _PRINTABLE for c in text):
        return text if len(text) <= _SPEC_TEXT_MAX else text[:_SPEC_TEXT_MAX] + f"... ({len(value)} bytes)"
    shown = value[:64].hex()
    return "0x" + shown + ("" if len(value) <= 64 else f"... ({len(value)} bytes)")
