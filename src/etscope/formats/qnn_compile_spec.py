"""QNN compile spec reader: what a ``QnnBackend`` delegate of a ``.pte`` was compiled for.

A delegate lowered by ExecuTorch's Qualcomm backend carries one compile spec, key
``qnn_compile_spec`` (``QCOM_QNN_COMPILE_SPEC`` in ``backends/qualcomm/utils/constants.py``; the
same name in the runtime's ``QnnExecuTorchBackend.cpp`` since v0.2). Its value is a FlatBuffer of
``backends/qualcomm/serialization/qc_compiler_spec.fbs`` (``schema.fbs`` up to v0.3), namespace
``qnn_delegate``, root table ``QnnExecuTorchOptions``, no file identifier, not size-prefixed.
ExecuTorch writes it with ``flatc --binary`` from JSON (``qc_schema_serialize.option_to_flatbuffer``)
so scalars equal to the schema default (0 / false) are left out and read back as the default.

The layout is not stable across releases. Fields were removed without being marked deprecated, so
the slots of the later ones moved (``git log`` of the schema in pytorch/executorch):

============  ==========================================================================================
layout        ``QnnExecuTorchOptions`` slots
============  ==========================================================================================
v0.2-v0.3     0 soc_info, 1 backend_options, 2 graph_name (string), 3 library_path, 4 log_level,
              5 online_prepare, 6 tensor_dump_output_path (string), 7 profile_level, 8 shared_buffer
v0.4-v0.6     as above but 6 dump_intermediate_outputs (bool), 9 is_from_context_binary,
              10 multiple_graphs (v0.5+)
v0.7-v1.0     2 graph_name ([string]), 3..9 as v0.4, 10 saver, 11 saver_output_dir,
              12 op_package_options
v1.1+         0 soc_info, 1 backend_options, 2 library_path, 3 log_level, 4 online_prepare,
              5 dump_intermediate_outputs, 6 profile_level, 7 shared_buffer, 8 is_from_context_binary,
              9 saver, 10 saver_output_dir, 11 op_package_options, 12 use_mha2sha
============  ==========================================================================================

``QnnExecuTorchHtpBackendOptions`` lost ``skel_library_dir`` (slot 4) in the same v1.1 change:
up to v1.0 it is 0 max_sf_buf_size, 1 performance_mode, 2 precision, 3 pd_session,
4 skel_library_dir, 5 use_conv_hmx, 6 use_dlbc, 7 use_fold_relu, 8 use_multi_contexts,
9 use_weight_sharing (v0.5+); from v1.1 slots 4-8 are use_conv_hmx .. use_weight_sharing and 9 is
use_slc_allocator (v1.2+). ``SocInfo`` (soc_model, htp_info, lpai_info), ``HtpInfo`` (htp_arch,
vtcm_size_in_mb), ``QnnExecuTorchBackendOptions`` (backend_type, htp_options, gpu_options,
lpai_options) and the GPU / LPAI / op-package tables only ever gained fields at the end.

The spec does not say which layout wrote it, so :func:`decode_qnn_compile_spec` reads the bytes
with each layout, newest first, checking every field against its type (alignment, field width
within the table, no overlapping fields, bools 0/1, strings in bounds, NUL-terminated UTF-8,
sub-tables well formed) and keeps the layout with no such problem; ties go to the layout under
which fewer enum values are unknown and fewer slots unexplained, then to the newest. A spec that
fits none raises :class:`FormatError`. Fields past the end of a layout (a newer ExecuTorch) are
skipped and listed in ``unknown_fields``; unknown enum values (a new SoC, say) are kept as
``unknown_<n>``.

Runtime overrides: the QNN runtime options ``qnn_runtime_profile_level``, ``qnn_runtime_log_level``
and ``qnn_runtime_htp_performance_mode`` (``runtime/QnnExecuTorch.h``) replace the compiled-in
profile level, log level and HTP performance mode when an app sets them, so these fields say what
the program was *built* with.

Nothing here imports torch or executorch, and nothing runs flatc.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from etscope.errors import FormatError
from etscope.formats.backends import QNN_BACKEND_ID
from etscope.formats.flatbuf import Buffer
from etscope.formats.qnn_compile_spec_schema import (
    BACKEND_TYPE, GPU_PERFORMANCE_MODE, GPU_PRECISION, HTP_PD_SESSION, HTP_PERFORMANCE_MODE,
    HTP_PRECISION, LAYOUTS, LOG_LEVEL, MAX_DEPTH, PROFILE_LEVEL, QCOM_CHIPSET, ROOT_TABLE,
    SHORT_NAMES, SOC_TABLE, TableLayout, soc_table)

__all__ = ["BACKEND_ID", "COMPILE_SPEC_KEY", "LAYOUTS", "QnnCompileSpec", "QnnGpuOptions",
           "QnnHtpOptions", "QnnSoc", "decode_qnn_compile_spec", "find_qnn_compile_spec",
           "find_qnn_compile_specs", "soc_table"]

COMPILE_SPEC_KEY = "qnn_compile_spec"
BACKEND_ID = QNN_BACKEND_ID
MAX_SPEC_BYTES = 16 << 20  # real specs are a few hundred bytes
MIB = 1 << 20



# ---- result -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QnnHtpOptions:
    """``QnnExecuTorchHtpBackendOptions``; a field is None when the spec's layout lacks it."""

    performance_mode: str           # "burst", "high_performance", ... ("unknown_<n>" if new)
    precision: str                  # "quantized" | "fp16"
    pd_session: str                 # "unsigned" | "signed"
    max_sf_buf_size: int            # max spill-fill buffer across contexts (bytes)
    use_conv_hmx: bool
    use_dlbc: bool
    use_fold_relu: bool
    use_multi_contexts: bool
    use_weight_sharing: bool | None  # v0.5+
    use_slc_allocator: bool | None   # v1.2+
    skel_library_dir: str | None    # up to v1.0


@dataclass(frozen=True)
class QnnGpuOptions:
    """``QnnExecuTorchGpuBackendOptions`` (v1.1+)."""

    performance_mode: str  # "high" | "normal" | "low"
    precision: str         # "fp32" | "fp16" | "hybrid" | "user_provided"
    use_memory_optimizations: bool
    use_node_optimizations: bool
    use_queue_recording: bool
    use_weight_sharing: bool


@dataclass(frozen=True)
class QnnCompileSpec:
    """A decoded ``qnn_compile_spec`` (``QnnExecuTorchOptions``).

    ``raw`` holds every field of the layout, named as in the schema: enum values by their schema
    identifier (``"kProfileDetailed"``; an int when unknown), absent scalars as the schema default,
    absent strings, vectors and tables as None; the shape of ``flatc --json --defaults-json``.
    """

    name: str
    schema: str                   # layout that fits: "v1.1+", "v0.7-v1.0", "v0.4-v0.6", "v0.2-v0.3"
    soc_model: str                # "SM8650"; "UNKNOWN_SM" when unset; "unknown_<n>" when new
    soc_model_id: int
    htp_arch: str | None          # "V75"; from the spec's htp_info, else the SoC table
    htp_arch_source: str | None   # "compile spec" | "soc table" | None
    vtcm_mb: int | None           # from the spec's htp_info, else the SoC table
    vtcm_source: str | None       # "compile spec" | "soc table" | None
    backend_type: str             # "HTP" | "GPU" | "DSP" | "LPAI" | "undefined" | "unknown_<n>"
    profile_level: str            # "off" | "basic" | "detailed" | "optrace" | "unknown_<n>"
    log_level: str                # "off" | "error" | "warn" | "info" | "verbose" | "debug"
    htp: QnnHtpOptions | None
    gpu: QnnGpuOptions | None
    online_prepare: bool
    shared_buffer: bool
    dump_intermediate_outputs: bool
    is_from_context_binary: bool | None   # v0.4+
    saver: bool | None                    # v0.7+
    use_mha2sha: bool | None              # v1.1+
    multiple_graphs: bool | None          # v0.4-v0.6 only
    graph_names: tuple[str, ...]          # up to v1.0 only (QNN graph names); () otherwise
    library_path: str | None
    op_packages: tuple[dict, ...]         # raw QnnExecuTorchOpPackageInfo entries
    notes: tuple[str, ...] = ()           # inconsistencies worth telling a user
    unknown_fields: tuple[str, ...] = ()  # "QnnExecuTorchOptions.13": slots this reader cannot name
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def vtcm_bytes(self) -> int | None:
        """VTCM size in bytes (QNN's "MB" are MiB)."""
        return None if self.vtcm_mb is None else self.vtcm_mb * MIB

    @property
    def per_op_profiling(self) -> bool:
        """True when the compiled-in profile level yields per-op rows (detailed or optrace)."""
        return self.profile_level in ("detailed", "optrace")

    @property
    def summary(self) -> str:
        """One line for people, e.g. ``SM8650 (HTP V75, 8 MB VTCM), HTP backend, profile level detailed``."""
        hw = [x for x in (f"HTP {self.htp_arch}" if self.htp_arch and self.htp_arch != "NONE" else None,
                          f"{self.vtcm_mb} MB VTCM" if self.vtcm_mb else None) if x]
        soc = self.soc_model + (f" ({', '.join(hw)})" if hw else "")
        parts = [soc, f"{self.backend_type} backend", f"profile level {self.profile_level}"]
        if self.htp is not None:
            parts.append(f"{self.htp.precision}, performance mode {self.htp.performance_mode}")
        return ", ".join(parts)


# ---- decoding -----------------------------------------------------------------------------------

_WIDTH = {"bool": 1}  # everything else is 4 bytes (i32, u32, enum, uoffset)


class _Problem(Exception):
    """A field that does not fit the layout being tried."""

    def __init__(self, what: str, offset: int | None = None):
        super().__init__(what)
        self.what = what
        self.offset = offset


class _Trial:
    """Reads a spec with one layout, collecting problems instead of stopping at the first."""

    def __init__(self, buf: Buffer, layout: dict[str, TableLayout]):
        self.buf = buf
        self.layout = layout
        self.hard: list[tuple[str, int | None]] = []
        self.soft: list[str] = []
        self.unknown: list[str] = []
        self.budget = 4 * buf.size + 4096  # string bytes + items: bounds the work on hostile input

    # -- primitives (raise _Problem or FormatError) --
    def _spend(self, n: int, pos: int):
        self.budget -= n
        if self.budget < 0:
            raise _Problem("more strings and tables than the spec's size allows (overlapping data)", pos)

    def _target(self, pos: int) -> int:
        if pos % 4:
            raise _Problem("offset field not 4-byte aligned", pos)
        rel = self.buf.read("u32", pos)
        if rel == 0:
            raise _Problem("zero offset", pos)
        target = pos + rel
        if target + 4 > self.buf.size:
            raise _Problem("offset points past the end", pos)
        if target % 4:
            raise _Problem("offset points off alignment", pos)
        return target

    def _string_at(self, target: int) -> str:
        n = self.buf.read("u32", target)
        end = target + 4 + n
        if end + 1 > self.buf.size:
            raise _Problem(f"string of {n} bytes runs past the end", target)
        if self.buf.u8[end] != 0:
            raise _Problem("string without NUL terminator", target)
        self._spend(n + 4, target)
        try:
            return bytes(self.buf.u8[target + 4:end]).decode("utf-8")
        except UnicodeDecodeError:
            raise _Problem("string is not UTF-8", target) from None

    def _vector(self, pos: int) -> tuple[int, int]:
        target = self._target(pos)
        count = self.buf.read("u32", target)
        if target + 4 + 4 * count > self.buf.size:
            raise _Problem(f"vector of {count} offsets runs past the end", target)
        self._spend(4 * count + 4, target)
        return target + 4, count

    # -- tables --
    def table(self, pos: int, tname: str, path: str, depth: int = 0) -> dict:
        buf = self.buf
        if depth > MAX_DEPTH:
            raise _Problem("tables nested too deep", pos)
        if pos % 4 or pos + 4 > buf.size:
            raise _Problem(f"{tname} table at a bad position", pos)
        self._spend(16, pos)
        vt = pos - buf.read("i32", pos)
        if vt < 0 or vt % 2 or vt + 4 > buf.size:
            raise _Problem(f"{tname} vtable out of bounds", pos)
        vt_size, t_size = buf.read("u16", vt), buf.read("u16", vt + 2)
        if vt_size < 4 or vt_size % 2 or vt + vt_size > buf.size:
            raise _Problem(f"{tname} vtable size {vt_size} invalid", vt)
        if t_size < 4 or pos + t_size > buf.size:
            raise _Problem(f"{tname} table size {t_size} invalid", vt)
        fields = self.layout[tname]
        offsets = {}
        for slot in range((vt_size - 4) // 2):
            off = buf.read("u16", vt + 4 + 2 * slot)
            if off:
                if off < 4 or off >= t_size:
                    raise _Problem(f"{tname} field {slot} outside its table", vt)
                offsets[slot] = off
        spans = []
        out: dict[str, Any] = {}
        for slot, (fname, kind, ref) in enumerate(fields):
            off = offsets.get(slot)
            if off is None:
                out[fname] = _default(kind, ref)
                continue
            width = _WIDTH.get(kind, 4)
            spans.append((off, width, fname))
            fpath = f"{path}.{fname}"
            try:
                if off + width > t_size:
                    raise _Problem(f"{fpath}: {width}-byte field does not fit its table", pos)
                out[fname] = self.value(pos + off, kind, ref, fpath, depth)
            except (_Problem, FormatError) as p:
                self.hard.append((f"{fpath}: {p.what}", p.offset))
                out[fname] = _default(kind, ref)
        for slot in sorted(s for s in offsets if s >= len(fields)):
            self.unknown.append(f"{tname}.{slot}")
            self.soft.append(f"{path}: unknown field slot {slot}")
            spans.append((offsets[slot], 1, f"slot {slot}"))
        spans.sort()
        for (a, wa, na), (b, _, nb) in zip(spans, spans[1:]):
            if a + wa > b:
                self.hard.append((f"{path}: fields {na} and {nb} overlap", pos))
        return out

    def value(self, pos: int, kind: str, ref, path: str, depth: int):
        buf = self.buf
        if kind == "bool":
            v = buf.read("u8", pos)
            if v > 1:
                raise _Problem(f"bool holds {v}", pos)
            return bool(v)
        if pos % 4:
            raise _Problem("4-byte field not aligned", pos)
        if kind == "i32":
            return buf.read("i32", pos)
        if kind == "u32":
            return buf.read("u32", pos)
        if kind == "enum":
            v = buf.read("i32", pos)
            if v in ref:
                return ref[v]
            self.soft.append(f"{path}: unknown enum value {v}")
            return v
        if kind == "str":
            return self._string_at(self._target(pos))
        if kind == "table":
            return self.table(self._target(pos), ref, path, depth + 1)
        start, count = self._vector(pos)
        items = []
        for i in range(count):
            elem = start + 4 * i
            if kind == "[str]":
                items.append(self._string_at(self._target(elem)))
            else:
                items.append(self.table(self._target(elem), ref, f"{path}[{i}]", depth + 1))
        return items


def _default(kind: str, ref):
    if kind == "bool":
        return False
    if kind in ("i32", "u32"):
        return 0
    if kind == "enum":
        return ref.get(0, 0)
    return None


def decode_qnn_compile_spec(data: bytes, name: str = "<compile spec>") -> QnnCompileSpec:
    """Decode the value of a ``qnn_compile_spec`` compile spec.

    Raises :class:`FormatError` (naming ``name``) when the bytes are not a ``QnnExecuTorchOptions``
    flatbuffer of any known layout.
    """
    try:
        return _decode(data, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (IndexError, KeyError, ValueError, TypeError, OverflowError, struct.error, MemoryError,
            UnicodeError) as e:
        raise FormatError(f"malformed QNN compile spec ({type(e).__name__}: {e})", file=name) from None


def _decode(data, name: str) -> QnnCompileSpec:
    if isinstance(data, str):
        raise FormatError("QNN compile spec must be bytes, not str")
    buf = Buffer(bytes(data), "QNN compile spec")
    if buf.size == 0:
        raise FormatError("empty QNN compile spec (0 bytes)")
    if buf.size < 12:
        raise FormatError(f"QNN compile spec too small ({buf.size} bytes)")
    if buf.size > MAX_SPEC_BYTES:
        raise FormatError(f"QNN compile spec too large ({buf.size} bytes; real ones are < 1 KB)")
    root = buf.read("u32", 0)
    if root % 4 or root < 4 or root + 4 > buf.size:
        raise FormatError(f"root offset {root} is not a table position in {buf.size} bytes", offset=0)
    best = None
    for rank, (label, layout) in enumerate(LAYOUTS.items()):
        trial = _Trial(buf, layout)
        try:
            raw = trial.table(root, ROOT_TABLE, ROOT_TABLE)
        except _Problem as p:
            trial.hard.append((p.what, p.offset))
            raw = None
        except FormatError as e:
            trial.hard.append((e.what, e.offset))
            raw = None
        key = (len(trial.hard), len(trial.soft), rank)
        if best is None or key < best[0]:
            best = (key, label, trial, raw)
        if rank == 0:
            newest = trial
    (n_hard, _, _), label, trial, raw = best
    if n_hard:
        what, offset = newest.hard[0]
        raise FormatError(f"not a QNN compile spec (QnnExecuTorchOptions) of any known layout: "
                          f"{what}", offset=offset)
    return _build(name, label, raw, trial)


def _short(table: str, value) -> str:
    if isinstance(value, int):
        return f"unknown_{value}"
    names = SHORT_NAMES[table]
    ids = {v: k for k, v in _ENUM_OF[table].items()}
    return names[ids[value]]


_ENUM_OF = {"backend_type": BACKEND_TYPE, "profile_level": PROFILE_LEVEL, "log_level": LOG_LEVEL,
            "htp_performance_mode": HTP_PERFORMANCE_MODE, "htp_precision": HTP_PRECISION,
            "htp_pd_session": HTP_PD_SESSION, "gpu_performance_mode": GPU_PERFORMANCE_MODE,
            "gpu_precision": GPU_PRECISION}


def _enum_id(names: dict[int, str], value) -> int:
    if isinstance(value, int):
        return value
    return next(k for k, v in names.items() if v == value)


def _build(name: str, label: str, raw: dict, trial: _Trial) -> QnnCompileSpec:
    notes: list[str] = []
    soc = raw.get("soc_info") or {}
    soc_value = soc.get("soc_model", "UNKNOWN_SM")
    soc_id = _enum_id(QCOM_CHIPSET, soc_value)
    soc_name = soc_value if isinstance(soc_value, str) else f"unknown_{soc_value}"
    table = SOC_TABLE.get(soc_name)
    htp_info = soc.get("htp_info") or {}
    arch_value = htp_info.get("htp_arch", "NONE")
    vtcm = htp_info.get("vtcm_size_in_mb", 0)
    if arch_value != "NONE":
        arch = arch_value if isinstance(arch_value, str) else f"unknown_{arch_value}"
        arch_src = "compile spec"
    elif table:
        arch, arch_src = table[0], "soc table"
    else:
        arch, arch_src = None, None
    if vtcm:
        vtcm_mb, vtcm_src = vtcm, "compile spec"
    elif table:
        vtcm_mb, vtcm_src = table[1], "soc table"
    else:
        vtcm_mb, vtcm_src = None, None
    if table and arch_src == "compile spec" and arch != table[0]:
        notes.append(f"compile spec says HTP {arch} but ExecuTorch's SoC table has {table[0]} for {soc_name}")
    if table and vtcm_src == "compile spec" and vtcm_mb != table[1]:
        notes.append(f"compile spec says {vtcm_mb} MB VTCM but ExecuTorch's SoC table has "
                     f"{table[1]} MB for {soc_name}")
    if soc_name == "UNKNOWN_SM":
        notes.append("SoC model not set in the compile spec")
    elif not isinstance(soc_value, str):
        notes.append(f"SoC model id {soc_id} is unknown to this reader (newer ExecuTorch?)")
    elif table is None:
        notes.append(f"SoC model {soc_name} is not in this reader's SoC table")

    backend = raw.get("backend_options") or {}
    backend_type = _short("backend_type", backend.get("backend_type", BACKEND_TYPE[0]))
    h = backend.get("htp_options")
    htp = None if h is None else QnnHtpOptions(
        performance_mode=_short("htp_performance_mode", h["performance_mode"]),
        precision=_short("htp_precision", h["precision"]),
        pd_session=_short("htp_pd_session", h["pd_session"]),
        max_sf_buf_size=h["max_sf_buf_size"], use_conv_hmx=h["use_conv_hmx"], use_dlbc=h["use_dlbc"],
        use_fold_relu=h["use_fold_relu"], use_multi_contexts=h["use_multi_contexts"],
        use_weight_sharing=h.get("use_weight_sharing"), use_slc_allocator=h.get("use_slc_allocator"),
        skel_library_dir=h.get("skel_library_dir"))
    g = backend.get("gpu_options")
    gpu = None if g is None else QnnGpuOptions(
        performance_mode=_short("gpu_performance_mode", g["performance_mode"]),
        precision=_short("gpu_precision", g["precision"]),
        use_memory_optimizations=g["use_memory_optimizations"],
        use_node_optimizations=g["use_node_optimizations"],
        use_queue_recording=g["use_queue_recording"], use_weight_sharing=g["use_weight_sharing"])
    if backend_type == "HTP" and htp is None:
        notes.append("HTP backend without HTP options (QNN defaults apply)")

    graph = raw.get("graph_name")
    if graph is None:
        graph_names: tuple[str, ...] = ()
    elif isinstance(graph, str):
        graph_names = (graph,) if graph else ()
    else:
        graph_names = tuple(graph)
    packages = (raw.get("op_package_options") or {}).get("op_package_infos") or []
    return QnnCompileSpec(
        name=name, schema=label, soc_model=soc_name, soc_model_id=soc_id, htp_arch=arch,
        htp_arch_source=arch_src, vtcm_mb=vtcm_mb, vtcm_source=vtcm_src, backend_type=backend_type,
        profile_level=_short("profile_level", raw["profile_level"]),
        log_level=_short("log_level", raw["log_level"]), htp=htp, gpu=gpu,
        online_prepare=raw["online_prepare"], shared_buffer=raw["shared_buffer"],
        dump_intermediate_outputs=raw.get("dump_intermediate_outputs", False),
        is_from_context_binary=raw.get("is_from_context_binary"), saver=raw.get("saver"),
        use_mha2sha=raw.get("use_mha2sha"), multiple_graphs=raw.get("multiple_graphs"),
        graph_names=graph_names, library_path=raw.get("library_path"),
        op_packages=tuple(packages), notes=tuple(notes), unknown_fields=tuple(trial.unknown), raw=raw)


# ---- .pte delegates -----------------------------------------------------------------------------

def find_qnn_compile_spec(delegate) -> QnnCompileSpec | None:
    """Decode the QNN compile spec of a :class:`~etscope.formats.pte.PteDelegate`.

    None when the delegate is not a ``QnnBackend`` one or has no ``qnn_compile_spec``; raises
    :class:`FormatError` when it has one that does not decode.
    """
    if delegate.backend_id != BACKEND_ID:
        return None
    value = delegate.compile_specs.get(COMPILE_SPEC_KEY)
    if value is None:
        return None
    return decode_qnn_compile_spec(
        value, name=f"delegate {delegate.index} ({delegate.backend_id}) compile spec {COMPILE_SPEC_KEY!r}")


def find_qnn_compile_specs(program) -> dict[tuple[str, int], QnnCompileSpec]:
    """Every QNN compile spec of a :class:`~etscope.formats.pte.PteProgram`:
    ``{(method name, delegate index): spec}`` in method then delegate order."""
    out = {}
    for method in program.methods:
        for d in method.delegates:
            spec = find_qnn_compile_spec(d)
            if spec is not None:
                out[(method.name, d.index)] = spec
    return out


@dataclass(frozen=True)
class QnnSoc:
    """What a .pte was compiled for, from its first QNN compile spec (``soc_from_pte``): the SoC,
    its HTP arch, VTCM size in bytes and the compiled-in profile level. The summary's
    ``qnn_compile`` and the QNN report's ``soc`` (JSON keys: the field names). Defaults: a stored
    summary read back (``analysis.views.stored_summary``) may lack a key."""
    soc_model: Any = None         # "SM8650"; "UNKNOWN_SM" when unset
    htp_arch: Any = None          # "V75", or None
    vtcm_bytes: int | None = None
    profile_level: Any = None     # "off" | "basic" | "detailed" | "optrace" | "unknown_<n>"


def soc_from_pte(program) -> QnnSoc | None:
    """SoC model, HTP arch, VTCM size and profile level from the first QNN compile spec of a read
    .pte (``formats.pte.read_pte``); None without a program or a QNN delegate with a spec."""
    if program is None:
        return None
    for m in program.methods:
        for d in m.delegates:
            if d.backend_id == BACKEND_ID:
                spec = find_qnn_compile_spec(d)
                if spec is not None:
                    return QnnSoc(soc_model=spec.soc_model, htp_arch=spec.htp_arch,
                                  vtcm_bytes=spec.vtcm_bytes, profile_level=spec.profile_level)
    return None
