"""torch.export JSON graphs (``torch/_export/serde``), as an ETRecord records its programs,
decoded into plain node lists without torch.

The serialized graph lists only ``call_function`` nodes; placeholders come from
``graph.inputs`` + ``signature.input_specs`` and the output from ``graph.outputs``: this decoder
rebuilds them so that node lists look like the FX graph. Multi-output nodes define several values
(``getitem``...); ``GraphNode.inputs`` names the producing *nodes*. Older files are read where the
facts are there: before executorch's serializer recorded node names (pytorch/executorch#12877,
July 2025) a node was named after its single output, as torch.export's reader names it; torch 2.1
wrote every field of a union with the unused ones null (the ``schema_version`` 1 files of 2023).
A lowered backend module embedded in a delegate call is decoded with its own subgraph (two levels
at most). Structure this decoder cannot follow raises ``FormatError`` or the usual
``KeyError``/``TypeError``...; the ETRecord reader turns either into a warning for that entry.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from etscope.errors import FormatError
from etscope.formats.export_graph_text import normalise_target, parse_nn_module_stack, source_of  # noqa: F401 (re-exported)

_DELEGATE_TARGET = "executorch_call_delegate"


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
    # Literal arguments (name, value): as_float / as_int / as_bool / as_string / as_scalar_type
    # (torch.export's ScalarType code), e.g. a quantize_per_tensor's scale and zero_point.
    literals: tuple[tuple[str, object], ...] = ()
    # The node of the first traced graph this node comes from (the root of its ``from_node``
    # provenance: e.g. "linear_1" for both the permute_copy and the addmm a linear became), or None.
    source_node: str | None = None
    # Every distinct name along that chain, outermost first (the exported program's node name among
    # them: what an intermediate-output tap records as its node_name).
    provenance: tuple[str, ...] = ()

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
    # value name -> its recorded sizes (``tensor_values``): ints, None for a symbolic size
    value_shapes: dict[str, tuple[int | None, ...]] = field(default_factory=dict, repr=False)
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


def schema_version(doc) -> str | None:
    v = doc.get("schema_version") if isinstance(doc, dict) else None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, dict) and isinstance(v.get("major"), int):
        return f"{v['major']}.{v.get('minor', 0)}"
    return None
_MAX_DEPTH = 64


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


def decode_graph(entry: str, method: str, doc, depth: int = 0) -> Graph:
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
                 schema_version=schema_version(doc), generated_names=generated,
                 value_shapes=_value_shapes(g.get("tensor_values")))


def _value_shapes(tv) -> dict[str, tuple[int | None, ...]]:
    """``tensor_values``' sizes: an int per static dimension, None per symbolic one (unreadable
    entries are left out: the shapes only confirm which node a logged tensor is)."""
    out: dict[str, tuple[int | None, ...]] = {}
    if not isinstance(tv, dict):
        return out
    for name, meta in tv.items():
        sizes = meta.get("sizes") if isinstance(meta, dict) else None
        if not isinstance(sizes, list):
            continue
        dims = []
        for d in sizes:
            v = d.get("as_int") if isinstance(d, dict) else None
            dims.append(v if isinstance(v, int) and not isinstance(v, bool) else None)
        out[str(name)] = tuple(dims)
    return out


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
    literals: list[tuple[str, object]] = []
    for j, na in enumerate(inputs_raw):
        if not isinstance(na, dict):
            continue
        arg = na.get("arg")
        kind, val = _arg_union(arg)
        if is_delegate and j == 0:
            if kind == "as_string" and isinstance(val, str):
                lowered = _lowered(entry, str(na.get("name") or ""), val, depth)
                continue
        if kind in _LITERALS and isinstance(val, _LITERALS[kind]) and not (kind == "as_string" and len(val) > 200):
            literals.append((str(na.get("name") or j), val))
        _value_names(arg, used)
    outs: list[str] = []
    for arg in _lst(raw.get("outputs"), f"entry {entry!r}: outputs of {name}"):
        _value_names(arg, outs)

    stack = meta.get("stack_trace") if isinstance(meta.get("stack_trace"), str) else None
    src, src_file, src_line = source_of(stack)
    handles = parse_debug_handles(_handles_from_meta(meta.get("debug_handle")), f"entry {entry!r}: node {name}")
    return GraphNode(
        name=name, op="call_function", target=target, raw_target=raw_target,
        debug_handles=tuple(handles), stack_trace=stack,
        nn_module_stack=parse_nn_module_stack(meta.get("nn_module_stack")),
        source=src, source_file=src_file, source_line=src_line,
        inputs=tuple(dict.fromkeys(producer[v] for v in used if v in producer)),
        outputs=tuple(outs), is_delegate_call=is_delegate, lowered=lowered, literals=tuple(literals),
        provenance=(prov := provenance_names(meta.get("from_node"))), source_node=prov[-1] if prov else None,
    )


_MAX_PROVENANCE = 1000


def provenance_names(v) -> tuple[str, ...]:
    """The distinct node names along a ``from_node`` chain (torch.fx ``NodeSource`` list, serialized
    as a JSON string), its first entry followed until empty: the last is the node of the first
    traced graph. Empty when absent or unreadable (never an error: provenance is optional)."""
    if isinstance(v, str):
        if not v.startswith("["):
            return ()
        try:
            v = json.loads(v)
        except (ValueError, RecursionError):
            return ()
    names: dict[str, None] = {}
    root = None
    for _ in range(_MAX_PROVENANCE):
        if not (isinstance(v, list) and v and isinstance(v[0], dict)):
            break
        if isinstance(v[0].get("name"), str):
            root = v[0]["name"][:200]
            names.setdefault(root)
        v = v[0].get("from_node")
    if root is not None:        # the root last, even when a name repeats along the chain
        names.pop(root)
        names[root] = None
    return tuple(names)


_LITERALS = {"as_float": (float, int), "as_int": int, "as_bool": bool, "as_string": str, "as_scalar_type": int}

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
        sub = decode_graph(f"{entry}#{attr}", attr, doc["original_module"], depth + 1)
    return LoweredModule(name=attr, backend_id=str(doc.get("backend_id") or ""), compile_specs=specs,
                         processed_size=max(size, 0), graph=sub)


def parse_debug_handles(v, what: str) -> list[int]:
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
            out.extend(parse_debug_handles(x, what))
        return out
    raise FormatError(f"{what}: debug handle {v!r} is not an integer")
