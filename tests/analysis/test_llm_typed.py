"""The ``etscope llm`` result is a tree of frozen dataclasses with declared fields (issue 33 item 1):
no dict or list stands for a record, nothing can be written into it after the analysis, and its
JSON (``render.json``, field by field) is the schema ``llm --json`` prints, findings included."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope.analysis.llm import llm_report
from etscope.analysis.llm.result import LlmReport, Phase, with_memory_wall
from etscope.profile import load
from etscope.render.json import dumps, to_jsonable

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
# Mappings whose keys are data, not field names: an input's source paths by kind; a file's runs by
# joined phase name.
DATA_MAPPINGS = {("LlmReport", "inputs"), ("FileSplit", "runs_by_phase")}


def _walk(x, where: str, owner: tuple[str, str] | None, out: list[str]) -> None:
    if dataclasses.is_dataclass(x):
        assert type(x).__dataclass_params__.frozen, f"{where}: {type(x).__name__} is not frozen"
        for f in dataclasses.fields(x):
            _walk(getattr(x, f.name), f"{where}.{f.name}", (type(x).__name__, f.name), out)
    elif isinstance(x, dict):
        if owner not in DATA_MAPPINGS:
            out.append(f"{where}: dict")
    elif isinstance(x, list):
        out.append(f"{where}: list")
    elif isinstance(x, tuple):
        for i, v in enumerate(x[:50]):
            _walk(v, f"{where}[{i}]", owner, out)


@pytest.mark.parametrize("names", [["gen_llama"], ["llama"], ["gen_llama_multimethod"], ["cnn"],
                                   ["gen_llama", "gen_llama_mixed"]])
def test_the_result_is_a_tree_of_frozen_dataclasses(names):
    r = llm_report([load(REAL / f"{n}.etdump") for n in names], all_methods=True)
    assert isinstance(r, LlmReport) and all(isinstance(p, Phase) for p in r.llm.phases)
    loose: list[str] = []
    _walk(r, "r", None, loose)
    assert not loose, loose
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.llm.phases[0].name = "x"


def test_json_is_what_llm_json_prints_findings_included():
    from etscope.cli import main

    r = llm_report(load(REAL / "gen_llama.etdump"), all_methods=True)
    out = CliRunner().invoke(main, ["llm", str(REAL / "gen_llama.etdump"), "--json"])
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    assert printed == json.loads(dumps(r)) and printed["findings"] == list(r.findings) and r.findings
    assert list(printed) == ["schema", "inputs", "method", "llm", "findings", "warnings"]


def test_sometimes_keys_stay_out_when_absent_and_the_memory_wall_is_a_new_object():
    r = llm_report(load(REAL / "gen_llama.etdump"))
    j = to_jsonable(r)["llm"]
    assert not {"instructions_left_out", "duplicates", "memory_wall"} & set(j)
    assert "qnn" not in j["phases"][0] and "tokens_from" not in j["phases"][0]
    assert with_memory_wall(r, None) is r
    walled = with_memory_wall(r, "wall")
    assert walled is not r and r.llm.memory_wall is None and walled.llm.memory_wall == "wall"


def test_a_series_of_no_runs_keeps_its_keys(tmp_path):
    """Two ETDumps without runs: the per-run lists of several inputs are there, empty (``omit_none``:
    an empty series is a value, not an absent key)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import fuzz_harness as H

    paths = []
    for name in ("a", "b"):
        (tmp_path / f"{name}.etdump").write_bytes(H.build_etdump([]))
        paths.append(load(str(tmp_path / f"{name}.etdump")))
    series = to_jsonable(llm_report(paths))["llm"]["series"]
    assert series["file"] == [] and series["file_run"] == [] and series["method"] == []
