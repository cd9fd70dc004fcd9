"""QNN hybrid LLM (stories260k-shaped): prefill_forward and kv_forward runs look alike (one QNN
delegate call at instruction 0); `llm` splits them by what they logged and names them after the
program's methods. Truth: the fixture's manifest (tools/synth_qnn_hybrid.py)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from etscope.render.json import to_jsonable
from etscope.analysis.llm import llm_report as _llm_report
from etscope.analysis.llm.lookalike import lookalike_methods, name_phases
from etscope.formats.pte import read_pte
from etscope.profile import load

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "qnn_hybrid"
ETDUMP = FIX / "synthetic_qnn_hybrid_stories.etdump"
TRUTH = json.loads((FIX / "synthetic_qnn_hybrid_stories.truth.json").read_text())["runs"]
STORIES = SHARED / "qnn-device/stories260k_hybrid_llama_qnn.pte"
EMULATOR = SHARED / "qnn-htp-emulator/tblock_qdq/detailed/qnn_profile.csv"

needs_stories = pytest.mark.skipif(not STORIES.exists(), reason="shared QNN device data not present")


def _plain_report(*args, **kw) -> dict:
    """The result as ``llm --json`` writes it: these tests read the schema."""
    return to_jsonable(_llm_report(*args, **kw))


ETRECORD = FIX / "synthetic_qnn_hybrid_stories.etrecord"


def _report(etdump, pte=None, etrecord=None):
    return _plain_report([load(str(etdump), pte=None if pte is None else str(pte),
                            etrecord=None if etrecord is None else str(etrecord))], all_methods=True)


def _check_against_truth(r, truth, named: bool):
    phases = {p["name"]: p for p in r["llm"]["phases"]}
    assert set(phases) == {"prefill", "decode"}
    assert phases["prefill"]["runs"] == [t["run"] for t in truth if t["phase"] == "prefill"]
    assert phases["decode"]["runs"] == [t["run"] for t in truth if t["phase"] == "decode"]
    if named:
        assert r["llm"]["series"]["method"] == [t["method"] for t in truth]
        assert phases["prefill"]["method"] == "prefill_forward" and phases["decode"]["method"] == "kv_forward"
        assert "same instructions" in phases["prefill"]["method_from"]
        assert r["method"] == ["prefill_forward", "kv_forward"]
        assert not any("several methods fit" in w for w in r["warnings"])


def test_fixture_phases_without_pte():
    _check_against_truth(_report(ETDUMP), TRUTH, named=False)


def test_fixture_runs_named_after_methods_with_its_etrecord():
    """The ETRecord's two methods have the same delegate map: the loader alone would name every run
    after the first of them."""
    _check_against_truth(_report(ETDUMP, etrecord=ETRECORD), TRUTH, named=True)


@needs_stories
def test_fixture_runs_named_after_methods_with_the_real_pte():
    _check_against_truth(_report(ETDUMP, STORIES), TRUTH, named=True)


@needs_stories
@pytest.mark.skipif(not EMULATOR.exists(), reason="shared emulator data not present")
@pytest.mark.parametrize("schedule", [(1, 1, 1, 1), (12,), (2, 9), (3, 0, 4), (6, 6, 6, 6, 6)])
def test_prompt_schedules(tmp_path, schedule):
    sys.path.insert(0, str(ROOT / "tools"))
    import synth_qnn_hybrid

    fx = synth_qnn_hybrid.build(schedule=schedule, seed=sum(schedule) + len(schedule), data_root=SHARED)
    path = tmp_path / "hybrid.etdump"
    path.write_bytes(fx["etdump"])
    _check_against_truth(_report(path, STORIES), fx["truth"], named=True)


@needs_stories
def test_lookalike_methods_of_the_real_program():
    pte = read_pte(STORIES)
    assert sorted(lookalike_methods(pte, "kv_forward")) == ["kv_forward", "prefill_forward"]
    assert lookalike_methods(pte, "get_ar_len") == []         # no instructions: nothing to match
    assert lookalike_methods(None, "kv_forward") == []


class _I:
    def __init__(self, kind, backend=None):
        self.kind, self.backend_id = kind, backend


class _M:
    def __init__(self, name, instrs):
        self.name, self.instructions = name, instrs


class _Pte:
    def __init__(self, *methods):
        self.methods = list(methods)


def _phases():
    return [{"name": "prefill", "method": "a"}, {"name": "decode", "method": "a"}]


def test_names_that_do_not_tell_leave_phases_alone():
    q = [_I("delegate", "QnnBackend")]
    ph = _phases()
    done = name_phases([p["name"] for p in ph], _Pte(_M("graph_a", q), _M("graph_b", q)), "graph_a")
    assert "warning" in done and ph == _phases()
    # different instructions: not look-alike, nothing to do
    assert name_phases(["prefill", "decode"], _Pte(_M("prefill", q), _M("kv", [_I("kernel")])), "prefill") is None
    # look-alike but the runs were not split into prefill and decode
    done = name_phases(["all runs"], _Pte(_M("prefill", q), _M("kv", q)), "kv")
    assert "warning" in done
