"""profile/instructions.py: which instructions ran, where (backend from event names, else from
the .pte / ETRecord), and which method."""
from __future__ import annotations

from pathlib import Path

import pytest

from etscope.errors import MismatchError
from etscope.profile import load

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REAL = FIX / "real"


def test_without_program_the_backend_is_told_from_event_names():
    p = load(REAL / "cnn.etdump")
    d, c = p.instructions[0], p.instructions[1]
    assert (d.kind, d.backend, d.backend_from) == ("delegate", "XnnpackBackend", "event names")
    assert (c.kind, c.backend, c.kernel) == ("cpu", "cpu", "native_call_cumsum.out")
    assert p.method is None
    q = load(FIX / "qnn_etdump" / "synthetic_qnn_cnn.etdump")
    assert [(i.kind, i.backend) for i in q.instructions.values()] == [("delegate", "QnnBackend")]


def test_the_program_names_backend_operator_and_method():
    p = load(REAL / "cnn.etdump", REAL / "cnn.etrecord", REAL / "cnn.pte")
    d, c = p.instructions[0], p.instructions[1]
    assert p.method == "forward"
    assert (d.backend, d.backend_from) == ("XnnpackBackend", "ETRecord")
    assert c.operator == "aten::cumsum.out" and c.op_types == ["aten.cumsum.default"]
    assert c.source == "make_artifacts.py:49" and d.source == "make_artifacts.py:46"
    only_pte = load(REAL / "cnn.etdump", pte=REAL / "cnn.pte")
    assert only_pte.instructions[0].backend_from == ".pte" and only_pte.instructions[1].source is None


def test_an_unknown_method_is_a_mismatch_naming_the_available_ones():
    with pytest.raises(MismatchError, match=r"method 'nope' not found \(available: forward\)"):
        load(REAL / "cnn.etdump", pte=REAL / "cnn.pte", method="nope")


def test_instructions_and_methods_read_from_the_first_of_identical_runs_are_those_of_every_run(monkeypatch):
    """When every run logged the same events, the instructions (kinds, backends, kernels) and the
    method split are read from the first run: the same as from every event, on every fixture."""
    import etscope.profile.instructions as instructions_module
    import etscope.profile.methods as methods_module
    from etscope.profile.repeats import identical_runs

    shortcut_taken = 0
    for path in sorted(FIX.glob("**/*.etdump")):
        fast = load(path)
        with monkeypatch.context() as m:
            m.setattr(instructions_module, "identical_runs", lambda p: None)
            m.setattr(methods_module, "identical_runs", lambda p: None)
            full = load(path)
        assert fast.instructions == full.instructions, path
        assert fast.method == full.method and fast.warnings == full.warnings, path
        assert (fast.method_split is None) == (full.method_split is None), path
        if fast.method_split is not None:
            assert fast.method_split.names == full.method_split.names, path
        shortcut_taken += identical_runs(fast) is not None
    assert shortcut_taken >= 10


def test_delegate_internal_names_from_the_first_of_identical_runs_are_those_of_every_event(monkeypatch):
    import etscope.profile.instructions as instructions_module
    from etscope.profile.repeats import distinct_event_slices

    shortened = 0
    for path in sorted(FIX.glob("**/*.etdump")):
        p = load(path)
        for q in (p.method_split.profiles.values() if p.method_split else (p,)):
            fast = instructions_module.delegate_internal_names(q)
            with monkeypatch.context() as m:
                m.setattr(instructions_module, "distinct_event_slices", lambda prof: [slice(0, prof.n_events)])
                assert instructions_module.delegate_internal_names(q) == fast, path
            shortened += sum(s.stop - s.start for s in distinct_event_slices(q)) < q.n_events
    assert shortened >= 10
