"""What ``etscope collect`` collects: the ETDumps a pattern finds, each as a :class:`Job` with its
companions and the user's metadata (``--meta``, ``<stem>.meta.json``, ``--meta-from``), parsed once
into typed values; its content hash; and where its rows go (:func:`resolved_meta`)."""
from __future__ import annotations

import datetime as dt
import glob
import hashlib
import os
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.fleet.layout import UNKNOWN, Partition
from etscope.formats.kinds import companions
from etscope.formats.qnn_compile_spec import QnnSoc

ETDUMP_SUFFIXES = (".etdump", ".etdp")
# Companion files found next to an ETDump by name: <stem><suffix>: the program's, then the input
# kinds the registry reads beside an ETDump (formats.kinds: QHAS, optrace, runtrace, ...).
PROGRAM_COMPANIONS = {"etrecord": ".etrecord", "pte": ".pte"}
COMPANIONS = {**PROGRAM_COMPANIONS, **{k.name: k.companion for k in companions()}}
SIDECAR = ".meta.json"          # <stem>.meta.json: that file's metadata (and companion paths)
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class BuildMeta:
    """The keys of a file's metadata that collect itself reads (each as given; None when not
    given). Every key, these and the user's own, is kept in ``files.meta_json``."""
    model: str | None = None
    soc: str | None = None
    device: str | None = None             # when there is no ``soc``
    build: str | None = None
    commit: str | None = None             # when there is no ``build``
    date: str | None = None
    time: str | None = None               # the order, when there is no ``order``
    order: str | None = None              # how builds follow each other (sorted as text)
    method: str | None = None             # the program's method to profile


def parse_build_meta(meta: dict) -> BuildMeta:
    """The keys collect reads of a file's metadata ({key: value} from ``--meta``, the sidecar,
    ``--meta-from``): the one place they are looked up by name."""
    return BuildMeta(meta.get("model"), meta.get("soc"), meta.get("device"), meta.get("build"), meta.get("commit"),
                     meta.get("date"), meta.get("time"), meta.get("order"), meta.get("method"))


@dataclass(frozen=True)
class ProgramFiles:
    """The program's companions of an ETDump (paths; None when not found)."""
    etrecord: str | None = None
    pte: str | None = None


def program_files(companions: dict) -> ProgramFiles:
    """The program's files among a job's companions ({kind: path}; the other kinds are the
    registry's, read by their kind's reader)."""
    return ProgramFiles(companions.get("etrecord"), companions.get("pte"))


@dataclass(frozen=True)
class Job:
    """One ETDump to collect: its path, its companions and its metadata (strings)."""
    etdump: str
    meta: tuple = ()                      # sorted (key, value) pairs
    companions: tuple = ()                # sorted (kind, path) pairs
    problem: str = ""                     # why its metadata could not be read (a reject, not the end of the batch)
    build_meta: BuildMeta = field(init=False, repr=False, compare=False)       # of ``meta``
    program: ProgramFiles = field(init=False, repr=False, compare=False)       # of ``companions``

    def __post_init__(self) -> None:      # parsed once, with the job (frozen: set through object)
        object.__setattr__(self, "build_meta", parse_build_meta(dict(self.meta)))
        object.__setattr__(self, "program", program_files(dict(self.companions)))

    def meta_dict(self) -> dict:
        return dict(self.meta)


@dataclass(frozen=True)
class FileKey:
    """Where a collected file goes: its partition values and its order key."""
    partition: Partition
    order_key: str


# ---- finding the files and their metadata -----------------------------------------------------------
def find_etdumps(patterns) -> list[str]:
    """ETDumps named by folders (searched recursively for *.etdump / *.etdp), globs or paths;
    sorted, each once. A pattern matching nothing is an error."""
    out: list[str] = []
    for pat in patterns:
        pat = os.fspath(pat)
        if os.path.isdir(pat):
            found = [os.path.join(d, f) for d, _, fs in os.walk(pat) for f in fs if f.endswith(ETDUMP_SUFFIXES)]
        elif os.path.exists(pat):
            found = [pat]
        else:
            found = [p for p in glob.glob(pat, recursive=True) if os.path.isfile(p)]
        if not found:
            raise FormatError(f"{pat}: no ETDump found (give folders, globs or files)")
        out += found
    return sorted(dict.fromkeys(os.path.abspath(p) for p in out))


MAX_META_BYTES = 64 << 20


def read_meta_file(path, what: str = "--meta-from") -> tuple[dict, dict]:
    """A ``--meta-from`` manifest (or a ``<stem>.meta.json`` sidecar, ``what``): a JSON object
    whose keys are metadata for every file, except ``files``: {ETDump path or file name:
    {metadata and companion paths}}. Companion paths are relative to the file's folder. Returns
    (defaults, per-file). Bad text, deep nesting, huge numbers, other shapes: one FormatError
    line naming the file and ``what``."""
    from etscope.fleet.layout import load_json_bytes
    from etscope.paths import display, open_input

    with open_input(path, what, max_bytes=MAX_META_BYTES) as f:
        doc = load_json_bytes(f.read(MAX_META_BYTES + 1), display(path), what)
    if not isinstance(doc, dict):
        raise FormatError(f"{what} must hold a JSON object", display(path))
    per_file = doc.get("files", {})
    if not isinstance(per_file, dict) or not all(isinstance(v, dict) for v in per_file.values()):
        raise FormatError(f"{what}: 'files' must map file names to objects", display(path))
    base = os.path.dirname(os.path.abspath(path))
    defaults = {k: v for k, v in doc.items() if k != "files"}
    return _resolve(defaults, base, path, what), {k: _resolve(v, base, path, what) for k, v in per_file.items()}


def _resolve(meta: dict, base: str, path, what: str) -> dict:
    from etscope.paths import display

    out = {}
    for k, v in meta.items():
        if isinstance(v, (dict, list)):
            raise FormatError(f"{what}: metadata {display(str(k)[:80])!r}: expected a string or number, "
                              f"got {type(v).__name__}", display(path))
        v = "" if v is None else str(v)
        out[str(k)] = os.path.join(base, v) if k in COMPANIONS and v else v
    return out


def jobs_for(etdumps: list[str], meta: dict | None = None, meta_from: tuple[dict, dict] | None = None) -> list[Job]:
    """A job per ETDump. Metadata, later overriding earlier: the manifest's defaults, ``meta``
    (``--meta``), ``<stem>.meta.json`` beside the file, the manifest's entry for the file.
    Companions: named in the metadata, else ``<stem>.etrecord`` / ``.pte`` and the registry's
    companion suffixes (``.qhas.json``, ``.optrace.json``, ``.runtrace.json``, ...) when they exist."""
    defaults, per_file = meta_from or ({}, {})
    out = []
    for path in etdumps:
        stem = _stem(path)
        m = dict(defaults)
        m.update(meta or {})
        sidecar = stem + SIDECAR
        problem = ""
        if os.path.lexists(sidecar):
            try:
                m.update(read_meta_file(sidecar, "sidecar metadata")[0])
            except FormatError as e:
                problem = str(e)
        for key in (path, os.path.basename(path)):
            m.update(per_file.get(key, {}))
        comps = {k: m.pop(k) for k in list(m) if k in COMPANIONS}
        for kind, suffix in COMPANIONS.items():
            if kind not in comps and os.path.isfile(stem + suffix):
                comps[kind] = stem + suffix
        out.append(Job(path, tuple(sorted(m.items())), tuple(sorted((k, v) for k, v in comps.items() if v)), problem))
    return out


def _stem(path: str) -> str:
    for suffix in ETDUMP_SUFFIXES:
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return os.path.splitext(path)[0]


def content_hash(path: str) -> str:
    """SHA-256 of a regular file (a FIFO, device or folder: FormatError, never a blocking read)."""
    from etscope.paths import open_input

    h = hashlib.sha256()
    with open_input(path, "ETDump") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# ---- where a file goes ------------------------------------------------------------------------------
def resolved_meta(job: Job, soc: QnnSoc | None = None) -> FileKey:
    """The file's partition values and order key: ``model``, ``soc`` (else ``device``, else the
    .pte's QNN compile spec), ``build`` (else ``commit``), ``date`` (else the order key's date,
    else the file's modification date, UTC) and ``order`` (else ``time``, else ``date``, else the
    modification time)."""
    m = job.build_meta
    mtime = dt.datetime.fromtimestamp(os.stat(job.etdump).st_mtime, dt.timezone.utc)
    order = m.order or m.time or m.date or mtime.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    date = m.date or (order[:10] if _is_iso_date(order[:10]) else mtime.strftime("%Y-%m-%d"))
    spec_soc = soc.soc_model if soc is not None else None
    values = (m.model, m.soc or m.device or (str(spec_soc) if spec_soc else None), m.build or m.commit, date)
    return FileKey(Partition(*(str(v or UNKNOWN) for v in values)), order)


def _is_iso_date(s: str) -> bool:
    try:
        dt.date.fromisoformat(s)
        return True
    except ValueError:
        return False
