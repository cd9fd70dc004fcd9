"""An ETDump holding the real SM8650 device values of ``qnn-device/chain8_sm8650.profile.txt``.

The three ``Execute Stat`` sections of that qnn-profile-viewer text (qnn-net-run on a Snapdragon
8 Gen 3, QNN 2.45, optrace level; its runtrace measured the HTP clock: ``chain8_sm8650.runtrace.json``)
become three Execute runs of one QNN delegate call (instruction 0), written by
``tools/synth_qnn_etdump.py``'s ExecuTorch writer exactly as ExecuTorch's QnnProfiler logs them:
every top-level event in QNN's order with its unit suffix, the per-op rows right after
``Accelerator (execute) time (cycles)``; ``Unknown event type`` (no value in the text) is written as
0, as in ``synthetic_qnn_resnet50_device``. Regenerate (deterministic) with

    python tools/synth_qnn_chain8_etdump.py --out tests/fixtures/qnn_etdump
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth_qnn_etdump import QnnEvent, build_qnn_etdump, default_data_root  # noqa: E402

_STAT = re.compile(r"^Execute Stat (\d+)\s*$")
_UNIT = {"us": "US", "cycles": "CYCLES", "count": "COUNT", "object": "OBJECT", "bytes": "BYTES"}


def execute_blocks(text: str) -> list[list[QnnEvent]]:
    blocks: list[list[QnnEvent]] = []
    for ln in text.split("\n"):
        if _STAT.match(ln):
            blocks.append([])
            continue
        if not blocks or " : " not in ln:
            continue
        name, _, rest = ln.strip().rpartition(" : ")
        bits = rest.split()
        value, unit = (int(bits[0]), bits[1]) if len(bits) == 2 else (0, bits[0])
        if ln.startswith((" ", "\t")):
            blocks[-1][-1].nodes.append((name.strip(), value))
        else:
            blocks[-1].append(QnnEvent(name.strip(), value, _UNIT[unit]))
    return blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    out = ap.parse_args().out
    src = default_data_root() / "qnn-device" / "chain8_sm8650.profile.txt"
    blocks = execute_blocks(src.read_text())
    assert len(blocks) == 3 and all(sum(v for _, v in next(e for e in b if e.nodes).nodes)
                                    == next(e for e in b if e.nodes).value for b in blocks)
    spec = {"seed": 8650, "time_base_ns": 1_615_942_927_823_000,
            "runs": [{"instructions": [("delegate", 0, 0)], "qnn": {0: b}} for b in blocks]}
    data = build_qnn_etdump(spec)
    out.mkdir(parents=True, exist_ok=True)
    (out / "synthetic_qnn_chain8_device.etdump").write_bytes(data)
    print(f"wrote {out / 'synthetic_qnn_chain8_device.etdump'} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
