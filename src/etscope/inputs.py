"""The input files of the views and the notebook, read through the registry of input kinds
(``formats.kinds``): each kind's reader, its wrong-kind hint, its display name, what it feeds.

Values are given by kind name (``{"qhas": ("a.json",), "runtrace": "r.json", ...}``): the CLI
collects them from the options the registry made (``cli.kind_options``), the notebook from its
keyword arguments. A repeatable kind (QHAS, optrace: one file per partition) takes several paths,
each a plain path or a pin ``METHOD:INSTR=FILE``. ``etscope.api`` re-exports what it always offered
(``read_view_qnn_files``, ``split_pin``, ``view_results``, ``sharded_results``, ``read_qnn_inputs``).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from etscope import profile as P
from etscope.analysis.results import Results
from etscope.formats.kinds import KINDS, InputKind

if TYPE_CHECKING:
    from etscope.analysis.qnn.partition_files import QnnFiles

_PIN = re.compile(r"^(?P<method>[^:=/\\]+):(?P<instr>[0-9]+)=(?P<path>.+)$")
_MAX_INSTRUCTION = 2 ** 31 - 1     # instruction ids are int32 in the ETDump and the .pte
# The order the views list their QNN inputs in (``inputs`` of the JSON, as before the registry);
# other kinds follow in registry order.
_FILES_SHOWN = ("ort_profile", "qnn_profile", "optrace", "qhas", "runtrace")
_QNN_SHOWN = ("qhas", "optrace", "qnn_profile", "runtrace", "ort_profile")


def split_pin(value: str) -> tuple[tuple[str, int] | None, str]:
    """``METHOD:INSTR=FILE`` -> ((method, instruction), FILE); a plain path (or one that exists as
    given) -> (None, path). An instruction number past int32 is a :class:`FormatError` naming the
    file (before any int conversion: Python refuses strings of more than 4,300 digits)."""
    if not isinstance(value, str):       # a Path: a file, never a pin
        return None, value
    m = _PIN.match(value)
    if m is None or os.path.exists(value):
        return None, value
    digits = m.group("instr").lstrip("0") or "0"
    if len(digits) > 10 or int(digits) > _MAX_INSTRUCTION:
        from etscope.errors import FormatError

        shown = digits if len(digits) <= 20 else f"{digits[:10]}…({len(digits)} digits)"
        raise FormatError(f"pin {m.group('method')[:60]}:{shown}: not an instruction id (0 to {_MAX_INSTRUCTION})",
                          file=m.group("path"))
    return (m.group("method"), int(digits)), m.group("path")


def read_kind(kind: InputKind, path):
    """The kind's reader on ``path``; a refusal of a file of another known kind names the option
    that reads it (unless the reader names it itself: ``wrong_kind_hint``)."""
    from etscope.errors import FormatError
    from etscope.formats.sniff import wrong_kind

    try:
        return kind.read(path)
    except FormatError as e:
        hint = wrong_kind(path, kind.name) if kind.wrong_kind_hint else None
        if hint is None:
            raise
        raise FormatError(f"{e.what}; {hint}", e.file or path, e.offset) from None


def _kind(name: str) -> InputKind:
    return next(k for k in KINDS if k.name == name)


def _paths(v) -> tuple:
    return () if v is None else (v,) if isinstance(v, (str, os.PathLike)) else tuple(v)


def _repeatable(kind: InputKind) -> bool:
    return kind.option is not None and kind.option.multiple


def given_values(given: Mapping | None = None, **named) -> dict:
    """{kind name: value} of the kinds given (None and () left out), in registry order: ``given``
    (by kind name) with the ``named`` ones given on top."""
    merged = {**dict(given or {}), **{k: v for k, v in named.items() if v not in (None, (), [])}}
    unknown = set(merged) - {k.name for k in KINDS}
    if unknown:
        raise TypeError(f"not an input kind: {', '.join(sorted(unknown))} (known: "
                        f"{', '.join(k.name for k in KINDS if k.reader is not None)})")
    return {k.name: merged[k.name] for k in KINDS if merged.get(k.name) not in (None, (), [])}


def given_paths(given: Mapping | None) -> list:
    """Every file path of the given inputs (pins ``METHOD:INSTR=FILE`` split): to check before any
    work, and never to write over."""
    out = []
    for name, v in given_values(given).items():
        out += [split_pin(x)[1] for x in _paths(v)] if _repeatable(_kind(name)) else [v]
    return out


def _display_key(kind: InputKind) -> str:
    return kind.option.param if kind.option is not None else kind.name


def shown_inputs(given: Mapping, order: tuple[str, ...] = _QNN_SHOWN) -> dict:
    """The display paths of the given inputs by option name (``qnn_csv``, ``qhas``, ...): one path,
    or a list of several."""
    from etscope.paths import display

    values = given_values(given)
    names = [n for n in order if n in values] + [n for n in values if n not in order]
    out = {}
    for name in names:
        kind, v = _kind(name), values[name]
        paths = [split_pin(x)[1] for x in _paths(v)] if _repeatable(kind) else [v]
        out[_display_key(kind)] = display(paths[0]) if len(paths) == 1 else [display(p) for p in paths]
    return out


def read_inputs(given: Mapping | None) -> dict:
    """{feeds name: data} of the given inputs, each read by its kind's reader (one file per kind;
    already-read objects pass through)."""
    out = {}
    for name, v in given_values(given).items():
        kind = _kind(name)
        if _repeatable(kind) and not isinstance(v, (str, os.PathLike)):
            if len(v) != 1:
                raise TypeError(f"{name}: one file here (several, one per partition: the views' read_view_qnn_files)")
            v = v[0]
        out[kind.input_name] = read_kind(kind, v) if isinstance(v, (str, os.PathLike)) else v
    return out


# ---- the views' QNN files: each alone, with an ETDump, or several (one per partition) -----------------
_QNN_FILES_FIELDS = ("qhas", "optrace", "qnn_profile", "runtrace", "ort")


def read_view_qnn_files(qhas=(), optrace=(), qnn_csv=None, runtrace=None, ort_profile=None,
                        given: Mapping | None = None) -> QnnFiles:
    """The views' input files read (``given``: any input kind by name, e.g. from the CLI's options):
    QHAS/optrace as (pin, path, data), one per partition; the rest one file each; kinds with no
    field of their own in ``extra`` by the name they feed."""
    values = given_values(given, qhas=_paths(qhas), optrace=_paths(optrace), qnn_profile=qnn_csv,
                          runtrace=runtrace, ort_profile=ort_profile)
    from etscope.analysis.qnn.partition_files import QnnFiles

    out = QnnFiles()
    for name, v in values.items():
        kind = _kind(name)
        field = kind.input_name
        if _repeatable(kind):
            into = getattr(out, field) if field in _QNN_FILES_FIELDS else out.extra.setdefault(field, [])
            for x in _paths(v):
                pin, path = split_pin(x)
                into.append((pin, path, read_kind(kind, path)))
        elif field in _QNN_FILES_FIELDS:
            setattr(out, field, read_kind(kind, v))
        else:
            out.extra[field] = read_kind(kind, v)
    out.inputs.update({k: ", ".join(v) if isinstance(v, list) else v
                       for k, v in shown_inputs(values, _FILES_SHOWN).items()})
    return out


def view_results(profile: P.Profile | None, files: QnnFiles, pte=None, llm_options: dict | None = None,
                 dram_gbps: float | None = None) -> Results:
    """The analyses of a view: the profile (or None: the QNN files alone) with its QNN files;
    ``llm_options``: the token counts of the LLM section (``api.llm_options``); ``dram_gbps``: the
    DRAM bandwidth of the HTP limits (``--dram-gbps``)."""
    r = _view_results(profile, files, pte, llm_options)
    r.dram_gbps = dram_gbps
    r.ort = files.ort
    r.rebuild = lambda sub: _view_results(sub, files, pte, llm_options)    # a phase's runs, same files
    return r


def _view_results(profile: P.Profile | None, files: QnnFiles, pte, llm_options: dict | None) -> Results:
    from etscope.paths import display

    program = None
    if profile is None and pte is not None:
        from etscope.formats.pte import read_pte

        program = read_pte(pte)
    # The .pte is shown beside the files when no profile names it (the profile's sources do).
    inputs = dict(files.inputs, **({"pte": display(pte)} if pte is not None and profile is None else {}))
    if len(files.qhas) > 1 or len(files.optrace) > 1 or any(pin for pin, _, _ in files.qhas + files.optrace):
        r = sharded_results(profile, files, program, inputs, llm_options=llm_options)
    else:
        qhas = files.qhas[0][2] if files.qhas else None
        optrace = files.optrace[0][2] if files.optrace else None
        r = Results(profile, qhas, optrace, files.runtrace, qnn_profile=files.qnn_profile, program=program,
                    inputs=inputs, llm_options=llm_options)
    r.feed(files.extra)
    return r


def sharded_results(profile: P.Profile | None, files: QnnFiles, program=None, inputs: dict | None = None,
                    llm_options: dict | None = None):
    """The Results of a view given several QHAS/optrace files (or pinned ones)."""
    from etscope.analysis.qnn.partition_files import assign, ops_by_partition, partition_op_names

    r = Results(profile, None, None, files.runtrace, qnn_profile=files.qnn_profile, program=program, inputs=inputs,
                llm_options=llm_options)
    parts = partition_op_names(profile, files.qnn_profile)
    rows = assign(files, parts, profile.method if profile is not None else None)
    r.shards = rows
    r.qhas_ops_by_key = ops_by_partition(rows)
    # Units and ops of files that landed on no partition stay visible at file level.
    loose = [x for x in rows if x.partition is None]
    r.loose_qhas = next((x.data for x in loose if x.kind == "qhas"), None)
    r.loose_optrace = next((x.data for x in loose if x.kind == "optrace"), None)
    return r


def read_qnn_inputs(qhas=None, optrace=None, runtrace=None) -> tuple:
    """QHAS, optrace and runtrace read from their paths (already-read objects and None pass through)."""
    return tuple(read_kind(_kind(name), v) if isinstance(v, (str, os.PathLike)) else v
                 for name, v in (("qhas", qhas), ("optrace", optrace), ("runtrace", runtrace)))


def _is_path_or_paths(v) -> bool:
    return isinstance(v, (str, os.PathLike)) or (isinstance(v, (list, tuple))
                                                   and all(isinstance(x, (str, os.PathLike)) for x in v))
