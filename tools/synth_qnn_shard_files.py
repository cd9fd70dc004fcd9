#!/usr/bin/env python3
"""Synthetic QHAS + optrace pairs, one per QNN partition (context binary) of an ETDump fixture, for
the tests of several ``--qhas``/``--optrace`` files (issue 16 item 2).

QNN's ``generate_optrace`` returns one optrace/QHAS pair per context binary; a program sharded in
several QNN partitions has one pair per partition, naming the same QNN ops as that partition's
per-op rows (``aten_mm_default`` of ``aten_mm_default:OpId_12 (cycles)``). Here each pair holds:

* the partition's ops, QNN's Input/Output rows included as real QHAS files have them (names as the
  ETDump's per-op rows, without ``:OpId_N`` and unit), each
  with the cycles of its row in a chosen Execute run of the ETDump (the first, unless told);
* HMX for ops whose name holds ``mm``/``matmul``/``conv``/``linear``/``bmm`` (assumed: matrix ops run
  on the matrix unit, as in the real chain8 optrace), HVX otherwise; laid out back to back on one
  HMX (tid 256) and one HVX (tid 512) thread from cycle 1,000,000;
* the QHAS tables etscope reads: ``htp_overall_summary`` (units' cycles used, timeline), ``qnn_op_instances_nodes``
  (cycles, DRAM = 64 bytes per 100 cycles, an arbitrary marker), ``htp_op_instances``.

Made (run from the repository root):

    python tools/synth_qnn_shard_files.py --out tests/fixtures/qnn_shards

* ``synthetic_vit_2part_instr{N}.{qhas,optrace}.json``: per partition of
  ``qnn_etdump/synthetic_qnn_vit_2part.etdump`` (instructions 0 and 2 or as found);
  ``synthetic_vit_2part_both.qhas.json``: both partitions' ops in one file (names cannot decide);
* ``synthetic_hybrid_{prefill,kv}.qhas.json``: the hybrid fixture's prefill and kv graphs (same op
  names; cycles of the first prefill run and of the first decode run).

Uses etscope's ETDump reader for the names and values (the tests check the join, not the reader).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from etscope import profile as P  # noqa: E402
from etscope.formats.qnn_names import parse_qnn_event_name  # noqa: E402

MATRIX = re.compile(r"(^|_)(mm|bmm|matmul|conv\w*|linear|addmm)(_|$)", re.I)


def partition_ops(profile: P.Profile, run: int) -> dict[int, list[tuple[str, float]]]:
    """Per QNN delegate instruction: (op base name, cycles) of its per-op rows in Execute run ``run``."""
    ev = profile.events
    out: dict[int, list[tuple[str, float]]] = {}
    for i in range(len(ev["run"])):
        if int(ev["execute"][i]) != run or int(ev["role"][i]) != P.ROLE_DELEGATE_INTERNAL:
            continue
        name = profile.strings[int(ev["delegate_id_str"][i])] if int(ev["delegate_id_str"][i]) >= 0 else ""
        q = parse_qnn_event_name(name)
        if q.op_id is None or not q.base:
            continue
        out.setdefault(int(ev["instruction_id"][i]), []).append((q.base, float(ev["value"][i])))
    return out


def qhas_and_optrace(ops: list[tuple[str, float]]) -> tuple[dict, list]:
    t = {"HMX": 1_000_000.0, "HVX": 1_000_000.0}
    tid = {"HMX": 256, "HVX": 512}
    nodes, instances, events = [], [], [
        {"cat": "__metadata", "pid": 0, "ph": "M", "name": "process_name", "args": {"name": "Core 0 Overview"}},
        {"cat": "__metadata", "pid": 0, "tid": 256, "ph": "M", "name": "thread_name", "args": {"name": "Type: HMX"}},
        {"cat": "__metadata", "pid": 0, "tid": 512, "ph": "M", "name": "thread_name", "args": {"name": "Type: HVX"}}]
    for k, (name, cycles) in enumerate(ops):
        unit = "HMX" if MATRIX.search(name) else "HVX"
        nodes.append({"qnn_op": name, "qnn_op_type": "MatMul" if unit == "HMX" else "ElementWise",
                      "cycles": cycles, "dram_read": int(cycles * 64 // 100), "dram_write": 0,
                      "vtcm_read": 0, "vtcm_write": 0})
        instances.append({"op_id": f"0x{k + 1:x}", "htp_op": f"q::{unit}Op", "qnn_op": name, "tid": tid[unit],
                          "start_cycle": t[unit], "cycles": cycles, "hmx": unit == "HMX", "hvx": unit == "HVX",
                          "dma": False})
        events.append({"name": f"q::{unit}Op", "ph": "X", "pid": 0, "tid": tid[unit], "ts": t[unit], "dur": cycles,
                       "args": {"QNN Op Name": name, "Flags": [f"uses_{unit.lower()}"]}})
        t[unit] += cycles
    used = {u: t[u] - 1_000_000.0 for u in t}
    timeline = max(used.values())
    overall = {"time_us": 0, "graph_execute_us": 0, "timeline_cycles": timeline,
               "percent_utilization": 100.0, "percent_idle": 0.0,
               "total_dram_read": sum(n["dram_read"] for n in nodes), "total_dram_write": 0,
               "total_dram": sum(n["dram_read"] for n in nodes), "total_vtcm_read": 0, "total_vtcm_write": 0,
               "peak_vtcm_alloc": 65536,
               "htp_resources": [{"type": u, "tid": tid[u], "start_cycle": 1_000_000, "end_cycle": 1_000_000 + used[u],
                                  "timeline_cycles": used[u], "cycles_used": used[u],
                                  "utilization": 100.0 * used[u] / timeline if timeline else 0.0} for u in ("HMX", "HVX")]}
    qhas = {"header": {"header_version": {"major": 1, "minor": 0, "patch": 0},
                       "version": {"major": 1, "minor": 3, "patch": 7}, "artifact_type": "QHAS",
                       "generator": "tools/synth_qnn_shard_files.py"},
            "data": {"htp_overall_summary": {"data": [overall]}, "qnn_op_types": {"data": []},
                     "qnn_op_instances_nodes": {"data": nodes}, "htp_op_instances": {"data": instances}}}
    optrace = {"header": {"artifact_type": "OP_TRACE", "generator": "tools/synth_qnn_shard_files.py"},
               "traceEvents": events}
    return qhas, optrace


def _write(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "qnn_shards")
    out = ap.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    vit = P.load(str(ROOT / "tests/fixtures/qnn_etdump/synthetic_qnn_vit_2part.etdump"))
    both = []
    for iid, ops in sorted(partition_ops(vit, 0).items()):
        qhas, optrace = qhas_and_optrace(ops)
        _write(out / f"synthetic_vit_2part_instr{iid}.qhas.json", qhas)
        _write(out / f"synthetic_vit_2part_instr{iid}.optrace.json", optrace)
        both += ops
    _write(out / "synthetic_vit_2part_both.qhas.json", qhas_and_optrace(both)[0])
    hybrid = P.load(str(ROOT / "tests/fixtures/qnn_hybrid/synthetic_qnn_hybrid_stories.etdump"))
    truth = json.loads((ROOT / "tests/fixtures/qnn_hybrid/synthetic_qnn_hybrid_stories.truth.json").read_text())
    runs = truth["runs"] if isinstance(truth, dict) and "runs" in truth else truth
    first = {}
    for k, r in enumerate(runs):
        first.setdefault(r["method"], k)
    for method, tag in (("prefill_forward", "prefill"), ("kv_forward", "kv")):
        ops = partition_ops(hybrid, first[method])[0]
        _write(out / f"synthetic_hybrid_{tag}.qhas.json", qhas_and_optrace(ops)[0])


if __name__ == "__main__":
    main()
