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

Hardening: the zip's entry count is checked before the central directory is parsed; every entry is
read by streaming with a cap on its decompressed size and on its compression ratio (counted on the
bytes actually produced, not on header sizes); names that could escape a directory are ignored
(nothing is ever extracted to disk).
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
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.paths import open_input

MARKER_RE = re.compile(r"ETRECORD_V\d+\Z")
EDGE_PREFIX = "edge_dialect_exported_program"
_MAP_ENTRIES = ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map", "export_graph_id")
_BINARY_SUFFIXES = ("_state_dict", "_constants", "_example_inputs")
_BINARY_ENTRIES = ("reference_outputs", "representative_inputs", "et_dialect_graph_module")
_DELEGATE_TARGET = "executorch_call_delegate"


@dataclass(frozen=True)
class ZipLimits:
    max_entries: int = 10_000
    max_entry_bytes: int = 512 << 20   # decompressed bytes of one entry we read
    max_total_bytes: int = 2 << 30     # decompressed bytes over all entries we read
    max_ratio: float = 200.0           # decompressed / compressed, once past ratio_grace bytes
    ratio_grace: int = 1 << 20
    # Decompressed bytes over all entries we read may not exceed read_grace + max_read_factor x
    # the file size. Parsed JSON takes ~10-20x its text in memory and ~0.2 s per MB, so without
    # this a 1 MB zip of highly compressible JSON (ratio 200) costs tens of seconds and gigabytes.
    # executorch writes ETRecords stored (ratio 1); a deflated one whose JSON is more than twice
    # the file size (plus 2 MB) is refused: pass a larger limit to read it.
    max_read_factor: float = 2.0
    read_grace: int = 2 << 20


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
    by_name: dict[str, GraphNode] = field(init=False, repr=False)
    by_debug_handle: dict[int, list[GraphNode]] = field(init=False, repr=False)

    def __post_init__(self):
        self.by_name = {}
        self.by_debug_handle = {}
        for n in self.nodes:
            self.by_name.setdefault(n.name, n)
            for h in n.debug_handles:
                self.by_debug_handle.setdefault(h, []).append(n)

    @property
    def delegate_calls(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.is_delegate_call]

    @property
    def call_nodes(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.op == "call_function"]


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
    graphs: dict[str, Graph]                            # edge program per method
    exported_program: Graph | None = None               # ATen program before to_edge
    extra_graphs: dict[str, Graph] = field(default_factory=dict)  # "<module>/<method>"
    export_graph_id: int | None = None

    def graph(self, method: str = "forward") -> Graph:
        try:
            return self.graphs[method]
        except KeyError:
            raise FormatError(f"no edge program for method {method!r} (have: {', '.join(self.graphs) or 'none'})",
                              file=self.path) from None

    def lowering_input(self, method: str = "forward") -> Graph | None:
        """The graph handed to the partitioner/backends (its node names are QNN's op names).

        That is the edge program itself when it holds no delegate calls (executorch 1.x records it
        before lowering); otherwise a recorded extra program for the method without delegate calls
        (e.g. ``edge_after_transform/<method>``), else None (see ``GraphNode.lowered.graph``).
        """
        g = self.graphs.get(method)
        if g is not None and not g.delegate_calls:
            return g
        for key, extra in self.extra_graphs.items():
            if extra.method == method and not extra.delegate_calls:
                return extra
        return None

    def debug_handle_match(self, method: str = "forward") -> tuple[int, int]:
        """(handles of debug_handle_map found in the method's graph, handles in the map)."""
        wanted = {h for hs in self.debug_handle_map.get(method, {}).values() for h in hs}
        g = self.graphs.get(method)
        found = sum(1 for h in wanted if g is not None and h in g.by_debug_handle)
        return found, len(wanted)


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
            return _read_zip(name, zf, limits, size)


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


class _Reader:
    def __init__(self, zf: zipfile.ZipFile, limits: ZipLimits, file_size: int = 0):
        self.zf = zf
        self.limits = limits
        self.total = 0
        self.file_size = file_size
        self.read_limit = min(limits.max_total_bytes,
                              int(limits.read_grace + limits.max_read_factor * file_size))

    def read(self, info: zipfile.ZipInfo) -> bytes:
        lim = self.limits
        if info.flag_bits & 0x1:
            raise FormatError(f"entry {info.filename!r} is encrypted")
        chunks = []
        got = 0
        comp = max(int(info.compress_size), 1)
        with self.zf.open(info) as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                got += len(chunk)
                if got > lim.max_entry_bytes:
                    raise FormatError(f"entry {info.filename!r} decompresses to more than "
                                      f"{lim.max_entry_bytes} bytes (limit)")
                if got > lim.ratio_grace and got / comp > lim.max_ratio:
                    raise FormatError(f"entry {info.filename!r} has compression ratio over {lim.max_ratio:g}x "
                                      f"({comp} bytes compressed; zip bomb?)")
                if self.total + got > self.read_limit:
                    if self.read_limit >= lim.max_total_bytes:
                        raise FormatError(f"ETRecord entries decompress to more than {lim.max_total_bytes} bytes "
                                          "(limit)")
                    raise FormatError(f"ETRecord entries decompress to more than {self.read_limit} bytes from a "
                                      f"{self.file_size}-byte file (overall compression ratio limit; zip bomb?)")
                chunks.append(chunk)
        self.total += got
        return b"".join(chunks)

    def json(self, info: zipfile.ZipInfo):
        raw = self.read(info)
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
            raise FormatError(f"entry {info.filename!r} is not valid JSON ({type(e).__name__}: {e})") from None


def _read_zip(name: str, zf: zipfile.ZipFile, limits: ZipLimits, file_size: int = 0) -> Etrecord:
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise FormatError(f"zip has {len(infos)} entries (limit {limits.max_entries})")
    reader = _Reader(zf, limits, file_size)
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

    def take(entry: str):
        if entry in dupes:
            raise FormatError(f"zip holds entry {entry!r} more than once")
        return reader.json(by_name[entry])

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

    graphs: dict[str, Graph] = {}
    extra: dict[str, Graph] = {}
    exported = None
    map_methods = list(dict.fromkeys([*debug_handle_map, *delegate_map, *num_outs_map]))
    for entry, info in by_name.items():
        if entry in markers or entry in _MAP_ENTRIES:
            continue
        if entry.endswith(_BINARY_SUFFIXES) or entry in _BINARY_ENTRIES:
            skipped.append((entry, "torch pickle (never loaded)"))
            continue
        if entry == EDGE_PREFIX:  # older single-method format
            method = map_methods[0] if len(map_methods) == 1 else "forward"
            graphs[method] = _graph(entry, method, take(entry))
        elif entry.startswith(EDGE_PREFIX + "/"):
            method = entry[len(EDGE_PREFIX) + 1:]
            graphs[method] = _graph(entry, method, take(entry))
        elif entry == "exported_program":
            exported = _graph(entry, "forward", take(entry))
        elif "/" in entry and _looks_like_json(reader, info):
            extra[entry] = _graph(entry, entry.rsplit("/", 1)[1], take(entry))
        else:
            skipped.append((entry, "unknown entry"))

    methods = list(dict.fromkeys([*graphs, *map_methods]))
    return Etrecord(
        path=name, marker=markers[0], entries=list(by_name), skipped_entries=skipped, methods=methods,
        debug_handle_map=debug_handle_map, delegate_map=delegate_map, num_outs_map=num_outs_map,
        graphs=graphs, exported_program=exported, extra_graphs=extra, export_graph_id=export_graph_id,
    )


def _looks_like_json(reader: _Reader, info: zipfile.ZipInfo) -> bool:
    """Peek at the first bytes only: graph JSON starts with '{', torch pickles with 'PK' or 0x80."""
    with reader.zf.open(info) as fh:
        head = fh.read(64)
    return head.lstrip()[:1] == b"{"


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

    for i, raw in enumerate(_lst(g.get("nodes"), f"{what}: nodes")):
        node = _node(entry, i, _obj(raw, f"{what}: node {i}"), producer, depth)
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
    return Graph(name=entry, method=method, nodes=nodes, dialect=dialect or None)


def _node(entry: str, i: int, raw: dict, producer: dict[str, str], depth: int) -> GraphNode:
    name = raw.get("name")
    if not isinstance(name, str):
        raise FormatError(f"entry {entry!r}: node {i} has no name")
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
