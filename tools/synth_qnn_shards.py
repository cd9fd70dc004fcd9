#!/usr/bin/env python3
"""A synthetic ETDump of a QNN LLM sharded into 4 partitions per method, run in hybrid mode.

Larger QNN LLMs are split into several partitions (shards) per method, each its own context
binary and its own DELEGATE_CALL, with CPU ops between them. This fixture is such a program with
the stories260k program's method layout (``prefill_forward`` and ``kv_forward``, see
``synth_qnn_hybrid.py``), each method being: QNN shard (instruction 0), CPU op (1), shard (2),
CPU op (3), shard (4), CPU op (5), shard (6). Written by ``synth_qnn_etdump``'s ETDumpGen look-alike.

Values, and where they come from:

* per-op rows: the QNN emulator's ``tblock_qdq`` graph (detailed, QNN 2.51; the warm executes),
  its node rows cut into 4 consecutive shards, each with the ``Input``/``Output`` rows, names
  turned into ExecuTorch FX names. Prefill cycles x U(0.97, 1.03); decode at
  ``decode_ar_len / PREFILL_AR_LEN`` of them (at least 1/8, as in ``synth_qnn_hybrid``) x
  U(0.85, 1.15); the kv graph's ``OpId_N`` shifted by 2 (its two extra inputs);
* the top-level events of every shard in the layout and with the overheads of a real Snapdragon
  8 Gen 3 (SM8650) run, ``qnn-device/chain8_sm8650.profile.txt`` Execute Stat 2 and 3 (warm),
  taken in turn: ``Accelerator (execute excluding wait) time`` = cycles / the warm HTP clock of
  ``chain8_sm8650.runtrace.json`` (median of its warm executes); each level above adds what it
  added in that real execute (waits, QNN accelerator, RPC, QNN execute); HVX threads, yields,
  VTCM acquire and power-on copied. DELEGATE_CALL = QNN (execute) time + 30..80 us (the writer's
  rule);
* CPU ops: ``native_call_index_put.out`` (the KV-cache update), wall and kernel times of the real
  x86 ``executorch-cpu/llama_nodebug.etdump`` (instructions 54, 65, and 54 again);
* one ``Default`` RunData per method, then per prompt one prefill run and its decode runs.

The truth (per run: method, phase, tokens, and per shard the values written) goes to
``<name>.truth.json``.

    python tools/synth_qnn_shards.py --out tests/fixtures/qnn_hybrid
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_qnn_etdump as s  # noqa: E402
from synth_qnn_chain8_etdump import execute_blocks  # noqa: E402
from synth_qnn_hybrid import KV, KV_OPID_SHIFT, PREFILL, _shift_opids, build_etrecord, write_fixture  # noqa: E402

NAME = "synthetic_qnn_4shard"
SHARDS = 4
PREFILL_AR_LEN = 32
DEFAULT_SCHEDULE = (5, 3, 6)
INSTRS = [("delegate", 0, 0), ("cpu_op", 1, "native_call_index_put.out"), ("delegate", 2, 1),
          ("cpu_op", 3, "native_call_index_put.out"), ("delegate", 4, 2),
          ("cpu_op", 5, "native_call_index_put.out"), ("delegate", 6, 3)]
CPU_OPS = [(p, "aten.index_put.default", f"layers.{p - 1}.attn.kv_cache", "native_call_index_put.out")
           for p in (1, 2, 3)]
_LEVELS = ("Accelerator (execute excluding wait) time", "Accelerator (execute) time",
           "QNN accelerator (execute) time", "RPC (execute) time", "QNN (execute) time")


def device_template(root: Path) -> tuple[list[dict], float]:
    """The real SM8650 warm executes (Execute Stat 2, 3): per level its value (us) and the other
    top-level events; and the warm HTP clock (MHz) of the same run's runtrace."""
    blocks = execute_blocks((root / "qnn-device/chain8_sm8650.profile.txt").read_text())[1:]
    trace = json.loads((root / "qnn-device/chain8_sm8650.runtrace.json").read_text())
    ghz = [v for v in _values(trace, "summary_htp_frequency_ghz") if v > 1.5]
    return [{e.name: e for e in b} for b in blocks], statistics.median(ghz) * 1000.0


def _values(obj, key):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key and isinstance(v, (int, float)):
                yield float(v)
            else:
                yield from _values(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from _values(v, key)


def device_block(nodes: list[tuple[str, int]], stat: dict, clock_mhz: float) -> list[s.QnnEvent]:
    """One shard's QNN events in the device's order and units: cycles from ``nodes``, each time
    level = the level below + what that level added in the real execute ``stat``."""
    cycles = sum(v for _, v in nodes)
    us = {_LEVELS[0]: max(1, round(cycles / clock_mhz))}
    for below, level in zip(_LEVELS, _LEVELS[1:]):
        us[level] = us[below] + (stat[level].value - stat[below].value)
    out = []
    for name, e in stat.items():
        if name == s.NODE_PARENT_EVENT:
            out.append(s.QnnEvent(name, cycles, e.unit, list(nodes)))
        elif name in us:
            out.append(s.QnnEvent(name, us[name], e.unit))
        else:
            out.append(s.QnnEvent(name, e.value, e.unit))
    return out


def _shard_nodes(block) -> list[list[tuple[str, int]]]:
    """The real execute's node rows cut into SHARDS consecutive parts, each with the Input/Output rows."""
    nodes = s._nodes_of(block)
    io_in = next(x for x in nodes if x[0].startswith("Input OpId"))
    io_out = next(x for x in nodes if x[0].startswith("Output OpId"))
    body = [x for x in nodes if x not in (io_in, io_out)]
    cuts = [round(i * len(body) / SHARDS) for i in range(SHARDS + 1)]
    return [[io_in] + body[cuts[i]:cuts[i + 1]] + [io_out] for i in range(SHARDS)]


def _cpu_times(root: Path) -> list[list[tuple[int, int]]]:
    """Per real x86 llama run: (OPERATOR_CALL ns, kernel ns) of instructions 54, 65, 54."""
    runs = s.read_etdump_profile((root / "executorch-cpu/llama_nodebug.etdump").read_bytes())[1:]
    out = []
    for r in runs:
        op = {e["instruction_id"]: e["end_time"] - e["start_time"] for e in r["events"] if e["name"] == "OPERATOR_CALL"}
        k = {e["instruction_id"]: e["end_time"] - e["start_time"]
             for e in r["events"] if e["name"] == "native_call_index_put.out"}
        out.append([(op[i], k[i]) for i in (54, 65, 54)])
    return out


def build(schedule=DEFAULT_SCHEDULE, seed: int = 4404, decode_ar_len: int = 1, data_root=None) -> dict:
    """{"etdump", "etrecord", "truth": [per run], "source"}."""
    root = Path(data_root) if data_root else s.default_data_root()
    q, rel = s._emulator(root, "tblock_qdq")
    stats, clock_mhz = device_template(root)
    cpu = _cpu_times(root)
    rng = random.Random(seed)
    warm = list(range(1, len(q.executes)))
    names = [[n for n, _ in p] for p in _shard_nodes(q.executes[1])]
    mappings, ops = s.build_name_map(names, CPU_OPS)
    decode_scale = max(1 / 8, decode_ar_len / PREFILL_AR_LEN)
    runs, truth = [], []
    for prompt, n_decode in enumerate(schedule):
        for step in range(1 + n_decode):
            real = q.executes[warm[len(runs) % len(warm)]]
            stat = stats[len(runs) % len(stats)]
            prefill = step == 0
            lo, hi, scale = (0.97, 1.03, 1.0) if prefill else (0.85, 1.15, decode_scale)
            qnn, shards = {}, []
            for k, part in enumerate(_shard_nodes(real)):
                nodes = [(n, 0 if v == 0 else max(100, s._r100(v * scale * rng.uniform(lo, hi)))) for n, v in part]
                block = s.rename_block(device_block(nodes, stat, clock_mhz), mappings[k])
                if not prefill:
                    block = [s.QnnEvent(e.name, e.value, e.unit, [(_shift_opids(n, KV_OPID_SHIFT), v) for n, v in e.nodes])
                             for e in block]
                qnn[2 * k] = s._block_json(block)
                shards.append({"instruction_id": 2 * k, **{e.name: e.value for e in block}})
            times = cpu[min(len(runs), len(cpu) - 1)]
            runs.append({"instructions": INSTRS, "label": "prefill" if prefill else "decode", "qnn": qnn,
                         "wall_ns": {1: times[0][0], 3: times[1][0], 5: times[2][0]},
                         "kernel_ns": {1: times[0][1], 3: times[1][1], 5: times[2][1]},
                         "gap_before_ns": None if not runs else rng.randint(150_000, 300_000)})
            truth.append({"run": len(truth), "method": PREFILL if prefill else KV,
                          "phase": "prefill" if prefill else "decode", "prompt": prompt,
                          "tokens": PREFILL_AR_LEN if prefill else decode_ar_len, "shards": shards})
    sim = s._RuntimeSim({"seed": seed, "time_base_ns": 1_803_456_789_012, "default_run": False, "runs": runs})
    for _ in (PREFILL, KV):
        sim.default_run({"init_ns": rng.randint(60_000_000, 90_000_000)})
    for run, t in zip(runs, truth):
        info = sim.execute(run)
        t["method_execute_ns"] = info["Method::execute"][1] - info["Method::execute"][0]
        calls = {i["instruction_id"]: i for i in info["instructions"] if i["kind"] == "delegate"}
        for sh in t["shards"]:
            a, b = calls[sh["instruction_id"]]["DELEGATE_CALL"]
            sh["delegate_call_ns"] = b - a
    return {"etdump": sim.w.get_etdump_data(), "etrecord": build_etrecord(ops, INSTRS), "truth": truth,
            "source": {"per_op": {"dataset": "tblock_qdq", "level": "detailed", "csv": rel},
                       "device_levels": "qnn-device/chain8_sm8650.profile.txt Execute Stat 2, 3",
                       "clock_mhz": clock_mhz, "schedule": list(schedule), "seed": seed,
                       "prefill_ar_len": PREFILL_AR_LEN, "decode_ar_len": decode_ar_len,
                       "decode_scale": decode_scale, "kv_opid_shift": KV_OPID_SHIFT,
                       "cpu_ops": "executorch-cpu/llama_nodebug.etdump index_put, instructions 54, 65, 54"}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/fixtures/qnn_hybrid")
    write_fixture(Path(ap.parse_args().out), NAME, build(), "tools/synth_qnn_shards.py",
                  "prefill_forward and kv_forward, each 4 QnnBackend shards (instructions 0, 2, 4, 6) "
                  "with CPU index_put ops between (1, 3, 5)")


if __name__ == "__main__":
    main()
