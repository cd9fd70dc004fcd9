#!/usr/bin/env python3
"""Real ExecuTorch sessions for measuring and testing `etscope diff` (needs torch + executorch,
like tools/make_fixtures.py, whose model, input and session runner it reuses).

Two jobs:

``sessions --pte P --n N --out DIR``
    N separate runtime sessions of ONE unchanged program: each a fresh child Python process
    (Runtime -> load_program(enable_etdump=True) -> load_method -> ``--executes`` executes ->
    write ETDump) -> DIR/session_NNN.etdump, plus DIR/sessions.json (per session: load average,
    CPU busy/steal before it, wall times). Used by benchmarks/diff_false_alarms.py; not committed.

``conv-fallback --out DIR``
    `_DiffCNN(8)` (tools/make_fixtures.py; gen_cnn's model) lowered twice: with
    ``XnnpackPartitioner()`` (both convolutions inside XNNPACK) and with every partitioner config
    except ``ConvolutionConfig`` (both convolutions run on the CPU as portable
    ``aten::convolution.out``; relu/max_pool/linear stay delegated). Writes
    diff_conv_xnnpack.{pte,etrecord,etdump} and diff_conv_cpu.{pte,etrecord,etdump}, one session
    each (30 executes). The committed copies in tests/fixtures/diff/ came from this command.

Run with the oracle environment, e.g. ``/work/venv-oracle/bin/python tools/make_diff_sessions.py
sessions --pte tests/fixtures/diff/diff_same.pte --n 60 --out /tmp/sessions``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (model, input, session runner)


def run_session(pte: Path, etdump: Path, executes: int) -> dict:
    """One session in a fresh child process (make_fixtures' session script); timing info."""
    torch, _ = mf._lazy_imports()
    with tempfile.TemporaryDirectory() as td:
        inp, outp = Path(td) / "x.pt", Path(td) / "out.pt"
        torch.save(mf._diff_input(), inp)
        t0 = time.time()
        p = subprocess.run([sys.executable, "-c", mf._SESSION, str(pte), str(etdump), str(inp), str(outp),
                            str(executes)], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"session failed: {p.stderr[-2000:]}")
        info = json.loads(p.stdout.strip().splitlines()[-1])
    info.pop("pid", None)
    info["started_unix"] = round(t0, 1)
    return info


def sessions(args) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"pte": str(args.pte), "executes": args.executes, "sessions": []}
    for i in range(args.n):
        et = args.out / f"session_{i:03d}.etdump"
        info = run_session(args.pte, et, args.executes)
        info["etdump"] = et.name
        meta["sessions"].append(info)
        print(f"[make_diff_sessions] {et.name} run {info['run_s']} s load {info['loadavg_before']}", flush=True)
        (args.out / "sessions.json").write_text(json.dumps(meta, indent=1))


def conv_fallback(args) -> None:
    from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    args.out.mkdir(parents=True, exist_ok=True)
    no_conv = [c for c in ALL_PARTITIONER_CONFIGS if c.__name__ != "ConvolutionConfig"]
    assert len(no_conv) == len(ALL_PARTITIONER_CONFIGS) - 1
    manifest = {"versions": mf._versions(), "model": mf._diff_model_text(mf.DIFF_BASE_WIDTH), "fixtures": {}}
    for name, part, code in (
            ("diff_conv_xnnpack", XnnpackPartitioner(), "XnnpackPartitioner()"),
            ("diff_conv_cpu", XnnpackPartitioner(configs=no_conv),
             "XnnpackPartitioner(configs=[c for c in ALL_PARTITIONER_CONFIGS if c.__name__ != 'ConvolutionConfig'])")):
        mod = mf._diff_cnn_module(mf.DIFF_BASE_WIDTH)
        ep = mf._export(mod, (mf._diff_input(),))
        edge = to_edge_transform_and_lower(ep, partitioner=[part], generate_etrecord=True)
        steps = mf._placement(edge)
        et = edge.to_executorch()
        pte = args.out / f"{name}.pte"
        pte.write_bytes(et.buffer)
        et.get_etrecord().save(str(args.out / f"{name}.etrecord"))
        info = run_session(pte, args.out / f"{name}.etdump", args.executes)
        manifest["fixtures"][name] = {"partitioner": code, "placement": steps, "session": info}
        print(f"[make_diff_sessions] {name}: {[(s['kind'], [o['op'] for o in s['ops']]) for s in steps]}", flush=True)
    (args.out / "conv_fallback_manifest.json").write_text(json.dumps(manifest, indent=1, default=str))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="job", required=True)
    s = sub.add_parser("sessions")
    s.add_argument("--pte", type=Path, required=True)
    s.add_argument("--n", type=int, default=60)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--executes", type=int, default=mf.DIFF_EXECUTES)
    c = sub.add_parser("conv-fallback")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--executes", type=int, default=mf.DIFF_EXECUTES)
    args = ap.parse_args(argv)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    (sessions if args.job == "sessions" else conv_fallback)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
