"""Joining the ETDump to the .pte and ETRecord. Warnings about what the join could not establish
agree with what the tables show (issue 19, defect 8: '… no op type or source' while `ops` showed
the op type the .pte gives)."""
import re

from etscope.analysis.ops.per_op import op_table
from etscope.profile import load
from pathlib import Path

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def _handles_warning(p):
    return next(w for w in p.warnings if "no debug handles" in w)


def _without_handles(p):
    hmap = p.etrecord.debug_handle_map[p.method]
    return [i for i in p.instructions.values() if i.kind == "cpu" and i.id not in hmap]


def test_op_type_from_the_pte_is_not_denied():
    p = load(REAL / "gen_llama.etdump", etrecord=REAL / "gen_llama.etrecord", pte=REAL / "gen_llama.pte")
    w = _handles_warning(p)
    missing = _without_handles(p)
    assert w.startswith(f"{len(missing)} CPU instruction(s)") and len(missing) == 28
    assert "op type from the .pte" in w and "no op type" not in w
    rows = {r.instruction_id: r for r in op_table(p) if r.level == 0}
    for ins in missing:
        assert rows[ins.id].op_type == ins.operator.replace("::", ".")
        assert rows[ins.id].source is None


def test_without_the_pte_each_kind_is_counted_as_the_table_shows():
    p = load(REAL / "gen_llama.etdump", etrecord=REAL / "gen_llama.etrecord")
    w = _handles_warning(p)
    rows = {r.instruction_id: r for r in op_table(p) if r.level == 0}
    missing = _without_handles(p)
    no_type = [i for i in missing if rows[i.id].op_type is None]
    guessed = [i for i in missing if rows[i.id].op_type is not None]
    assert no_type and guessed
    assert re.search(rf"no op type for {len(no_type)} \(", w)
    assert re.search(rf"op type guessed from the kernel name for {len(guessed)} \(", w)
    assert all(rows[i.id].source is None for i in missing)


def test_runtime_calls_of_control_flow_match_the_pte():
    """The runtime logs JF_CALL for a jump instruction (MOVE_CALL, FREE_CALL for moves and frees):
    the .pte of that very run was refused ('a CPU operator in the ETDump but a jump in the .pte')."""
    p = load(REAL / "gen_loop.etdump", etrecord=REAL / "gen_loop.etrecord", pte=REAL / "gen_loop.pte")
    pte_kinds = {i.index: i.kind for i in p.pte.methods[0].instructions}
    jumps = [i for i in p.instructions.values() if i.kernel == "JF_CALL"]
    assert jumps and all(pte_kinds[i.id] == "jump" and i.kind == "cpu" for i in jumps)
    # Every other CPU instruction is a kernel in the .pte with its operator.
    assert all(pte_kinds[i.id] == "kernel" and i.operator for i in p.instructions.values()
               if i.kind == "cpu" and i.kernel != "JF_CALL")
