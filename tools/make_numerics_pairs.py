#!/usr/bin/env python3
"""Generate the REAL cross-graph numerics pairs (issue 32): one model exported two ways, each run
in its OWN process (a separate session), with a debug buffer, its ETRecord and the Inspector's
decoded tensors (``NAME.oracle.npz``, as ``make_numerics_fixtures.py`` writes them).

Needs the oracle environment (torch 2.13.0 + executorch 1.5.1, see DEVELOPERS.md)::

    /work/venv-oracle/bin/python tools/make_numerics_pairs.py [--out tests/fixtures/numerics] [--only NAME]

Pairs (candidate / reference):

* ``pair_cnn_xnn`` / ``pair_cnn_cpu``: a small CNN (conv+relu -> maxpool -> cumsum (CPU) -> conv+relu
  -> maxpool -> linear), fp32 XNNPACK-delegated (2 partitions, cumsum between) vs fp32 CPU-only;
  ``RUNS`` executes, the same seeded inputs on both sides.
* ``pair_q8_xnn`` / ``pair_q8_cpu``: conv+relu -> atan (CPU) -> maxpool -> erf (CPU) -> linear,
  PT2E-quantized int8 (``XNNPACKQuantizer``, per-tensor symmetric, calibrated on the run's inputs)
  and XNNPACK-delegated (three partitions, atan and erf on the CPU between them) vs the same fp32
  weights CPU-only.
* ``pair_llm_xnn`` / ``pair_llm_cpu``: a tiny KV-cache transformer (``executorch.examples.models.
  llama``, ``LLM_CFG``, dynamic token dimension) fp32 XNNPACK vs fp32 CPU-only; a prefill of
  ``PROMPT`` tokens then ``DECODES`` decode steps, each fed the previous step's greedy token.

* ``drift_llm_q8`` / ``drift_llm_cpu`` (LLM numerics over decode steps, issue 32 item 3): a KV-cache
  transformer with ``DRIFT_CFG["n_layers"]`` blocks (``DRIFT_CFG``), its linears PT2E-quantized
  (``XNNPACKQuantizer``: per-channel weights in the 4-bit range ``DRIFT_WEIGHT_RANGE``, dynamic
  int8 activations, as the "8da4w" XNNPACK LLM recipe) and XNNPACK-delegated vs the same fp32 weights CPU-only; a prefill of ``DRIFT_PROMPT``
  tokens then ``DRIFT_DECODES`` decode steps. Both sides are fed the SAME tokens (the eager fp32
  model's greedy tokens, computed in each process alike), so every step compares one position's
  values, not two generations that went apart.

* ``tap_cnn_xnn``: the CNN of ``pair_cnn_*`` with ExecuTorch's intermediate-output taps
  (``devtools/intermediate_output_tap``: relu and max_pool2d FULL_TENSOR, inside the first XNNPACK
  partition; the second conv2d STATS), XNNPACK-delegated. Taps become extra program outputs; their
  mapping (TapSpecs) lives on the Python side only (an ETRecord of a tapped program cannot be
  serialized: ``tap.Tensor`` nodes), so it is written as the sidecar ``tap_cnn_xnn.taps.json`` with
  the documented one line (``TAPS_SIDECAR_LINE``). ``tap_cnn_xnn.taps_oracle.npz``: per run the
  tap module's own values, AOT (eager) ``aot_r<run>_o<index>`` and runtime ``rt_r<run>_o<index>``;
  ``tap_cnn_xnn.taps_oracle.json``: ``compare_aot_runtime_dataframe`` rows per run.

Each NAME gets ``.pte``, ``.etrecord`` (torch pickles left out), ``.etdump``, ``.debugbuf``,
``.oracle.npz``; ``pairs_manifest.json`` records versions, models, schedules, sizes.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import make_fixtures as mf  # noqa: E402
import make_numerics_fixtures as mnf  # noqa: E402

DEFAULT_OUT = REPO / "tests" / "fixtures" / "numerics"
SEED = 20261204
RUNS = 3
LLM_CFG = dict(dim=32, n_layers=1, n_heads=2, vocab_size=32, hidden_dim=32, max_seq_len=10, max_context_len=10)
PROMPT = 5
DECODES = 2
DRIFT_CFG = dict(dim=16, n_layers=2, n_heads=2, vocab_size=32, hidden_dim=32, max_seq_len=9, max_context_len=9)
DRIFT_PROMPT = 3
DRIFT_WEIGHT_RANGE = (-8, 7)      # 4-bit weights in int8 (the "8da4w" LLM recipe's range): drift past 30 dB
DRIFT_DECODES = 6

PAIRS = {
    "pair_cnn_xnn": ("cnn", "xnn"), "pair_cnn_cpu": ("cnn", "cpu"),
    "pair_q8_xnn": ("q8", "xnn"), "pair_q8_cpu": ("q8", "cpu"),
    "pair_llm_xnn": ("llm", "xnn"), "pair_llm_cpu": ("llm", "cpu"),
    "tap_cnn_xnn": ("cnn", "tap"),
    "drift_llm_q8": ("drift", "q8"), "drift_llm_cpu": ("drift", "cpu"),
}
# What a user writes next to the program (etscope numerics --taps reads it):
TAPS_SIDECAR_LINE = ('json.dump({"schema": "etscope.taps/1", "taps": [dataclasses.asdict(s) for s in specs]}, '
                     'open("model.taps.json", "w"))')


def make_tap(name: str, out: Path) -> Dict[str, Any]:
    """The tapped CNN: export -> tap -> lower (XNNPACK) -> strip -> run with a debug buffer."""
    import dataclasses

    import numpy as np
    torch, _ = mf._lazy_imports()
    import torch.utils._pytree as pytree
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.devtools.intermediate_output_tap import (FULL_TENSOR, STATS, compare_aot_runtime_dataframe,
                                                             select_by_op_type, strip_taps_, tap_intermediate_outputs_)
    from executorch.exir import to_edge_transform_and_lower

    mod, xs = _cnn(), _image_inputs()
    ep = torch.export.export(mod, (xs[0],), strict=True)
    ep, specs = tap_intermediate_outputs_(ep, rules=[
        (select_by_op_type("aten.relu.default", "aten.max_pool2d.default"), FULL_TENSOR),
        (select_by_op_type("aten.conv2d.default"), STATS)])
    aot = [pytree.tree_flatten(ep.module()(x))[0] for x in xs]
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    strip_taps_(edge)
    et = edge.to_executorch()
    pte = out / f"{name}.pte"
    pte.write_bytes(et.buffer)
    json.dump({"schema": "etscope.taps/1", "taps": [dataclasses.asdict(s) for s in specs]},  # TAPS_SIDECAR_LINE
              open(out / f"{name}.taps.json", "w"))
    res = mnf._run(pte, out, name, xs)
    rt = [list(o) for o in res.pop("outputs")]
    arrays = {}
    frames = []
    for r, (a, b) in enumerate(zip(aot, rt)):
        for i, (x, y) in enumerate(zip(a, b)):
            arrays[f"aot_r{r}_o{i}"] = x.detach().numpy().copy()
            arrays[f"rt_r{r}_o{i}"] = y.detach().numpy().copy()
        frames.append(json.loads(compare_aot_runtime_dataframe(specs, a, b).to_json(orient="records")))
    np.savez_compressed(out / f"{name}.taps_oracle.npz", **arrays)
    (out / f"{name}.taps_oracle.json").write_text(json.dumps(
        {"source": "executorch.devtools.intermediate_output_tap.compare_aot_runtime_dataframe(specs, aot_flat, rt_flat)",
         "runs": frames}, indent=1) + "\n")
    entry = {"what": "CNN with intermediate-output taps, XNNPACK-delegated (no ETRecord: tap nodes do not serialize)",
             "taps": [dataclasses.asdict(s) | {"stack_trace": None} for s in specs], **res,
             "schedule": f"{RUNS} x execute(forward, x_i), x_i = randn(1, 3, 8, 8) seeded {SEED}",
             "sidecar_line": TAPS_SIDECAR_LINE}
    entry.update(_oracle(out, name))
    return entry


def _cnn():
    torch, _ = mf._lazy_imports()
    nn = torch.nn

    class SmallCNN(nn.Module):
        """conv+relu -> maxpool -> cumsum (CPU) -> conv+relu -> maxpool -> linear; input 1x3x8x8."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 2 * 2, 10)

        def forward(self, x):
            x = torch.max_pool2d(torch.relu(self.c1(x)), 2)
            x = torch.cumsum(x, dim=1) * 0.25
            x = torch.max_pool2d(torch.relu(self.c2(x)), 2)
            return self.fc(x.flatten(1))

    torch.manual_seed(SEED)
    return SmallCNN().eval()


def _q8_model():
    torch, _ = mf._lazy_imports()
    nn = torch.nn

    class AtanErfNet(nn.Module):
        """conv+relu -> atan (CPU) -> maxpool -> erf (CPU) -> linear; input 1x3x8x8."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = torch.relu(self.conv(x))
            x = torch.atan(x)
            x = torch.max_pool2d(x, 2)
            x = torch.erf(x)
            return self.fc(x.flatten(1))

    torch.manual_seed(SEED)
    return AtanErfNet().eval()


def _image_inputs():
    torch, _ = mf._lazy_imports()
    g = torch.Generator().manual_seed(SEED)
    return [torch.randn(1, 3, 8, 8, generator=g) for _ in range(RUNS)]


def _q8_export(mod, xs):
    torch, _ = mf._lazy_imports()
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=False))
    with torch.no_grad():
        gm = torch.export.export(mod, (xs[0],), strict=True).module()
        gm = prepare_pt2e(gm, q)
        for x in xs:
            gm(x)
        gm = convert_pt2e(gm)
    return mf._export(gm, (xs[0],))


def _llm_module():
    torch, _ = mf._lazy_imports()
    return mf._llama_module(dynamic=True, cfg=LLM_CFG)


def _llm_export(mod):
    torch, _ = mf._lazy_imports()
    tok = torch.tensor([[2, 3, 4]], dtype=torch.long)
    pos = torch.tensor([0], dtype=torch.long)
    dyn = ({1: torch.export.Dim("token_dim", max=LLM_CFG["max_seq_len"] - 1)}, None)
    return mf._export(mod, (tok, pos), dyn)


def _llm_calls():
    """(method, inputs) per execute, fed by the previous output (greedy): a generator with state."""
    torch, _ = mf._lazy_imports()
    sched = [{"phase": "prefill", "tokens": PROMPT, "start_pos": 0}]
    sched += [{"phase": "decode", "tokens": 1, "start_pos": PROMPT + d} for d in range(DECODES)]
    drv = mf._LlamaDriver([dict(s, seq=0) for s in sched], cfg=LLM_CFG)
    return drv, sched


def make_one(name: str, out: Path) -> Dict[str, Any]:
    """One fixture, in this process (called in a child process per fixture by ``main``)."""
    torch, _ = mf._lazy_imports()
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    model, how = PAIRS[name]
    if how == "tap":
        return make_tap(name, out)
    if model == "drift":
        return make_drift(name, how, out)
    parts = [XnnpackPartitioner()] if how == "xnn" else [mnf._NoPartition()]
    if model == "llm":
        mod = _llm_module()
        prog = _llm_export(mod)
    else:
        mod = _cnn() if model == "cnn" else _q8_model()
        xs = _image_inputs()
        prog = _q8_export(mod, xs) if (model == "q8" and how == "xnn") else mf._export(mod, (xs[0],))
    pte, er, info = mf._lower(prog, out, name, partitioners=parts)
    mnf._drop_pickles(er)
    entry: Dict[str, Any] = {"what": f"{model} {'XNNPACK-delegated' if how == 'xnn' else 'CPU-only'}"
                                     + (" int8 PT2E (XNNPACKQuantizer per-tensor symmetric)"
                                        if model == "q8" and how == "xnn" else " fp32"), **info}
    if model == "llm":
        entry.update(_run_llm(pte, out, name))
    else:
        res = mnf._run(pte, out, name, xs)
        with torch.no_grad():
            eager = [mod(x) for x in xs]
        entry["max_abs_err_vs_eager_fp32"] = max(float((o[0] - e).abs().max()) for o, e in zip(res.pop("outputs"), eager))
        entry.update(res)
        entry["schedule"] = f"{RUNS} x execute(forward, x_i), x_i = randn(1, 3, 8, 8) seeded {SEED}"
    entry.update(_oracle(out, name))
    return entry


def _run_llm(pte: Path, out: Path, name: str) -> Dict[str, Any]:
    """Probe run (roomy buffer) to learn the bytes used, then the real run with a tight buffer;
    each run greedy-decodes from its own outputs."""
    drv, sched = _llm_calls()
    probe = out / f".{name}.probe.etdump"
    mf._run(pte, probe, out / f".{name}.probe.bin", 1 << 23, drv, drv.on_output)
    need = mnf._buffer_need(probe)
    probe.unlink()
    (out / f".{name}.probe.bin").unlink()
    size = (need + 4095) // 4096 * 4096
    drv, sched = _llm_calls()
    res = mf._run(pte, out / f"{name}.etdump", out / f"{name}.debugbuf", size, drv, drv.on_output)
    return {"model": f"executorch.examples.models.llama Transformer {LLM_CFG}, use_kv_cache=True, dynamic token "
                     f"dim, random weights (seed {mf.SEED}), greedy decoding",
            "schedule": sched, "tokens_fed": [[int(t) for t in tok.reshape(-1)] for tok, _ in drv.inputs],
            "debug_buffer_size": size, "debug_buffer_used": need, "run_s": res["run_s"],
            "max_abs_err_vs_eager": drv.max_err_vs_eager(dynamic=True)}


def _drift_tokens():
    """The schedule and the tokens fed at each execute: a seeded random prompt, then the eager fp32
    model's greedy tokens (the same on both sides: neither side decodes from its own outputs)."""
    torch, _ = mf._lazy_imports()
    mod = mf._llama_module(dynamic=True, cfg=DRIFT_CFG)
    g = torch.Generator().manual_seed(SEED)
    tok = torch.randint(1, DRIFT_CFG["vocab_size"], (1, DRIFT_PROMPT), generator=g, dtype=torch.long)
    sched = [{"phase": "prefill", "tokens": DRIFT_PROMPT, "start_pos": 0}]
    calls = []
    pos = 0
    with torch.no_grad():
        for d in range(DRIFT_DECODES + 1):
            p = torch.tensor([pos], dtype=torch.long)
            calls.append(("forward", (tok, p)))
            logits = mod(tok, p)
            pos += tok.shape[1]
            tok = torch.argmax(logits.reshape(-1, DRIFT_CFG["vocab_size"])[-1]).reshape(1, 1)
            if d < DRIFT_DECODES:
                sched.append({"phase": "decode", "tokens": 1, "start_pos": pos})
    return mod, calls, sched


def _drift_export(mod, quantized: bool):
    """Dynamic token dimension; ``quantized``: linears int8 (per-channel weights, dynamic
    activations), PT2E with ``XNNPACKQuantizer``, before the final export."""
    torch, _ = mf._lazy_imports()
    tok = torch.tensor([[2, 3, 4]], dtype=torch.long)
    pos = torch.tensor([0], dtype=torch.long)
    dyn = ({1: torch.export.Dim("token_dim", max=DRIFT_CFG["max_seq_len"] - 1)}, None)
    if not quantized:
        return mf._export(mod, (tok, pos), dyn)
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(
        is_per_channel=True, is_dynamic=True, weight_qmin=DRIFT_WEIGHT_RANGE[0], weight_qmax=DRIFT_WEIGHT_RANGE[1]))
    with sdpa_kernel([SDPBackend.MATH]), torch.no_grad():
        gm = torch.export.export(mod, (tok, pos), dynamic_shapes=dyn, strict=True).module()
        gm = prepare_pt2e(gm, q)
        gm(tok, pos)
        gm = convert_pt2e(gm)
    return mf._export(gm, (tok, pos), dyn)


def _drop_entry(etrecord: Path, entry: str) -> None:
    """Leave one entry out of the (already deflated) ETRecord: the two-layer model's ATen program
    (``exported_program``, never read by ``numerics``) would push the file past etscope's
    decompressed-read limit (2 MB + 2 x the file size) and the fixture past its size budget."""
    import io
    import zipfile

    keep = io.BytesIO()
    with zipfile.ZipFile(etrecord) as src, zipfile.ZipFile(keep, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename != entry:
                zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                zi.compress_type = zipfile.ZIP_DEFLATED
                dst.writestr(zi, src.read(info.filename))
    etrecord.write_bytes(keep.getvalue())


def make_drift(name: str, how: str, out: Path) -> Dict[str, Any]:
    """The drift pair's side ``how`` (q8: int8 XNNPACK; cpu: fp32 CPU-only), in this process."""
    torch, _ = mf._lazy_imports()
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    mod, calls, sched = _drift_tokens()
    prog = _drift_export(mf._llama_module(dynamic=True, cfg=DRIFT_CFG), quantized=how == "q8")
    parts = [XnnpackPartitioner()] if how == "q8" else [mnf._NoPartition()]
    pte, er, info = mf._lower(prog, out, name, partitioners=parts)
    mnf._drop_pickles(er)
    _drop_entry(er, "exported_program")
    probe, pbin = out / f".{name}.probe.etdump", out / f".{name}.probe.bin"
    mf._run(pte, probe, pbin, 1 << 23, calls)
    need = mnf._buffer_need(probe)
    probe.unlink()
    pbin.unlink()
    size = (need + 4095) // 4096 * 4096
    res = mf._run(pte, out / f"{name}.etdump", out / f"{name}.debugbuf", size, calls)
    with torch.no_grad():
        eager = [mod(*args) for _, args in calls]
    err = max(float((o[0] - e).abs().max()) for o, e in zip(res.pop("outputs"), eager))
    entry = {"what": f"drift LLM {f'PT2E XNNPACKQuantizer: per-channel weights in {DRIFT_WEIGHT_RANGE}, dynamic int8 activations, XNNPACK-delegated' if how == 'q8' else 'fp32 CPU-only'}",
             **info, "etrecord_entries_left_out": ["exported_program", "torch pickles"], "model": f"executorch.examples.models.llama Transformer {DRIFT_CFG}, use_kv_cache=True, dynamic "
                              f"token dim, random weights (seed {mf.SEED})",
             "schedule": sched, "tokens_fed": [[int(t) for t in args[0].reshape(-1)] for _, args in calls],
             "tokens_source": "seeded random prompt, then the eager fp32 model's greedy tokens (both sides alike)",
             "debug_buffer_size": size, "debug_buffer_used": need, "run_s": res["run_s"],
             "max_abs_err_vs_eager_fp32": err}
    entry.update(_oracle(out, name))
    entry["oracle_layout"] = _pack_oracle(out / f"{name}.oracle.npz")
    return entry


def _pack_oracle(path: Path) -> str:
    """Rewrite an oracle npz (one entry per decoded tensor) packed: equal tensors stored once.

    A CPU-only LLM logs ~200 tensors per execute, many the same every run (weight permutes); one
    npz entry each costs ~300 bytes of zip and npy headers, more than their values. Packed:
    ``blob`` (uint8, the distinct tensors' bytes, C order), and per tensor ``keys``
    (``r<RunData>_e<event>_t<item>`` as before), ``offset``, ``nbytes``, ``dtype`` (numpy name),
    ``ndim``, ``shape`` (int64, padded with -1 to ``MAX_NDIM``)."""
    import hashlib

    import numpy as np

    z = np.load(path)
    arrays = {k: z[k] for k in z.files}
    z.close()
    width = max([1, *(a.ndim for a in arrays.values())])
    seen: Dict[bytes, int] = {}
    chunks, end = [], 0
    keys, offset, nbytes, dtype, ndim = [], [], [], [], []
    shape = np.full((len(arrays), width), -1, dtype=np.int64)
    for i, (k, a) in enumerate(arrays.items()):
        raw = np.ascontiguousarray(a).tobytes()
        h = hashlib.sha256(raw).digest()
        if h not in seen:
            seen[h] = end
            chunks.append(raw)
            end += len(raw)
        keys.append(k)
        offset.append(seen[h])
        nbytes.append(len(raw))
        dtype.append(a.dtype.str)
        ndim.append(a.ndim)
        shape[i, :a.ndim] = a.shape
    np.savez_compressed(path, blob=np.frombuffer(b"".join(chunks), dtype=np.uint8), keys=np.array(keys),
                        offset=np.array(offset, dtype=np.int64), nbytes=np.array(nbytes, dtype=np.int64),
                        dtype=np.array(dtype), ndim=np.array(ndim, dtype=np.int64), shape=shape)
    return (f"packed: {len(arrays)} decoded tensors, {len(seen)} distinct, in blob/keys/offset/nbytes/dtype/ndim/"
            "shape (tools/make_numerics_pairs.py _pack_oracle)")


def _oracle(out: Path, name: str) -> Dict[str, Any]:
    try:
        return mnf._oracle(out, name)
    except Exception as exc:  # the npz is written first; the Inspector's own check may refuse
        return {"oracle": f"{name}.oracle.npz", "inspector_debug_data_checked": f"{type(exc).__name__}: {exc}"[:300]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", action="append", choices=sorted(PAIRS))
    ap.add_argument("--one", choices=sorted(PAIRS), help=argparse.SUPPRESS)   # child process
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.one:
        print(json.dumps(make_one(args.one, out), default=str))
        return 0
    man_path = out / "pairs_manifest.json"
    manifest = json.loads(man_path.read_text()) if man_path.exists() else {}
    manifest.update({"generator": "tools/make_numerics_pairs.py", "versions": mf._versions(),
                     "seed": SEED, "llm_cfg": LLM_CFG, "drift_cfg": DRIFT_CFG})
    manifest.setdefault("fixtures", {})
    for name in args.only or list(PAIRS):
        p = subprocess.run([sys.executable, __file__, "--out", str(out), "--one", name], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr[-4000:], file=sys.stderr)
            return 1
        entry = json.loads(p.stdout.strip().splitlines()[-1])
        entry["files"] = {q.name: q.stat().st_size for q in sorted(out.glob(f"{name}.*"))}
        manifest["fixtures"][name] = entry
        print(name, entry["files"], flush=True)
    manifest["fixtures"] = dict(sorted(manifest["fixtures"].items()))
    man_path.write_text(json.dumps(manifest, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
