"""Views read typed results, not dicts (issue 33 item 1): no string-keyed access (``x["key"]``,
``x.get("key")``) in the layers that consume analysis (render, cli, api, inputs, frames, fleet).
It was a ratchet from 1,288 such accesses down to none; now any is a failure, and the message
names the file and line.

What it counts is syntax, not types: a subscript by a string constant, or ``.get`` with a string
constant first. Dicts that a renderer builds for its own output count too; rewrite them as typed
rows, or keep them within the budget. Not counted, because they are not analysed results:
- the process environment (``os.environ[...]``, ``environ.get(...)``);
- the body of a function listed in ``RAW_READERS``: the one place that parses a file's raw JSON
  (a dataset manifest, a user's metadata file) into typed values, each with its reason."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "etscope"
CONSUMERS = ("render", "cli", "fleet", "api.py", "inputs.py", "frames.py")
# "file:function" -> why its string keys are not access to an analysed result.
RAW_READERS: dict[str, str] = {
    "fleet/layout.py:parse_entry": "a manifest entry's raw JSON, checked and parsed once into a ManifestEntry",
    "fleet/layout.py:marker_layout": "the dataset marker's raw JSON: the layout it names",
    "fleet/jobs.py:read_meta_file": "a --meta-from or sidecar file's raw JSON into the user's metadata (their keys)",
    "fleet/jobs.py:parse_build_meta": "the user's metadata (--meta, sidecar, --meta-from), parsed once into BuildMeta",
    "fleet/jobs.py:program_files": "a job's companions by kind (--meta-from paths or found by suffix) into ProgramFiles",
    "fleet/reading.py:stored_runs": "a stored runs part's columns by name (pyarrow, checked by read_part) into StoredRuns",
    "fleet/reading.py:stored_level0_ops": "a stored ops part's columns by name (pyarrow, checked by read_part) "
                                          "into StoredOps",
}


def _receiver_is_environment(node: ast.AST) -> bool:
    target = node.value if isinstance(node, ast.Subscript) else node.func.value
    return (isinstance(target, ast.Name) and target.id == "environ") or \
        (isinstance(target, ast.Attribute) and target.attr == "environ")


def _is_string_keyed(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        hit = isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        hit = bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    else:
        return False
    return hit and not _receiver_is_environment(node)


def string_keyed_lines(source: str, file: str = "") -> list[int]:
    tree = ast.parse(source)
    skipped: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and f"{file}:{fn.name}" in RAW_READERS:
            skipped.update(id(n) for n in ast.walk(fn))
    return sorted(node.lineno for node in ast.walk(tree) if id(node) not in skipped and _is_string_keyed(node))


def string_keyed_accesses(source: str, file: str = "") -> int:
    return len(string_keyed_lines(source, file))


def offenders() -> list[str]:
    out = []
    for c in CONSUMERS:
        p = PKG / c
        for f in ([p] if p.suffix == ".py" else sorted(p.rglob("*.py"))):
            rel = f.relative_to(PKG).as_posix()
            out += [f"{rel}:{line}" for line in string_keyed_lines(f.read_text(), rel)]
    return out


def test_counting_sees_both_forms():
    assert string_keyed_accesses('a["x"]; b.get("y", 1); c[0]; d[k]; e.get(k)') == 2


def test_environment_and_listed_raw_readers_are_not_counted():
    assert string_keyed_accesses('os.environ["A"]; os.environ.get("B"); environ.get("C"); env.get("D")') == 1
    RAW_READERS["m.py:parse"] = "test"
    try:
        src = 'def parse(doc):\n    return doc["a"], doc.get("b")\ndef use(r):\n    return r["a"]\n'
        assert string_keyed_accesses(src, "m.py") == 1
    finally:
        del RAW_READERS["m.py:parse"]


def test_raw_readers_name_functions_that_exist():
    for key in RAW_READERS:
        file, fn = key.split(":")
        tree = ast.parse((PKG / file).read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == fn for n in ast.walk(tree)), key


def test_no_string_keyed_access_to_results_in_consumers():
    found = offenders()
    assert not found, ("string-keyed access in a consumer of analysis (read a typed result's "
                       f"attributes, or list a raw-JSON parser in RAW_READERS with its reason): {found}")
