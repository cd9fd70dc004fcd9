"""Imports point one way (issue 14): the import-linter `layers` contract in pyproject.toml holds
(formats <- profile <- analysis <- render <- api <- cli, errors/paths/units/arrays/hashing/version at
the bottom), lazy imports inside functions included, and every module of the package is in a layer."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import etscope

ROOT = Path(__file__).resolve().parents[1]


def _layers(container: str = "etscope") -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in cfg["contracts"] if c["type"] == "layers" and c["containers"] == [container]]
    return contract["layers"]


def _members(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def test_this_tree_is_the_one_checked():
    """lint-imports checks the importable etscope: this tree's (editable) or installed from it
    (CI installs non-editable), so its modules must be this tree's modules, byte for byte."""
    installed = Path(etscope.__file__).resolve().parent
    tree = ROOT / "src" / "etscope"
    mods = sorted(p.relative_to(tree) for p in tree.rglob("*.py"))
    assert mods == sorted(p.relative_to(installed) for p in installed.rglob("*.py"))
    assert all((tree / m).read_bytes() == (installed / m).read_bytes() for m in mods)


@pytest.mark.parametrize("container", ["etscope", "etscope.analysis"])
def test_every_module_is_in_a_layer(container):
    """Every module of the package, and every domain of analysis, stands in a layer of its contract
    (analysis is grouped by domain, issue 33: a new flat module there fails this test)."""
    named = {m.strip() for layer in _layers(container) for m in layer.replace("|", ":").split(":")}
    assert _members(ROOT / "src" / Path(*container.split("."))) == named


def test_every_analysis_domain_says_what_it_is():
    for pkg in (ROOT / "src" / "etscope" / "analysis").iterdir():
        if (pkg / "__init__.py").exists():
            doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text()))
            assert doc and len(doc.split()) >= 5, pkg.name


def test_layers_contract_holds():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    res = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 kept, 0 broken" in res.stdout
