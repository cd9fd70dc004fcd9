#!/usr/bin/env python3
"""Oracle for `etscope ops --by module`: ExecuTorch Inspector's ``find_total_for_module`` on the real
CPU/XNNPACK fixtures, written to ``tests/fixtures/real/inspector_module_totals.json``.

Needs the oracle environment (torch 2.13.0 + executorch 1.5.1, see DEVELOPERS.md)::

    /work/venv-oracle/bin/python tools/inspector_module_totals.py

For each fixture, every ``nn_module_stack`` key the Inspector's events carry is asked for its total
(``find_total_for_module(key)``: the mean of every non-OPERATOR_CALL event whose graph nodes sit in
that module; its docstring says seconds, its default time scale gives ms), stored in µs under the
module's path. What the Inspector sums differs
from etscope on purpose (it counts kernel events instead of OPERATOR_CALL, leaves out instructions
without graph nodes, and counts a delegate call whole for every module it touches); the test
(tests/analysis/test_modules_oracle.py) compares on that basis.
"""
import json
import sys
from pathlib import Path

from executorch.devtools import Inspector

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"
CASES = {"cnn": ("cnn.etdump", "cnn.etrecord"), "llama_nodebug": ("llama_nodebug.etdump", "llama.etrecord")}


def totals(etdump: Path, etrecord: Path) -> dict:
    ins = Inspector(etdump_path=str(etdump), etrecord=str(etrecord))
    keys = {}
    for block in ins.event_blocks:
        for event in block.events:
            for stack in (event.module_hierarchy or {}).values():
                for key, (path, _type) in (stack or {}).items():
                    keys.setdefault(key, path)
    return {path: ins.find_total_for_module(key) * 1e3 for key, path in keys.items()}   # ms (its default scale) -> µs


def main() -> int:
    out = {"tool": "executorch.devtools.Inspector.find_total_for_module (executorch 1.5.1)", "unit": "us",
           "fixtures": {name: {"etdump": a, "etrecord": b, "module_total_us": totals(REAL / a, REAL / b)}
                        for name, (a, b) in CASES.items()}}
    (REAL / "inspector_module_totals.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
