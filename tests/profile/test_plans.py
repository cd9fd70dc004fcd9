"""profile/plans.py: the program's methods, and whether a run's instructions fit one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from etscope.errors import MismatchError
from etscope.formats.pte import read_pte
from etscope.profile import load
from etscope.profile.plans import fits_plan, method_names, method_plans, pte_method, require_method

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _codes(*pairs):
    """(instruction id, is a DELEGATE_CALL) -> the codes runs are compared with."""
    return np.array(sorted(i * 2 + int(d) for i, d in pairs), dtype=np.int64)


def test_a_run_fits_a_method_when_ids_and_delegate_calls_agree():
    plan = (np.array([0]), np.array([0, 1, 2]))          # instruction 0 is the only delegate call
    assert fits_plan(_codes((0, True), (1, False)), plan)
    assert not fits_plan(_codes((0, False), (1, False)), plan)      # 0 logged as a CPU operator
    assert not fits_plan(_codes((0, True), (5, False)), plan)       # 5 is not an instruction there
    assert fits_plan(_codes((0, True), (5, False)), (np.array([0]), None))   # ETRecord: ids unknown


def test_plans_from_the_pte():
    pte = read_pte(REAL / "cnn.pte")
    assert method_names(pte) == ["forward"] and method_names(None) == []
    delegate_ids, all_ids = method_plans(None, pte)["forward"]
    assert delegate_ids.tolist() == [0] and 1 in all_ids.tolist()
    assert pte_method(pte, "forward").name == "forward" and pte_method(pte, "nope") is None


def test_require_method_names_the_file():
    p = load(REAL / "cnn.etdump", pte=REAL / "cnn.pte")
    require_method(p, ["forward"], "forward")
    with pytest.raises(MismatchError) as e:
        require_method(p, ["forward"], "decode")
    assert "'decode' not found (available: forward)" in str(e.value) and "cnn.pte" in str(e.value)
