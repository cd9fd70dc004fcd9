"""ExecuTorch program (``.pte``) reader: methods, instructions, operators and delegates.

Schema: ``schema/program.fbs`` in pytorch/executorch (namespace ``executorch_flatbuffer``, file
identifier ``ET12``). Layout of a file, all integers little-endian:

* ``[u32 root offset]["ET12"]`` -- the flatbuffer starts at byte 0 as usual;
* optional extended header right after the identifier (``exir/_serialize/_program.py``,
  ``_ExtendedHeader``): ``"eh00"``, ``u32 header length`` (>= 24), ``u64 program size`` (bytes of
  the flatbuffer *including* this header), ``u64 segment base offset`` and, when the length is at
  least 32, ``u64 segment data size``. The header is spliced into the flatbuffer and the root
  offset adjusted, so the flatbuffer is read from byte 0 up to the program size;
* segments after the flatbuffer: ``Program.segments[i]`` is ``(offset, size)`` relative to the
  segment base offset. Delegate blobs (``BackendDelegateDataReference.location == SEGMENT``),
  the constant segment and named data (e.g. XNNPACK weights) live there.

The reader only records where the blobs are (offset, size); it never copies them.
Nothing here imports torch or executorch, and nothing runs flatc.
"""
from __future__ import annotations

import contextlib
import mmap
import os
import struct
from typing import Iterator

import numpy as np

from etscope.errors import FormatError
from etscope.paths import open_input
from etscope.formats.flatbuf import Buffer, root_table
from etscope.formats.pte_program import (  # noqa: F401 (the reader returns them: re-exported)
    PteDelegate, PteFrame, PteInstruction, PteMethod, PteProgram, PteSegment, spec_value_text)

FILE_IDENTIFIER = b"ET12"
EXTENDED_HEADER_MAGIC = b"eh00"
_EH_MIN_LENGTH = 24   # magic, length, program size, segment base offset
_EH_FULL_LENGTH = 32  # + segment data size

# union InstructionArguments (program.fbs): 0 is NONE.
INSTRUCTION_KINDS = {1: "kernel", 2: "delegate", 3: "move", 4: "jump", 5: "free"}

# Field slots (declaration order in program.fbs; a union takes two: type, then value).
_PROGRAM_VERSION, _PROGRAM_PLANS, _PROGRAM_CONST_BUFFER, _PROGRAM_DELEGATE_DATA = 0, 1, 2, 3
_PROGRAM_SEGMENTS, _PROGRAM_CONST_SEGMENT, _PROGRAM_MUTABLE_SEGMENTS, _PROGRAM_NAMED_DATA = 4, 5, 6, 7
_PLAN_NAME, _PLAN_VALUES, _PLAN_INPUTS, _PLAN_OUTPUTS, _PLAN_CHAINS = 0, 2, 3, 4, 5
_PLAN_OPERATORS, _PLAN_DELEGATES, _PLAN_NON_CONST = 6, 7, 8
_CHAIN_INSTRUCTIONS, _CHAIN_STACKTRACE = 2, 3
_INSTR_TYPE, _INSTR_ARGS = 0, 1
_OPERATOR_NAME, _OPERATOR_OVERLOAD = 0, 1
_DELEGATE_ID, _DELEGATE_PROCESSED, _DELEGATE_SPECS = 0, 1, 2
_REF_LOCATION, _REF_INDEX = 0, 1
_SPEC_KEY, _SPEC_VALUE = 0, 1
_SEGMENT_OFFSET, _SEGMENT_SIZE = 0, 1
_NAMED_KEY, _NAMED_SEGMENT = 0, 1
_SUBSEG_INDEX, _SUBSEG_OFFSETS = 0, 1
_FRAMELIST_ITEMS = 0
_FRAME_FILENAME, _FRAME_LINENO, _FRAME_NAME = 0, 1, 2
# KernelCall{op_index; args}, DelegateCall{delegate_index; args}, MoveCall{move_from; move_to},
# JumpFalseCall{cond_value_index; destination_instruction}, FreeCall{value_index}
_CALL_FIRST, _CALL_SECOND = 0, 1

# A method is charged as this many items (4-byte words): the least an ExecutionPlan ExecuTorch
# writes takes is its slot in the plans vector, its table (vtable offset and field offsets), its
# name string and its vectors (values, inputs, outputs, chains, ...), well over 32 bytes. Charged
# as one, 12-byte plans (a name only) let 80,000 methods into 1 MB: `program --json` at its budget.
_ITEMS_PER_METHOD = 8

# ---- reading ------------------------------------------------------------------------------------

def _fail(what: str, offset: int | None = None):
    raise FormatError(what, offset=offset)


class _Budget:
    """Caps the work a file can cause: items and string bytes decoded, proportional to its size.

    A well-formed file stores every item (instruction, operator, frame, ...) once, each behind a
    4-byte offset, so it cannot hold more than ``size / 4`` of them. A hostile one can point many
    offsets at the same table to make a small file decode into a huge one; the budget stops that.
    """

    def __init__(self, buf: Buffer):
        self.buf = buf
        self.items = buf.size // 4 + 64
        self.bytes = 4 * buf.size + (1 << 20)

    def take(self, n: int, what: str, offset: int | None = None) -> None:
        self.items -= int(n)
        if self.items < 0:
            _fail(f"too many {what} for the file size (shared or overlapping tables)", offset)

    def string(self, table: int, slot: int) -> str | None:
        start, count = self.buf.vector(table, slot, 1)
        if not start:
            return None
        self.bytes -= count
        if self.bytes < 0:
            _fail("strings larger than the file allows (overlapping strings)", table)
        return bytes(self.buf.u8[start:start + count]).decode("utf-8", "replace")

    def blob(self, table: int, slot: int) -> bytes | None:
        start, count = self.buf.vector(table, slot, 1)
        if not start:
            return None
        self.bytes -= count
        if self.bytes < 0:
            _fail("byte fields larger than the file allows (overlapping data)", table)
        return bytes(self.buf.u8[start:start + count])


@contextlib.contextmanager
def mapped_pte(path: str | os.PathLike) -> Iterator[tuple[mmap.mmap, str]]:
    """``(mapping, name)`` of a ``.pte`` file, memory-mapped read-only (the file is never
    modified): the one way every reader of the file opens it."""
    name = os.fspath(path)
    try:
        f = open_input(name, ".pte")
    except OSError as e:
        raise FormatError(f"cannot open .pte file: {e.strerror or e}", file=name) from None
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
        except OSError as e:
            raise FormatError(f"cannot read .pte file: {e.strerror or e}", file=name) from None
        if size == 0:
            raise FormatError("empty file (0 bytes), not a .pte program", file=name)
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise FormatError(f"cannot map .pte file: {e}", file=name) from None
        try:
            yield mm, name
        finally:
            try:
                mm.close()
            except BufferError:  # a view is still referenced somewhere; the GC will unmap it
                pass


def read_pte(path: str | os.PathLike) -> PteProgram:
    """Read a ``.pte`` file (memory-mapped read-only; the file is never modified)."""
    with mapped_pte(path) as (mm, name):
        return parse_pte(mm, name)


def parse_pte(data, name: str = "<pte>") -> PteProgram:
    """Parse a ``.pte`` held in memory (bytes, bytearray, memoryview or mmap)."""
    try:
        return _parse(data, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (IndexError, KeyError, ValueError, TypeError, OverflowError, struct.error,
            UnicodeError, MemoryError) as e:
        raise FormatError(f"malformed .pte program ({type(e).__name__}: {e})", file=name) from None


def _parse(data, name: str) -> PteProgram:
    whole = Buffer(data, "flatbuffer")
    size = whole.size
    if size == 0:
        _fail("empty file (0 bytes), not a .pte program")
    if size < 8:
        _fail(f"file too small ({size} bytes) to be a .pte program")
    ident = bytes(whole.u8[4:8])
    if ident != FILE_IDENTIFIER:
        if ident[:2] == b"ET" and ident[2:].isdigit():
            _fail(f"unsupported .pte schema {ident.decode()} (this reader knows {FILE_IDENTIFIER.decode()})", 4)
        _fail(f"not a .pte program (identifier {ident!r} where {FILE_IDENTIFIER!r} expected)", 4)

    program_size, seg_base, seg_data_size, has_eh = extended_header(whole)
    buf, root = root_table(Buffer(whole.u8[:program_size], "flatbuffer"), FILE_IDENTIFIER)
    budget = _Budget(buf)

    segments = _segments(buf, root, size, seg_base, seg_data_size, has_eh)
    inline_data = _inline_delegate_data(buf, root)

    version = buf.scalar(root, _PROGRAM_VERSION, "u32")
    plans = buf.tables(root, _PROGRAM_PLANS)
    _refuse_shared_plans(plans)
    budget.take(plans.size * _ITEMS_PER_METHOD, "methods", root)
    methods = [_method(budget, int(plan), segments, inline_data) for plan in plans]

    const_seg, const_bytes = _constants(buf, root, segments)
    named: dict[str, int] = {}
    named_tables = buf.tables(root, _PROGRAM_NAMED_DATA)
    budget.take(named_tables.size, "named data entries", root)
    for nd in named_tables:
        key = budget.string(int(nd), _NAMED_KEY)
        idx = buf.scalar(int(nd), _NAMED_SEGMENT, "u32")
        if key is not None:
            named[key] = idx
    return PteProgram(
        name=name, version=version, methods=methods, file_size=size, program_size=program_size,
        extended_header=has_eh, segment_base_offset=seg_base, segments=segments,
        constant_segment=const_seg, constant_bytes=const_bytes, named_data=named,
    )


def _refuse_shared_plans(plans: np.ndarray) -> None:
    """Two methods pointing at one ExecutionPlan table are refused, naming them: FlatBuffers allow
    it, ExecuTorch never writes it, and it let a small file list a method hundreds of thousands of
    times (each re-read, each printed by ``program``)."""
    if plans.size < 2:
        return
    _, first, counts = np.unique(plans, return_index=True, return_counts=True)
    if (counts > 1).any():
        at = int(np.argmax(counts > 1))
        i = int(first[at])
        j = int(np.flatnonzero(plans == plans[i])[1])
        _fail(f"methods {i} and {j} share one execution plan table (ExecuTorch writes one per method)",
              int(plans[i]))


def extended_header(buf: Buffer) -> tuple[int, int, int, bool]:
    """(program size, segment base offset, segment data size, present?)."""
    size = buf.size
    if size < 12 or bytes(buf.u8[8:12]) != EXTENDED_HEADER_MAGIC:
        return size, 0, 0, False
    if size < 8 + _EH_MIN_LENGTH:
        _fail("extended header cut short (truncated file?)", 8)
    length = buf.read("u32", 12)
    if length < _EH_MIN_LENGTH:
        _fail(f"extended header length {length} < {_EH_MIN_LENGTH}", 12)
    program_size = buf.read("u64", 16)
    seg_base = buf.read("u64", 24)
    seg_data_size = buf.read("u64", 32) if length >= _EH_FULL_LENGTH and size >= 40 else 0
    if program_size < 8 + length or program_size > size:
        _fail(f"extended header says the program is {program_size} bytes but the file has "
                 f"{size} (truncated?)", 16)
    if seg_base:
        if seg_base < program_size:
            _fail(f"segment base offset {seg_base} lies inside the program ({program_size} bytes)", 24)
        if seg_base > size:
            _fail(f"segment base offset {seg_base} is past the end of the file ({size} bytes; truncated?)", 24)
        if seg_data_size and seg_base + seg_data_size > size:
            _fail(f"segment data ({seg_data_size} bytes from {seg_base}) runs past the end of the "
                     f"file ({size} bytes; truncated?)", 32)
    return program_size, seg_base, seg_data_size, True


def _segments(buf: Buffer, root: int, file_size: int, seg_base: int, seg_data_size: int,
              has_eh: bool) -> list[PteSegment]:
    tables = buf.tables(root, _PROGRAM_SEGMENTS)
    if tables.size == 0:
        return []
    if not has_eh or not seg_base:
        _fail(f"program lists {tables.size} segments but has no extended header giving their base offset")
    offsets = buf.v_scalar(tables, _SEGMENT_OFFSET, "u64").astype(np.uint64)
    sizes = buf.v_scalar(tables, _SEGMENT_SIZE, "u64").astype(np.uint64)
    limit = file_size - seg_base
    if seg_data_size:
        limit = min(limit, seg_data_size)
    out = []
    for i, (off, n) in enumerate(zip(offsets.tolist(), sizes.tolist())):
        if off > limit or n > limit - off:
            _fail(f"segment {i} ({n} bytes at +{off}) runs past the end of the segment data "
                     f"({limit} bytes from {seg_base}; truncated?)", int(tables[i]))
        out.append(PteSegment(i, seg_base + off, n))
    return out


def _inline_delegate_data(buf: Buffer, root: int) -> list[tuple[int, int]]:
    """(absolute start, size) of each Program.backend_delegate_data entry."""
    tables = buf.tables(root, _PROGRAM_DELEGATE_DATA)
    if tables.size == 0:
        return []
    start, count = buf.v_vector(tables, 0, 1)
    return list(zip(start.tolist(), count.tolist()))


def _constants(buf: Buffer, root: int, segments: list[PteSegment]) -> tuple[int | None, int]:
    cs = buf.table(root, _PROGRAM_CONST_SEGMENT)
    if cs:
        offsets = buf.scalars(cs, _SUBSEG_OFFSETS, "u64")
        idx = buf.scalar(cs, _SUBSEG_INDEX, "u32")
        if offsets.size:  # offsets[0] is reserved; an empty list means no constant segment
            if idx >= len(segments):
                _fail(f"constant segment index {idx} out of range ({len(segments)} segments)", cs)
            return idx, segments[idx].size
    buffers = buf.tables(root, _PROGRAM_CONST_BUFFER)  # deprecated inline constants
    if buffers.size:
        _, count = buf.v_vector(buffers, 0, 1)
        return None, int(count.sum())
    return None, 0


def _method(budget: _Budget, plan: int, segments: list[PteSegment],
            inline_data: list[tuple[int, int]]) -> PteMethod:
    buf = budget.buf
    name = budget.string(plan, _PLAN_NAME) or ""
    _, num_values = buf.vector(plan, _PLAN_VALUES, 4)
    _, n_in = buf.vector(plan, _PLAN_INPUTS, 4)
    _, n_out = buf.vector(plan, _PLAN_OUTPUTS, 4)
    non_const_arr = buf.scalars(plan, _PLAN_NON_CONST, "i64")
    budget.take(non_const_arr.size, "memory buffers", plan)
    non_const = [int(x) for x in non_const_arr.tolist()]

    op_tables = buf.tables(plan, _PLAN_OPERATORS)
    budget.take(op_tables.size, "operators", plan)
    operators = []
    for op in op_tables:
        op_name = budget.string(int(op), _OPERATOR_NAME) or ""
        overload = budget.string(int(op), _OPERATOR_OVERLOAD) or ""
        operators.append(f"{op_name}.{overload}" if overload else op_name)

    delegate_tables = buf.tables(plan, _PLAN_DELEGATES)
    budget.take(delegate_tables.size, "delegates", plan)
    delegates = [_delegate(budget, i, int(d), segments, inline_data) for i, d in enumerate(delegate_tables)]

    chains = buf.tables(plan, _PLAN_CHAINS)
    budget.take(chains.size, "chains", plan)
    instructions = _instructions(budget, int(chains[0]), operators, delegates) if chains.size else []
    return PteMethod(name=name, instructions=instructions, chains=int(chains.size), operators=operators,
                     delegates=delegates, non_const_buffer_sizes=non_const, inputs=n_in, outputs=n_out,
                     num_values=num_values)


def _delegate(budget: _Budget, index: int, table: int, segments: list[PteSegment],
              inline_data: list[tuple[int, int]]) -> PteDelegate:
    buf = budget.buf
    backend = budget.string(table, _DELEGATE_ID) or ""
    specs: dict[str, bytes] = {}
    spec_tables = buf.tables(table, _DELEGATE_SPECS)
    budget.take(spec_tables.size, "compile specs", table)
    for spec in spec_tables:
        key = budget.string(int(spec), _SPEC_KEY) or ""
        specs[key] = budget.blob(int(spec), _SPEC_VALUE) or b""
    ref = buf.table(table, _DELEGATE_PROCESSED)
    if not ref:
        _fail(f"delegate {index} ({backend}) has no processed data reference", table)
    loc = buf.scalar(ref, _REF_LOCATION, "i8")
    data_index = buf.scalar(ref, _REF_INDEX, "u32")
    if loc == 0:
        if data_index >= len(inline_data):
            _fail(f"delegate {index} ({backend}) refers to inline data {data_index} but there are "
                     f"{len(inline_data)}", ref)
        offset, size = inline_data[data_index]
        location = "inline"
    elif loc == 1:
        if data_index >= len(segments):
            _fail(f"delegate {index} ({backend}) refers to segment {data_index} but there are "
                     f"{len(segments)}", ref)
        offset, size = segments[data_index].offset, segments[data_index].size
        location = "segment"
    else:
        _fail(f"delegate {index} ({backend}) has unknown data location {loc}", ref)
    return PteDelegate(index=index, backend_id=backend, compile_specs=specs, location=location,
                       data_index=data_index, blob_size=int(size), blob_offset=int(offset))


def _instructions(budget: _Budget, chain: int, operators: list[str],
                  delegates: list[PteDelegate]) -> list[PteInstruction]:
    buf = budget.buf
    tables = buf.tables(chain, _CHAIN_INSTRUCTIONS)
    n = int(tables.size)
    budget.take(n, "instructions", chain)
    if n == 0:
        return []
    kinds = buf.v_scalar(tables, _INSTR_TYPE, "u8")
    args_tables = buf.v_table(tables, _INSTR_ARGS)
    missing = (kinds > 0) & (args_tables == 0)
    if missing.any():
        bad = int(np.argmax(missing))
        _fail(f"instruction {bad} has a type but no arguments", int(tables[bad]))
    present = args_tables > 0
    first = np.zeros(n, dtype=np.int64)
    second = np.zeros(n, dtype=np.int64)
    first[present] = buf.v_scalar(args_tables[present], _CALL_FIRST, "i32")
    two_fields = present & ((kinds == 3) | (kinds == 4))
    second[two_fields] = buf.v_scalar(args_tables[two_fields], _CALL_SECOND, "i32")
    # value indices of kernel and delegate calls
    calls = present & ((kinds == 1) | (kinds == 2))
    arg_start = np.zeros(n, dtype=np.int64)
    arg_count = np.zeros(n, dtype=np.int64)
    arg_start[calls], arg_count[calls] = buf.v_vector(args_tables[calls], _CALL_SECOND, 4)
    total = int(arg_count.sum())
    budget.take(total, "instruction arguments", chain)
    arg_ends = np.cumsum(arg_count)
    all_args: list[int] = []
    if total:
        within = np.arange(total, dtype=np.int64) - np.repeat(arg_ends - arg_count, arg_count)
        all_args = buf.v_read("i32", np.repeat(arg_start, arg_count) + 4 * within).tolist()

    frames = _stacktraces(budget, chain, n)
    kinds_l, first_l, second_l = kinds.tolist(), first.tolist(), second.tolist()
    ends_l, counts_l = arg_ends.tolist(), arg_count.tolist()
    out = []
    for i in range(n):
        k = kinds_l[i]
        kind = INSTRUCTION_KINDS.get(k, "none" if k == 0 else f"unknown_{k}")
        fr = frames[i] if frames else ()
        if k == 1:
            op = first_l[i]
            if not 0 <= op < len(operators):
                _fail(f"instruction {i} calls operator {op} but the method has {len(operators)}",
                         int(args_tables[i]))
            args = tuple(all_args[ends_l[i] - counts_l[i]:ends_l[i]])
            out.append(PteInstruction(i, kind, op_index=op, operator=operators[op], args=args, frames=fr))
        elif k == 2:
            d = first_l[i]
            if not 0 <= d < len(delegates):
                _fail(f"instruction {i} calls delegate {d} but the method has {len(delegates)}",
                         int(args_tables[i]))
            args = tuple(all_args[ends_l[i] - counts_l[i]:ends_l[i]])
            out.append(PteInstruction(i, kind, delegate_index=d, backend_id=delegates[d].backend_id,
                                      args=args, frames=fr))
        elif k in (3, 4):
            out.append(PteInstruction(i, kind, args=(first_l[i], second_l[i]), frames=fr))
        elif k == 5:
            out.append(PteInstruction(i, kind, args=(first_l[i],), frames=fr))
        else:
            out.append(PteInstruction(i, kind, frames=fr))
    return out


def _stacktraces(budget: _Budget, chain: int, n: int) -> list[tuple[PteFrame, ...]] | None:
    buf = budget.buf
    lists = buf.tables(chain, _CHAIN_STACKTRACE)
    if lists.size == 0:
        return None
    budget.take(lists.size, "stack traces", chain)
    out: list[tuple[PteFrame, ...]] = []
    for i in range(n):
        if i >= lists.size:
            out.append(())
            continue
        items = buf.tables(int(lists[i]), _FRAMELIST_ITEMS)
        budget.take(items.size, "stack frames", int(lists[i]))
        frames = []
        for fr in items:
            fr = int(fr)
            frames.append(PteFrame(budget.string(fr, _FRAME_FILENAME), buf.scalar(fr, _FRAME_LINENO, "i32"),
                                   budget.string(fr, _FRAME_NAME)))
        out.append(tuple(frames))
    return out


def delegate_blob_digests(path: str | os.PathLike, program: PteProgram | None = None) -> dict[tuple[str, int], str]:
    """SHA-256 of every delegate's processed blob, keyed by (method name, delegate index): whether
    two programs hold the same lowered partitions (``etscope diff``). ``program``: the file as
    already read (else it is parsed from the same mapping); each blob is hashed in place."""
    import hashlib

    out: dict[tuple[str, int], str] = {}
    with mapped_pte(path) as (mm, name):
        if program is None:
            program = parse_pte(mm, name)
        view = memoryview(mm)
        seen: dict[tuple[int, int], str] = {}   # a blob shared by many delegates is hashed once
        budget = 4 * len(mm) + (1 << 20)         # bytes hashed
        try:
            for m in program.methods:
                for d in m.delegates:
                    end = d.blob_offset + d.blob_size
                    if 0 <= d.blob_offset <= end <= len(mm):
                        key = (d.blob_offset, end)
                        if key not in seen:
                            # distinct blobs that overlap could make hashing quadratic in the file
                            budget -= d.blob_size
                            if budget < 0:
                                raise FormatError("delegate blobs overlap more than the file size allows",
                                                  file=name, offset=d.blob_offset)
                            seen[key] = hashlib.sha256(view[d.blob_offset:end]).hexdigest()
                        out[(m.name, d.index)] = seen[key]
        finally:
            view.release()
    return out
