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

This module knows the ETRecord's entries and maps; the zip is read by ``zip_entries`` and the graph
JSON decoded by ``export_graph`` (whose names are re-exported here).

Only what is used is decoded: the maps when the file is read, a graph entry when it is first asked
for (``graphs[method]``, ``lowering_input``, ...), so an entry nobody needs cannot fail a command.
A graph entry whose JSON is valid but whose structure cannot be read is left out with a warning
(``Etrecord.warnings``) so the ETDump and .pte still give their part; damaged files (zip, CRC, JSON
syntax, maps) are errors.

Hardening: the zip's entry count is checked before the central directory is parsed; every entry is
read by streaming with a running cap on its decompressed size and on its compression ratio (counted
on the bytes actually produced, not on header sizes; see ``zip_entries``); names that could escape a
directory are ignored (nothing is ever extracted to disk).
"""
from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.formats.export_graph import (Graph, GraphNode, LoweredModule, decode_graph, normalise_target,
                                          parse_debug_handles, parse_nn_module_stack, schema_version, source_of)
from etscope.formats.zip_entries import ZipArchive, ZipLimits, open_zip

__all__ = ["DelegateInfo", "EDGE_PREFIX", "Etrecord", "Graph", "GraphNode", "LoweredModule", "MARKER_RE", "Programs",
           "ZipLimits", "normalise_target", "parse_nn_module_stack", "read_etrecord", "source_of"]

MARKER_RE = re.compile(r"ETRECORD_V\d+\Z")
EDGE_PREFIX = "edge_dialect_exported_program"
_MAP_ENTRIES = ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id")
_BINARY_SUFFIXES = ("_state_dict", "_constants", "_example_inputs")
_BINARY_ENTRIES = ("reference_outputs", "representative_inputs", "et_dialect_graph_module")


# ---- data ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DelegateInfo:
    """``delegate_map[method][instruction_id]``: the backend and its own debug-handle map.

    ``delegate_map`` maps a delegate debug identifier (int when it is an integer, else str) to the
    debug handles of the edge nodes it covers. XNNPACK and QNN leave it empty.
    """

    name: str
    delegate_map: dict[int | str, list[int]]


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
            g = decode_graph(entry, method, doc)
        except (FormatError, IndexError, KeyError, ValueError, TypeError, AttributeError, RecursionError,
                OverflowError) as e:
            what = e.what if isinstance(e, FormatError) else f"{type(e).__name__}: {e}"
            version = schema_version(doc)
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


# ---- reading ------------------------------------------------------------------------------------

def read_etrecord(path: str | os.PathLike, limits: ZipLimits = ZipLimits()) -> Etrecord:
    """Read an ETRecord zip. Raises :class:`FormatError` (naming the file) on any problem."""
    name = os.fspath(path)
    try:
        return _read(name, limits)
    except FormatError as e:
        raise e.with_file(name) from None
    except (zlib.error, EOFError, NotImplementedError,
            RuntimeError, struct.error) as e:  # RuntimeError: encrypted entries
        raise FormatError(f"damaged ETRecord zip ({e})", file=name) from None
    except OSError as e:
        raise FormatError(f"cannot read ETRecord: {e.strerror or e}", file=name) from None
    except (IndexError, KeyError, ValueError, TypeError, AttributeError, UnicodeError, RecursionError,
            OverflowError, MemoryError) as e:
        raise FormatError(f"malformed ETRecord ({type(e).__name__}: {e})", file=name) from None


def _read(name: str, limits: ZipLimits) -> Etrecord:
    with open_zip(name, limits, "ETRecord") as archive:
        return _read_zip(name, archive)


def _json(archive: ZipArchive, entry: str):
    raw = archive.read(entry)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
        raise FormatError(f"entry {entry!r} is not valid JSON ({type(e).__name__}: {e})") from None


def _read_zip(name: str, archive: ZipArchive) -> Etrecord:
    skipped = list(archive.skipped)
    markers = [n for n in archive.names if MARKER_RE.match(n)]
    if not markers:
        raise FormatError("not an ETRecord (zip has no ETRECORD_V0 marker entry)")

    def take(entry: str):
        return _json(archive, entry)

    dh_raw = take("debug_handle_map") if "debug_handle_map" in archive else {}
    dm_raw = take("delegate_map") if "delegate_map" in archive else {}
    no_raw = take("instruction_id_to_num_outs_map") if "instruction_id_to_num_outs_map" in archive else {}
    debug_handle_map = _parse_debug_handle_map(dh_raw)
    delegate_map = _parse_delegate_map(dm_raw)
    num_outs_map = _parse_num_outs_map(no_raw)
    export_graph_id = None
    if "export_graph_id" in archive:
        gid = take("export_graph_id")
        export_graph_id = gid if isinstance(gid, int) and not isinstance(gid, bool) else None

    programs = Programs(name)
    edge: dict[str, str] = {}
    extra: list[str] = []
    map_methods = list(dict.fromkeys([*debug_handle_map, *delegate_map, *num_outs_map]))

    def keep(entry: str, method: str) -> None:
        programs.add(entry, method, archive.read(entry))

    for entry in archive.names:
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
        elif "/" in entry and archive.peek(entry, 64).lstrip()[:1] == b"{":
            # graph JSON starts with '{', torch pickles with 'PK' or 0x80
            keep(entry, entry.rsplit("/", 1)[1])
            extra.append(entry)
        else:
            skipped.append((entry, "unknown entry"))

    methods = list(dict.fromkeys([*edge, *map_methods]))
    return Etrecord(
        path=name, marker=markers[0], entries=archive.names, skipped_entries=skipped, methods=methods,
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
    return {m: {_int_key(k, what): parse_debug_handles(v, what) for k, v in d.items()}
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
                dmap[key] = parse_debug_handles(dv, what)
            out[m][_int_key(k, what)] = DelegateInfo(name=str(v.get("name") or ""), delegate_map=dmap)
    return out
