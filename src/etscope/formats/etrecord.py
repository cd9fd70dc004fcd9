"""ETRecord reader: debug-handle maps and the exported graphs, without torch and without pickle.

An ETRecord (``devtools/etrecord/_etrecord.py`` in pytorch/executorch) is a zip file:

* ``ETRECORD_V0``: empty marker entry;
* ``debug_handle_map``, ``delegate_map``, ``instruction_id_to_num_outs_map``, ``export_graph_id``:
  JSON, keyed by method name then instruction id (as a string);
* ``edge_dialect_exported_program/<method>`` (older files: one ``edge_dialect_exported_program``):
  the edge-dialect program as torch.export JSON (``torch/_export/serde``). With
  ``to_edge_transform_and_lower(generate_etrecord=True)`` (executorch 1.x) it is recorded *before*
  partitioning, so its FX node names are the names the backends see (QNN names its ops after
  them) and its ``debug_handle`` metadata are the handles of ``debug_handle_map``;
* ``exported_program``: the ATen program given to ``to_edge`` (no debug handles);
* ``<module>/<method>``: extra recorded programs (e.g. ``edge_after_transform/forward``);
* ``*_state_dict``, ``*_constants``, ``*_example_inputs``, ``reference_outputs``,
  ``representative_inputs``: torch pickles. **Never read here.**

The serialized graph lists only ``call_function`` nodes; placeholders come from
``graph.inputs`` + ``signature.input_specs`` and the output from ``graph.outputs``: this reader
rebuilds them so that node lists look like the FX graph. Multi-output nodes define several values
(``getitem``...); ``GraphNode.inputs`` names the producing *nodes*.

Only what is used is decoded: the maps when the file is read, a graph entry when it is first asked
for (``graphs[method]``, ``lowering_input``, ...), so an entry nobody needs cannot fail a command.
Older files are read where the facts are there: before executorch's serializer recorded node names
(pytorch/executorch#12877, July 2025) a node was named after its single output, as torch.export's
reader names it; torch 2.1 wrote every field of a union with the unused ones null (the
``schema_version`` 1 files of 2023). A graph entry whose JSON is valid but whose structure cannot be
read is left out with a warning (``Etrecord.warnings``) so the ETDump and .pte still give their part;
damaged files (zip, CRC, JSON syntax, maps) are errors.

Hardening: the zip's entry count is checked before the central directory is parsed; every entry is
read by streaming with a running cap on its decompressed size and on its compression ratio (counted
on the bytes actually produced, not on header sizes; see ``zip_entries``); names that could escape a
directory are ignored (nothing is ever extracted to disk).
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.paths import open_input
from etscope.formats.zip_entries import EntryReader, ZipLimits

MARKER_RE = re.compile(r"ETRECORD_V\d+\Z")
EDGE_PREFIX = "edge_dialect_exported_program"
_MAP_ENTRIES = ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id")
_BINARY_SUFFIXES = ("_state_dict", "_constants", "_example_inputs")
_BINARY_ENTRIES = ("reference_outputs", "representative_inputs", "et_dialect_graph_module")
_DELEGATE_TARGET = "executorch_call_delegate"


# ---- data ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DelegateInfo:
    """``delegate_map[method][instruction_id]``: the backend and its own debug-handle map.

    ``delegate_map`` maps a delegate debug identifier (int when it is an integer, else str) to the
    debug handles of the edge nodes it covers. XNNPACK and QNN leave it empty.
    """

    name: str
    delegate_map: dict[int | str, list[int]]


@dataclass(frozen=True)
class LoweredModule:
    """A lowered backend module embedded in a post-lowering graph (``executorch_call_delegate``)."""

    name: str                       # attribute name, e.g. "lowered_module_0"
    backend_id: str
    compile_specs: dict[str, bytes]
    processed_size: int             # bytes of the processed blob
    graph: "Graph | None"           # the subgraph given to the backend (its FX node names)


@dataclass
class GraphNode:
    name: str
    op: str                         # "placeholder" | "call_function" | "output"
    target: str | None              # normalised: "aten.cumsum.default", "operator.getitem" ...
    raw_target: str | None = None   # as serialized: "executorch.exir.dialects.edge.ops.aten..."
    debug_handles: tuple[int, ...] = ()
    stack_trace: str | None = None
    nn_module_stack: tuple[tuple[str, tuple[str, str]], ...] = ()  # (key, (path, type)), outer first
    source: str | None = None       # "file.py:LINE" of the innermost user frame
    source_file: str | None = None  # full path of that frame
    source_line: int | None = None
    inputs: tuple[str, ...] = ()    # names of the nodes whose values this node reads
    outputs: tuple[str, ...] = ()   # names of the values this node defines
    input_kind: str | None = None   # placeholders: "parameter", "buffer", "user_input", ...
    is_delegate_call: bool = False
    lowered: LoweredModule | None = None

    @property
    def debug_handle(self) -> int | None:
        """The node's debug handle (the first one when several were recorded)."""
        return self.debug_handles[0] if self.debug_handles else None

    @property
    def module_path(self) -> str | None:
        """Innermost nn.Module path (e.g. ``m.layers.0.attention``), or None at top level."""
        for _, (path, _ty) in reversed(self.nn_module_stack):
            if path:
                return path
        return None

    @property
    def module_type(self) -> str | None:
        return self.nn_module_stack[-1][1][1] if self.nn_module_stack else None


@dataclass
class Graph:
    name: str                       # zip entry, e.g. "edge_dialect_exported_program/forward"
    method: str
    nodes: list[GraphNode]
    dialect: str | None = None
    schema_version: str | None = None   # torch.export's, e.g. "1" (2023) or "5.4"
    generated_names: list[str] = field(default_factory=list)  # nodes the file does not name (older schema)
    by_name: dict[str, GraphNode] = field(init=False, repr=False)
    by_debug_handle: dict[int, list[GraphNode]] = field(init=False, repr=False)

    def __post_init__(self):
        self.by_name = {}
        self.by_debug_handle = {}
        for n in self.nodes:
            self.by_name.setdefault(n.name, n)
            for h in dict.fromkeys(n.debug_handles):  # a handle repeated in one node lists it once
                self.by_debug_handle.setdefault(h, []).append(n)

    @property
    def delegate_calls(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.is_delegate_call]

    @property
    def call_nodes(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.op == "call_function"]

    def nodes_of_handles(self, handles: Iterable[int]) -> list[GraphNode]:
        """The nodes carrying any of ``handles``, each once, in the order first reached."""
        seen: dict[int, GraphNode] = {}
        for h in dict.fromkeys(handles):
            for n in self.by_debug_handle.get(h, ()):
                seen.setdefault(id(n), n)
        return list(seen.values())


class Programs:
    """The zip's graph entries (torch.export JSON), decoded on first use and kept.

    Their bytes are read (and checked against the zip limits and CRC) when the file is read; the
    JSON is decoded only when a command asks for the entry. Invalid JSON is a damaged file
    (``FormatError``); valid JSON in a structure this reader cannot follow leaves the entry out
    (``get`` returns None) and records why in ``problems``.
    """

    def __init__(self, path: str):
        self.path = path
        self._raw: dict[str, tuple[str, bytes]] = {}     # entry -> (method, JSON bytes)
        self._decoded: dict[str, Graph | None] = {}
        self.problems: dict[str, str] = {}             # entry -> why it was left out
        self.notes: dict[str, str] = {}                # entry -> what an older schema does not say

    def add(self, entry: str, method: str, data: bytes) -> None:
        self._raw[entry] = (method, data)

    def __contains__(self, entry: str) -> bool:
        return entry in self._raw or entry in self._decoded

    def method_of(self, entry: str) -> str | None:
        if entry in self._raw:
            return self._raw[entry][0]
        g = self._decoded.get(entry)
        return g.method if g is not None else None

    def get(self, entry: str) -> Graph | None:
        if entry in self._decoded:
            return self._decoded[entry]
        if entry not in self._raw:
            return None
        method, data = self._raw[entry]
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
            raise FormatError(f"entry {entry!r} is not valid JSON ({type(e).__name__}: {e})", file=self.path) from None
        except MemoryError:
            raise FormatError(f"entry {entry!r} is too large to decode", file=self.path) from None
        g = None
        try:
            g = _graph(entry, method, doc)
        except (FormatError, IndexError, KeyError, ValueError, TypeError, AttributeError, RecursionError,
                OverflowError) as e:
            what = e.what if isinstance(e, FormatError) else f"{type(e).__name__}: {e}"
            version = _schema_version(doc)
            self.problems[entry] = (f"ETRecord entry {entry!r}" + (f" (torch.export schema {version})" if version else "")
                                    + f" cannot be read ({what}); its graph is left out: no op types, source lines "
                                    "or graph view from it")
        except MemoryError:
            raise FormatError(f"entry {entry!r} is too large to decode", file=self.path) from None
        if g is not None and g.generated_names:
            shown = ", ".join(g.generated_names[:3]) + (
                f" and {len(g.generated_names) - 3} more" if len(g.generated_names) > 3 else "")
            self.notes[entry] = (
                f"ETRecord entry {entry!r} (torch.export schema {g.schema_version or '?'}) does not record the names "
                f"of {len(g.generated_names)} node(s) without a single output ({shown}): named after their op as "
                "torch.export's reader does, they may not match names a backend logged")
        del self._raw[entry]  # the bytes are not needed once decoded
        self._decoded[entry] = g
        return g


class _MethodGraphs(Mapping):
    """``Etrecord.graphs``: method -> its edge program, decoded on first access.

    Keys are the methods with a recorded edge program; a program that cannot be read is absent
    (``get`` gives None, ``[]`` raises KeyError) and explained in ``Etrecord.warnings``."""

    def __init__(self, programs: Programs, entries: dict[str, str]):
        self._programs = programs
        self._entries = entries  # method -> zip entry

    def __getitem__(self, method: str) -> Graph:
        entry = self._entries.get(method)
        g = self._programs.get(entry) if entry is not None else None
        if g is None:
            raise KeyError(method)
        return g

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class Etrecord:
    path: str
    marker: str
    entries: list[str]                                  # names of all (safe) zip entries
    skipped_entries: list[tuple[str, str]]              # (name, why) for entries not read
    methods: list[str]
    debug_handle_map: dict[str, dict[int, list[int]]]
    delegate_map: dict[str, dict[int, DelegateInfo]]
    num_outs_map: dict[str, dict[int, int]]
    programs: Programs                                  # graph entries, decoded when used
    edge_entries: dict[str, str] = field(default_factory=dict)   # method -> edge program entry
    extra_entries: list[str] = field(default_factory=list)       # "<module>/<method>" programs
    export_graph_id: int | None = None
    # Bound on node references handed out by nodes_by_instruction (see there).
    max_node_refs: int = field(default=0, repr=False)

    @property
    def graphs(self) -> Mapping[str, Graph]:
        """Edge program per method."""
        return _MethodGraphs(self.programs, self.edge_entries)

    @property
    def exported_program(self) -> Graph | None:
        """The ATen program given to ``to_edge`` (no debug handles)."""
        return self.programs.get("exported_program")

    @property
    def extra_graphs(self) -> dict[str, Graph]:
        """Extra recorded programs ("<module>/<method>"), all decoded."""
        out = {}
        for key in self.extra_entries:
            g = self.programs.get(key)
            if g is not None:
                out[key] = g
        return out

    @property
    def warnings(self) -> list[str]:
        """What could not be read or is not recorded in the entries decoded so far."""
        return [*self.programs.problems.values(), *self.programs.notes.values()]

    def graph(self, method: str = "forward") -> Graph:
        entry = self.edge_entries.get(method)
        if entry is None:
            raise FormatError(f"no edge program for method {method!r} (have: {', '.join(self.edge_entries) or 'none'})",
                              file=self.path)
        g = self.programs.get(entry)
        if g is None:
            raise FormatError(self.programs.problems.get(entry, f"entry {entry!r} cannot be read"), file=self.path)
        return g

    def lowering_input(self, method: str = "forward") -> Graph | None:
        """The graph handed to the partitioner/backends (its node names are QNN's op names).

        That is the edge program itself when it holds no delegate calls (executorch 1.x records it
        before lowering); otherwise a recorded extra program for the method without delegate calls
        (e.g. ``edge_after_transform/<method>``), else None (see ``GraphNode.lowered.graph``).
        """
        g = self.graphs.get(method)
        if g is not None and not g.delegate_calls:
            return g
        for key in self.extra_entries:
            if self.programs.method_of(key) != method:
                continue
            extra = self.programs.get(key)
            if extra is not None and not extra.delegate_calls:
                return extra
        return None

    def debug_handle_match(self, method: str = "forward") -> tuple[int, int]:
        """(handles of debug_handle_map found in the method's graph, handles in the map)."""
        wanted = {h for hs in self.debug_handle_map.get(method, {}).values() for h in hs}
        g = self.graphs.get(method)
        found = sum(1 for h in wanted if g is not None and h in g.by_debug_handle)
        return found, len(wanted)

    def nodes_by_instruction(self, method: str = "forward", only: Iterable[int] | None = None
                             ) -> tuple[dict[int, list[GraphNode]], str | None]:
        """Graph nodes behind each instruction of ``debug_handle_map[method]`` (those in ``only``
        when given: the instructions a profile has), and a warning or None.

        Each distinct handle of an instruction is looked up once and each node listed once (real
        maps repeat handles, and several nodes can share one). The node references handed out over
        all instructions are bounded by ``max_node_refs`` (64 x the graph's nodes and the map's
        handles, at least 100,000): many instructions naming one handle shared by many nodes would
        otherwise take work quadratic in the file's size. Past the bound the remaining instructions
        get no nodes (never a partial list) and the warning says so.
        """
        hmap = self.debug_handle_map.get(method, {})
        g = self.graphs.get(method)
        if g is None:
            return {}, None
        budget = self.max_node_refs or max(100_000, 64 * (len(g.nodes) + sum(len(v) for v in hmap.values())))
        out: dict[int, list[GraphNode]] = {}
        by_handles: dict[tuple[int, ...], list[GraphNode]] = {}  # instructions naming the same handles share
        cut = []
        wanted = hmap.items() if only is None else ((i, hmap[i]) for i in dict.fromkeys(only) if i in hmap)
        for ins_id, handles in wanted:
            key = tuple(dict.fromkeys(handles))
            nodes = by_handles.get(key) if budget > 0 else None
            if nodes is None and budget > 0:
                nodes = g.nodes_of_handles(key)  # linear in the graph: at most once past the bound
                by_handles[key] = nodes
            # Every instruction is charged for its nodes, shared or not: callers list them per instruction.
            if nodes is None or len(key) + len(nodes) > budget:
                budget = 0
                cut.append(ins_id)
                continue
            budget -= len(key) + len(nodes)
            out[ins_id] = nodes
        warning = None
        if cut:
            warning = (f"the ETRecord's debug handle map for {method!r} names more graph nodes than its size "
                       f"allows (shared handles); {len(cut)} instruction(s) left without nodes: "
                       + ", ".join(map(str, cut[:10])) + (f" and {len(cut) - 10} more" if len(cut) > 10 else ""))
        return out, warning


def _schema_version(doc) -> str | None:
    v = doc.get("schema_version") if isinstance(doc, dict) else None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, dict) and isinstance(v.get("major"), int):
        return f"{v['major']}.{v.get('minor', 0)}"
    return None


# ---- reading ------------------------------------------------------------------------------------

def read_etrecord(path: str | os.PathLike, limits: ZipLimits = ZipLimits()) -> Etrecord:
    """Read an ETRecord zip. Raises :class:`FormatError` (naming the file) on any problem."""
    name = os.fspath(path)
    try:
        return _read(name, limits)
    except FormatError as e:
        raise e.with_file(name) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError,
            RuntimeError, struct.error) as e:  # RuntimeError: encrypted entries
        raise FormatError(f"damaged ETRecord zip ({e})", file=name) from None
    except OSError as e:
        raise FormatError(f"cannot read ETRecord: {e.strerror or e}", file=name) from None
    except (IndexError, KeyError, ValueError, TypeError, AttributeError, UnicodeError, RecursionError,
            OverflowError, MemoryError) as e:
        raise FormatError(f"malformed ETRecord ({type(e).__name__}: {e})", file=name) from None


def _read(name: str, limits: ZipLimits) -> Etrecord:
    with open_input(name, "ETRecord") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise FormatError("empty file (0 bytes), not an ETRecord")
        declared = _declared_entry_count(f, size)
        if declared is not None and declared > limits.max_entries:
            raise FormatError(f"zip declares {declared} entries (limit {limits.max_entries})")
        f.seek(0)
        try:
            zf = zipfile.ZipFile(f)
        except zipfile.BadZipFile as e:
            raise FormatError(f"not an ETRecord (not a zip file: {e})") from None
        with zf:
            return _read_zip(name, zf, EntryReader(f, limits, size), limits)


def _declared_entry_count(f, size: int) -> int | None:
    """Entry count from the end-of-central-directory record, read before zipfile parses it all."""
    tail_len = min(size, 22 + 0xFFFF)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or pos + 22 > len(tail):
        return None
    count = struct.unpack_from("<H", tail, pos + 10)[0]
    if count != 0xFFFF:
        return count
    # zip64: the locator sits just before the EOCD and points at the zip64 EOCD record
    loc = pos - 20
    if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
        return None
    rec = struct.unpack_from("<Q", tail, loc + 8)[0]
    if rec + 56 > size:
        return None
    f.seek(rec)
    head = f.read(56)
    if head[:4] != b"PK\x06\x06":
        return None
    return struct.unpack_from("<Q", head, 32)[0]


def _unsafe_name(n: str) -> str | None:
    if not n or len(n) > 1024:
        return "bad name length"
    if "\x00" in n or "\\" in n:
        return "NUL or backslash in name"
    if n.startswith("/") or re.match(r"[A-Za-z]:", n):
        return "absolute path"
    if any(part in ("..", ".") for part in n.split("/")):
        return "path traversal"
    return None


def _json(reader: EntryReader, info: zipfile.ZipInfo):
    raw = reader.read(info)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
        raise FormatError(f"entry {info.filename!r} is not valid JSON ({type(e).__name__}: {e})") from None


def _read_zip(name: str, zf: zipfile.ZipFile, reader: EntryReader, limits: ZipLimits) -> Etrecord:
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise FormatError(f"zip has {len(infos)} entries (limit {limits.max_entries})")
    skipped: list[tuple[str, str]] = []
    by_name: dict[str, zipfile.ZipInfo] = {}
    dupes: set[str] = set()
    for info in infos:
        why = _unsafe_name(info.filename)
        if why:
            skipped.append((info.filename, why))
            continue
        if info.filename in by_name:
            dupes.add(info.filename)
        by_name[info.filename] = info

    markers = [n for n in by_name if MARKER_RE.match(n)]
    if not markers:
        raise FormatError("not an ETRecord (zip has no ETRECORD_V0 marker entry)")

    def info_of(entry: str) -> zipfile.ZipInfo:
        if entry in dupes:
            raise FormatError(f"zip holds entry {entry!r} more than once")
        return by_name[entry]

    def take(entry: str):
        return _json(reader, info_of(entry))

    dh_raw = take("debug_handle_map") if "debug_handle_map" in by_name else {}
    dm_raw = take("delegate_map") if "delegate_map" in by_name else {}
    no_raw = take("instruction_id_to_num_outs_map") if "instruction_id_to_num_outs_map" in by_name else {}
    debug_handle_map = _parse_debug_handle_map(dh_raw)
    delegate_map = _parse_delegate_map(dm_raw)
    num_outs_map = _parse_num_outs_map(no_raw)
    export_graph_id = None
    if "export_graph_id" in by_name:
        gid = take("export_graph_id")
        export_graph_id = gid if isinstance(gid, int) and not isinstance(gid, bool) else None

    programs = Programs(name)
    edge: dict[str, str] = {}
    extra: list[str] = []
    map_methods = list(dict.fromkeys([*debug_handle_map, *delegate_map, *num_outs_map]))

    def keep(entry: str, method: str) -> None:
        programs.add(entry, method, reader.read(info_of(entry)))

    for entry, info in by_name.items():
        if entry in markers or entry in _MAP_ENTRIES:
            continue
        if entry.endswith(_BINARY_SUFFIXES) or entry in _BINARY_ENTRIES:
            skipped.append((entry, "torch pickle (never loaded)"))
            continue
        if entry == EDGE_PREFIX:  # older single-method format
            method = map_methods[0] if len(map_methods) == 1 else "forward"
            keep(entry, method)
            edge[method] = entry
        elif entry.startswith(EDGE_PREFIX + "/"):
            method = entry[len(EDGE_PREFIX) + 1:]
            keep(entry, method)
            edge[method] = entry
        elif entry == "exported_program":
            keep(entry, "forward")
        elif "/" in entry and reader.peek(info_of(entry), 64).lstrip()[:1] == b"{":
            # graph JSON starts with '{', torch pickles with 'PK' or 0x80
            keep(entry, entry.rsplit("/", 1)[1])
            extra.append(entry)
        else:
            skipped.append((entry, "unknown entry"))

    methods = list(dict.fromkeys([*edge, *map_methods]))
    return Etrecord(
        path=name, marker=markers[0], entries=list(by_name), skipped_entries=skipped, methods=methods,
        debug_handle_map=debug_handle_map, delegate_map=delegate_map, num_outs_map=num_outs_map,
        programs=programs, edge_entries=edge, extra_entries=extra, export_graph_id=export_graph_id,
    )


# ---- JSON maps ----------------------------------------------------------------------------------

def _int_key(k, what: str) -> int:
    if isinstance(k, int) and not isinstance(k, bool):
        return k
    if isinstance(k, str) and re.fullmatch(r"-?\d{1,18}", k.strip()):
        return int(k)
    raise FormatError(f"{what}: key {k!r} is not an instruction id")


def _handles(v, what: str) -> list[int]:
    if v is None:
        return []
    if isinstance(v, bool):
        raise FormatError(f"{what}: debug handle {v!r} is not an integer")
    if isinstance(v, int):
        return [v]
    if isinstance(v, str) and re.fullmatch(r"-?\d{1,18}", v.strip()):
        return [int(v)]
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_handles(x, what))
        return out
    raise FormatError(f"{what}: debug handle {v!r} is not an integer")


def _per_method(raw, what: str) -> dict[str, dict]:
    if not isinstance(raw, dict):
        raise FormatError(f"{what}: expected a JSON object, got {type(raw).__name__}")
    if raw and all(isinstance(k, str) and k.strip().lstrip("-").isdigit() for k in raw):
        return {"forward": raw}  # very old files: no method level
    for k, v in raw.items():
        if not isinstance(v, dict):
            raise FormatError(f"{what}: entry for method {k!r} is {type(v).__name__}, expected an object")
    return raw


def _parse_debug_handle_map(raw) -> dict[str, dict[int, list[int]]]:
    what = "debug_handle_map"
    return {m: {_int_key(k, what): _handles(v, what) for k, v in d.items()}
            for m, d in _per_method(raw, what).items()}


def _parse_num_outs_map(raw) -> dict[str, dict[int, int]]:
    what = "instruction_id_to_num_outs_map"
    out: dict[str, dict[int, int]] = {}
    for m, d in _per_method(raw, what).items():
        out[m] = {}
        for k, v in d.items():
            if not isinstance(v, int) or isinstance(v, bool):
                raise FormatError(f"{what}: value {v!r} for instruction {k!r} is not an integer")
            out[m][_int_key(k, what)] = v
    return out


def _parse_delegate_map(raw) -> dict[str, dict[int, DelegateInfo]]:
    what = "delegate_map"
    out: dict[str, dict[int, DelegateInfo]] = {}
    for m, d in _per_method(raw, what).items():
        out[m] = {}
        for k, v in d.items():
            if not isinstance(v, dict):
                raise FormatError(f"{what}: entry for instruction {k!r} is not an object")
            inner = v.get("delegate_map") or {}
            if not isinstance(inner, dict):
                raise FormatError(f"{what}: delegate_map of instruction {k!r} is not an object")
            dmap: dict[int | str, list[int]] = {}
            for dk, dv in inner.items():
                key: int | str = int(dk) if isinstance(dk, str) and re.fullmatch(r"-?\d{1,18}", dk) else str(dk)
                dmap[key] = _handles(dv, what)
            out[m][_int_key(k, what)] = DelegateInfo(name=str(v.get("name") or ""), delegate_map=dmap)
    return out


# ---- torch.export JSON graphs ---------------------------------------------------------------------

_TARGET_PREFIXES = re.compile(r"^(?:torch\.ops\.|executorch\.exir\.dialects\.(?:edge|backend)\.ops\.)")
_INTERNAL_FRAME = re.compile(
    r"(?:^|/)torch/|(?:^|/)executorch/(?:exir|devtools|backends|extension|runtime|export|kernels)/"
    r"|^<frozen |^<eval_with_key>|(?:^|/)torch_xla/|(?:^|/)functorch/")
_FRAME_RE = re.compile(r'File "([^"\n]+)", line (\d+)')
_MAX_DEPTH = 64


def normalise_target(target: str | None) -> str | None:
    """``torch.ops.aten.cumsum.default`` / ``executorch.exir.dialects.edge.ops.aten.cumsum.default``
    -> ``aten.cumsum.default``; ``_operator.getitem`` -> ``operator.getitem``."""
    if not target:
        return target
    t = _TARGET_PREFIXES.sub("", target)
    if t.startswith("_operator."):
        t = t[1:]
    return t


def source_of(stack_trace: str | None) -> tuple[str | None, str | None, int | None]:
    """(``file.py:LINE``, full path, line) of the innermost frame outside torch/executorch internals;
    the innermost frame when all are internal; Nones when there is no trace."""
    if not stack_trace:
        return None, None, None
    frames = [(m.group(1), int(m.group(2))) for m in _FRAME_RE.finditer(stack_trace)]
    if not frames:
        return None, None, None
    user = [fr for fr in frames if not _INTERNAL_FRAME.search(fr[0].replace("\\", "/"))]
    path, line = (user or frames)[-1]
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{line}", path, line


def _split_top(s: str) -> list[str]:
    """Split on commas outside brackets/parentheses (as torch.export's deserializer does)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "[(":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def parse_nn_module_stack(s) -> tuple[tuple[str, tuple[str, str]], ...]:
    """``"key,path,type;key,path,type"`` -> ((key, (path, type)), ...), outermost first."""
    if not isinstance(s, str) or not s:
        return ()
    out = []
    for item in s.split(";"):
        parts = _split_top(item)
        if len(parts) < 3:
            parts += [""] * (3 - len(parts))
        key, path, ty = parts[0], parts[1], ",".join(parts[2:])
        out.append((key, (path, ty)))
    return tuple(out)


def _arg_union(arg) -> tuple[str | None, object]:
    if not isinstance(arg, dict) or not arg:
        return None, None
    if set(arg) == {"type", "value"} and isinstance(arg.get("type"), str):  # older union encoding
        return arg["type"], arg["value"]
    if len(arg) == 1:
        k = next(iter(arg))
        return k, arg[k]
    # torch 2.1 (schema_version 1) wrote every field of a union, the unused ones null
    used = [k for k, v in arg.items() if v is not None]
    if len(used) == 1:
        return used[0], arg[used[0]]
    return None, None


def _value_names(arg, out: list[str], depth: int = 0) -> None:
    """Collect the names of graph values referenced by a serialized Argument."""
    if depth > _MAX_DEPTH:
        raise FormatError("argument nesting too deep")
    kind, val = _arg_union(arg)
    if kind is None:
        return
    if kind in ("as_tensor", "as_custom_obj", "as_opaque"):
        if isinstance(val, dict) and isinstance(val.get("name"), str):
            out.append(val["name"])
    elif kind in ("as_sym_int", "as_sym_bool", "as_sym_float"):
        if isinstance(val, dict) and isinstance(val.get("as_name"), str):
            out.append(val["as_name"])
    elif kind in ("as_tensors", "as_optional_tensors", "as_sym_ints", "as_sym_bools", "as_sym_floats"):
        if isinstance(val, list):
            for item in val:
                if isinstance(item, dict) and "name" in item and len(item) == 1:
                    if isinstance(item["name"], str):
                        out.append(item["name"])  # bare TensorArgument
                else:
                    _value_names(item, out, depth + 1)
    elif kind == "as_name":  # an item of as_sym_ints / as_sym_bools / as_sym_floats
        if isinstance(val, str):
            out.append(val)
    elif kind == "as_optional_tensor":
        _value_names(val, out, depth + 1)


def _spec_name(arg) -> list[str]:
    """Names in an input/output spec's ``arg`` (a TensorArgument or an Argument union)."""
    if isinstance(arg, dict) and isinstance(arg.get("name"), str) and len(arg) <= 2:
        return [arg["name"]]
    names: list[str] = []
    _value_names(arg, names)
    return names


def _obj(x, what: str) -> dict:
    if not isinstance(x, dict):
        raise FormatError(f"{what}: expected an object, got {type(x).__name__}")
    return x


def _lst(x, what: str) -> list:
    if x is None:
        return []
    if not isinstance(x, list):
        raise FormatError(f"{what}: expected a list, got {type(x).__name__}")
    return x


def _graph(entry: str, method: str, doc, depth: int = 0) -> Graph:
    what = f"entry {entry!r}"
    doc = _obj(doc, what)
    gm = _obj(doc.get("graph_module"), f"{what}: graph_module")
    g = _obj(gm.get("graph"), f"{what}: graph")
    sig = gm.get("signature") if isinstance(gm.get("signature"), dict) else {}

    input_kind: dict[str, tuple[str, str | None]] = {}
    for spec in _lst(sig.get("input_specs"), f"{what}: input_specs"):
        kind, val = _arg_union(spec)
        if kind is None or not isinstance(val, dict):
            continue
        target = next((val[k] for k in ("parameter_name", "buffer_name", "tensor_constant_name",
                                        "custom_obj_name") if isinstance(val.get(k), str)), None)
        for n in _spec_name(val.get("arg")):
            input_kind[n] = (kind, target)

    nodes: list[GraphNode] = []
    producer: dict[str, str] = {}
    for arg in _lst(g.get("inputs"), f"{what}: graph inputs"):
        names: list[str] = []
        _value_names(arg, names)
        for n in names:
            kind, target = input_kind.get(n, ("user_input", None))
            nodes.append(GraphNode(name=n, op="placeholder", target=target, input_kind=kind, outputs=(n,)))
            producer[n] = n

    raw_nodes = [_obj(raw, f"{what}: node {i}") for i, raw in enumerate(_lst(g.get("nodes"), f"{what}: nodes"))]
    names = _node_names(entry, raw_nodes, producer)
    for i, raw in enumerate(raw_nodes):
        node = _node(entry, names[i], raw, producer, depth)
        nodes.append(node)
        for v in node.outputs:
            producer.setdefault(v, node.name)

    out_names: list[str] = []
    for arg in _lst(g.get("outputs"), f"{what}: graph outputs"):
        _value_names(arg, out_names)
    nodes.append(GraphNode(name="output", op="output", target="output",
                           inputs=tuple(dict.fromkeys(producer[v] for v in out_names if v in producer))))
    dialect = doc.get("dialect") if isinstance(doc.get("dialect"), str) else None
    verifiers = doc.get("verifiers")
    if not dialect and isinstance(verifiers, list) and verifiers and isinstance(verifiers[0], str):
        dialect = verifiers[0]  # newer torch: "dialect" is deprecated and left empty
    generated = [n for i, n in enumerate(names) if not isinstance(raw_nodes[i].get("name"), str)
                 and n not in _output_names(raw_nodes[i])]
    return Graph(name=entry, method=method, nodes=nodes, dialect=dialect or None,
                 schema_version=_schema_version(doc), generated_names=generated)


def _output_names(raw: dict) -> list[str]:
    names: list[str] = []
    for arg in raw.get("outputs") if isinstance(raw.get("outputs"), list) else ():
        _value_names(arg, names)
    return names


def _node_names(entry: str, raw_nodes: list[dict], taken: Iterable[str]) -> list[str]:
    """Each node's FX name. executorch's serializer records it (``name``) since July 2025
    (pytorch/executorch#12877). Before that torch.export's reader named a node after its output when
    it has exactly one (a tensor, or a symbolic value's name); for other nodes FX made a name from the
    op ("native_layer_norm_default", then "_1", "_2" ... when taken), which is what is done here."""
    names: list[str | None] = []
    used = set(taken)
    for raw in raw_nodes:
        used.update(_output_names(raw))
    for i, raw in enumerate(raw_nodes):
        name = raw.get("name")
        if name is not None and not isinstance(name, str):
            raise FormatError(f"entry {entry!r}: node {i} has a name that is not a string")
        if name is None:
            outs = raw.get("outputs") if isinstance(raw.get("outputs"), list) else []
            if len(outs) == 1:
                kind, val = _arg_union(outs[0])
                key = "name" if kind == "as_tensor" else "as_name" if kind in _SYM_ARGS else None
                if key and isinstance(val, dict) and isinstance(val.get(key), str):
                    name = val[key]
        names.append(name)
        if name is not None:
            used.add(name)
    out = []
    counts: dict[str, int] = {}
    for i, name in enumerate(names):
        if name is None:
            target = raw_nodes[i].get("target")
            if not isinstance(target, str) or not target:
                raise FormatError(f"entry {entry!r}: node {i} has no name, no single output and no target")
            name = _fx_name(target, used, counts)
            used.add(name)
        out.append(name)
    return out


_SYM_ARGS = ("as_sym_int", "as_sym_bool", "as_sym_float")


def _fx_name(target: str, used: set[str], counts: dict[str, int]) -> str:
    """FX's name for a node of ``target`` (``torch.fx.graph._Namespace``): the op and overload with
    other characters as "_", then "_1", "_2" ... past the names already used."""
    parts = (normalise_target(target) or target).split(".")
    op = ".".join(parts[-2:]) if len(parts) >= 3 else parts[-1]   # OpOverload.__name__: "split.Tensor"
    snake, prev_lower = [], False  # FX's _snake_case: "split.Tensor" -> "split.tensor"
    for c in op:
        if prev_lower and c.isupper():
            snake.append("_")
        snake.append(c.lower())
        prev_lower = c.islower()
    base = re.sub(r"[^0-9a-zA-Z_]+", "_", "".join(snake)) or "node"
    if base[0].isdigit():
        base = "_" + base
    name, k = base, counts.get(base, 0)
    if k:
        name = f"{base}_{k}"
    while name in used:  # counts carry on from the last number given: linear over all nodes
        k += 1
        name = f"{base}_{k}"
    counts[base] = k
    return name


def _node(entry: str, name: str, raw: dict, producer: dict[str, str], depth: int) -> GraphNode:
    raw_target = raw.get("target") if isinstance(raw.get("target"), str) else None
    target = normalise_target(raw_target)
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}

    inputs_raw = _lst(raw.get("inputs"), f"entry {entry!r}: inputs of {name}")
    is_delegate = bool(raw_target) and raw_target.rsplit(".", 1)[-1] == _DELEGATE_TARGET
    lowered = None
    used: list[str] = []
    for j, na in enumerate(inputs_raw):
        if not isinstance(na, dict):
            continue
        arg = na.get("arg")
        if is_delegate and j == 0:
            kind, val = _arg_union(arg)
            if kind == "as_string" and isinstance(val, str):
                lowered = _lowered(entry, str(na.get("name") or ""), val, depth)
                continue
        _value_names(arg, used)
    outs: list[str] = []
    for arg in _lst(raw.get("outputs"), f"entry {entry!r}: outputs of {name}"):
        _value_names(arg, outs)

    stack = meta.get("stack_trace") if isinstance(meta.get("stack_trace"), str) else None
    src, src_file, src_line = source_of(stack)
    handles = _handles(_handles_from_meta(meta.get("debug_handle")), f"entry {entry!r}: node {name}")
    return GraphNode(
        name=name, op="call_function", target=target, raw_target=raw_target,
        debug_handles=tuple(handles), stack_trace=stack,
        nn_module_stack=parse_nn_module_stack(meta.get("nn_module_stack")),
        source=src, source_file=src_file, source_line=src_line,
        inputs=tuple(dict.fromkeys(producer[v] for v in used if v in producer)),
        outputs=tuple(outs), is_delegate_call=is_delegate, lowered=lowered,
    )


_HANDLE_LIST = re.compile(r"[\[(]?\s*(?:-?\d{1,18}(?:\s*,\s*-?\d{1,18})*)?\s*,?\s*[\])]?")


def _handles_from_meta(v):
    """debug_handle metadata: int, "12", "[1, 2]", "(1, 2)", "1,2" or a JSON list."""
    if isinstance(v, str) and _HANDLE_LIST.fullmatch(v.strip()):
        return [int(x) for x in re.findall(r"-?\d+", v)]
    return v


def _lowered(entry: str, attr: str, text: str, depth: int) -> LoweredModule:
    what = f"entry {entry!r}: lowered module {attr!r}"
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise FormatError(f"{what} is not valid JSON ({e})") from None
    doc = _obj(doc, what)
    specs: dict[str, bytes] = {}
    for cs in _lst(doc.get("compile_specs"), f"{what}: compile_specs"):
        if isinstance(cs, dict) and isinstance(cs.get("key"), str):
            try:
                specs[cs["key"]] = base64.b64decode(str(cs.get("value") or ""), validate=False)
            except (binascii.Error, ValueError):
                specs[cs["key"]] = b""
    processed = doc.get("processed_bytes") if isinstance(doc.get("processed_bytes"), str) else ""
    size = len(processed) * 3 // 4 - processed[-2:].count("=") if processed else 0
    sub = None
    if depth < 2 and isinstance(doc.get("original_module"), dict):
        sub = _graph(f"{entry}#{attr}", attr, doc["original_module"], depth + 1)
    return LoweredModule(name=attr, backend_id=str(doc.get("backend_id") or ""), compile_specs=specs,
                         processed_size=max(size, 0), graph=sub)
