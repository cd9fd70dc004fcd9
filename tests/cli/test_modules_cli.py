"""`etscope ops --by module`: the module tree as JSON and text; without an ETRecord, one line and exit 2."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.cli import main

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_ops_by_module_json_adds_up_to_method_execute():
    r = run("ops", "--by", "module", REAL / "cnn.etdump", "--etrecord", REAL / "cnn.etrecord", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["schema"] == "etscope.modules/1"
    root = d["modules"][0]
    assert root["total_us"] + d["framework_overhead_us"] == pytest.approx(d["method_execute_us"])
    assert {m["path"] for m in d["modules"]} == {"", "c1", "pool", "c2", "fc"}


def test_ops_by_module_text_lists_the_layers():
    r = run("ops", "--by", "module", REAL / "llama.etdump", "--etrecord", REAL / "llama.etrecord", "--limit", "0")
    assert r.exit_code == 0, r.output
    for name in ("feed_forward", "attention", "TransformerBlock", "framework overhead", "K delegate per-op events"):
        assert name in r.stdout


def test_ops_by_module_without_etrecord_is_one_line_and_exit_2():
    r = run("ops", "--by", "module", REAL / "cnn.etdump")
    assert r.exit_code == 2
    assert r.stderr.strip().count("\n") == 0 and "--etrecord" in r.stderr
