"""The `qnn` per-op table shows p50 over runs and is ordered by that same statistic (issue 19,
defect 10: it said 'most expensive first' but sorted by the mean while showing the p50)."""
import io
import re

import pytest
from rich.console import Console

import etscope
from etscope import api
from etscope.render.qnn_text import render_qnn
from views_helpers import QNN_ETDUMP, qnn_fixture


@pytest.mark.parametrize("name", ["synthetic_qnn_llm", "synthetic_qnn_cnn", "synthetic_qnn_resnet50_device"])
def test_rows_follow_the_shown_p50(name):
    p = etscope.load(qnn_fixture(name), etrecord=QNN_ETDUMP / f"{name}.etrecord")
    q = api.qnn(p)
    buf = io.StringIO()
    render_qnn(q, console=Console(file=buf, width=400, color_system=None), top=1000)
    text = buf.getvalue()
    assert "p50 over the steady runs" in text and "highest p50 first" in text
    # Each partition's table in order of the p50 it shows.
    tables = text.split("Per-op HTP cycles")[1:]
    assert len(tables) == len(q.partitions)
    for part, table in zip(q.partitions, tables):
        p50_of = {o.qnn_name: o.cycles_p50 for o in part.ops}
        order = [p50_of[n] for n in re.findall(r"(?m)^(\S.*?\(cycles\)(?: #\d+)?)  ", table) if n in p50_of]
        assert len(order) == len(part.ops)
        assert order == sorted(order, reverse=True), name


@pytest.mark.parametrize("sort,field", [("cycles", "cycles_p50"), ("p50", "cycles_p50"), ("mean", "cycles_mean"),
                                        ("share", "share"), ("total", "share")])
def test_sort_orders_by_the_key(sort, field):
    """Issue 21: --sort on the qnn per-op table; with mean the mean column is shown too."""
    name = "synthetic_qnn_llm"
    q = api.qnn(etscope.load(qnn_fixture(name), etrecord=QNN_ETDUMP / f"{name}.etrecord"))
    buf = io.StringIO()
    render_qnn(q, console=Console(file=buf, width=400, color_system=None), top=0, sort=sort)
    table = buf.getvalue().split("Per-op HTP cycles")[1]
    ops = {o.qnn_name: o for o in q.partitions[0].ops}
    names = [n for n in re.findall(r"(?m)^(\S.*?\(cycles\)(?: #\d+)?)  ", table) if n in ops]
    assert sorted(names) == sorted(ops)
    values = [getattr(ops[n], field) or 0 for n in names]
    assert values == sorted(values, reverse=True)
    assert ("cycles mean" in table) == (sort == "mean")
