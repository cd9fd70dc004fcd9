"""Imports point one way (issue 14): the import-linter `layers` contract in pyproject.toml holds
(formats <- profile <- analysis <- render <- api <- cli, errors/paths/units/arrays/hashing/version at
the bottom), lazy imports inside functions included, and every module of the package is in a layer."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import etscope

ROOT = Path(__file__).resolve().parents[1]


def _layers() -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in cfg["contracts"] if c["type"] == "layers"]
    return contract["layers"]


def test_this_tree_is_the_one_checked():
    """lint-imports checks the importable etscope: this tree's (editable) or installed from it
    (CI installs non-editable), so its modules must be this tree's modules, byte for byte."""
    installed = Path(etscope.__file__).resolve().parent
    tree = ROOT / "src" / "etscope"
    mods = sorted(p.relative_to(tree) for p in tree.rglob("*.py"))
    assert mods == sorted(p.relative_to(installed) for p in installed.rglob("*.py"))
    assert all((tree / m).read_bytes() == (installed / m).read_bytes() for m in mods)


def test_every_module_is_in_a_layer():
    named = {m.strip() for layer in _layers() for m in layer.replace("|", ":").split(":")}
    package = ROOT / "src" / "etscope"
    top = {p.stem for p in package.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    assert top == named


def test_layers_contract_holds():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    res = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 kept, 0 broken" in res.stdout
