"""Structure-aware generator for ``etscope numerics``: a VALID ETDump + debug buffer (and sometimes
an ETRecord and a reference pair) whose values aim at the numerics code's cost cliffs and overflow
paths rather than at parser errors.

``gen_numerics(rng, root, shape=None)`` writes its files into ``root`` and returns the argv for
``etscope numerics ...`` (``argv[0] == "numerics"``, as ``campaign.budget_for`` expects). Shapes:

* ``many_dims``: a tensor of 65-80 dimensions (numpy holds at most 64);
* ``huge_stride``: size-1 dimensions with strides of 2**61 (dense, but past any byte offset);
* ``huge_values``: 1e200 against 1 (power sums overflow float64), Inf, NaN, subnormals;
* ``huge_zero_point``: an int8 tensor whose quantize node has a zero point of 10**400 (or a
  scale of 1e400, which JSON reads as inf) against a float reference;
* ``shared_handle``: an ETRecord whose 16,000 nodes share one debug handle named by 16,000
  instructions (``--etrecord``);
* ``shared_region``: 16,000 debug tensors over one 1 MB region of the buffer;
* ``shared_source``: two programs whose 8,000-16,000 nodes all come from one source node (``from_node``)
  and carry distinct handles, thousands of tensors each (pairing by source node, op and order);
* ``taps``: an intermediate-output tap sidecar (``etscope.taps/1``) with indices near 2**31, duplicate
  or missing entries, huge field lists, STATS taps over 1e300 values, against a reference;
* ``plain``: a few small random tensors, sometimes with a reference (the common path).

ETDumps are written by ``tools/synth_debug_buffer.py`` (full Tensor tables: sizes, strides,
offset); ETRecords are zips compressed with one of ``generators.COMPRESSIONS``.
"""
from __future__ import annotations

import importlib.util
import json
import random
import zipfile
from pathlib import Path

import numpy as np

import generators as G

_ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("synth_debug_buffer", _ROOT / "tools" / "synth_debug_buffer.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

SHAPES = ["plain", "many_dims", "huge_stride", "huge_values", "huge_zero_point", "shared_handle", "shared_region",
          "shared_source", "taps"]
_EDGE = "executorch.exir.dialects.edge.ops."
_QUANT = "executorch.exir.dialects.edge.ops.quantized_decomposed.quantize_per_tensor.default"


def gen_numerics(rng: random.Random, root: Path, shape: str | None = None) -> list[str]:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    shape = shape or rng.choice(SHAPES)
    return _SHAPES[shape](rng, root)


# ---- writing ---------------------------------------------------------------------------------------

def write_pair(root: Path, name: str, arrays, names=None, instructions=None) -> tuple[Path, Path]:
    """``name.etdump`` + ``name.debugbuf`` holding ``arrays`` (one kernel output each, one run)."""
    raw, tensors = synth.pack(arrays)
    names = names or [f"op_{k}" for k in range(len(arrays))]
    instructions = instructions or list(range(len(arrays)))
    events = [(nm, ins, [t], False) for nm, ins, t in zip(names, instructions, tensors)]
    et, buf = root / f"{name}.etdump", root / f"{name}.debugbuf"
    et.write_bytes(synth.build_etdump([events]))
    buf.write_bytes(raw)
    return et, buf


def write_raw(root: Path, name: str, tensors, buffer: bytes, instructions=None) -> tuple[Path, Path]:
    """An ETDump with the given ``(scalar_type, sizes, strides, offset)`` tensors over ``buffer``."""
    instructions = instructions or list(range(len(tensors)))
    events = [(f"op_{k}", ins, [t], False) for k, (ins, t) in enumerate(zip(instructions, tensors))]
    et, buf = root / f"{name}.etdump", root / f"{name}.debugbuf"
    et.write_bytes(synth.build_etdump([events]))
    buf.write_bytes(buffer)
    return et, buf


def node(name: str, target: str, inputs=(), handle=None, literals=(), meta=None) -> dict:
    """A node of torch.export's graph JSON (what the ETRecord's edge program holds)."""
    args = [{"name": f"in{k}", "arg": {"as_tensor": {"name": src}}} for k, src in enumerate(inputs)]
    args += [{"name": k, "arg": {kind: v}} for k, kind, v in literals]
    md = dict(meta or {})
    if handle is not None:
        md["debug_handle"] = handle
    return {"name": name, "target": target, "inputs": args, "outputs": [{"as_tensor": {"name": name}}],
            "metadata": md}


def etrecord_bytes(nodes, handle_map: dict, rng: random.Random | None = None, graph_inputs=("x",),
                   raw_program: str | None = None) -> bytes:
    """An ETRecord zip: marker, ``debug_handle_map`` (method ``forward``) and the edge program."""
    program = raw_program or json.dumps({"graph_module": {"graph": {
        "nodes": nodes, "inputs": [{"as_tensor": {"name": n}} for n in graph_inputs],
        "outputs": [{"as_tensor": {"name": nodes[-1]["name"]}}] if nodes else []}}})
    entries = [("ETRECORD_V0", b""), ("debug_handle_map", json.dumps({"forward": handle_map}).encode()),
               ("edge_dialect_exported_program/forward", program.encode())]
    return G.zip_entries(entries, rng.choice(G.COMPRESSIONS[:2]) if rng is not None else zipfile.ZIP_STORED)


def _args(et, buf, ref=None, extra=()) -> list[str]:  # noqa: D103  (argv for etscope numerics)
    argv = ["numerics", "--json", str(et), "--debug-buffer", str(buf), *extra]
    if ref is not None:
        argv += ["--reference", str(ref[0]), "--reference-buffer", str(ref[1]), *ref[2:]]
    return argv


# ---- shapes ----------------------------------------------------------------------------------------

def _plain(rng: random.Random, root: Path) -> list[str]:
    dtypes = [np.float32, np.float16, np.int8, np.uint8, np.int32, np.float64, np.bool_]
    arrays = []
    for _ in range(rng.randint(1, 8)):
        shape = tuple(rng.randint(0, 5) for _ in range(rng.randint(0, 4)))
        dt = rng.choice(dtypes)
        a = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(shape) * rng.choice([1, 1e-3, 1e4])
        arrays.append(a.astype(dt))
    et, buf = write_pair(root, "cand", arrays)
    if rng.random() < 0.5:
        return _args(et, buf)
    ref_arrays = [(a.astype(np.float64) + rng.choice([0, 1e-6, 1])).astype(a.dtype) for a in arrays]
    ref = write_pair(root, "ref", ref_arrays)
    return _args(et, buf, ref)


def _many_dims(rng: random.Random, root: Path) -> list[str]:
    ndim = rng.randint(65, 80)
    sizes = [1] * ndim
    sizes[rng.randrange(ndim)] = 2
    tensors = [(6, sizes, synth.contiguous_strides(sizes), 0), (6, [2], [1], 0)]
    et, buf = write_raw(root, "cand", tensors, np.float32([1.5, -2.0]).tobytes())
    if rng.random() < 0.5:
        return _args(et, buf)
    ref = write_raw(root, "ref", tensors, np.float32([1.0, -2.0]).tobytes())
    return _args(et, buf, ref)


def _huge_stride(rng: random.Random, root: Path) -> list[str]:
    big = rng.choice([2 ** 61, 2 ** 62, 2 ** 63 - 1, 2 ** 60 + 3])
    tensors = [(6, [1, 4, 1], [big, 1, big], 0), (6, [4, 1], [1, big], 0)]
    et, buf = write_raw(root, "cand", tensors, np.float32([1, 2, 3, 4]).tobytes())
    if rng.random() < 0.5:
        return _args(et, buf)
    ref = write_raw(root, "ref", tensors, np.float32([1, 2, 3, 5]).tobytes())
    return _args(et, buf, ref)


def _huge_values(rng: random.Random, root: Path) -> list[str]:
    n = rng.choice([4, 1000])
    big = rng.choice([1e200, 1e300, 1.7e308, -1e200])
    cand = [np.full(n, big, np.float64), np.full(n, 1e-310, np.float64),
            np.array([big, 1.0, np.inf, np.nan][: max(1, n % 5)], np.float64),
            np.full(n, 3e38, np.float32), np.full(n, 60000, np.float16)]
    ref = [np.ones(n, np.float64), np.full(n, big, np.float64), np.ones(max(1, n % 5), np.float64),
           np.full(n, -3e38, np.float32), np.full(n, -60000, np.float16)]
    order = list(range(len(cand)))
    rng.shuffle(order)
    et, buf = write_pair(root, "cand", [cand[k] for k in order])
    r = write_pair(root, "ref", [ref[k] for k in order])
    return _args(et, buf, r) if rng.random() < 0.8 else _args(et, buf)


def _huge_zero_point(rng: random.Random, root: Path) -> list[str]:
    """Candidate: an int8 kernel output whose quantize node's parameters are absurd; the
    reference: the float node of the same name (both sides with an ETRecord: matched by node)."""
    zp_text = rng.choice(["1" + "0" * 400, "-1" + "0" * 400, "0", "1" + "0" * 30])
    scale_text = rng.choice(["1e400", "0.0125", "1e-320", "1e308", "-1e400"])
    if zp_text == "0" and scale_text == "0.0125":
        zp_text = "1" + "0" * 400
    cand_nodes = [node("aten_relu_default", _EDGE + "aten.relu.default", ["x"], handle=1),
                  node("q", _QUANT, ["aten_relu_default"], handle=2,
                       literals=[("scale", "as_float", "@SCALE@"), ("zero_point", "as_int", "@ZP@"),
                                 ("quant_min", "as_int", -128), ("quant_max", "as_int", 127)])]
    text = json.dumps({"graph_module": {"graph": {"nodes": cand_nodes, "inputs": [{"as_tensor": {"name": "x"}}],
                                                  "outputs": [{"as_tensor": {"name": "q"}}]}}})
    text = text.replace('"@SCALE@"', scale_text).replace('"@ZP@"', zp_text)
    (root / "cand.etrecord").write_bytes(etrecord_bytes(None, {"0": [1]}, rng, raw_program=text))
    ref_nodes = [node("aten_relu_default", _EDGE + "aten.relu.default", ["x"], handle=1)]
    (root / "ref.etrecord").write_bytes(etrecord_bytes(ref_nodes, {"0": [1]}, rng))
    q = np.random.default_rng(rng.randrange(1 << 30)).integers(-128, 128, 64).astype(np.int8)
    et, buf = write_pair(root, "cand", [q], names=["aten_relu_default"])
    ref = write_pair(root, "ref", [q.astype(np.float32) * np.float32(0.0125)], names=["aten_relu_default"])
    return _args(et, buf, (*ref, "--reference-etrecord", str(root / "ref.etrecord")),
                 extra=["--etrecord", str(root / "cand.etrecord")])


def _shared_handle(rng: random.Random, root: Path) -> list[str]:
    """16,000 call nodes sharing debug handle 1, named by 16,000 instructions (one tensor each is
    not needed: one is enough for the identities to be built)."""
    n = rng.choice([16000, 8000])
    nodes = [node(f"aten_add_{i}", _EDGE + "aten.add.Tensor", ["x"], handle=1) for i in range(n)]
    (root / "cand.etrecord").write_bytes(etrecord_bytes(nodes, {str(i): [1] for i in range(n)}, rng))
    k = rng.choice([1, 50])
    et, buf = write_pair(root, "cand", [np.full(4, float(i), np.float32) for i in range(k)],
                         instructions=[rng.randrange(n) for _ in range(k)])
    if rng.random() < 0.5:
        return _args(et, buf, extra=["--etrecord", str(root / "cand.etrecord")])
    ref = write_pair(root, "ref", [np.full(4, float(i) + 0.5, np.float32) for i in range(k)])
    return _args(et, buf, (*ref, "--reference-etrecord", str(root / "cand.etrecord")),
                 extra=["--etrecord", str(root / "cand.etrecord")])


def _shared_region(rng: random.Random, root: Path) -> list[str]:
    """16,000 tensors over one 1 MB region (all at offset 0, or each shifted by 64 bytes)."""
    n = rng.choice([16000, 4000])
    numel = (1 << 20) // 4
    shift = rng.choice([0, 0, 64])
    size = numel * 4 + shift * n
    tensors = [(6, [numel], [1], shift * k) for k in range(n)]
    values = np.sin(np.arange(size // 4, dtype=np.float32)).astype(np.float32).tobytes()
    et, buf = write_raw(root, "cand", tensors, values)
    if rng.random() < 0.5:
        return _args(et, buf)
    ref = write_raw(root, "ref", tensors, np.cos(np.arange(size // 4, dtype=np.float32)).tobytes())
    return _args(et, buf, ref)


def _shared_source(rng: random.Random, root: Path) -> list[str]:
    n = rng.choice([16000, 8000])
    k = rng.choice([2000, 200])
    prov = json.dumps([{"name": "x", "target": "aten.add", "from_node": [{"name": "x", "from_node": []}]}])
    argv_parts = []
    for side in ("cand", "ref"):
        nodes = [node(f"aten_add_{i}", _EDGE + "aten.add.Tensor", ["x" if i == 0 else f"aten_add_{i - 1}"],
                      handle=i + 1, meta={"from_node": prov}) for i in range(n)]
        (root / f"{side}.etrecord").write_bytes(etrecord_bytes(nodes, {str(i): [i + 1] for i in range(n)}))
        arrays = [np.full(3, float(i) + (0.5 if side == "ref" else 0.0), np.float32) for i in range(k)]
        argv_parts.append(write_pair(root, side, arrays, names=[f"aten_add_{i}" for i in range(k)]))
    (et, buf), (ret, rbuf) = argv_parts
    return _args(et, buf, (ret, rbuf, "--reference-etrecord", str(root / "ref.etrecord")),
                 extra=["--etrecord", str(root / "cand.etrecord")])


def _taps(rng: random.Random, root: Path) -> list[str]:
    """Program outputs as taps: FULL_TENSOR and STATS (13 fields, maybe over huge values)."""
    big = rng.choice([1.0, 1e300, float("inf")])
    stats = np.full(13, big, np.float32 if big == 1.0 else np.float64)
    raw, tensors = synth.pack([np.ones(8, np.float32), np.full(8, big), stats])
    events = [("out", -1, [t], True) for t in tensors]
    et, buf = root / "cand.etdump", root / "cand.debugbuf"
    et.write_bytes(synth.build_etdump([events]))
    buf.write_bytes(raw)
    fields = ["min", "max", "mean", "abs_max", "abs_mean", "std", "rms", "l1_norm", "l2_norm", "nan_count",
              "inf_count", "zero_count", "p99_abs"]
    taps = [{"node_name": "relu", "op_target": "aten.relu.default", "output_index": 1, "reducer_name": "FULL_TENSOR",
             "fields": []},
            {"node_name": "conv2d", "op_target": "aten.conv2d.default", "output_index": 2, "reducer_name": "STATS",
             "fields": fields}]
    taps.append(rng.choice([{"node_name": "x" * 5000, "output_index": 2 ** 31 - 1, "reducer_name": "STATS",
                             "fields": ["f"] * 4000},
                            {"node_name": "y", "output_index": 7, "reducer_name": "CUSTOM", "fields": []},
                            {"node_name": "z", "output_index": rng.choice([2 ** 31, -1, 10 ** 30]), "reducer_name": "S"}]))
    (root / "cand.taps.json").write_text(json.dumps({"schema": "etscope.taps/1", "taps": taps}))
    ref = write_pair(root, "ref", [np.ones(8, np.float32), np.full(8, 2.0), np.full(8, -big)])
    return _args(et, buf, ref if rng.random() < 0.7 else None, extra=["--taps", str(root / "cand.taps.json")])


_SHAPES = {"plain": _plain, "taps": _taps, "shared_source": _shared_source, "many_dims": _many_dims, "huge_stride": _huge_stride, "huge_values": _huge_values,
           "huge_zero_point": _huge_zero_point, "shared_handle": _shared_handle, "shared_region": _shared_region}
