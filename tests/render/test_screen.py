"""render.screen: names shortened in the middle keeping the unique tail, folded without splitting
it, tables fitted to a width; analysis.ops.ordering: --sort keeps an instruction's rows together."""
import io

import pytest
from rich.console import Console

import etscope
from etscope.analysis.ops.ordering import SORT_KEYS, order_ops, order_qnn_ops
from etscope.render.screen import MIN_HEAD, Screen, Table, cell_len, compact_tail, fold_name, shorten, tail_of
from etscope.render.text import render_ops
from views_helpers import QNN_ETDUMP, REAL, qnn_fixture

NAMES = ["aten_linear_default_11:OpId_178 (cycles)", "Input OpId_2 (cycles)", "native_call_scalar_tensor.out",
         "DELEGATE_CALL (XnnpackBackend) #2", "Convolution (NHWC, F32) IGEMM (in XnnpackBackend #1)",
         "llama_transformer.py:415", "  aten_div_tensor_1:OpId_167 (cycles)", "名前の長い演算子:OpId_9 (cycles)"]


@pytest.mark.parametrize("name", NAMES)
def test_shorten_keeps_the_tail_and_the_width(name):
    """The unique tail is kept whole while it leaves MIN_HEAD cells of the name's start; past that an
    op id tail shrinks to its number (``aten_linear…_178``), so the start still says what the op is."""
    tail = tail_of(name.lstrip())
    assert tail
    indent = len(name) - len(name.lstrip())
    short = compact_tail(tail)
    for width in range(cell_len(short) + indent + 4, cell_len(name) + 3):
        s = shorten(name, width)
        assert cell_len(s) <= width
        assert s == name if cell_len(name) <= width else "…" in s
        if cell_len(name) <= width:
            continue
        if width - indent - 1 - cell_len(tail) >= MIN_HEAD or short == tail:
            assert s.endswith(tail)
        else:
            assert s.endswith("…" + short) and s.lstrip()[:1] == name.lstrip()[:1]


@pytest.mark.parametrize("name, width, expect", [
    ("aten_linear_default_11:OpId_85 (cycles)", 15, "aten_linear…_85"),
    ("aten_linear_default_11:OpId_85 (cycles)", 31, "aten_linear_d…:OpId_85 (cycles)"),
    ("Input OpId_2 (cycles)", 10, "Input…_2"),
    ("DELEGATE_CALL (XnnpackBackend) #2", 12, "DELEGA…d) #2"),
])
def test_shorten_head_and_distinguishing_tail(name, width, expect):
    assert shorten(name, width) == expect


@pytest.mark.parametrize("name", NAMES)
def test_fold_loses_nothing_and_never_splits_the_tail(name):
    tail = tail_of(name.lstrip()).strip()
    for width in range(max(4, cell_len(tail)), cell_len(name) + 2):
        lines = fold_name(name, width)
        assert all(cell_len(ln) <= width for ln in lines)
        assert "".join(lines).replace(" ", "") == name.replace(" ", "")
        assert any(tail in ln for ln in lines)


def _screen(width, terminal):
    buf = io.StringIO()
    return Screen(Console(file=buf, width=width or 1000, color_system=None), width, terminal), buf


def test_table_moves_detail_columns_then_writes_records():
    t = Table(title="t")
    for col, kw in (("name", {}), ("value", {"justify": "right"}), ("where", {"detail": 1})):
        t.add_column(col, **kw)
    t.add_row("a_long_operator_name:OpId_12 (cycles)", "1,234 cycles", "model.py:12")
    for width, expect in ((80, "model.py:12"), (40, "where: model.py:12"), (20, "value: 1,234 cycles")):
        s, buf = _screen(width, True)
        s.print(t)
        text = buf.getvalue()
        assert expect in text and (":OpId_12" in text or "…_12" in text)
        assert max(cell_len(ln) for ln in text.splitlines()) <= width


def test_piped_without_width_is_one_line_per_row():
    rows = etscope.load(REAL / "llama.etdump", etrecord=REAL / "llama.etrecord", pte=REAL / "llama.pte").results.ops
    s, buf = _screen(None, False)
    render_ops(rows, console=s)
    lines = buf.getvalue().splitlines()
    assert len(lines) == len(rows) + 3 and "…" not in buf.getvalue()


@pytest.mark.parametrize("key", SORT_KEYS)
def test_order_ops_keeps_instructions_together(key):
    for p in (etscope.load(REAL / "llama.etdump", etrecord=REAL / "llama.etrecord", pte=REAL / "llama.pte"),
              etscope.load(qnn_fixture("synthetic_qnn_llm"), etrecord=QNN_ETDUMP / "synthetic_qnn_llm.etrecord")):
        rows = p.results.ops
        out = order_ops(rows, key)
        assert sorted(map(id, out)) == sorted(map(id, rows))             # a permutation
        seen, order = set(), []
        for r in out:                                                  # each instruction one block
            if not order or order[-1] != r.instruction_id:
                assert r.instruction_id not in seen
                seen.add(r.instruction_id)
                order.append(r.instruction_id)
                assert r.level == 0
        if key in ("p50", "mean", "total", "share"):
            field = "share" if key == "share" else f"{key}_ms"
            firsts = [next(r for r in out if r.instruction_id == i and r.level == 0) for i in order]
            firsts = [getattr(r, field) for r in firsts]
            firsts = [v for v in firsts if v is not None]
            assert firsts == sorted(firsts, reverse=True)


def test_order_ops_cycles_puts_the_qnn_partitions_first():
    p = etscope.load(qnn_fixture("synthetic_qnn_llm"), etrecord=QNN_ETDUMP / "synthetic_qnn_llm.etrecord")
    out = order_ops(p.results.ops, "cycles")
    assert out[0].placement == "QnnBackend" and out[1].unit == "cycles"
    with pytest.raises(ValueError):
        order_qnn_ops([], "median")


def test_ops_sort_cycles_without_cycles_rows_falls_back_to_total_and_says_so():
    """A CPU-only model has no rows in cycles: `--sort cycles` used to keep instruction order
    under a "most cycles first" title; it sorts by total and the title says why."""
    from click.testing import CliRunner

    from etscope.cli import main

    args = ["ops", str(REAL / "llama.etdump"), "--etrecord", str(REAL / "llama.etrecord"), "--limit", "0",
            "--phase", "all"]
    by_cycles = CliRunner().invoke(main, [*args, "--sort", "cycles"], env={"COLUMNS": "400"})
    by_total = CliRunner().invoke(main, [*args, "--sort", "total"], env={"COLUMNS": "400"})
    assert by_cycles.exit_code == 0 and by_total.exit_code == 0
    title = by_cycles.output.split("\n", 1)[0]
    assert "no rows in cycles" in title and "largest total first" in title and "most cycles" not in title
    assert by_cycles.output.split("\n", 1)[1] == by_total.output.split("\n", 1)[1]
    # The QNN profile has rows in cycles: its sort and title stay.
    from etscope.analysis.ops.ordering import OPS_SORT_TITLE, ops_sort_used

    q = etscope.load(qnn_fixture("synthetic_qnn_llm"), etrecord=QNN_ETDUMP / "synthetic_qnn_llm.etrecord")
    assert ops_sort_used(q.results.ops, "cycles") == ("cycles", OPS_SORT_TITLE["cycles"])


def test_a_row_style_colours_its_row_on_a_terminal_only():
    """trend gives a regression's row its verdict's colour; piped output stays plain text."""
    from etscope.render.text import console_or_default

    def shown(terminal: bool) -> str:
        buf = io.StringIO()
        c = console_or_default(Console(file=buf, force_terminal=terminal, width=80, color_system="standard"))
        t = Table()
        for col in ("build", "verdict"):
            t.add_column(col)
        t.add_row("b1", "no change")
        t.add_row("b2", "regression", style="bold red")
        c.print(t)
        return buf.getvalue()

    assert "\x1b[1;31mb2     regression\x1b[0m" in shown(True)
    assert "b1     no change\n" in shown(True)
    assert "\x1b" not in shown(False) and "b2     regression" in shown(False)
