#!/usr/bin/env python3
"""A QNN-shaped numerics fixture whose uint8 tensors and quantization parameters come from the real
quantized CPU run ``tests/fixtures/numerics/num_q8`` (no torch; etscope's own readers):

    PYTHONPATH=src python tools/synth_qnn_numerics.py [--out tests/fixtures/numerics]

What a QNN program with ``dump_intermediate_outputs`` logs (``QnnManager.cpp``): per execute, one
``DELEGATE_CALL`` (instruction 0, ``QnnBackend``) during which every QNN output tensor is a debug
event named by its QNN tensor name (``<fx node>@0``; the graph output ``output_<fx node>@0``,
``builders/node_visitor.py``) in QNN's dtype, uint8 here; then the runtime logs the delegate call's
arguments (float input and output) and the program output.

Values: for every compute node of num_q8's edge graph followed by an activation
``quantize_per_tensor`` (int8, quant range -128..127), the real int8 output of that quantize kernel
in each run, shifted to uint8 (q + 128), QNN's 8-bit activation type. The ETRecord is num_q8's edge
graph with those quantize/dequantize nodes rewritten to the same uint8 encoding (zero point + 128,
range 0..255, dtype uint8), so (u8 - zp') * scale equals the real (i8 - zp) * scale; its maps say
instruction 0 is a QnnBackend delegate covering every debug handle, with the QNN tensor names in its
delegate map. The delegate call's input is num_xnn's logged input of the same run (the fixtures share
their inputs), its output num_q8's program output.

Writes ``synthetic_qnn_q8.etdump``, ``.debugbuf``, ``.etrecord`` and ``synthetic_qnn_q8.truth.json``
(tensor names, their nodes and quantization parameters).
"""
from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
NUM = REPO / "tests" / "fixtures" / "numerics"
_spec = importlib.util.spec_from_file_location("synth_debug_buffer", REPO / "tools" / "synth_debug_buffer.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

QUANT = "quantized_decomposed.quantize_per_tensor.default"
DEQUANT = "quantized_decomposed.dequantize_per_tensor.default"
TORCH_UINT8 = 1     # torch.export serde ScalarType BYTE


def _run_tensors(name: str, program: str):
    """{run: {(role, node or instruction): array}} of a real fixture, through etscope's readers."""
    from etscope.analysis.numerics.identity import tensor_ids
    from etscope.formats.debug_buffer import DebugBuffer
    from etscope.profile import load

    p = load(NUM / f"{name}.etdump", NUM / f"{program}.etrecord", NUM / f"{program}.pte")
    ids, _ = tensor_ids(p)
    out: dict[int, dict] = {}
    with DebugBuffer(NUM / f"{name}.debugbuf") as buf:
        buf.check(p.etdump.tensors)
        for t in ids:
            key = (t.role, t.node or t.instruction)
            out.setdefault(t.run, {}).setdefault(key, np.array(buf.array(p.etdump.tensors, t.index)))
    return p, out


def _rewrite_graph(doc: dict) -> dict[str, dict]:
    """Activation quantize/dequantize nodes (range -128..127) rewritten to uint8; returns
    {quantize node name: its new literals}."""
    g = doc["graph_module"]["graph"] if "graph_module" in doc else doc["program"]["graph_module"]["graph"]
    changed = {}
    for n in g["nodes"]:
        target = n.get("target", "")
        if not target.endswith((QUANT, DEQUANT)):
            continue
        args = {a["name"]: a["arg"] for a in n["inputs"]}
        if args["quant_min"].get("as_int") != -128:
            continue      # weights (symmetric -127..127) stay as they are
        args["zero_point"]["as_int"] += 128
        args["quant_min"]["as_int"], args["quant_max"]["as_int"] = 0, 255
        args["dtype"]["as_scalar_type"] = TORCH_UINT8
        if target.endswith(QUANT):
            out = n["outputs"][0]["as_tensor"]["name"]
            changed[out] = {"scale": args["scale"]["as_float"], "zero_point": args["zero_point"]["as_int"]}
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=NUM)
    a = ap.parse_args(argv)
    p8, q8 = _run_tensors("num_q8", "num_q8")
    _, xnn = _run_tensors("num_xnn", "num_xnn")
    g = p8.etrecord.graph("forward")
    with zipfile.ZipFile(NUM / "num_q8.etrecord") as z:
        doc = json.loads(z.read("edge_dialect_exported_program/forward"))
    requant = _rewrite_graph(doc)
    # compute node -> its activation quantize node (graph order)
    pairs = []
    for n in g.nodes:
        if n.op != "call_function" or "quantize" in (n.target or ""):
            continue
        qs = [u for u in g.nodes if n.name in u.inputs and u.target == QUANT and u.name in requant]
        if qs:
            pairs.append((n, qs[0]))
    last = g.nodes[-1].inputs        # the output node's producer(s)
    arrays, layout = [], []
    for run in sorted(q8):
        events = [("P", "Method::execute", -1, 1000 * run, 1000 * run + 900),
                  ("P", "DELEGATE_CALL", 0, 1000 * run + 10, 1000 * run + 800)]
        layout.append(events)
        for n, q in pairs:
            i8 = q8[run][("kernel_output", q.name)]
            u8 = (i8.astype(np.int16) + 128).astype(np.uint8)
            reaches_output = any(d in last for d in _dequant_users(g, q.name))
            tname = ("output_" if reaches_output else "") + f"{n.name}@0"
            arrays.append(u8)
            events.append((tname, 0, [len(arrays) - 1], False, tname))
        output = next(v for k, v in q8[run].items() if k[0] == "program_output")
        for arg in (xnn[run][("delegate_input", 0)], output):
            arrays.append(arg)
            events.append((None, 0, [len(arrays) - 1], False))
        arrays.append(arrays[-1])
        events.append((None, 0, [len(arrays) - 1], True))
    raw, tensors = synth.pack(arrays)
    runs = [[ev if ev[0] == "P" else (ev[0], ev[1], [tensors[k] for k in ev[2]], *ev[3:]) for ev in events]
            for events in layout]
    out: Path = a.out
    (out / "synthetic_qnn_q8.etdump").write_bytes(synth.build_etdump(runs))
    (out / "synthetic_qnn_q8.debugbuf").write_bytes(raw)
    handles = sorted({h for n in g.nodes for h in n.debug_handles})
    names = {(("output_" if any(d in last for d in _dequant_users(g, q.name)) else "") + f"{n.name}@0"):
             list(n.debug_handles) for n, q in pairs}
    entries = {
        "ETRECORD_V0": b"",
        "edge_dialect_exported_program/forward": json.dumps(doc).encode(),
        "debug_handle_map": json.dumps({"forward": {"0": handles}}).encode(),
        "delegate_map": json.dumps({"forward": {"0": {"name": "QnnBackend", "delegate_map": names}}}).encode(),
        "instruction_id_to_num_outs_map": json.dumps({"forward": {"0": 1}}).encode(),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for k, v in entries.items():
            zi = zipfile.ZipInfo(k, date_time=(2026, 12, 3, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, v)
    (out / "synthetic_qnn_q8.etrecord").write_bytes(buf.getvalue())
    truth = {"generator": "tools/synth_qnn_numerics.py", "from": "num_q8 (real int8 quantize outputs, +128)",
             "tensors": [{"qnn_name": t, "node": n.name, "quantize_node": q.name, **requant[q.name]}
                         for (n, q), t in zip(pairs, names)], "runs": len(layout)}
    (out / "synthetic_qnn_q8.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    for f in sorted(out.glob("synthetic_qnn_q8*")):
        print(f"{f.stat().st_size:>8}  {f}")
    return 0


def _dequant_users(g, name: str) -> list[str]:
    return [u.name for u in g.nodes if name in u.inputs and u.target == DEQUANT]


if __name__ == "__main__":
    sys.exit(main())
