"""Issue 33 item 1: the diff result is a tree of frozen dataclasses with declared fields (tuples, not
lists; no dict behind attributes), it cannot be changed after the analysis, and ``diff --json`` is
``render.json`` of it, field by field."""
import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etscope import api
from etscope.analysis.diff import result as R
from etscope.analysis.diff.compare import compare
from etscope.analysis.diff.view import diff_view
from etscope.cli import main
from etscope.profile import load
from etscope.render.json import dumps

FIX = Path(__file__).resolve().parents[1] / "fixtures"
D = FIX / "diff"
HYB = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"
DECODE_X4 = FIX / "diff_llm" / "synthetic_qnn_hybrid_stories_decode_x4.etdump"
PTE = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
# Values as the inputs give them (a fact's base / new: a count, a list, a mapping of counts).
FREE = {(R.Fact, "base"), (R.Fact, "new"), (R.DetailFact, "base"), (R.DetailFact, "new")}


def _walk(x, where="result"):
    """Every dataclass in the tree is frozen; no list or dict outside a fact's values."""
    if dataclasses.is_dataclass(x):
        assert type(x).__dataclass_params__.frozen, where
        for f in dataclasses.fields(x):
            if (type(x), f.name) not in FREE:
                _walk(getattr(x, f.name), f"{where}.{f.name}")
    elif isinstance(x, tuple):
        for i, v in enumerate(x):
            _walk(v, f"{where}[{i}]")
    else:
        assert not isinstance(x, (list, dict, set)), f"{where}: {type(x).__name__}"


def _pairs():
    same = load(D / "diff_same_00.etdump", etrecord=D / "diff_same.etrecord")
    moved = load(D / "diff_cpu_moved.etdump", etrecord=D / "diff_cpu_moved.etrecord")
    yield "sessions", compare([same, load(D / "diff_same_01.etdump")], [load(D / "diff_slower.etdump")])
    yield "moved", compare(same, moved, fail_on_fallback=True)
    yield "moved_no_etrecord", compare(load(D / "diff_same_00.etdump"), load(D / "diff_cpu_moved.etdump"))
    if PTE.exists():
        yield "phases", compare(load(HYB, pte=PTE), load(DECODE_X4, pte=PTE), llm_options=api.llm_options(PTE),
                                fail_on_regression_pct=5.0)


@pytest.mark.parametrize("name,d", list(_pairs()), ids=lambda x: x if isinstance(x, str) else "")
def test_result_is_a_frozen_tree(name, d):
    _walk(d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.verdict = "no_change"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.latency.base_p50_ms = 0.0


def test_views_read_attributes_and_the_json_is_the_command_s():
    a, b = D / "diff_same_00.etdump", D / "diff_slower.etdump"
    d = compare(load(a), load(b), inputs=R.Sides((str(a),), (str(b),)))
    assert isinstance(d, R.Comparison) and d.phases == () and d.verdict_phase is None
    assert d.latency.ci_pct[0] <= d.latency.change_pct <= d.latency.ci_pct[1]
    assert [name for name, _ in d.axes.named()] == ["latency", "placement", "program", "environment"]
    out = CliRunner().invoke(main, ["diff", str(a), str(b), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(dumps(d)) == json.loads(out.output)
    # the page's view holds the same p50s, once
    v = diff_view(d, load(a), load(b))
    assert (v.series.stats.base.p50, v.series.stats.new.p50) == (d.latency.base_p50_ms, d.latency.new_p50_ms)


def test_optional_keys_stay_out_of_the_json():
    d = compare(load(D / "diff_same_00.etdump"), load(D / "diff_same_01.etdump"))
    j = json.loads(dumps(d))
    assert "phases_pooled" not in j and "inputs" not in j and "phases" not in j
    moved = compare(load(D / "diff_same_00.etdump"), load(D / "diff_cpu_moved.etdump"))
    kinds = {type(c) for c in moved.placement_changes}
    assert kinds <= {R.OpMoved, R.OpMovedByEvents, R.CpuOpChanged, R.PartitionsChanged}
    for c, cj in zip(moved.placement_changes, json.loads(dumps(moved))["placement_changes"]):
        assert ("evidence" in cj) == isinstance(c, R.OpMovedByEvents)
        assert ("undecided" in cj) == isinstance(c, R.CpuOpChanged)
        if not isinstance(c, R.PartitionsChanged):
            assert cj["from"] == c.from_
