#!/usr/bin/env python3
"""Generate the REAL numerics fixtures (ETDump + debug buffer) and their Inspector oracles.

Needs the oracle environment (torch 2.13.0 + executorch 1.5.1, see DEVELOPERS.md)::

    /work/venv-oracle/bin/python tools/make_numerics_fixtures.py [--out tests/fixtures/numerics]

One small model, ``linear -> relu -> cumsum (CPU) -> linear -> tanh -> cumsum (CPU) -> linear``
(XNNPACK has no cumsum, so the delegated export has CPU ops between its partitions), exported four
ways and run on this CPU through ``executorch.runtime`` with ETDump and a debug buffer (the
runtime then logs intermediate outputs: every kernel call's outputs, every delegate call's
arguments, the program outputs):

* ``num_cpu``     no partitioner: every op a CPU kernel call;
* ``num_cpu_b``   the same ``num_cpu.pte`` loaded again (a second session, same inputs): CPU vs CPU;
* ``num_xnn``     XNNPACK-delegated (float);
* ``num_q8``      XNNPACK-quantized (int8 symmetric, ``XNNPACKQuantizer``, calibrated on the run's
                  inputs), run on the CPU kernels without a partitioner, so the int8 tensors between
                  quantize/dequantize ops reach the debug buffer: the error against ``num_cpu`` is real.

Every run uses the same inputs in the same order (``RUNS`` executes, a different input each).
For each NAME it writes ``NAME.etdump``, ``NAME.debugbuf`` (``num_cpu_b`` reuses ``num_cpu``'s
``.pte``/``.etrecord``), and ``NAME.oracle.npz``: every tensor of every debug event decoded by
executorch's Inspector code (``devtools.inspector._inspector_utils.inflate_runtime_output`` on the
events of ``deserialize_from_etdump_flatcc``), saved whole, keyed ``r<run>_e<event>_t<k>`` (run =
RunData index, event = index in the run's events, k = tensor index in a TensorList, 0 for a
Tensor). The Inspector itself (``Inspector(etdump, debug_buffer_path)``) refuses these ETDumps
(its runs' debug data differ: each run has its own input); the manifest records its message.
``manifest.json`` records versions, model, schedule, buffer sizes and tensor counts.
"""
from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import make_fixtures as mf  # noqa: E402  (shared export/run helpers; it imports torch lazily)

DEFAULT_OUT = REPO / "tests" / "fixtures" / "numerics"
RUNS = 3
SEED = 20261203
ALIGN = 64          # BufferDataSink's default alignment


def _model():
    torch, _ = mf._lazy_imports()
    nn = torch.nn

    class Net(nn.Module):
        """linear -> relu -> cumsum (CPU) -> linear -> tanh -> cumsum (CPU) -> linear."""

        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(16, 32)
            self.l2 = nn.Linear(32, 32)
            self.l3 = nn.Linear(32, 8)

        def forward(self, x):
            x = torch.cumsum(torch.relu(self.l1(x)), dim=1)
            x = torch.cumsum(torch.tanh(self.l2(x)), dim=1) * 0.25
            return self.l3(x)

    torch.manual_seed(SEED)
    return Net().eval()


def _inputs():
    torch, _ = mf._lazy_imports()
    g = torch.Generator().manual_seed(SEED)
    return [torch.randn(4, 16, generator=g) for _ in range(RUNS)]


def _quantized(mod, xs):
    torch, _ = mf._lazy_imports()
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    import executorch.kernels.quantized  # noqa: F401  (out variants of quantize/dequantize_per_tensor)

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=False))
    with torch.no_grad():
        gm = torch.export.export(mod, (xs[0],), strict=True).module()
        gm = prepare_pt2e(gm, q)
        for x in xs:
            gm(x)
        gm = convert_pt2e(gm)
    return mf._export(gm, (xs[0],))


def _buffer_need(etdump: Path) -> int:
    """Bytes of the debug buffer the runtime used (end of the last tensor), from the raw decode."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
    from executorch.devtools.etdump.schema_flatcc import ScalarType

    sizes = {ScalarType.FLOAT: 4, ScalarType.CHAR: 1, ScalarType.BYTE: 1, ScalarType.LONG: 8,
             ScalarType.INT: 4, ScalarType.BOOL: 1, ScalarType.DOUBLE: 8, ScalarType.SHORT: 2}
    et = deserialize_from_etdump_flatcc(etdump.read_bytes())
    end = 0
    for rd in et.run_data:
        for ev in rd.events or []:
            d = ev.debug_event
            if d is None or d.debug_entry is None:
                continue
            v = d.debug_entry
            ts = [v.tensor] if v.tensor is not None else list(v.tensor_list.tensors if v.tensor_list else [])
            for t in ts:
                n = 1
                for s in t.sizes:
                    n *= s
                if n and t.offset >= 0:
                    end = max(end, t.offset + n * sizes[t.scalar_type])
    return end


def _run(pte: Path, out: Path, name: str, xs) -> Dict[str, Any]:
    """Run once with a roomy buffer to learn the bytes used, then for real with a tight buffer
    (the runtime writes the whole buffer to the file: a tight one keeps the fixture small)."""
    probe = out / f".{name}.probe.etdump"
    mf._run(pte, probe, out / f".{name}.probe.bin", 1 << 22, [("forward", (x,)) for x in xs])
    need = _buffer_need(probe)
    probe.unlink()
    (out / f".{name}.probe.bin").unlink()
    size = (need + 4095) // 4096 * 4096
    res = mf._run(pte, out / f"{name}.etdump", out / f"{name}.debugbuf", size, [("forward", (x,)) for x in xs])
    return {"debug_buffer_size": size, "debug_buffer_used": need, "run_s": res["run_s"],
            "outputs": res["outputs"]}


def _oracle(out: Path, name: str) -> Dict[str, Any]:
    """Every debug tensor as executorch's Inspector decodes it, saved whole (npz)."""
    import warnings

    import numpy as np
    torch, _ = mf._lazy_imports()
    from executorch.devtools import Inspector
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
    from executorch.devtools.inspector._inspector_utils import inflate_runtime_output

    etdump, dbg = out / f"{name}.etdump", out / f"{name}.debugbuf"
    buf = dbg.read_bytes()
    et = deserialize_from_etdump_flatcc(etdump.read_bytes())
    arrays: Dict[str, np.ndarray] = {}
    per_run: List[List[Any]] = []
    for r, rd in enumerate(et.run_data):
        vals = []
        for e, ev in enumerate(rd.events or []):
            d = ev.debug_event
            if d is None:
                continue
            v = inflate_runtime_output(d.debug_entry, buf)
            ts = v if isinstance(v, list) else [v]
            for k, t in enumerate(ts):
                if isinstance(t, torch.Tensor):
                    arrays[f"r{r}_e{e}_t{k}"] = t.detach().contiguous().numpy().copy()
            vals.append(v)
        per_run.append(vals)
    np.savez_compressed(out / f"{name}.oracle.npz", **arrays)

    # The Inspector itself (merging runs) must show the same values as the per-event decode.
    # It refuses runs whose debug data differ (here: each run has its own input); then say so.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ins = Inspector(etdump_path=str(etdump), debug_buffer_path=str(dbg))
    except AssertionError as exc:
        return {"oracle": f"{name}.oracle.npz", "tensors": len(arrays),
                "inspector_debug_data_checked": f"Inspector refused the ETDump: {exc}",
                "oracle_source": _SOURCE}
    checked = 0
    flat = [t for r in per_run for v in r for t in (v if isinstance(v, list) else [v])
            if isinstance(t, torch.Tensor)]
    for blk in ins.event_blocks:
        for ev in blk.events:
            for v in ev.debug_data or []:
                for t in (v if isinstance(v, list) else [v]):
                    if isinstance(t, torch.Tensor):
                        assert any(t.shape == f.shape and t.dtype == f.dtype and torch.equal(t, f) for f in flat), \
                            f"{name}: Inspector debug_data of {ev.name} not among the per-event decodes"
                        checked += 1
    return {"oracle": f"{name}.oracle.npz", "tensors": len(arrays), "inspector_debug_data_checked": checked,
            "oracle_source": _SOURCE}


_SOURCE = ("executorch.devtools.inspector._inspector_utils.inflate_runtime_output on the events of "
           "deserialize_from_etdump_flatcc (every run, every debug event)")


def _drop_pickles(etrecord: Path) -> None:
    """Keep the ETRecord small: etscope never reads its torch pickles (state dicts, inputs)."""
    import io
    keep = io.BytesIO()
    with zipfile.ZipFile(etrecord) as src, zipfile.ZipFile(keep, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename.endswith(("_state_dict", "_constants", "_example_inputs")) or \
                    info.filename in ("reference_outputs", "representative_inputs"):
                continue
            zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zi.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(zi, src.read(info.filename))
    etrecord.write_bytes(keep.getvalue())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    torch, _ = mf._lazy_imports()
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    mod, xs = _model(), _inputs()
    with torch.no_grad():
        eager = [mod(x) for x in xs]
    ep = mf._export(mod, (xs[0],))
    q_ep = _quantized(mod, xs)
    manifest: Dict[str, Any] = {"generator": "tools/make_numerics_fixtures.py", "versions": mf._versions(),
                                "model": _model.__doc__ or "", "runs": RUNS, "seed": SEED,
                                "schedule": f"{RUNS} x execute(forward, x_i), x_i = randn(4, 16) (seeded), "
                                            "the same inputs in the same order for every fixture",
                                "fixtures": {}}
    plans = [("num_cpu", ep, [], "no partitioner: every op a CPU kernel call"),
             ("num_xnn", ep, [XnnpackPartitioner()], "XNNPACK-delegated, 2 CPU cumsums between partitions"),
             ("num_q8", q_ep, [], "XNNPACKQuantizer int8 (per-tensor symmetric), CPU kernels, no partitioner")]
    for name, prog, parts, what in plans:
        pte, er, info = mf._lower(prog, out, name, partitioners=parts or [_NoPartition()])
        _drop_pickles(er)
        res = _run(pte, out, name, xs)
        err = max(float((o[0] - ref).abs().max()) for o, ref in zip(res.pop("outputs"), eager))
        manifest["fixtures"][name] = {"what": what, **info, **res, "max_abs_err_vs_eager": err, **_oracle(out, name)}
    res = _run(out / "num_cpu.pte", out, "num_cpu_b", xs)
    res.pop("outputs")
    manifest["fixtures"]["num_cpu_b"] = {"what": "num_cpu.pte/.etrecord run again (second session, same inputs)",
                                         **res, **_oracle(out, "num_cpu_b")}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str) + "\n")
    for p in sorted(out.iterdir()):
        print(f"{p.stat().st_size:>9}  {p.name}")
    return 0


class _NoPartition:
    """A partitioner that delegates nothing (``to_edge_transform_and_lower`` wants a list)."""

    def __new__(cls):
        from executorch.exir.backend.partitioner import Partitioner, PartitionResult

        class NoPartition(Partitioner):
            def partition(self, exported_program):
                return PartitionResult(tagged_exported_program=exported_program, partition_tags={})

        return NoPartition()


if __name__ == "__main__":
    sys.exit(main())
