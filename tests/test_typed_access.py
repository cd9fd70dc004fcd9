"""Views read typed results, not dicts (issue 33 item 1): string-keyed access (``x["key"]``,
``x.get("key")``) in the layers that consume analysis (render, cli, api, inputs, frames, fleet) is counted
per file and may only go down. A file listed at 0 has been converted; a new file starts at 0.
Lower a budget in ``typed_access_budget.json`` when a conversion lands (the test says so when a file
is under its budget); raising one needs a reason in the commit.

What it counts is syntax, not types: a subscript by a string constant, or ``.get`` with a string
constant first. Dicts that a renderer builds for its own output count too; rewrite them as typed
rows, or keep them within the budget."""
from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "etscope"
CONSUMERS = ("render", "cli", "fleet", "api.py", "inputs.py", "frames.py")
BUDGET_FILE = Path(__file__).with_name("typed_access_budget.json")


def string_keyed_accesses(source: str) -> int:
    n = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            n += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            n += 1
    return n


def counts() -> dict[str, int]:
    out = {}
    for c in CONSUMERS:
        p = PKG / c
        for f in ([p] if p.suffix == ".py" else sorted(p.rglob("*.py"))):
            out[f.relative_to(PKG).as_posix()] = string_keyed_accesses(f.read_text())
    return out


def test_counting_sees_both_forms():
    assert string_keyed_accesses('a["x"]; b.get("y", 1); c[0]; d[k]; e.get(k)') == 2


def test_string_keyed_access_only_goes_down():
    budget = json.loads(BUDGET_FILE.read_text())
    now = counts()
    over = {f: (n, budget.get(f, 0)) for f, n in now.items() if n > budget.get(f, 0)}
    assert not over, f"string-keyed access above budget (now, budget): {over}"


def test_budget_lists_no_file_that_is_gone():
    assert set(json.loads(BUDGET_FILE.read_text())) <= set(counts())


if __name__ == "__main__":       # python tests/test_typed_access.py: write the current counts
    BUDGET_FILE.write_text(json.dumps(dict(sorted(counts().items())), indent=0) + "\n")
