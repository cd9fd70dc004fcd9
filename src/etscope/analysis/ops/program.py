"""What a ``.pte`` program holds, and what its ETDump will (not) be able to show: ``etscope program``.

Pure function of a :class:`~etscope.formats.pte.PteProgram` (no ETDump needed): methods with their
instruction mix and planned memory, delegates with their backend, blob size and where the blob is
(a segment several delegates point at is *shared*: a QNN hybrid LLM's ``prefill_forward`` and
``kv_forward`` use one context binary), segments and who uses them, and for QNN delegates the
decoded compile spec plus checks a user wants *before* spending a device session:

* profile level ``off``: QNN logs no events into the ETDump at all (``QnnManager::ProfileExecuteData``
  returns early), and the DSP heap profile is not written either (``QnnContext.need_to_profile_``);
* ``basic``: whole-graph QNN events only, no per-op rows (``QnnProfile`` asks QNN for
  ``QNN_PROFILE_LEVEL_BASIC``);
* ``optrace``: per-op cycles as with ``detailed``; HMX/HVX, VTCM and utilisation come from the
  optrace / QHAS files of a separate re-run (``backends/qualcomm/debugger/utils.py``
  ``generate_optrace``, one pair per context binary).

The option names quoted in the advice are upstream's (``generate_qnn_executorch_compiler_spec``'s
``profile_level`` in ``backends/qualcomm/utils/utils.py``; the runtime option
``qnn_runtime_profile_level`` of ``runtime/QnnExecuTorch.h``, ``qnn_executor_runner
--profile_level``, which cannot raise the level to optrace).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.formats import qnn_compile_spec as qcs
from etscope.formats.pte import PteProgram

SCHEMA = "etscope.program/1"

# Advice per compiled-in QNN profile level: (severity, text). "{who}" names the delegates.
_PROFILE_ADVICE = {
    "off": ("warning",
            "{who}: QNN profile level off: the ETDump will hold no QNN events (no accelerator time, "
            "no cycles) and no DSP heap profile is written; set profile_level=2 (detailed) in "
            "generate_qnn_executorch_compiler_spec when lowering, or the runtime option "
            "qnn_runtime_profile_level=2 (qnn_executor_runner --profile_level 2), to get per-op "
            "cycles"),
    "basic": ("warning",
              "{who}: QNN profile level basic: the ETDump will hold whole-graph QNN events only, no "
              "per-op rows; set profile_level=2 (detailed) to get per-op cycles (ExecuTorch's "
              "compile-spec helper now turns level 1 off)"),
    "detailed": ("info",
                 "{who}: QNN profile level detailed: per-op cycles in the ETDump; HMX/HVX use, VTCM "
                 "and utilisation need optrace/QHAS: lower with profile_level=3 (optrace; it cannot "
                 "be set at run time) and run generate_optrace"),
    "optrace": ("info",
                "{who}: QNN profile level optrace: per-op cycles in the ETDump; for HMX/HVX, VTCM "
                "and utilisation run executorch.backends.qualcomm.debugger.utils.generate_optrace"
                "(artifact, soc_id, adb, pte_path, inputs): one (optrace, QHAS) pair per context "
                "binary, for `etscope qnn --optrace ... --qhas ...`"),
}


@dataclass(frozen=True)
class QnnSpecView:
    """The parts of a decoded QNN compile spec a user checks (None: not in this spec's layout)."""

    soc_model: str
    htp_arch: str | None
    htp_arch_source: str | None
    vtcm_mb: int | None
    vtcm_source: str | None
    backend_type: str
    performance_mode: str | None
    precision: str | None
    profile_level: str
    shared_buffer: bool
    weight_sharing: bool | None
    multi_contexts: bool | None
    multiple_graphs: bool | None
    graph_names: tuple[str, ...] | None   # None: the layout (v1.1+) has no graph name field
    online_prepare: bool
    dump_intermediate_outputs: bool
    schema: str
    notes: tuple[str, ...]

    @classmethod
    def of(cls, spec: qcs.QnnCompileSpec) -> "QnnSpecView":
        htp = spec.htp
        has_graph_field = "graph_name" in spec.raw
        return cls(
            soc_model=spec.soc_model, htp_arch=spec.htp_arch, htp_arch_source=spec.htp_arch_source,
            vtcm_mb=spec.vtcm_mb, vtcm_source=spec.vtcm_source, backend_type=spec.backend_type,
            performance_mode=htp.performance_mode if htp else None,
            precision=htp.precision if htp else None, profile_level=spec.profile_level,
            shared_buffer=spec.shared_buffer,
            weight_sharing=htp.use_weight_sharing if htp else None,
            multi_contexts=htp.use_multi_contexts if htp else None,
            multiple_graphs=spec.multiple_graphs,
            graph_names=spec.graph_names if has_graph_field else None,
            online_prepare=spec.online_prepare, dump_intermediate_outputs=spec.dump_intermediate_outputs,
            schema=spec.schema, notes=spec.notes)


@dataclass(frozen=True)
class DelegateView:
    method: str
    index: int                      # index into the method's delegate list
    instructions: tuple[int, ...]   # instruction ids that call it (chain 0)
    backend: str
    location: str                   # "segment" | "inline"
    data_index: int                 # segment index or inline-data index
    blob_bytes: int
    blob_offset: int                # absolute byte offset in the file
    # "method #index" of the other delegates using the same blob: the first SHARED_NAMED of them
    # (a blob shared by thousands would make the report quadratic); shared_count counts them all
    shared_with: tuple[str, ...]
    compile_spec_keys: tuple[str, ...]
    qnn: QnnSpecView | None
    qnn_spec_error: str | None      # a QNN compile spec that does not decode
    shared_count: int = -1          # other delegates using the same blob (-1: len(shared_with))
    qnn_sdk_build: str | None = None    # the QNN SDK build its context binary records (formats.qnn_context)

    @property
    def shared_by_others(self) -> int:
        """How many other delegates use this delegate's blob."""
        return len(self.shared_with) if self.shared_count < 0 else self.shared_count

    @property
    def label(self) -> str:
        return delegate_label(self.method, self.index)


@dataclass(frozen=True)
class MethodView:
    name: str
    instructions: int
    mix: dict[str, int]             # instruction kind -> count, e.g. {"delegate": 1}
    operators: dict[str, int]       # CPU kernel operator -> calls (most first)
    delegates: tuple[DelegateView, ...]
    planned_bytes: int              # sum of the planned (non-constant) buffers, mem ids >= 1
    planned_buffers: tuple[int, ...]
    inputs: int
    outputs: int
    values: tuple | None = None     # a constant method's returned values (formats.pte_constants)

    @property
    def constant(self) -> bool:
        """No instructions: the method only returns values stored in the program (e.g.
        ``get_max_seq_len`` of an LLM export)."""
        return self.instructions == 0


@dataclass(frozen=True)
class SegmentView:
    index: int
    offset: int
    size: int
    used_by: tuple[str, ...]        # "constants", "named data (N keys)", "method #index"


@dataclass(frozen=True)
class Check:
    severity: str                   # "warning" | "info"
    text: str


@dataclass(frozen=True)
class ProgramReport:
    file: str
    file_bytes: int
    program_bytes: int
    version: int
    constant_bytes: int
    constant_segment: int | None
    named_data_keys: int
    methods: tuple[MethodView, ...]
    segments: tuple[SegmentView, ...]
    checks: tuple[Check, ...] = field(default=())

    @property
    def delegates(self) -> list[DelegateView]:
        return [d for m in self.methods for d in m.delegates]

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "file": self.file, "file_bytes": self.file_bytes, "program_bytes": self.program_bytes,
            "version": self.version, "constant_bytes": self.constant_bytes,
            "constant_segment": self.constant_segment, "named_data_keys": self.named_data_keys,
            "methods": [_method_json(m) for m in self.methods],
            "segments": [{"index": s.index, "offset": s.offset, "bytes": s.size, "used_by": list(s.used_by)}
                         for s in self.segments],
            "checks": [{"severity": c.severity, "text": c.text} for c in self.checks],
        }


def _method_json(m: MethodView) -> dict:
    return {"name": m.name, "instructions": m.instructions, "constant": m.constant, "mix": m.mix,
            "operators": m.operators, "planned_bytes": m.planned_bytes,
            "planned_buffers": list(m.planned_buffers), "inputs": m.inputs, "outputs": m.outputs,
            "values": None if m.values is None else list(m.values),
            "delegates": [_delegate_json(d) for d in m.delegates]}


def _delegate_json(d: DelegateView) -> dict:
    out = {"index": d.index, "instructions": list(d.instructions), "backend": d.backend,
           "location": d.location, "data_index": d.data_index, "blob_bytes": d.blob_bytes,
           "blob_offset": d.blob_offset, "shared": bool(d.shared_with), "shared_with": list(d.shared_with),
           "shared_count": d.shared_by_others,
           "compile_spec_keys": list(d.compile_spec_keys), "qnn": None, "qnn_spec_error": d.qnn_spec_error,
           "qnn_sdk_build": d.qnn_sdk_build}
    if d.qnn is not None:
        q = d.qnn
        out["qnn"] = {
            "soc_model": q.soc_model, "htp_arch": q.htp_arch, "htp_arch_source": q.htp_arch_source,
            "vtcm_mb": q.vtcm_mb, "vtcm_bytes": None if q.vtcm_mb is None else q.vtcm_mb * qcs.MIB,
            "vtcm_source": q.vtcm_source, "backend_type": q.backend_type,
            "performance_mode": q.performance_mode, "precision": q.precision,
            "profile_level": q.profile_level, "shared_buffer": q.shared_buffer,
            "weight_sharing": q.weight_sharing, "multi_contexts": q.multi_contexts,
            "multiple_graphs": q.multiple_graphs,
            "graph_names": None if q.graph_names is None else list(q.graph_names),
            "online_prepare": q.online_prepare, "dump_intermediate_outputs": q.dump_intermediate_outputs,
            "schema": q.schema, "notes": list(q.notes)}
    return out


def program_report(program: PteProgram, file: str | None = None,
                   constants: dict[str, list] | None = None,
                   qnn_sdk: dict[tuple[str, int], str | None] | None = None) -> ProgramReport:
    """Everything ``etscope program`` shows, from the program alone. ``constants``: the values of
    the constant methods (``formats.pte_constants.constant_method_values``), when read; ``qnn_sdk``:
    the QNN SDK build per QNN delegate (``formats.qnn_context.qnn_sdk_builds``), when read."""
    users: dict[tuple[str, int], list[str]] = {}
    for m in program.methods:
        for d in m.delegates:
            users.setdefault((d.location, d.data_index), []).append(delegate_label(m.name, d.index))
    # A compile spec is decoded once per distinct value: delegates sharing one (thousands of
    # delegates pointing at one spec table) cost one decode.
    decoded_specs: dict[tuple[str, bytes | None], tuple[QnnSpecView | None, str | None]] = {}

    methods = []
    for m in program.methods:
        calls: dict[int, list[int]] = {}
        for ins in m.instructions:
            if ins.kind == "delegate" and ins.delegate_index is not None:
                calls.setdefault(ins.delegate_index, []).append(ins.index)
        delegates = []
        for d in m.delegates:
            label = delegate_label(m.name, d.index)
            spec, error = _qnn_spec(d, decoded_specs)
            same_blob = users[(d.location, d.data_index)]
            delegates.append(DelegateView(
                method=m.name, index=d.index, instructions=tuple(calls.get(d.index, ())),
                backend=d.backend_id, location=d.location, data_index=d.data_index,
                blob_bytes=d.blob_size, blob_offset=d.blob_offset,
                shared_with=_others(same_blob, label), shared_count=len(same_blob) - 1,
                compile_spec_keys=tuple(d.compile_specs), qnn=spec, qnn_spec_error=error,
                qnn_sdk_build=(qnn_sdk or {}).get((m.name, d.index))))
        mix = Counter(i.kind for i in m.instructions)
        ops = Counter(i.operator for i in m.kernel_calls if i.operator)
        methods.append(MethodView(
            name=m.name, instructions=len(m.instructions), mix=dict(mix.most_common()),
            operators=dict(ops.most_common()), delegates=tuple(delegates),
            planned_bytes=m.planned_memory_bytes, planned_buffers=tuple(m.non_const_buffer_sizes[1:]),
            inputs=m.inputs, outputs=m.outputs,
            values=None if constants is None or m.name not in constants else tuple(constants[m.name])))

    segments = []
    named_per_segment = Counter(program.named_data.values())
    for s in program.segments:
        used = []
        if program.constant_segment == s.index:
            used.append("constants")
        if named_per_segment.get(s.index):
            n = named_per_segment[s.index]
            used.append(f"named data ({n} key{'s' if n != 1 else ''})")
        used += users.get(("segment", s.index), [])
        segments.append(SegmentView(s.index, s.offset, s.size, tuple(used)))

    return ProgramReport(
        file=file if file is not None else program.name, file_bytes=program.file_size,
        program_bytes=program.program_size, version=program.version,
        constant_bytes=program.constant_bytes, constant_segment=program.constant_segment,
        named_data_keys=len(program.named_data), methods=tuple(methods), segments=tuple(segments),
        checks=tuple(program_checks(methods)))


SHARED_NAMED = 8   # other users of a blob named per delegate (all are counted)
LABEL_NAME_MAX = 64   # a method name in a delegate's label (a reference; the method shows it whole)


def delegate_label(method: str, index: int) -> str:
    """``"method #index"``, a long method name cut in the middle: labels are repeated wherever a
    delegate is referred to, and a 100 kB name repeated thousands of times made the report
    quadratic in the file."""
    if len(method) > LABEL_NAME_MAX:
        half = (LABEL_NAME_MAX - 1) // 2
        method = method[:half] + "…" + method[-half:]
    return f"{method} #{index}"


def _others(users: list[str], label: str) -> tuple[str, ...]:
    """The first SHARED_NAMED users of a blob other than ``label`` (labels are unique per delegate)."""
    out = []
    for u in users:
        if u != label:
            out.append(u)
            if len(out) == SHARED_NAMED:
                break
    return tuple(out)


def _qnn_spec(d, cache: dict) -> tuple[QnnSpecView | None, str | None]:
    """(decoded QNN compile spec view, decode error) of a delegate, each distinct spec decoded once."""
    key = (d.backend_id, d.compile_specs.get(qcs.COMPILE_SPEC_KEY))
    if key not in cache:
        try:
            decoded = qcs.find_qnn_compile_spec(d)
            cache[key] = (None if decoded is None else QnnSpecView.of(decoded), None)
        except FormatError as e:
            cache[key] = (None, e.what)
    return cache[key]


def program_checks(methods: list[MethodView] | tuple[MethodView, ...]) -> list[Check]:
    """Checks over the QNN delegates: one line per profile level (naming the delegates compiled with
    it), compile specs that do not decode, and the spec's own notes."""
    by_level: dict[str, list[str]] = {}
    # one check per distinct text, naming its delegates (thousands of delegates sharing one spec
    # give one line, not thousands)
    errors: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for m in methods:
        for d in m.delegates:
            if d.qnn_spec_error is not None:
                errors.setdefault(d.qnn_spec_error, []).append(d.label)
            if d.qnn is None:
                continue
            by_level.setdefault(d.qnn.profile_level, []).append(d.label)
            for note in d.qnn.notes:
                notes.setdefault(note, []).append(d.label)
    out: list[Check] = [Check("warning", f"{_who(labels)}: QNN compile spec does not decode: {error}")
                        for error, labels in errors.items()]
    out += [Check("info", f"{_who(labels)}: {note}") for note, labels in notes.items()]
    for level, labels in by_level.items():
        out.append(profile_level_check(level, labels))
    out.sort(key=lambda c: c.severity != "warning")   # warnings first, order kept otherwise
    return out


def profile_level_check(level: str, delegates: list[str]) -> Check:
    """What the ETDump will hold for QNN delegates compiled with ``level``, and what to change."""
    who = _who(delegates)
    if level in _PROFILE_ADVICE:
        severity, text = _PROFILE_ADVICE[level]
        return Check(severity, text.format(who=who))
    return Check("warning", f"{who}: QNN profile level {level} is unknown to etscope (newer ExecuTorch?): "
                            "what the ETDump holds cannot be predicted")


def _who(labels: list[str]) -> str:
    shown = ", ".join(labels[:4])
    return shown + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")
