#!/usr/bin/env python3
"""Generate REAL ExecuTorch ETDump fixtures (plus oracle JSON) for etscope's tests.

This script is the only place in the repository that imports torch/executorch. It
needs an "oracle" environment (see DEVELOPERS.md)::

    python -m venv .venv-oracle
    .venv-oracle/bin/pip install torch==2.13.0
    .venv-oracle/bin/pip install executorch==1.5.1
    .venv-oracle/bin/python tools/make_fixtures.py

For every fixture NAME it exports a small model with
``to_edge_transform_and_lower(..., partitioner=[XnnpackPartitioner()],
generate_etrecord=True)``, runs it on this CPU through ``executorch.runtime`` with
ETDump enabled, and writes into ``--out`` (default ``tests/fixtures/real``):

* ``NAME.pte``            the program that ran
* ``NAME.etrecord``       ETRecord (zip); repacked with ZIP_DEFLATED when the stored
                          form would exceed the per-file budget (entries byte-identical;
                          see ``etrecord_repacked`` in the manifest)
* ``NAME.etdump``         the ETDump the runtime wrote
* ``NAME.debugbuf``       debug buffer (only for fixtures that log intermediate outputs)
* ``NAME.inspector.json`` what ``executorch.devtools.Inspector`` reports (the oracle)
* ``NAME.raw.json``       every RunData/event as decoded by executorch's own ETDump
                          deserializer (``deserialize_from_etdump_flatcc`` -> flatc)

and ``gen_manifest.json`` (versions, schedules, timings, sizes).

``--big N PATH`` additionally writes a large tiny-Llama ETDump (N executes of
[prefill(8) + 56 decodes] repeated) for benchmarks; it is not meant to be committed.
``--big-inspect`` also times the Inspector's construction on it (wall time, peak RSS)
in a child process and writes the numbers to ``PATH.meta.json``.

Every output name is prefixed ``gen_`` so it never collides with hand-copied fixtures.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "tests" / "fixtures" / "real"
MANIFEST = "gen_manifest.json"
FILE_BUDGET = 1_400_000  # keep every committed file < 1.5 MB
SEED = 20260802

# Tiny Llama configuration (same family as shared/data/executorch-cpu/llama.pte).
LLAMA_CFG = dict(
    dim=64,
    n_layers=2,
    n_heads=4,
    vocab_size=128,
    hidden_dim=192,
    max_seq_len=64,
    max_context_len=64,
)
PROMPT_LEN = 8


# --------------------------------------------------------------------------- utils


def _lazy_imports():
    """Import the heavy stack only when needed (so --help works anywhere)."""
    global torch, np
    import numpy as np  # noqa: F401
    import torch  # noqa: F401

    return torch, np


def _versions() -> Dict[str, Any]:
    torch, np = _lazy_imports()
    import executorch.version as etv
    from executorch.runtime import Runtime

    flatc = _flatc_path()
    flatc_ver = None
    if flatc:
        with contextlib.suppress(Exception):
            flatc_ver = subprocess.run(
                [flatc, "--version"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "executorch": etv.__version__,
        "executorch_git": getattr(etv, "git_version", None),
        "numpy": np.__version__,
        "flatc": flatc_ver,
        "flatc_path": _flatc_label(),
        "registered_backends": list(Runtime.get().backend_registry.registered_backend_names),
    }


def _flatc_path() -> Optional[str]:
    try:
        from executorch.exir._serialize._flatbuffer import _get_flatc_path

        p = _get_flatc_path()
    except Exception:
        return None
    if os.path.sep in p and os.path.exists(p):
        return p
    from shutil import which

    return which(p)


def _flatc_label() -> Optional[str]:
    """flatc location without machine-specific prefixes (for committed files)."""
    p = _flatc_path()
    if p is None:
        return None
    parts = Path(p).parts
    if "site-packages" in parts:
        return "<site-packages>/" + "/".join(parts[parts.index("site-packages") + 1 :])
    return Path(p).name


def _f(x: Any) -> Any:
    """numpy/torch scalars -> plain Python, floats kept exact (no rounding)."""
    torch, np = _lazy_imports()
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_f(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _f(v) for k, v in x.items()}
    if isinstance(x, bytes):
        return x.hex()
    return repr(x)


def _summarise_value(v: Any) -> Any:
    """Summarise Inspector debug_data entries (tensors) without storing them whole."""
    torch, np = _lazy_imports()
    if isinstance(v, torch.Tensor):
        t = v.detach()
        out = {
            "type": "tensor",
            "dtype": str(t.dtype).replace("torch.", ""),
            "shape": list(t.shape),
        }
        if t.is_floating_point() or t.dtype in (torch.int32, torch.int64):
            tf = t.double()
            out["sum"] = float(tf.sum())
            out["first"] = [float(x) for x in tf.flatten()[:4]]
        return out
    if isinstance(v, (list, tuple)):
        return [_summarise_value(x) for x in v]
    return _f(v)


def _write_json(path: Path, obj: Any) -> None:
    """Compact JSON; gzip'd (deterministically: mtime=0) when the name ends in .gz."""
    text = json.dumps(obj, indent=None, separators=(",", ":"), allow_nan=True) + "\n"
    if path.name.endswith(".gz"):
        import gzip

        with open(path, "wb") as raw, gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0
        ) as fh:
            fh.write(text.encode())
    else:
        path.write_text(text)


# ------------------------------------------------------------------ export / run


def _lower(
    programs: Any,
    out_dir: Path,
    name: str,
    backend_config: Any = None, partitioners: Any = None,
) -> Tuple[Path, Path, Dict[str, Any]]:
    """to_edge_transform_and_lower + to_executorch; writes NAME.pte and NAME.etrecord.
    ``partitioners``: a list for every method, or {method: list} (default: XNNPACK for all)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower

    t0 = time.perf_counter()
    edge = to_edge_transform_and_lower(
        programs, partitioner=partitioners or [XnnpackPartitioner()], generate_etrecord=True
    )
    et = edge.to_executorch(backend_config) if backend_config else edge.to_executorch()
    lower_s = time.perf_counter() - t0
    pte = out_dir / f"{name}.pte"
    pte.write_bytes(et.buffer)
    etrecord_path = out_dir / f"{name}.etrecord"
    et.get_etrecord().save(str(etrecord_path))
    info: Dict[str, Any] = {"lower_s": round(lower_s, 3), "etrecord_repacked": False}
    if etrecord_path.stat().st_size > FILE_BUDGET:
        _repack_deflate(etrecord_path)
        info["etrecord_repacked"] = "ZIP_DEFLATED (entries byte-identical to executorch's stored zip)"
    return pte, etrecord_path, info


def _repack_deflate(path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(
        buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9
    ) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = info.external_attr
            dst.writestr(zi, data)
    path.write_bytes(buf.getvalue())


def _run(
    pte: Path,
    etdump: Path,
    debugbuf: Optional[Path],
    debug_buffer_size: int,
    calls: Sequence[Tuple[str, Sequence[Any]]],
    on_output: Optional[Callable[[int, Sequence[Any]], None]] = None,
) -> Dict[str, Any]:
    """Load PTE with ETDump enabled, execute `calls` [(method, inputs)...], write ETDump."""
    from executorch.runtime import Runtime

    rt = Runtime.get()
    program = rt.load_program(
        str(pte), enable_etdump=True, debug_buffer_size=debug_buffer_size
    )
    methods: Dict[str, Any] = {}
    t0 = time.perf_counter()
    outs = []
    for i, (mname, inputs) in enumerate(calls):
        if mname not in methods:
            methods[mname] = program.load_method(mname)
        out = methods[mname].execute(list(inputs))
        if on_output is not None:
            on_output(i, out)
        outs.append(out)
    run_s = time.perf_counter() - t0
    if debugbuf is None:
        # write_etdump_result_to_file always wants a debug path; park it in a temp file.
        with tempfile.TemporaryDirectory() as td:
            program.write_etdump_result_to_file(str(etdump), os.path.join(td, "dbg.bin"))
    else:
        program.write_etdump_result_to_file(str(etdump), str(debugbuf))
    return {"run_s": round(run_s, 4), "outputs": outs}


# ------------------------------------------------------------------ oracles


def _raw_events(etdump_path: Path) -> Dict[str, Any]:
    """Decode the ETDump with executorch's own deserializer (shells out to flatc)."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    data = etdump_path.read_bytes()
    t0 = time.perf_counter()
    et = deserialize_from_etdump_flatcc(data)
    dt = time.perf_counter() - t0

    def val(v) -> Any:
        if v is None:
            return None
        d: Dict[str, Any] = {"val": v.val}
        if v.tensor is not None:
            d["tensor"] = {
                "scalar_type": getattr(v.tensor.scalar_type, "name", v.tensor.scalar_type),
                "sizes": list(v.tensor.sizes),
                "strides": list(v.tensor.strides),
                "offset": v.tensor.offset,
            }
        if v.tensor_list is not None:
            d["tensor_list"] = [
                {
                    "scalar_type": getattr(t.scalar_type, "name", t.scalar_type),
                    "sizes": list(t.sizes),
                    "strides": list(t.strides),
                    "offset": t.offset,
                }
                for t in v.tensor_list.tensors
            ]
        for k in ("int_value", "float_value", "double_value", "bool_value"):
            x = getattr(v, k)
            if x is not None:
                d[k] = dataclasses.asdict(x) if dataclasses.is_dataclass(x) else x
        if v.output is not None:
            d["output"] = v.output.bool_val if hasattr(v.output, "bool_val") else v.output
        return d

    runs = []
    for rd in et.run_data:
        evs = []
        for ev in rd.events or []:
            if ev.profile_event is not None:
                p = ev.profile_event
                md = p.delegate_debug_metadata
                if isinstance(md, (bytes, bytearray)):
                    md = md.hex()
                elif isinstance(md, list):
                    md = bytes(md).hex()
                evs.append(
                    [
                        "P",
                        p.name,
                        p.chain_index,
                        p.instruction_id,
                        p.delegate_debug_id_int,
                        p.delegate_debug_id_str,
                        p.start_time,
                        p.end_time,
                        md or None,
                    ]
                )
            elif ev.debug_event is not None:
                d = ev.debug_event
                evs.append(
                    [
                        "D",
                        d.name,
                        d.chain_index,
                        d.instruction_id,
                        d.delegate_debug_id_int,
                        d.delegate_debug_id_str,
                        val(d.debug_entry),
                    ]
                )
            elif ev.allocation_event is not None:
                a = ev.allocation_event
                evs.append(["A", a.allocator_id, a.allocation_size])
            else:
                evs.append(["?"])
        runs.append(
            {
                "name": rd.name,
                "bundled_input_index": rd.bundled_input_index,
                "allocators": [a.name for a in (rd.allocators or [])] or None,
                "events": evs,
            }
        )
    return {
        "source": "executorch.devtools.etdump.serialize.deserialize_from_etdump_flatcc",
        "flatc": _flatc_label(),
        "deserialize_s": round(dt, 4),
        "version": et.version,
        "columns": {
            "P": [
                "kind",
                "name",
                "chain_index",
                "instruction_id",
                "delegate_debug_id_int",
                "delegate_debug_id_str",
                "start_time",
                "end_time",
                "delegate_debug_metadata_hex",
            ],
            "D": [
                "kind",
                "name",
                "chain_index",
                "instruction_id",
                "delegate_debug_id_int",
                "delegate_debug_id_str",
                "debug_entry",
            ],
            "A": ["kind", "allocator_id", "allocation_size"],
        },
        "num_runs": len(runs),
        "num_events": sum(len(r["events"]) for r in runs),
        "run_data": runs,
    }


def _inspector_oracle(
    etdump: Path, etrecord: Optional[Path], debugbuf: Optional[Path]
) -> Dict[str, Any]:
    """Everything executorch's Inspector says about the ETDump (default NS -> MS)."""
    import warnings

    from executorch.devtools import Inspector

    kw: Dict[str, Any] = {"etdump_path": str(etdump)}
    if etrecord is not None:
        kw["etrecord"] = str(etrecord)
    if debugbuf is not None:
        kw["debug_buffer_path"] = str(debugbuf)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ins = Inspector(**kw)
    dt = time.perf_counter() - t0
    blocks = []
    for bi, blk in enumerate(ins.event_blocks):
        evs = []
        for ev in blk.events:
            pd = ev.perf_data
            e: Dict[str, Any] = {
                "name": ev.name,
                "instruction_id": ev._instruction_id,
                "is_delegated_op": ev.is_delegated_op,
                "delegate_backend_name": ev.delegate_backend_name,
                "delegate_debug_identifier": _f(ev.delegate_debug_identifier),
                "debug_handles": _f(ev.debug_handles),
                "op_types": list(ev.op_types),
                "num_outputs": ev.num_outputs,
                "num_runs": len(pd.raw) if pd is not None else 0,
                "raw": [float(x) for x in pd.raw] if pd is not None else None,
                "p10": _f(pd.p10) if pd is not None else None,
                "p50": _f(pd.p50) if pd is not None else None,
                "p90": _f(pd.p90) if pd is not None else None,
                "avg": _f(pd.avg) if pd is not None else None,
                "min": _f(pd.min) if pd is not None else None,
                "max": _f(pd.max) if pd is not None else None,
                "start_time": _f(ev.start_time),
                "module_hierarchy_keys": sorted(ev.module_hierarchy.keys()),
            }
            if ev.raw_delegate_debug_metadatas:
                e["delegate_debug_metadatas"] = _f(ev.raw_delegate_debug_metadatas)
            if ev.debug_data:
                e["debug_data"] = _summarise_value(list(ev.debug_data))
            evs.append(e)
        blocks.append(
            {
                "index": bi,
                "name": blk.name,
                "bundled_input_index": blk.bundled_input_index,
                "source_time_scale": blk.source_time_scale.value,
                "target_time_scale": blk.target_time_scale.value,
                "run_output": _summarise_value(list(blk.run_output))
                if blk.run_output
                else None,
                "num_events": len(evs),
                "events": evs,
            }
        )
    return {
        "source": "executorch.devtools.Inspector(etdump_path, etrecord%s)"
        % (", debug_buffer_path" if debugbuf else ""),
        "etrecord_used": etrecord is not None,
        "time_scale": "NS -> MS (default); raw/p*/avg/min/max are milliseconds",
        "construct_s": round(dt, 4),
        "num_event_blocks": len(blocks),
        "event_blocks": blocks,
    }


def _oracles(
    out: Path,
    name: str,
    etdump: Path,
    etrecord: Optional[Path],
    debugbuf: Optional[Path],
    entry: Dict[str, Any],
) -> None:
    # Raw decode via executorch's deserializer (needs flatc).
    if _flatc_path() is None:
        entry["raw_events"] = "skipped: flatc not found"
    else:
        try:
            raw = _raw_events(etdump)
            _write_json(out / f"{name}.raw.json.gz", raw)
            layout: List[List[Any]] = []
            for rd in raw["run_data"]:
                if layout and layout[-1][0] == rd["name"] and layout[-1][2] == len(rd["events"]):
                    layout[-1][1] += 1
                else:
                    layout.append([rd["name"], 1, len(rd["events"])])
            entry["raw_events"] = {
                "file": f"{name}.raw.json.gz",
                "num_runs": raw["num_runs"],
                "num_events": raw["num_events"],
                "run_data_layout": "[[RunData name, consecutive count, events per run], ...]",
                "run_data": layout,
            }
        except Exception as exc:  # pragma: no cover - depends on environment
            entry["raw_events"] = f"failed: {type(exc).__name__}: {exc}"

    # Inspector (with ETRecord; if it refuses, try without and record why).
    attempts = [("with_etrecord", etrecord)] if etrecord else []
    attempts.append(("without_etrecord", None))
    errors = {}
    for label, er in attempts:
        try:
            ora = _inspector_oracle(etdump, er, debugbuf)
        except Exception as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        ora["errors_from_earlier_attempts"] = errors or None
        _write_json(out / f"{name}.inspector.json.gz", ora)
        entry["inspector"] = {
            "file": f"{name}.inspector.json.gz",
            "etrecord_used": er is not None,
            "num_event_blocks": ora["num_event_blocks"],
            "construct_s": ora["construct_s"],
            "errors": errors or None,
        }
        return
    entry["inspector"] = {"file": None, "errors": errors}


# ------------------------------------------------------------------ models


def _cnn_module():
    torch, _ = _lazy_imports()
    nn = torch.nn

    class CNN(nn.Module):
        """conv/relu/pool -> cumsum (CPU) -> conv/relu/pool -> linear: 2 XNNPACK partitions."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = torch.max_pool2d(torch.relu(self.c1(x)), 2)
            x = torch.cumsum(x, dim=1)  # XNNPACK has no cumsum -> portable kernel
            x = torch.max_pool2d(torch.relu(self.c2(x)), 2)
            return self.fc(x.flatten(1))

    torch.manual_seed(SEED)
    return CNN().eval()


def _multipart_module():
    torch, _ = _lazy_imports()
    nn = torch.nn

    class MultiPart(nn.Module):
        """linear -> cumsum -> linear -> cumsum -> linear: 3 partitions, 2 CPU cumsums."""

        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(16, 32)
            self.l2 = nn.Linear(32, 32)
            self.l3 = nn.Linear(32, 8)

        def forward(self, x):
            x = torch.cumsum(self.l1(x), dim=-1)
            x = torch.cumsum(self.l2(x), dim=-1)
            return self.l3(x)

    torch.manual_seed(SEED)
    return MultiPart().eval()


def _loop_module():
    torch, _ = _lazy_imports()
    nn = torch.nn
    from functorch.experimental.control_flow import map as cf_map

    def body(x, y):
        return torch.cumsum(x, dim=0) * y

    class Loop(nn.Module):
        """linear (XNNPACK) -> map over 4 rows (emitted as a loop: same instructions run 4x
        per execute) -> linear (XNNPACK)."""

        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(8, 8)
            self.l2 = nn.Linear(8, 8)

        def forward(self, x):
            h = self.l1(x)
            h = cf_map(body, h, torch.ones(1))
            return self.l2(h)

    torch.manual_seed(SEED)
    return Loop().eval()


def _llama_module(dynamic: bool, cfg: Optional[Dict[str, int]] = None):
    torch, _ = _lazy_imports()
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(SEED)
    args = ModelArgs(
        use_kv_cache=True,
        enable_dynamic_shape=dynamic,
        generate_full_logits=False,
        **(cfg or LLAMA_CFG),
    )
    tr = construct_transformer(args).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, tokens, input_pos):
            return self.m(tokens, {"input_pos": input_pos})

    return Wrapper(tr).eval()


def _export(mod, args, dynamic_shapes=None):
    torch, _ = _lazy_imports()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.MATH]), torch.no_grad():
        ep = torch.export.export(mod, args, dynamic_shapes=dynamic_shapes, strict=True)
        return ep.run_decompositions({})


def _llama_dynamic_export():
    torch, _ = _lazy_imports()
    mod = _llama_module(dynamic=True)
    tok = torch.tensor([[2, 3, 4]], dtype=torch.long)
    pos = torch.tensor([0], dtype=torch.long)
    dyn = (
        {1: torch.export.Dim("token_dim", max=LLAMA_CFG["max_seq_len"] - 1)},
        None,
    )
    return mod, _export(mod, (tok, pos), dyn)


def _llama_schedule(n_seqs: int, n_decodes: int) -> List[Dict[str, Any]]:
    sched = []
    for s in range(n_seqs):
        sched.append({"seq": s, "phase": "prefill", "tokens": PROMPT_LEN, "start_pos": 0})
        for d in range(n_decodes):
            sched.append(
                {"seq": s, "phase": "decode", "tokens": 1, "start_pos": PROMPT_LEN + d}
            )
    return sched


class _LlamaDriver:
    """Produces (method, inputs) for a schedule with greedy decoding, remembering inputs
    and outputs so the run can be replayed through the eager model afterwards."""

    def __init__(self, schedule, method_for_phase=None, static_pos=False, cfg=None):
        torch, _ = _lazy_imports()
        self.cfg = cfg or LLAMA_CFG
        self.schedule = schedule
        self.method_for_phase = method_for_phase or {}
        self.static_pos = static_pos
        self.g = torch.Generator().manual_seed(SEED)
        self.next_tok: Optional[int] = None
        self.inputs: List[Tuple[Any, Any]] = []
        self.outputs: List[Any] = []

    def __iter__(self):
        torch, _ = _lazy_imports()
        vocab = self.cfg["vocab_size"]
        for st in self.schedule:
            m = self.method_for_phase.get(st["phase"], "forward")
            if st["phase"] == "prefill":
                tok = torch.randint(1, vocab, (1, st["tokens"]), generator=self.g, dtype=torch.long)
            else:
                tok = torch.tensor([[self.next_tok]], dtype=torch.long)
            if self.static_pos:
                pos = torch.arange(st["start_pos"], st["start_pos"] + st["tokens"], dtype=torch.long)
            else:
                pos = torch.tensor([st["start_pos"]], dtype=torch.long)
            self.inputs.append((tok, pos))
            yield (m, (tok, pos))

    def on_output(self, i, out):
        torch, _ = _lazy_imports()
        logits = out[0]
        self.outputs.append(logits.clone())
        self.next_tok = int(torch.argmax(logits.reshape(-1, self.cfg["vocab_size"])[-1]).item())

    def max_err_vs_eager(self, dynamic: bool) -> float:
        """Replay the same inputs through a fresh eager model (same seed => same weights)."""
        torch, _ = _lazy_imports()
        mod = _llama_module(dynamic=dynamic, cfg=self.cfg)
        err = 0.0
        with torch.no_grad():
            for (tok, pos), got in zip(self.inputs, self.outputs):
                ref = mod(tok, pos)
                err = max(err, float((got - ref).abs().max()))
        return err


# ------------------------------------------------------------------ fixtures

_FWD = {"method": "forward", "phase": "forward", "tokens": None}


def fx_cnn(out: Path) -> Dict[str, Any]:
    torch, _ = _lazy_imports()
    name = "gen_cnn"
    mod = _cnn_module()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(SEED))
    ep = _export(mod, (x,))
    pte, er, info = _lower(ep, out, name)
    return _cnn_run(out, name, pte, er, mod, x, info)


def _cnn_run(out, name, pte, er, mod, x, info) -> Dict[str, Any]:
    torch, _ = _lazy_imports()
    n = 10
    dbg_size = 128 * 1024
    res = _run(
        pte, out / f"{name}.etdump", out / f"{name}.debugbuf", dbg_size, [("forward", (x,))] * n
    )
    with torch.no_grad():
        ref = mod(x)
    entry = {
        **info,
        "model": "conv3x3(3->8)/relu/maxpool -> cumsum(dim=1, CPU) -> conv3x3(8->8)/relu/maxpool -> linear(128->10); input 1x3x16x16 (same input every execute)",
        "expect": "2 XnnpackBackend DELEGATE_CALLs + 1 native cumsum per execute; debug events (delegate in/out tensors, cumsum output, program output)",
        "executes": n,
        "schedule": [_FWD] * n,
        "debug_buffer_size": dbg_size,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": float((res["outputs"][-1][0] - ref).abs().max()),
    }
    _oracles(out, name, out / f"{name}.etdump", er, out / f"{name}.debugbuf", entry)
    return entry


def fx_cnn_b(out: Path) -> Dict[str, Any]:
    """gen_cnn's own .pte re-run (fresh runtime load, same input): a noise-only diff partner."""
    torch, _ = _lazy_imports()
    pte, er = out / "gen_cnn.pte", out / "gen_cnn.etrecord"
    if not (pte.exists() and er.exists()):
        fx_cnn(out)
    mod = _cnn_module()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(SEED))
    e = _cnn_run(out, "gen_cnn_b", pte, er, mod, x, {"pte": "gen_cnn.pte", "etrecord": "gen_cnn.etrecord"})
    e["pair_of"] = "gen_cnn: same .pte/.etrecord, same input, fresh load_program (new ETDump) in the same process; differences are run-to-run noise only"
    return e


def fx_multipart(out: Path) -> Dict[str, Any]:
    torch, _ = _lazy_imports()
    mod = _multipart_module()
    x = torch.randn(1, 16, generator=torch.Generator().manual_seed(SEED))
    ep = _export(mod, (x,))
    name = "gen_multipart"
    pte, er, info = _lower(ep, out, name)
    n = 20
    res = _run(pte, out / f"{name}.etdump", None, 0, [("forward", (x,))] * n)
    with torch.no_grad():
        ref = mod(x)
    entry = {
        **info,
        "model": "linear(16->32) -> cumsum -> linear(32->32) -> cumsum -> linear(32->8); input 1x16 (same input every execute)",
        "expect": "3 XnnpackBackend DELEGATE_CALLs + 2 native cumsum calls per execute (the two cumsums are different instructions)",
        "executes": n,
        "schedule": [_FWD] * n,
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": float((res["outputs"][-1][0] - ref).abs().max()),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


def fx_loop(out: Path) -> Dict[str, Any]:
    torch, _ = _lazy_imports()
    mod = _loop_module()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(SEED))
    ep = _export(mod, (x,))
    name = "gen_loop"
    pte, er, info = _lower(ep, out, name)
    n = 5
    res = _run(pte, out / f"{name}.etdump", None, 0, [("forward", (x,))] * n)
    with torch.no_grad():
        ref = mod(x)
    entry = {
        **info,
        "model": "linear(8->8) -> control_flow.map(cumsum(row)*1) over 4 rows -> linear(8->8); input 4x8",
        "expect": "the map body's instructions run 4 times per execute (same instruction_id each time): "
        "same-signature events within one run, which the Inspector collapses",
        "loop_iterations_per_execute": 4,
        "executes": n,
        "schedule": [_FWD] * n,
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": float((res["outputs"][-1][0] - ref).abs().max()),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


def fx_llama(out: Path) -> Dict[str, Any]:
    name = "gen_llama"
    _, ep = _llama_dynamic_export()
    pte, er, info = _lower(ep, out, name)
    sched = _llama_schedule(n_seqs=2, n_decodes=15)
    drv = _LlamaDriver(sched)
    res = _run(pte, out / f"{name}.etdump", None, 0, drv, drv.on_output)
    entry = {
        **info,
        "model": "executorch.examples.models.llama Transformer %s, use_kv_cache=True, enable_dynamic_shape=True (token dim 1..%d), random weights (seed %d), greedy decoding"
        % (LLAMA_CFG, LLAMA_CFG["max_seq_len"] - 1, SEED),
        "method": "forward(tokens[1,S] int64, input_pos[1] int64 = start position)",
        "executes": len(sched),
        "schedule": [
            {"method": "forward", "phase": s["phase"], "tokens": s["tokens"], "start_pos": s["start_pos"], "seq": s["seq"]}
            for s in sched
        ],
        "schedule_summary": "2 x [prefill(%d tokens) + 15 decodes(1 token)]; execute i <-> i-th Execute RunData" % PROMPT_LEN,
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": drv.max_err_vs_eager(dynamic=True),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


def fx_llama_multimethod(out: Path) -> Dict[str, Any]:
    torch, _ = _lazy_imports()
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass

    name = "gen_llama_multimethod"
    mod = _llama_module(dynamic=False)
    pre = _export(
        mod,
        (torch.zeros(1, PROMPT_LEN, dtype=torch.long), torch.arange(PROMPT_LEN, dtype=torch.long)),
    )
    dec = _export(mod, (torch.zeros(1, 1, dtype=torch.long), torch.tensor([0], dtype=torch.long)))
    share: Any = True
    try:
        pte, er, info = _lower(
            {"prefill": pre, "decode": dec},
            out,
            name,
            ExecutorchBackendConfig(
                memory_planning_pass=MemoryPlanningPass(share_mutable_buffers=True),
                emit_mutable_buffer_names=True,
            ),
        )
    except Exception as exc:  # fall back to separate KV caches per method
        share = f"no ({type(exc).__name__}: {str(exc)[:200]})"
        pte, er, info = _lower({"prefill": pre, "decode": dec}, out, name)
    sched = _llama_schedule(n_seqs=2, n_decodes=7)
    drv = _LlamaDriver(sched, method_for_phase={"prefill": "prefill", "decode": "decode"}, static_pos=True)
    res = _run(pte, out / f"{name}.etdump", None, 0, drv, drv.on_output)
    entry = {
        **info,
        "model": "same tiny Llama (enable_dynamic_shape=False), two methods in one .pte",
        "methods": {
            "prefill": "tokens[1,%d] int64, input_pos[%d] int64 = positions" % (PROMPT_LEN, PROMPT_LEN),
            "decode": "tokens[1,1] int64, input_pos[1] int64",
        },
        "share_mutable_buffers": share,
        "executes": len(sched),
        "schedule": [
            {"method": s["phase"], "phase": s["phase"], "tokens": s["tokens"], "start_pos": s["start_pos"], "seq": s["seq"]}
            for s in sched
        ],
        "schedule_summary": "2 x [prefill method (%d tokens) + 7 x decode method (1 token)]; the ETDump does not record which method ran" % PROMPT_LEN,
        "method_loading": "lazy: 'prefill' loaded before execute #0, 'decode' loaded before execute #1; each load_method writes its own 'Default' RunData (see raw_events.run_data)",
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": drv.max_err_vs_eager(dynamic=False),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


# A smaller Llama for the two-plan fixture: two methods' graphs, edge programs and ETRecord
# stay well under the per-file budget.
SMALL_LLAMA_CFG = dict(
    dim=32,
    n_layers=1,
    n_heads=2,
    vocab_size=64,
    hidden_dim=64,
    max_seq_len=32,
    max_context_len=32,
)


def fx_llama_mixed(out: Path) -> Dict[str, Any]:
    """Two methods with DIFFERENT instruction sequences run interleaved into one ETDump:
    ``prefill`` fully XNNPACK-partitioned, ``decode`` lowered without XNNPACK's linear configs
    (its linears run as portable kernels on the CPU)."""
    torch, _ = _lazy_imports()
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass

    name = "gen_llama_mixed"
    cfg = SMALL_LLAMA_CFG
    mod = _llama_module(dynamic=False, cfg=cfg)
    pre = _export(
        mod,
        (torch.zeros(1, PROMPT_LEN, dtype=torch.long), torch.arange(PROMPT_LEN, dtype=torch.long)),
    )
    dec = _export(mod, (torch.zeros(1, 1, dtype=torch.long), torch.tensor([0], dtype=torch.long)))
    full, full_info = _diff_partitioner("default")
    partial, partial_info = _diff_partitioner("no_linear")
    pte, er, info = _lower(
        {"prefill": pre, "decode": dec},
        out,
        name,
        ExecutorchBackendConfig(
            memory_planning_pass=MemoryPlanningPass(share_mutable_buffers=True),
            emit_mutable_buffer_names=True,
        ),
        partitioners={"prefill": [full], "decode": [partial]},
    )
    sched = _llama_schedule(n_seqs=2, n_decodes=6)
    drv = _LlamaDriver(sched, method_for_phase={"prefill": "prefill", "decode": "decode"},
                       static_pos=True, cfg=cfg)
    res = _run(pte, out / f"{name}.etdump", None, 0, drv, drv.on_output)
    entry = {
        **info,
        "model": "tiny Llama %s (enable_dynamic_shape=False), two methods in one .pte with different partitioning"
        % (cfg,),
        "methods": {
            "prefill": "tokens[1,%d] int64, input_pos[%d] int64; partitioner %s"
            % (PROMPT_LEN, PROMPT_LEN, full_info["code"]),
            "decode": "tokens[1,1] int64, input_pos[1] int64; partitioner %s" % partial_info["code"],
        },
        "expect": "prefill and decode execute different instruction sequences (decode's linears are "
        "portable CPU kernels); the ETDump does not record which method ran",
        "share_mutable_buffers": True,
        "executes": len(sched),
        "schedule": [
            {"method": s["phase"], "phase": s["phase"], "tokens": s["tokens"], "start_pos": s["start_pos"], "seq": s["seq"]}
            for s in sched
        ],
        "schedule_summary": "2 x [prefill method (%d tokens) + 6 x decode method (1 token)], interleaved in one ETDump"
        % PROMPT_LEN,
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": drv.max_err_vs_eager(dynamic=False),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


def _chunked_schedule(n_seqs: int, chunks: int, n_decodes: int) -> List[Dict[str, Any]]:
    sched = []
    for s in range(n_seqs):
        for c in range(chunks):
            sched.append({"seq": s, "phase": "prefill", "tokens": PROMPT_LEN, "start_pos": c * PROMPT_LEN})
        for d in range(n_decodes):
            sched.append({"seq": s, "phase": "decode", "tokens": 1, "start_pos": chunks * PROMPT_LEN + d})
    return sched


def fx_llama_chunked(out: Path) -> Dict[str, Any]:
    """gen_llama.pte re-run with chunked prompts: most executes are prefills."""
    pte, er = out / "gen_llama.pte", out / "gen_llama.etrecord"
    if not (pte.exists() and er.exists()):
        fx_llama(out)
    name = "gen_llama_chunked"
    sched = _chunked_schedule(n_seqs=2, chunks=5, n_decodes=2)
    drv = _LlamaDriver(sched)
    res = _run(pte, out / f"{name}.etdump", None, 0, drv, drv.on_output)
    entry = {
        "pte": "gen_llama.pte",
        "etrecord": "gen_llama.etrecord",
        "model": "gen_llama's program (one dynamic-shape method 'forward')",
        "method": "forward(tokens[1,S] int64, input_pos[1] int64 = start position)",
        "executes": len(sched),
        "schedule": [
            {"method": "forward", "phase": s["phase"], "tokens": s["tokens"], "start_pos": s["start_pos"], "seq": s["seq"]}
            for s in sched
        ],
        "schedule_summary": "2 x [5 prefill chunks of %d tokens (positions 0, 8, .. 32) + 2 decodes]: "
        "10 prefills, 4 decodes" % PROMPT_LEN,
        "debug_buffer_size": 0,
        "run_s": res["run_s"],
        "max_abs_err_vs_eager": drv.max_err_vs_eager(dynamic=True),
    }
    _oracles(out, name, out / f"{name}.etdump", er, None, entry)
    return entry


# ------------------------------------------------------------------ diff fixtures
#
# Fixture pairs for `etscope diff base.etdump new.etdump` (tests/fixtures/diff/, own manifest
# `manifest.json`; the gen_* files and gen_manifest.json are not touched). One model family,
# `_DiffCNN(width)`: width 8 is gen_cnn's model (same layers, same seed => same weights, same
# input); the variants change only what their entry says:
#
# * diff_same      width 8, XnnpackPartitioner(): exported once, run in DIFF_SESSIONS separate
#                  runtime sessions (one child Python process each: Runtime -> load_program ->
#                  load_method -> DIFF_EXECUTES executes -> write ETDump) -> diff_same_00..NN
# * diff_cpu_moved width 8, XnnpackPartitioner(configs=ALL minus Linear/Addmm/MM/Permute): the
#                  linear layer leaves XNNPACK and runs as portable permute_copy + addmm
# * diff_slower    width 32 (same graph, ~9x the MACs)
# * diff_faster    width 4 (same graph, ~0.4x the MACs)
#
# Every variant is run the same way as one diff_same session. Debug buffer off (profiling only).
# Per fixture: NAME.pte, NAME.etrecord, NAME[_NN].etdump and, as for gen_*, the oracles
# NAME[_NN].raw.json.gz (executorch's deserializer) and NAME[_NN].inspector.json.gz (Inspector).

DIFF_OUT = REPO / "tests" / "fixtures" / "diff"
DIFF_MANIFEST = "manifest.json"
DIFF_FILE_BUDGET = 300_000  # per committed file
DIFF_TOTAL_BUDGET = 3_000_000
DIFF_SESSIONS = 10
DIFF_EXECUTES = 30
DIFF_BASE_WIDTH = 8


def _diff_cnn_module(width: int):
    torch, _ = _lazy_imports()
    nn = torch.nn

    class DiffCNN(nn.Module):
        """gen_cnn's CNN with a variable channel width (8 == gen_cnn)."""

        def __init__(self, w: int):
            super().__init__()
            self.c1 = nn.Conv2d(3, w, 3, padding=1)
            self.c2 = nn.Conv2d(w, w, 3, padding=1)
            self.fc = nn.Linear(w * 4 * 4, 10)

        def forward(self, x):
            x = torch.max_pool2d(torch.relu(self.c1(x)), 2)
            x = torch.cumsum(x, dim=1)  # XNNPACK has no cumsum -> portable kernel
            x = torch.max_pool2d(torch.relu(self.c2(x)), 2)
            return self.fc(x.flatten(1))

    torch.manual_seed(SEED)
    return DiffCNN(width).eval()


def _diff_input():
    torch, _ = _lazy_imports()
    return torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(SEED))


def _diff_model_text(width: int) -> str:
    w = width
    return (
        f"conv3x3(3->{w})/relu/maxpool -> cumsum(dim=1) -> conv3x3({w}->{w})/relu/maxpool -> "
        f"flatten -> linear({w * 16}->10); input 1x3x16x16 (seed {SEED}, same input every execute); "
        f"weights torch.manual_seed({SEED})"
    )


def _diff_macs(width: int) -> Dict[str, int]:
    w = width
    m = {"conv1": 3 * w * 9 * 16 * 16, "conv2": w * w * 9 * 8 * 8, "linear": w * 16 * 10}
    m["total"] = sum(m.values())
    return m


_NO_LINEAR = ("LinearConfig", "AddmmConfig", "MMConfig", "PermuteConfig")


def _diff_partitioner(kind: str) -> Tuple[Any, Dict[str, Any]]:
    from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    if kind == "default":
        return XnnpackPartitioner(), {
            "code": "XnnpackPartitioner()",
            "configs": "ALL_PARTITIONER_CONFIGS (%d)" % len(ALL_PARTITIONER_CONFIGS),
        }
    if kind == "no_linear":
        cfgs = [c for c in ALL_PARTITIONER_CONFIGS if c.__name__ not in _NO_LINEAR]
        assert len(cfgs) == len(ALL_PARTITIONER_CONFIGS) - len(_NO_LINEAR)
        return XnnpackPartitioner(configs=cfgs), {
            "code": "XnnpackPartitioner(configs=[c for c in ALL_PARTITIONER_CONFIGS if c.__name__ not in %r])"
            % (_NO_LINEAR,),
            "configs": "ALL_PARTITIONER_CONFIGS (%d) minus %s" % (len(ALL_PARTITIONER_CONFIGS), ", ".join(_NO_LINEAR)),
            "why": "without LinearConfig the linear is decomposed to permute_copy(weight) + addmm; "
            "AddmmConfig/MMConfig would put the addmm back into XNNPACK and PermuteConfig the weight transpose",
        }
    raise ValueError(kind)


def _op_name(target: Any) -> str:
    torch, _ = _lazy_imports()
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.linear.default
    return getattr(target, "__name__", str(target))  # EdgeOpOverload: aten.cumsum.default


def _source_of(node: Any) -> Optional[Dict[str, Any]]:
    """Innermost frame of this file in the node's stack trace: {file, line, code}."""
    import re

    st = node.meta.get("stack_trace") or ""
    lines = st.splitlines()
    hit = None
    for i, ln in enumerate(lines):
        m = re.match(r'\s*File "(.*)", line (\d+), in (\S+)', ln)
        if m and Path(m.group(1)).name == Path(__file__).name:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            hit = {"file": "tools/" + Path(m.group(1)).name, "line": int(m.group(2)), "code": code}
    return hit


def _placement(edge: Any) -> List[Dict[str, Any]]:
    """Top-level steps of the lowered program, in order (== instruction ids; checked against
    the ETDump later): delegate calls with the edge ops they contain, and CPU (portable) ops."""
    ep = edge.exported_program()
    gm = ep.graph_module
    steps: List[Dict[str, Any]] = []
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target.__name__ == "getitem":
            continue
        if n.target.__name__ == "executorch_call_delegate":
            lm = getattr(gm, n.args[0].target)
            ops = [
                {"op": _op_name(m.target), "source": _source_of(m)}
                for m in lm.original_module.graph.nodes
                if m.op == "call_function" and getattr(m.target, "__name__", "") != "getitem"
            ]
            steps.append({"instruction_id": len(steps), "kind": "delegate", "backend": lm.backend_id, "ops": ops})
        else:
            steps.append(
                {
                    "instruction_id": len(steps),
                    "kind": "cpu",
                    "backend": None,
                    "ops": [{"op": _op_name(n.target), "source": _source_of(n)}],
                }
            )
    return steps


def _where_by_line(steps: List[Dict[str, Any]]) -> Dict[int, List[str]]:
    out: Dict[int, List[str]] = {}
    for s in steps:
        for o in s["ops"]:
            line = (o["source"] or {}).get("line", -1)
            out.setdefault(line, []).append(
                "%s@%s[instr %d]" % (o["op"], s["backend"] or "CPU", s["instruction_id"])
            )
    return out


def _moved(base: List[Dict[str, Any]], new: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Source lines whose ops run on a different backend (or as different ops) in `new`."""
    codes = {
        o["source"]["line"]: o["source"]["code"]
        for s in base + new
        for o in s["ops"]
        if o["source"]
    }
    import collections

    b, n = _where_by_line(base), _where_by_line(new)
    res = []
    for line in sorted(set(b) | set(n)):
        cb = collections.Counter(x.split("[")[0] for x in b.get(line, []))
        cn = collections.Counter(x.split("[")[0] for x in n.get(line, []))
        if cb != cn:
            res.append(
                {
                    "line": line,
                    "code": codes.get(line),
                    "only_in_base": sorted((cb - cn).elements()),
                    "only_in_new": sorted((cn - cb).elements()),
                    "base": b.get(line, []),
                    "new": n.get(line, []),
                }
            )
    return res


_DIFF_LOWERED: Dict[Tuple[int, str], Any] = {}


def _diff_lower(out: Path, name: str, width: int, pkind: str) -> Dict[str, Any]:
    """Export + lower like _lower (own copy: the placement is read off the edge program)."""
    from executorch.exir import to_edge_transform_and_lower

    mod = _diff_cnn_module(width)
    x = _diff_input()
    ep = _export(mod, (x,))
    part, pinfo = _diff_partitioner(pkind)
    t0 = time.perf_counter()
    edge = to_edge_transform_and_lower(ep, partitioner=[part], generate_etrecord=True)
    steps = _placement(edge)  # before to_executorch(), which rewrites the graph (out variants, allocs)
    et = edge.to_executorch()
    lower_s = time.perf_counter() - t0
    _DIFF_LOWERED[(width, pkind)] = steps
    info: Dict[str, Any] = {"lower_s": round(lower_s, 3), "etrecord_repacked": False}
    if out is not None:
        pte = out / f"{name}.pte"
        pte.write_bytes(et.buffer)
        er = out / f"{name}.etrecord"
        et.get_etrecord().save(str(er))
        if er.stat().st_size > DIFF_FILE_BUDGET:
            _repack_deflate(er)
            info["etrecord_repacked"] = "ZIP_DEFLATED (entries byte-identical to executorch's stored zip)"
    info.update(
        {
            "model": _diff_model_text(width),
            "width": width,
            "macs": _diff_macs(width),
            "partitioner": pinfo,
            "placement": steps,
        }
    )
    return info


def _base_placement() -> List[Dict[str, Any]]:
    key = (DIFF_BASE_WIDTH, "default")
    if key not in _DIFF_LOWERED:
        _diff_lower(None, "diff_same", DIFF_BASE_WIDTH, "default")  # placement only
    return _DIFF_LOWERED[key]


_SESSION = r"""
import json, os, sys, tempfile, time
import torch
from executorch.runtime import Runtime
pte, etdump, inp, outp, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
x = torch.load(inp)


def cpu_sample(dt=0.25):
    # this VM's CPUs over dt seconds (this process sleeps meanwhile): busy and steal fractions
    def snap():
        with open("/proc/stat") as f:
            return [int(t) for t in f.readline().split()[1:]]
    a = snap()
    time.sleep(dt)
    d = [y - x for x, y in zip(a, snap())]
    tot = max(1, sum(d))
    return {"busy": round(1.0 - (d[3] + d[4]) / tot, 3), "steal": round(d[7] / tot, 3) if len(d) > 7 else None}


cpu_before = cpu_sample()
load0 = os.getloadavg()
rt = Runtime.get()
t0 = time.perf_counter()
program = rt.load_program(pte, enable_etdump=True, debug_buffer_size=0)
method = program.load_method("forward")
t1 = time.perf_counter()
outs = [method.execute([x]) for _ in range(n)]
t2 = time.perf_counter()
with tempfile.TemporaryDirectory() as td:
    program.write_etdump_result_to_file(etdump, os.path.join(td, "dbg.bin"))
torch.save([o[0] for o in outs], outp)
threads = None
try:
    from executorch.extension.pybindings.portable_lib import _threadpool_get_thread_count
    threads = _threadpool_get_thread_count()
except Exception:
    pass
print(json.dumps({"pid": os.getpid(), "load_s": round(t1 - t0, 4), "run_s": round(t2 - t1, 4),
                  "cpu_before": cpu_before,
                  "loadavg_before": [round(v, 2) for v in load0],
                  "loadavg_after": [round(v, 2) for v in os.getloadavg()],
                  "threadpool_threads": threads}))
"""


def _diff_session(pte: Path, etdump: Path, n: int, mod: Any) -> Dict[str, Any]:
    """One runtime session in a fresh child process; returns timing + output checks."""
    torch, np = _lazy_imports()
    x = _diff_input()
    with tempfile.TemporaryDirectory() as td:
        inp, outp = Path(td) / "x.pt", Path(td) / "out.pt"
        torch.save(x, inp)
        p = subprocess.run(
            [sys.executable, "-c", _SESSION, str(pte), str(etdump), str(inp), str(outp), str(n)],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise RuntimeError(f"session failed: {p.stderr[-2000:]}")
        info = json.loads(p.stdout.strip().splitlines()[-1])
        outs = torch.load(outp)
    with torch.no_grad():
        ref = mod(x)
    info.pop("pid", None)
    info["max_abs_err_vs_eager"] = max(float((o - ref).abs().max()) for o in outs)
    info["outputs_identical_across_executes"] = all(torch.equal(o, outs[0]) for o in outs)
    return info


def _execute_stats(raw: Dict[str, Any]) -> Dict[str, Any]:
    """Method::execute durations (ns, end - start of the raw events) per Execute RunData."""
    _, np = _lazy_imports()
    ns = []
    for rd in raw["run_data"]:
        if rd["name"] != "Execute":
            continue
        ev = [e for e in rd["events"] if e[0] == "P" and e[1] == "Method::execute"]
        assert len(ev) == 1, ev
        ns.append(ev[0][7] - ev[0][6])
    a = np.asarray(ns, dtype=np.float64)
    return {
        "unit": "ns",
        "source": "deserialize_from_etdump_flatcc: Method::execute end_time - start_time, one per Execute RunData",
        "n": len(ns),
        "p50": float(np.percentile(a, 50)),
        "p50_without_first": float(np.percentile(a[1:], 50)),
        "p10": float(np.percentile(a, 10)),
        "p90": float(np.percentile(a, 90)),
        "mean": float(a.mean()),
        "min": int(a.min()),
        "max": int(a.max()),
        "first": int(a[0]),
        "all": [int(v) for v in ns],
    }


def _step_shares(raw: Dict[str, Any]) -> Dict[str, Any]:
    """Per top-level instruction (DELEGATE_CALL / OPERATOR_CALL): median duration (ns) and median
    share of its run's Method::execute. Shares stay put when the whole machine is slower."""
    _, np = _lazy_imports()
    rows: Dict[str, List[Tuple[int, float]]] = {}
    for rd in raw["run_data"]:
        if rd["name"] != "Execute":
            continue
        ex = next(e for e in rd["events"] if e[0] == "P" and e[1] == "Method::execute")
        total = ex[7] - ex[6]
        for e in rd["events"]:
            if e[0] == "P" and e[1] in ("DELEGATE_CALL", "OPERATOR_CALL"):
                d = e[7] - e[6]
                rows.setdefault(f"{e[3]}:{e[1]}", []).append((d, d / total))
    return {
        k: {"median_ns": float(np.median([a for a, _ in v])), "median_share": round(float(np.median([b for _, b in v])), 4)}
        for k, v in rows.items()
    }


def _check_instructions(raw: Dict[str, Any], steps: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Check the placement's instruction ids against the ETDump; collect the XNNPACK runtime
    op names (delegate_debug_id_str) of every DELEGATE_CALL (from the first Execute run)."""
    rd = next(r for r in raw["run_data"] if r["name"] == "Execute")
    ok = True
    xnn: Dict[str, List[str]] = {}
    for s in steps:
        evs = [e for e in rd["events"] if e[0] == "P" and e[2] == 0 and e[3] == s["instruction_id"]]
        names = [e[1] for e in evs if e[1]]
        if s["kind"] == "delegate":
            ok &= names == ["DELEGATE_CALL"]
            xnn[str(s["instruction_id"])] = [e[5] for e in evs if not e[1] and e[5]]
        else:
            op = s["ops"][0]["op"].split(".")[1]  # aten.addmm.default -> addmm
            ok &= any(nm.startswith(f"native_call_{op}.") for nm in names) and "OPERATOR_CALL" in names
    return {"instruction_ids_match_etdump": bool(ok), "xnnpack_ops_per_delegate_call": xnn}


def _inspector_execute_p50(ora_path: Path) -> Optional[float]:
    import gzip

    ins = json.load(gzip.open(ora_path))
    for b in ins["event_blocks"]:
        if b["name"] == "Execute":
            for e in b["events"]:
                if e["name"] == "Method::execute":
                    return e["p50"]
    return None


def _diff_run_and_record(out: Path, pte_name: str, run_name: str, mod: Any, steps) -> Dict[str, Any]:
    pte, er = out / f"{pte_name}.pte", out / f"{pte_name}.etrecord"
    etdump = out / f"{run_name}.etdump"
    sess = _diff_session(pte, etdump, DIFF_EXECUTES, mod)
    s: Dict[str, Any] = {"etdump": etdump.name, "executes": DIFF_EXECUTES, **sess}
    raw = _raw_events(etdump)
    s["method_execute"] = _execute_stats(raw)
    s["step_shares"] = _step_shares(raw)
    s.update(_check_instructions(raw, steps))
    ent: Dict[str, Any] = {}
    _oracles(out, run_name, etdump, er, None, ent)
    s["raw_events"] = ent.get("raw_events")
    s["inspector"] = ent.get("inspector")
    if isinstance(ent.get("inspector"), dict) and ent["inspector"].get("file"):
        s["inspector_method_execute_p50_ms"] = _inspector_execute_p50(out / ent["inspector"]["file"])
    return s


def _diff_fixture(out: Path, name: str, width: int, pkind: str, sessions: int, extra: Dict[str, Any]) -> Dict[str, Any]:
    info = _diff_lower(out, name, width, pkind)
    steps = info["placement"]
    mod = _diff_cnn_module(width)
    entry: Dict[str, Any] = {**info, **extra}
    entry["pte"], entry["etrecord"] = f"{name}.pte", f"{name}.etrecord"
    entry["moved_vs_diff_same"] = _moved(_base_placement(), steps)
    entry["debug_buffer_size"] = 0
    entry["session"] = (
        "one child Python process per session: Runtime.get().load_program(pte, enable_etdump=True, "
        "debug_buffer_size=0) -> load_method('forward') -> %d x execute([x]) -> write_etdump_result_to_file"
        % DIFF_EXECUTES
    )
    runs = []
    for i in range(sessions):
        run_name = f"{name}_{i:02d}" if sessions > 1 else name
        print(f"[make_fixtures]   session {run_name}", flush=True)
        runs.append(_diff_run_and_record(out, name, run_name, mod, steps))
    entry["sessions"] = runs
    entry["executes_per_session"] = DIFF_EXECUTES
    p50s = [r["method_execute"]["p50"] for r in runs]
    entry["method_execute_p50_ns_per_session"] = p50s
    if len(runs) > 1:
        entry["noise"] = {
            "method_execute_p50_ns": {"min": min(p50s), "max": max(p50s), "max_over_min": round(max(p50s) / min(p50s), 3)},
            "step_share_range": {
                k: [min(r["step_shares"][k]["median_share"] for r in runs), max(r["step_shares"][k]["median_share"] for r in runs)]
                for k in runs[0]["step_shares"]
            },
        }
    return entry


def fx_diff_same(out: Path) -> Dict[str, Any]:
    return _diff_fixture(
        out,
        "diff_same",
        DIFF_BASE_WIDTH,
        "default",
        DIFF_SESSIONS,
        {
            "role": "base / noise: one .pte, %d sessions; every pair must be judged 'no change'" % DIFF_SESSIONS,
            "same_as": "gen_cnn's model (same layers, seed, weights and input), without debug buffer",
            "intended_difference": None,
        },
    )


def fx_diff_cpu_moved(out: Path) -> Dict[str, Any]:
    return _diff_fixture(
        out,
        "diff_cpu_moved",
        DIFF_BASE_WIDTH,
        "no_linear",
        1,
        {
            "role": "placement change vs diff_same",
            "intended_difference": "the linear layer (self.fc) is not delegated: XNNPACK's 'Fully Connected (NC, F32) GEMM' "
            "disappears from the 2nd DELEGATE_CALL and the layer runs on the CPU as portable "
            "native_call_permute_copy.out (weight transpose, new first instruction) + native_call_addmm.out (last instruction); "
            "instruction ids shift by one (delegates 0,2 -> 1,3; cumsum 1 -> 2). Same weights and input.",
        },
    )


def fx_diff_slower(out: Path) -> Dict[str, Any]:
    w = 32
    return _diff_fixture(
        out,
        "diff_slower",
        w,
        "default",
        1,
        {
            "role": "slower variant of diff_same",
            "intended_difference": "channel width %d instead of %d (same graph, same placement, same XNNPACK op list; "
            "MACs %d vs %d)" % (w, DIFF_BASE_WIDTH, _diff_macs(w)["total"], _diff_macs(DIFF_BASE_WIDTH)["total"]),
        },
    )


def fx_diff_faster(out: Path) -> Dict[str, Any]:
    w = 4
    return _diff_fixture(
        out,
        "diff_faster",
        w,
        "default",
        1,
        {
            "role": "faster variant of diff_same",
            "intended_difference": "channel width %d instead of %d (same graph, same placement, same XNNPACK op list; "
            "MACs %d vs %d)" % (w, DIFF_BASE_WIDTH, _diff_macs(w)["total"], _diff_macs(DIFF_BASE_WIDTH)["total"]),
        },
    )


DIFF_FIXTURES: Dict[str, Callable[[Path], Dict[str, Any]]] = {
    "diff_same": fx_diff_same,
    "diff_cpu_moved": fx_diff_cpu_moved,
    "diff_slower": fx_diff_slower,
    "diff_faster": fx_diff_faster,
}


FIXTURES: Dict[str, Callable[[Path], Dict[str, Any]]] = {
    "gen_cnn": fx_cnn,
    "gen_multipart": fx_multipart,
    "gen_llama": fx_llama,
    "gen_llama_multimethod": fx_llama_multimethod,
    "gen_llama_mixed": fx_llama_mixed,
    "gen_llama_chunked": fx_llama_chunked,
    "gen_loop": fx_loop,
    "gen_cnn_b": fx_cnn_b,
}


# ------------------------------------------------------------------ big


def make_big(n: int, path: Path, inspect: bool) -> Dict[str, Any]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        tdp = Path(td)
        _, ep = _llama_dynamic_export()
        pte, er, info = _lower(ep, tdp, "big")
        per_seq = 1 + 56
        sched = _llama_schedule(n_seqs=math.ceil(n / per_seq), n_decodes=56)[:n]
        drv = _LlamaDriver(sched)
        res = _run(pte, path, None, 0, drv, drv.on_output)
        meta: Dict[str, Any] = {
            "etdump": str(path),
            "bytes": path.stat().st_size,
            "executes": n,
            "schedule_summary": "repeat [prefill(%d) + 56 decodes], truncated to %d executes" % (PROMPT_LEN, n),
            "prefill_runs": [i for i, s in enumerate(sched) if s["phase"] == "prefill"],
            "run_s": res["run_s"],
            "lower_s": info["lower_s"],
            "versions": _versions(),
        }
        if inspect:
            meta["inspector"] = _measure_inspector_subprocess(path, None)
            meta["inspector_with_etrecord"] = _measure_inspector_subprocess(path, er)
    _write_json(Path(str(path) + ".meta.json"), meta)
    return meta


_MEASURE = r"""
import json, resource, sys, time, warnings
import torch  # baseline: the import cost is not the Inspector's
from executorch.devtools import Inspector
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    kw = {"etdump_path": sys.argv[1]}
    if sys.argv[2] != "-":
        kw["etrecord"] = sys.argv[2]
    ins = Inspector(**kw)
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"construct_s": dt, "peak_rss_mb": peak / 1024, "rss_after_imports_mb": base / 1024,
                  "event_blocks": len(ins.event_blocks),
                  "events_per_block": [len(b.events) for b in ins.event_blocks],
                  "runs_per_block": [max((len(e.perf_data.raw) for e in b.events if e.perf_data), default=0) for b in ins.event_blocks]}))
"""


def _measure_inspector_subprocess(etdump: Path, etrecord: Optional[Path]) -> Dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(etdump), str(etrecord) if etrecord else "-"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        return {"error": p.stderr[-1500:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ check


def check_oracles(out: Path) -> int:
    """Re-derive every Inspector row from the raw events and compare exactly.

    Rules (executorch 1.5.1 Inspector): per RunData keep profile events keyed by
    (chain_index, name, instruction_id, delegate_debug_id_int, delegate_debug_id_str), the last
    one winning; runs with the same (name, key tuple) form one block; delegated durations are
    end/1e6 - start/1e6, others (end - start)/1e6; percentiles by numpy (linear).
    Needs only numpy: usable without torch.
    """
    import collections
    import gzip

    import numpy as np

    failures = 0
    for rawf in sorted([*out.glob("gen_*.raw.json.gz"), *out.glob("diff_*.raw.json.gz")]):
        name = rawf.name[: -len(".raw.json.gz")]
        insf = out / f"{name}.inspector.json.gz"
        if not insf.exists():
            continue
        raw = json.load(gzip.open(rawf))
        ins = json.load(gzip.open(insf))
        groups: "collections.OrderedDict[Any, collections.OrderedDict]" = collections.OrderedDict()
        for run in raw["run_data"]:
            last: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
            for e in run["events"]:
                if e[0] != "P":
                    continue
                k = (e[2], e[1] or "", None if e[3] == -1 else e[3], None if e[4] == -1 else e[4], e[5] or None)
                last[k] = e
            g = groups.setdefault((run["name"], tuple(last)), collections.OrderedDict())
            for k, e in last.items():
                deleg = e[4] != -1 or bool(e[5])
                g.setdefault(k, []).append(e[7] / 1e6 - e[6] / 1e6 if deleg else (e[7] - e[6]) / 1e6)
        bad, n = [], 0
        blocks = ins["event_blocks"]
        if len(blocks) != len(groups):
            bad.append(f"{len(blocks)} blocks, expected {len(groups)}")
        for b, ((bname, _), g) in zip(blocks, groups.items()):
            if b["name"] != bname or len(b["events"]) != len(g):
                bad.append(f"block {b['index']}: {b['name']}/{len(b['events'])} vs {bname}/{len(g)}")
                continue
            for ev, (k, vals) in zip(b["events"], g.items()):
                n += 1
                exp = {
                    "raw": vals,
                    "p10": float(np.percentile(vals, 10)),
                    "p50": float(np.percentile(vals, 50)),
                    "p90": float(np.percentile(vals, 90)),
                    "avg": float(np.mean(vals)),
                    "min": min(vals),
                    "max": max(vals),
                }
                for f, v in exp.items():
                    if ev[f] != v:
                        bad.append(f"{ev['name']} (instr {ev['instruction_id']}): {f} {ev[f]} != {v}")
        print(f"[check] {name}: {n} Inspector rows, {len(bad)} mismatches")
        for m in bad[:5]:
            print("   ", m)
        failures += bool(bad)
    return 1 if failures else 0


def make_diff(out: Path, names: Sequence[str]) -> None:
    """Generate the diff_* fixtures into `out` and merge their entries into out/manifest.json."""
    out.mkdir(parents=True, exist_ok=True)
    man_path = out / DIFF_MANIFEST
    manifest: Dict[str, Any] = {}
    if man_path.exists():
        with contextlib.suppress(Exception):
            manifest = json.loads(man_path.read_text())
    manifest["generator"] = "tools/make_fixtures.py (--only %s)" % " --only ".join(DIFF_FIXTURES)
    manifest["versions"] = _versions()
    manifest["base"] = "diff_same"
    manifest["conventions"] = {
        "method_execute": "ns from executorch's deserializer (end_time - start_time of the Method::execute event of each "
        "Execute RunData); p50 = numpy.percentile(..., 50) (linear) over all executes of the session, "
        "p50_without_first drops execute #0 (cold: first XNNPACK run)",
        "inspector_method_execute_p50_ms": "executorch.devtools.Inspector's p50 of the Method::execute row (ms)",
        "placement": "top-level steps of the lowered program in order; index == instruction_id (checked against the ETDump: "
        "instruction_ids_match_etdump)",
        "source": "file:line of the model code in this script, from the edge ops' stack_trace",
        "cpu_before": "busy and steal fractions of this VM's CPUs (/proc/stat) in the 0.25 s before the session loaded "
        "the program; loadavg_before/after from os.getloadavg()",
    }
    manifest.setdefault("fixtures", {})
    for nm in names:
        print(f"[make_fixtures] {nm} -> {out} ...", flush=True)
        t0 = time.perf_counter()
        try:
            entry = DIFF_FIXTURES[nm](out)
        except Exception as exc:
            import traceback

            traceback.print_exc()
            entry = {"error": f"{type(exc).__name__}: {exc}"[:1000]}
        entry["wall_s"] = round(time.perf_counter() - t0, 2)
        entry["files"] = {
            p.name: p.stat().st_size
            for p in sorted(out.iterdir())
            if p.is_file() and (p.name.startswith(nm + ".") or p.name.startswith(nm + "_"))
            and p.name != DIFF_MANIFEST
        }
        manifest["fixtures"][nm] = entry
        print(f"[make_fixtures] {nm}: {entry['wall_s']} s  files={entry['files']}", flush=True)
    sizes = {p.name: p.stat().st_size for p in out.iterdir() if p.is_file()}
    big = {k: v for k, v in sizes.items() if v > DIFF_FILE_BUDGET}
    if big:
        print(f"[make_fixtures] WARNING diff files over {DIFF_FILE_BUDGET} B: {big}", flush=True)
    if sum(sizes.values()) > DIFF_TOTAL_BUDGET:
        print(f"[make_fixtures] WARNING diff fixtures total {sum(sizes.values())} B > {DIFF_TOTAL_BUDGET}", flush=True)
    order = [k for k in DIFF_FIXTURES if k in manifest["fixtures"]]
    manifest["fixtures"] = {k: manifest["fixtures"][k] for k in order}
    man_path.write_text(json.dumps(manifest, indent=1) + "\n")


# ------------------------------------------------------------------ main


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: %(default)s)")
    ap.add_argument(
        "--only",
        action="append",
        choices=sorted(FIXTURES) + sorted(DIFF_FIXTURES),
        help="generate only this fixture (repeatable); diff_* fixtures go to --diff-out",
    )
    ap.add_argument(
        "--diff-out",
        type=Path,
        default=DIFF_OUT,
        help="output directory of the diff_* fixtures and their manifest.json (default: %(default)s)",
    )
    ap.add_argument(
        "--big",
        nargs=2,
        metavar=("N", "PATH"),
        help="also write a tiny-Llama ETDump with N executes of [prefill(8)+56 decodes] to PATH",
    )
    ap.add_argument("--big-only", action="store_true", help="with --big: skip the committed fixtures")
    ap.add_argument(
        "--big-inspect",
        action="store_true",
        help="with --big: time Inspector construction (wall, peak RSS) in a child process",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="only check the oracle files in --out against each other (needs numpy, not torch)",
    )
    a = ap.parse_args(argv)
    if a.check:
        return check_oracles(a.out)

    _lazy_imports()
    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()

    selected = a.only or (list(FIXTURES) + list(DIFF_FIXTURES))
    gen_names = [nm for nm in selected if nm in FIXTURES]
    diff_names = [nm for nm in selected if nm in DIFF_FIXTURES]
    if not a.big_only and diff_names:
        make_diff(a.diff_out, diff_names)

    if not a.big_only and gen_names:
        man_path = out / MANIFEST
        manifest: Dict[str, Any] = {}
        if man_path.exists():
            with contextlib.suppress(Exception):
                manifest = json.loads(man_path.read_text())
        manifest["generator"] = "tools/make_fixtures.py"
        manifest["versions"] = _versions()
        manifest.setdefault("fixtures", {})
        for nm in gen_names:
            print(f"[make_fixtures] {nm} ...", flush=True)
            t0 = time.perf_counter()
            try:
                entry = FIXTURES[nm](out)
            except Exception as exc:
                import traceback

                traceback.print_exc()
                entry = {"error": f"{type(exc).__name__}: {exc}"[:1000]}
            entry["wall_s"] = round(time.perf_counter() - t0, 2)
            entry["files"] = {
                p.name: p.stat().st_size for p in sorted(out.glob(f"{nm}.*")) if p.is_file()
            }
            manifest["fixtures"][nm] = entry
            print(f"[make_fixtures] {nm}: {entry['wall_s']} s  files={entry['files']}", flush=True)
        big = [
            (k, s)
            for e in manifest["fixtures"].values()
            for k, s in e.get("files", {}).items()
            if s > 1_500_000
        ]
        if big:
            print(f"[make_fixtures] WARNING files over 1.5 MB: {big}", flush=True)
        man_path.write_text(json.dumps(manifest, indent=1) + "\n")

    if a.big:
        n, p = int(a.big[0]), Path(a.big[1])
        print(f"[make_fixtures] big ETDump: {n} executes -> {p}", flush=True)
        meta = make_big(n, p, a.big_inspect)
        print(json.dumps({k: v for k, v in meta.items() if k != "versions"}, indent=1), flush=True)

    print(f"[make_fixtures] done in {time.perf_counter() - t_all:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
