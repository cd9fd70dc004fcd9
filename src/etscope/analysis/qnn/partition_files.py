"""Several QHAS / optrace files, one per QNN partition (context binary), each joined to the
partition it describes (issue 16 item 2).

A file lands on the partition whose QNN per-op names it holds: the match ratio is the share of the
partition's graph ops (names without ``:OpId_N`` and unit; QNN's Input/Output rows, in every graph,
left out) found among the file's QNN op names. A file
pinned as ``METHOD:INSTRUCTION=FILE`` goes to that delegate instruction of that method. Methods can
share instruction numbers and look-alike graphs share op names (hybrid prefill/KV), so when names
cannot decide — a tie between partitions, or two files of one kind on one partition — it is an error
(exit 2) asking for the pin. A file matching no partition is reported, not dropped: its units and
ops stay in the file-level tables. Totals over the shards are summed per kind.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from etscope import profile as P
from etscope.analysis import qnn as qnn_analysis
from etscope.analysis.qnn.op_tables import OptraceSummary, QhasSummary
from etscope.analysis.qnn.result import OPTIONAL
from etscope.errors import FormatError
from etscope.formats.qnn_compile_spec import QnnSoc
from etscope.formats.qnn_names import fx_node_candidates, parse_qnn_event_name


@dataclass
class QnnFiles:
    """The QNN files of a view, read: QHAS/optrace as ``(pin, path, data)`` (pin: ``(method,
    instruction)`` or None), the QNN profile, the runtrace, and display paths by kind (``inputs``)."""
    qhas: list = field(default_factory=list)
    optrace: list = field(default_factory=list)
    qnn_profile: object | None = None
    runtrace: object | None = None
    ort: object | None = None          # ONNX Runtime's profile of the session (formats.ort_profile)
    inputs: dict = field(default_factory=dict)
    # Other input kinds of the registry (formats.kinds), read, by the name they feed (Results.feed).
    extra: dict = field(default_factory=dict)


def partition_op_names(profile: P.Profile | None, qnn_profile=None) -> dict[str, tuple[int | None, set[str]]]:
    """Per partition key: its instruction and the base names of its graph ops (``MatMul_0`` of
    ``MatMul_0:OpId_18 (cycles)``)."""
    series = (qnn_analysis.series_from_profile(profile) if profile is not None else []) + (
        qnn_analysis.series_from_qnn_profile(qnn_profile) if qnn_profile is not None else [])
    out = {}
    for s in series:
        # Graph ops only: QNN's own I/O rows ("Input OpId_2") are in every graph and tell none apart.
        names = [n.split(" #")[0] for n in s.node_names]
        out[s.key] = (s.instruction_id, {parse_qnn_event_name(n).base for n in names if fx_node_candidates(n)})
    return out


def file_op_table(kind: str, data) -> dict[str, dict]:
    return qnn_analysis.qhas_op_table(data) if kind == "qhas" else qnn_analysis.optrace_op_table(data)


@dataclass(frozen=True)
class PlacedFile:
    """Where one of several QHAS/optrace files goes (``assign``): the partition (key, or None: on
    no partition, shown on its own), how it was placed, its match ratio, a note, and its data."""
    kind: str                       # "qhas" | "optrace"
    path: str
    partition: str | None
    how: str                        # "op names" | "pinned METHOD:INSTR"
    match_ratio: float | None
    note: str | None
    data: object                    # the file read (formats.qhas / formats.optrace)


def assign(files: QnnFiles, parts: dict[str, tuple[int | None, set[str]]], method: str | None) -> list[PlacedFile]:
    """Where each QHAS/optrace file goes (:class:`PlacedFile`); raises FormatError (exit 2) when
    names cannot decide or a pin names no QNN partition."""
    out = []
    for kind, entries in (("qhas", files.qhas), ("optrace", files.optrace)):
        for pin, path, data in entries:
            names = set(file_op_table(kind, data))
            ratios = {k: (len(names & ops) / len(ops) if ops else 0.0) for k, (_, ops) in parts.items()}
            row = PlacedFile(kind=kind, path=path, partition=None, how="op names", match_ratio=None, note=None,
                             data=data)
            out.append(_pinned(row, pin, parts, ratios, method) if pin is not None else _by_names(row, ratios, parts))
    _no_two_on_one(out, method)
    return out


def _pinned(row: PlacedFile, pin: tuple[str, int], parts: dict, ratios: dict, method: str | None) -> PlacedFile:
    m, instr = pin
    row = replace(row, how=f"pinned {m}:{instr}")
    if method is not None and m != method:
        return replace(row, note=f"pinned to {m}:{instr}, but the runs analysed are {method}'s: not used here "
                                 f"(run with --method {m})")
    keys = [k for k, (iid, _) in parts.items() if iid == instr]
    if not keys:
        have = sorted(iid for iid, _ in parts.values() if iid is not None)
        raise FormatError(f"{m}:{instr}: no QNN partition at instruction {instr}"
                          + (f" (QNN partitions at instructions {have})" if have else " (no QNN partition here)"),
                          row.path)
    return replace(row, partition=keys[0], match_ratio=ratios[keys[0]])


def _by_names(row: PlacedFile, ratios: dict, parts: dict) -> PlacedFile:
    if not ratios:
        return replace(row, note="no QNN partition to join it to: shown on its own")
    best = max(ratios.values())
    top = sorted(k for k, v in ratios.items() if v == best)
    if best == 0:
        return replace(row, match_ratio=0.0, note=f"matches no partition (none of its QNN op names is a per-op row "
                                                  f"of {', '.join(sorted(ratios))})")
    if len(top) > 1:
        raise FormatError(f"ambiguous {row.kind}: its op names match {' and '.join(top)} equally "
                          f"({best:.0%} of their ops); pin it as --{row.kind} METHOD:INSTRUCTION=FILE", row.path)
    return replace(row, partition=top[0], match_ratio=best)


def _no_two_on_one(rows: list[PlacedFile], method: str | None) -> None:
    seen: dict[tuple[str, str], PlacedFile] = {}
    for r in rows:
        if r.partition is None:
            continue
        key = (r.kind, r.partition)
        if key in seen:
            other = seen[key]
            fix = (f"pin each as --{r.kind} METHOD:INSTRUCTION=FILE" if other.how == "op names" or
                   r.how == "op names" else "the runs' method is unknown here: give --method (or the "
                   "ETRecord / .pte that names it)" if method is None else "pin them to different partitions")
            raise FormatError(f"two {r.kind} files for {r.partition}: {other.path} ({other.how}) and "
                              f"{r.path} ({r.how}); {fix}", r.path)
        seen[key] = r


def ops_by_partition(rows: list[PlacedFile]) -> dict[str, dict]:
    """Per partition key, the QHAS op table with the optrace's filling what QHAS lacks."""
    out: dict[str, dict] = {}
    for kind in ("qhas", "optrace"):
        for r in rows:
            if r.kind == kind and r.partition is not None:
                table = file_op_table(kind, r.data)
                out[r.partition] = qnn_analysis.merge_op_tables(out.get(r.partition), table)
    return out


@dataclass(frozen=True)
class ShardFile:
    """One of several QNN files: the partition it went to, how, and what it says."""
    kind: str                       # "qhas" | "optrace"
    partition: str | None
    how: str
    match_ratio: float
    note: str | None
    path: str
    qhas: QhasSummary | None = field(default=None, metadata=OPTIONAL)
    optrace: OptraceSummary | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class ShardView:
    files: tuple[ShardFile, ...]
    totals_over_shards: dict        # QHAS totals summed over the files; the largest peak VTCM


def shard_view(rows: list[PlacedFile], soc: QnnSoc | None) -> ShardView:
    """Per file: where it went and what it says (QHAS summary / optrace units); totals over shards."""
    from etscope.paths import display

    vtcm = soc.vtcm_bytes if soc is not None else None
    shards = []
    for r in rows:
        qhas = qnn_analysis.qhas_summary(r.data, vtcm, soc.soc_model if soc is not None else None) \
            if r.kind == "qhas" else None
        shards.append(ShardFile(kind=r.kind, partition=r.partition, how=r.how, match_ratio=r.match_ratio,
                                note=r.note, path=display(r.path), qhas=qhas,
                                optrace=None if qhas is not None else qnn_analysis.optrace_summary(r.data)))
    totals = {}
    for key in ("total_dram_read", "total_dram_write", "total_vtcm_read", "total_vtcm_write", "timeline_cycles"):
        vals = [getattr(s.qhas, key) for s in shards if s.qhas and isinstance(getattr(s.qhas, key), (int, float))]
        totals[key] = sum(vals) if vals else None
    peaks = [s.qhas.peak_vtcm_alloc for s in shards if s.qhas and isinstance(s.qhas.peak_vtcm_alloc, (int, float))]
    totals["peak_vtcm_alloc_max"] = max(peaks) if peaks else None    # contexts hold VTCM one at a time
    return ShardView(files=tuple(shards), totals_over_shards=totals)
