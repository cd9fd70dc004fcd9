"""``ops`` on a terminal stops at a row limit; the CPU fallbacks below the cut are still listed (or
counted), so "what fell back to the CPU" is never hidden (issue 35 item 7: on the two-partition ViT
the 60-row limit ended inside partition 0 and hid both CPU ops)."""
import dataclasses
import io

from rich.console import Console

import etscope
from etscope.render.screen import Screen
from etscope.render.text import FALLBACKS_BELOW_SHOWN, render_ops
from views_helpers import QNN_ETDUMP


def _render(rows, limit, width=80) -> str:
    buf = io.StringIO()
    render_ops(rows, Screen(Console(file=buf, width=width, color_system=None), width, True), limit=limit)
    return buf.getvalue()


def _vit_rows():
    return etscope.load(QNN_ETDUMP / "synthetic_qnn_vit_2part.etdump",
                        etrecord=QNN_ETDUMP / "synthetic_qnn_vit_2part.etrecord").results.ops


def test_fallbacks_below_the_limit_are_listed():
    rows = _vit_rows()
    cpu = [r for r in rows if r.role == "operator_call"]
    first_cpu = min(i for i, r in enumerate(rows) if r.role == "operator_call")
    assert cpu and first_cpu >= 60, "the fixture's CPU ops sit below the default limit"
    text = _render(rows, 60)
    for r in cpu:
        assert r.name in text
    assert f"the {len(cpu)} CPU fallback op(s) below the cut are listed last" in " ".join(text.split())


def test_many_fallbacks_below_the_limit_are_counted():
    base = _vit_rows()
    call = next(r for r in base if r.role == "operator_call")
    filler = [r for r in base if r.role == "delegate_internal"][:5]
    rows = filler + [dataclasses.replace(call, name=f"native_call_op_{i}.out", instruction_id=1000 + i) for i in range(30)]
    text = " ".join(_render(rows, 5, width=200).split())
    assert f"the {FALLBACKS_BELOW_SHOWN} CPU fallback op(s) below the cut are listed last, " \
           f"{30 - FALLBACKS_BELOW_SHOWN} more not shown" in text
    assert "native_call_op_19.out" in text and "native_call_op_20.out" not in text
