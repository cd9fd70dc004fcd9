"""The dataset's layout ``etscope.dataset/2``: names, partition folders and the manifest entry.

    DATASET/
      _etscope_dataset.json        marker {"layout": LAYOUT, "partitions": [...], "tables": [...], "manifest": "_manifest"}
      _manifest/<sha256>.json      one entry per collected file: its parts (path, rows, bytes), its full
                                   partition values and order key; the entry is the commit
      _manifest/<sha256>.pending   the same entry written before the parts are moved in (a journal:
                                   an interrupted collect's parts are deleted from it, and only they)
      runs/model=M/soc=S/build=B/date=D/<sha256>.parquet     ops/, events/, qnn/, files/ alike
      rejects/<sha256>.parquet     one row per file that could not be collected
      _tmp/                        staging (names etscope makes; nothing else there is touched)

Readers list parts from the manifest only (never by globbing or walking folders), check each
part's footer against its entry (rows, bytes) before reading it, and skip a bad part with one
warning. An entry's JSON is checked and parsed once (``parse_entry``) into a :class:`ManifestEntry`
that the rest of etscope reads by attribute; ``entry_bytes`` is the one writer of an entry. Later layouts extend an entry with more keys (``program``, ``environment``: facts stored
per file); readers ignore keys they do not know and refuse a layout newer than theirs.

Columns: a part holds the file's tables as ``etscope export`` writes them (``analysis.views.tables``),
plus ``file_hash`` and ``order_key``. Since issue 34 the ``runs`` and ``events`` rows carry each
run's ``phase`` and ``method`` (an LLM's prefill / decode, else ``all``) and
the ``ops`` and ``qnn`` rows (aggregates over runs) are one block per phase with a ``phase``
column. This extends layout 2 (columns are merged by name): parts collected before have no such
columns, and readers take their runs as one phase (``all``, as they were summarised then).

Entry key ``also_builds`` (optional, issue 37): other build labels of the same file (byte-identical
content collected again under another build, recorded by ``collect --also-label``; its parts are
not duplicated). Entries written before have no such key; readers without it ignore it.

Table ``summary`` (issue 37): one row per collected file, its ``etscope summary --json`` document as
compact JSON text (``summary_json``, at most ``fleet.summaries.MAX_SUMMARY_CHARS``; null with the
reason in ``summary_note`` when not stored), committed with the file's other parts. This extends
layout 2 (a new table, as ``qnn`` is): files collected before have no such part and readers say so
(``trend`` shows no summary for their builds); readers check the part like any other, then its text
(size, JSON, the shape of a summary: ``analysis.views.stored_summary``) before showing any of it.

A dataset of layout ``etscope.dataset/1`` (no manifest: parts were found by globbing) is refused
until adopted (``etscope collect --adopt``), which writes the entries from its commit markers.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from etscope.errors import FormatError
from etscope.paths import DATASET_MARKER

LAYOUT = "etscope.dataset/2"
OLD_LAYOUTS = ("etscope.dataset/1",)
MARKER = DATASET_MARKER
PARTITION_KEYS = ("model", "soc", "build", "date")
TABLES = ("runs", "ops", "events", "qnn", "summary", "files")     # files last: its part is the index entry
REJECTS = "rejects"
ALL_TABLES = TABLES + (REJECTS,)
MANIFEST = "_manifest"
COLLECTED = "_collected"                               # layout 1's commit markers (read by --adopt)
TMP = "_tmp"
LOCK = "_etscope.lock"
UNKNOWN = "unknown"
MAX_PARTITION_CHARS = 200       # a longer folder name: a prefix and a hash of the full value
MAX_ENTRY_BYTES = 1 << 20
MAX_ALSO_BUILDS = 1000          # extra build labels per entry (``also_builds``)
MAX_LABEL_CHARS = 1000
MAX_MARKER_BYTES = 64 << 10

_SAFE = re.compile(r"[^A-Za-z0-9._+\-]")
HASH = re.compile(r"^[0-9a-f]{64}$")
TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")   # runs, ops, events, qnn, qnn_ops, files, rejects ...
ENTRY = re.compile(r"^([0-9a-f]{64})\.json$")
PENDING = re.compile(r"^([0-9a-f]{64})\.pending$")
# The only names etscope makes in _tmp (cleared of these, and only these, before each collect).
TMP_NAME = re.compile(r"^[0-9a-f]{64}\.(claim|[a-z]+\.parquet\.tmp|entry\.tmp|pending\.tmp)$")


def partition_value(value) -> str:
    """A metadata value as a Hive partition folder name: percent-encoded outside
    ``[A-Za-z0-9._+-]``; empty or dot-only values cannot name a folder, so they are encoded too.
    A value longer than MAX_PARTITION_CHARS once encoded keeps a prefix and ``~`` + 16 hex
    digits of the SHA-256 of the full value (``~`` is always encoded otherwise, so such a name
    never equals another value's; two long values stay two partitions)."""
    raw = UNKNOWN if value is None or str(value) == "" else str(value)
    s = _SAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8", "surrogatepass")), raw)
    if set(s) == {"."}:
        s = s.replace(".", "%2E")
    if len(s) > MAX_PARTITION_CHARS:
        head = s[:MAX_PARTITION_CHARS - 20]
        cut = head.rfind("%", len(head) - 2)        # never split a %XX escape
        if cut >= 0:
            head = head[:cut]
        s = head + "~" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return s


@dataclass(frozen=True)
class Partition:
    """A file's partition values (None: the entry names no such value; a reject's are all None)."""
    model: str | None = None
    soc: str | None = None
    build: str | None = None
    date: str | None = None

    def values(self) -> tuple[str | None, ...]:
        """The values in ``PARTITION_KEYS`` order."""
        return (self.model, self.soc, self.build, self.date)


@dataclass(frozen=True)
class PartRef:
    """One part of a collected file: where it lives (relative to the dataset) and what it holds."""
    table: str
    path: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class ManifestEntry:
    """A checked manifest entry (``parse_entry``): the commit of one collected file."""
    file_hash: str
    status: str                      # "added" or "rejected"
    partition: Partition
    order_key: str
    parts: tuple[PartRef, ...]       # in the entry's order
    also_builds: tuple[str, ...] = ()      # other build labels of the same content, as stored

    def part(self, table: str) -> PartRef | None:
        """The part of ``table`` (a name of the layout's open set of tables); None without one."""
        return next((p for p in self.parts if p.table == table), None)

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(p.table for p in self.parts)

    @property
    def labels(self) -> tuple[str, ...]:
        """Its build labels: the partition's build first (``unknown`` when it names none), then
        ``also_builds``."""
        own = UNKNOWN if self.partition.build is None else self.partition.build
        return (own,) + tuple(b for b in self.also_builds if b != own)


def partition_dir(partition: Partition) -> str:
    """``model=M/soc=S/build=B/date=D`` for a file's partition values."""
    return "/".join(f"{k}={partition_value(v)}" for k, v in zip(PARTITION_KEYS, partition.values()))


def part_path(table: str, file_hash: str, partition: Partition) -> str:
    """Where a file's part of ``table`` lives (relative to the dataset)."""
    if table == REJECTS:
        return f"{REJECTS}/{file_hash}.parquet"
    return f"{table}/{partition_dir(partition)}/{file_hash}.parquet"


def entry(file_hash: str, status: str, partition: Partition, order_key: str, parts: tuple[PartRef, ...],
          also_builds=()) -> ManifestEntry:
    """A manifest entry to write (``also_builds``: the file's other build labels, stored sorted, once each)."""
    return ManifestEntry(file_hash, status, partition, str(order_key), tuple(parts),
                         tuple(sorted(set(map(str, also_builds)))))


def entry_bytes(e: ManifestEntry) -> bytes:
    """The entry as its file holds it (sorted keys, one line): the one writer of a manifest entry
    (``also_builds`` only when the file has other labels; a partition value only when named)."""
    doc = {"layout": LAYOUT, "file_hash": e.file_hash, "status": e.status,
           "partition": {k: v for k, v in zip(PARTITION_KEYS, e.partition.values()) if v is not None},
           "order_key": e.order_key,
           "parts": {p.table: {"path": p.path, "rows": p.rows, "bytes": p.bytes} for p in e.parts},
           **({"also_builds": list(e.also_builds)} if e.also_builds else {})}
    return (json.dumps(doc, sort_keys=True) + "\n").encode()


class EntryProblem(ValueError):
    """What is wrong with a manifest entry (one phrase)."""


def parse_entry(doc, file_hash: str) -> ManifestEntry:
    """A manifest entry read from ``<file_hash>.json`` (its raw JSON) as a :class:`ManifestEntry`;
    EntryProblem says what is wrong with a bad one. Every part must sit exactly where the layout
    puts it for this hash and partition, so an entry can name no other file, inside or outside
    the dataset. Keys it does not know are ignored (later layouts' facts)."""
    if not isinstance(doc, dict):
        raise EntryProblem("not a JSON object")
    if doc.get("layout") != LAYOUT:
        raise EntryProblem(f"layout {str(doc.get('layout'))[:40]!r}, expected {LAYOUT!r}")
    if doc.get("file_hash") != file_hash:
        raise EntryProblem("its file_hash is not its name")
    status = doc.get("status")
    if status not in ("added", "rejected"):
        raise EntryProblem("status is neither 'added' nor 'rejected'")
    raw = doc.get("partition")
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k, ""), str) for k in PARTITION_KEYS):
        raise EntryProblem("partition must map model/soc/build/date to strings")
    partition = Partition(raw.get("model"), raw.get("soc"), raw.get("build"), raw.get("date"))
    order_key = doc.get("order_key")
    if not isinstance(order_key, str):
        raise EntryProblem("order_key must be a string")
    also = doc.get("also_builds", [])
    if not isinstance(also, list) or len(also) > MAX_ALSO_BUILDS \
            or not all(isinstance(b, str) and 0 < len(b) <= MAX_LABEL_CHARS for b in also):
        raise EntryProblem(f"also_builds must be a list of at most {MAX_ALSO_BUILDS} build labels")
    parts = doc.get("parts")
    if not isinstance(parts, dict) or not parts:
        raise EntryProblem("parts must be a non-empty object")
    refs = []
    for table, p in parts.items():
        if not isinstance(table, str) or not TABLE_NAME.match(table) or (table == REJECTS) != (status == "rejected"):
            raise EntryProblem(f"unexpected table {str(table)[:40]!r}")
        if not isinstance(p, dict) or p.get("path") != part_path(table, file_hash, partition):
            raise EntryProblem(f"part {table!r} is not where the layout puts it")
        for k in ("rows", "bytes"):
            if type(p.get(k)) is not int or not 0 <= p[k] < 1 << 62:
                raise EntryProblem(f"part {table!r}: {k} must be a count")
        refs.append(PartRef(table, p["path"], p["rows"], p["bytes"]))
    return ManifestEntry(file_hash, status, partition, order_key, tuple(refs), tuple(also))


def marker_layout(doc) -> str:
    """The layout a dataset marker (its raw JSON) names; a marker without one is layout 1's."""
    layout = doc.get("layout") if isinstance(doc, dict) else None
    return layout if isinstance(layout, str) else "etscope.dataset/1"


MAX_DIGITS = 200     # an integer longer than this in metadata or the manifest is refused, not converted


def _bounded_int(s: str) -> int:
    if len(s) > MAX_DIGITS:
        raise ValueError(f"a number of {len(s)} digits (more than {MAX_DIGITS})")
    return int(s)


def load_json_bytes(data: bytes, name: str, what: str):
    """JSON from bytes (UTF-8); bad text, deep nesting and huge numbers are one FormatError line
    naming the file and ``what``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FormatError(f"{what} is not UTF-8 text ({e.reason})", name, e.start) from None
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise FormatError(f"{what} is not valid JSON: {e.msg} (line {e.lineno} column {e.colno})", name) from None
    except RecursionError:
        raise FormatError(f"{what} is nested too deeply", name) from None
    except (ValueError, TypeError) as e:
        raise FormatError(f"{what} is not valid JSON: {e}", name) from None
