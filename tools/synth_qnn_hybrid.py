#!/usr/bin/env python3
"""A synthetic ETDump of a QNN *hybrid* LLM run, shaped like the real stories260k program.

``shared/data/qnn-device/stories260k_hybrid_llama_qnn.pte`` (ExecuTorch's CI artifact, SM8650) has
methods ``prefill_forward`` and ``kv_forward``, each a single QnnBackend delegate instruction
(instruction 0) sharing one context binary. It was compiled with profile level off, so its ETDump
would hold no QNN events; this fixture is that program *as if compiled with profile level
detailed*: every Execute run is ``Method::execute`` ⊇ ``DELEGATE_CALL`` (instruction 0) holding the
QNN top-level events and per-op ``(cycles)`` rows, written by ``synth_qnn_etdump``'s ETDumpGen
look-alike (see that file for what it mimics and where from).

Values, and what is assumed:

* prefill runs: the QNN events of a real HTP execute (emulator ``tblock_qdq/detailed``, QNN 2.51,
  the blocks after the cold first one), per-op names turned into ExecuTorch FX-style names
  (``synth_qnn_etdump.build_name_map``), each run's per-op cycles × U(0.97, 1.03);
* decode (``kv_forward``) runs: the same graph's ops at 1/8 of those cycles × U(0.85, 1.15) (the
  cost ratio ``_fixture_llm`` uses: a 1-token graph against a 32-token one; assumed, not measured),
  VTCM/power-on times scaled alike, accelerator µs following cycles;
* the two graphs are compiled from one model, so their ops have the same FX names; QNN numbers
  ops per graph, and here the kv graph's ``OpId_N`` are the prefill graph's + 2 (an assumption:
  the kv graph takes two more inputs). So the two methods log the same number of per-op rows but
  not the same names; instruction kinds alone do not tell them apart;
* one ``Default`` RunData per method loaded (prefill_forward, then kv_forward), then the runs in the
  order of the schedule: per prompt one prefill run then its decode runs.

The ETRecord holds both methods' edge graphs (the same FX nodes) and maps. The truth (method,
phase, prompt, tokens per run) goes into ``<name>.truth.json`` next to the fixture.

It also writes second sessions of that run with one phase slowed x4 by construction
(``SLOWED``: ``..._decode_x4``, ``..._prefill_x4``) into ``--slowed-out``, for `etscope diff`'s
phase-by-phase tests (tests/fixtures/diff_llm/README.md).

    python tools/synth_qnn_hybrid.py --out tests/fixtures/qnn_hybrid --slowed-out tests/fixtures/diff_llm
"""
from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_qnn_etdump as s  # noqa: E402

NAME = "synthetic_qnn_hybrid_stories"
PREFILL, KV = "prefill_forward", "kv_forward"
AR_LEN = 32                      # tokens one prefill run processes (the prefill graph's length)
DECODE_SCALE = 1.0 / 8.0
KV_OPID_SHIFT = 2
DEFAULT_SCHEDULE = (5, 3, 7)     # decode runs after each of three prompts
_OPID = re.compile(r":OpId_(\d+)")


def _shift_opids(name: str, by: int) -> str:
    return _OPID.sub(lambda m: f":OpId_{int(m.group(1)) + by}", name)


def build(schedule=DEFAULT_SCHEDULE, seed: int = 2601, data_root=None, prefill_slowdown: float = 1.0,
          decode_slowdown: float = 1.0) -> dict:
    """{"etdump": bytes, "truth": [{run, method, phase, prompt, tokens}], "source": {...}}.

    ``prefill_slowdown`` / ``decode_slowdown``: that phase's per-op cycles (and so its accelerator
    and QNN times) multiplied by this factor, with the same random draws as the factor-1 file: a
    second "session" whose change per phase is known by construction (the `diff` tests)."""
    root = Path(data_root) if data_root else s.default_data_root()
    q, rel = s._emulator(root, "tblock_qdq")
    rng = random.Random(seed)
    warm_blocks = list(range(1, len(q.executes)))      # execute 0 is the cold one
    names = [n for n, _ in s._nodes_of(q.executes[1])]
    (mapping,), ops = s.build_name_map([names])
    instrs = [("delegate", 0, 0)]
    runs, truth = [], []
    for prompt, n_decode in enumerate(schedule):
        for step in range(1 + n_decode):
            real = q.executes[warm_blocks[len(runs) % len(warm_blocks)]]
            nodes = s._nodes_of(real)
            if step == 0:
                method, phase, tokens, scale = PREFILL, "prefill", AR_LEN, prefill_slowdown
                pn = [(n, 0 if v == 0 else max(100, s._r100(v * scale * rng.uniform(0.97, 1.03)))) for n, v in nodes]
                shift = 0
            else:
                method, phase, tokens, scale = KV, "decode", 1, DECODE_SCALE * decode_slowdown
                pn = [(n, 0 if v == 0 else max(100, s._r100(v * scale * rng.uniform(0.85, 1.15))))
                      for n, v in nodes]
                shift = KV_OPID_SHIFT
            # A slowed prefill keeps its other QNN times (VTCM, power-on) as drawn: scaling them would
            # draw more random numbers and change every later run, not only the slowed phase.
            block = s.rename_block(s._partition_block(real, pn, scale if step else 1.0, rng), mapping)
            if shift:
                block = [s.QnnEvent(e.name, e.value, e.unit, [(_shift_opids(n, shift), v) for n, v in e.nodes])
                         for e in block]
            runs.append({"instructions": instrs, "label": phase, "qnn": {0: s._block_json(block)},
                         "gap_before_ns": None if not runs else rng.randint(150_000, 300_000)})
            truth.append({"run": len(truth), "method": method, "phase": phase, "prompt": prompt,
                          "tokens": tokens, "accelerator_cycles": s.block_value(block, s.NODE_PARENT_EVENT)})
    spec = {"seed": seed, "time_base_ns": 1_802_345_678_901, "default_run": False, "runs": runs}
    sim = s._RuntimeSim(spec)
    for _ in (PREFILL, KV):            # Program::load_method + Method::init, once per method
        sim.default_run({"init_ns": rng.randint(60_000_000, 90_000_000)})
    for run in runs:
        sim.execute(run)
    return {"etdump": sim.w.get_etdump_data(), "truth": truth, "etrecord": build_etrecord(ops, instrs),
            "source": {"dataset": "tblock_qdq", "level": "detailed", "csv": rel, "schedule": list(schedule),
                       "seed": seed, "ar_len": AR_LEN, "decode_scale": DECODE_SCALE,
                       "kv_opid_shift": KV_OPID_SHIFT, "default_runs": [PREFILL, KV],
                       **({"prefill_slowdown": prefill_slowdown} if prefill_slowdown != 1.0 else {}),
                       **({"decode_slowdown": decode_slowdown} if decode_slowdown != 1.0 else {})}}


def build_etrecord(ops, instrs) -> bytes:
    """One ETRecord for both methods, as ExecuTorch writes one per program: each method's edge graph
    (the same model code, so the same FX nodes) and its entries in the three maps. Made from
    ``synth_qnn_etdump.build_etrecord``'s one-method files, merged."""
    entries: dict[str, bytes] = {}
    maps: dict[str, dict] = {"debug_handle_map": {}, "delegate_map": {}, "instruction_id_to_num_outs_map": {}}
    for method in (PREFILL, KV):
        one = s.build_etrecord(ops, instrs, method=method, model_class="StoriesLlama",
                               model_file="/home/dev/llama/model.py")
        with zipfile.ZipFile(io.BytesIO(one)) as z:
            for name in z.namelist():
                if name in maps:
                    maps[name].update(json.loads(z.read(name)))
                else:
                    entries.setdefault(name, z.read(name))
    order = ["ETRECORD_V0", f"edge_dialect_exported_program/{PREFILL}", f"edge_dialect_exported_program/{KV}",
             *maps, "export_graph_id"]
    data = {**entries, **{k: json.dumps(v).encode() for k, v in maps.items()}}
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED) as z:
        for name in order:
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_STORED
            z.writestr(zi, data[name])
    return bio.getvalue()


def write_fixture(out: Path, name: str, fx: dict, generator: str, program: str) -> None:
    """``<name>.etdump``, ``.etrecord`` and ``.truth.json`` (what the generator wrote) in ``out``."""
    (out / f"{name}.etdump").write_bytes(fx["etdump"])
    (out / f"{name}.etrecord").write_bytes(fx["etrecord"])
    truth = {"generator": generator, "regenerate": f"python {generator} --out tests/fixtures/qnn_hybrid",
             "program": program, "source": fx["source"], "runs": fx["truth"]}
    (out / f"{name}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    print("wrote", out / f"{name}.etdump", len(fx["etdump"]), "bytes,", len(fx["truth"]), "runs")


# Second sessions for `etscope diff`, one phase slowed by construction (the rest byte-identical in
# value): name suffix -> (prefill_slowdown, decode_slowdown). The ETRecord is the base fixture's.
SLOWED = {"decode_x4": (1.0, 4.0), "prefill_x4": (4.0, 1.0)}
PROGRAM = ("shaped like shared/data/qnn-device/stories260k_hybrid_llama_qnn.pte "
           "(methods prefill_forward, kv_forward: one QnnBackend delegate at instruction 0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/fixtures/qnn_hybrid")
    ap.add_argument("--slowed-out", default="tests/fixtures/diff_llm",
                    help="where the second sessions with one phase slowed go (the diff tests')")
    args = ap.parse_args()
    write_fixture(Path(args.out), NAME, build(), "tools/synth_qnn_hybrid.py", PROGRAM)
    out = Path(args.slowed_out)
    out.mkdir(parents=True, exist_ok=True)
    for suffix, (pf, dc) in SLOWED.items():
        fx = build(prefill_slowdown=pf, decode_slowdown=dc)
        name = f"{NAME}_{suffix}"
        (out / f"{name}.etdump").write_bytes(fx["etdump"])
        truth = {"generator": "tools/synth_qnn_hybrid.py", "regenerate": "python tools/synth_qnn_hybrid.py --out "
                 "tests/fixtures/qnn_hybrid --slowed-out tests/fixtures/diff_llm", "program": PROGRAM,
                 "etrecord": f"tests/fixtures/qnn_hybrid/{NAME}.etrecord", "base": f"tests/fixtures/qnn_hybrid/{NAME}.etdump",
                 "source": fx["source"], "runs": fx["truth"]}
        (out / f"{name}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
        print("wrote", out / f"{name}.etdump", len(fx["etdump"]), "bytes")


if __name__ == "__main__":
    main()
