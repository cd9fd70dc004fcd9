"""The report's "Per op type" ranking holds ops only: framework overhead (not an op) stays in the
Method::execute split, not ranked among the NPU ops (issue 15 saw it second among them)."""
from pathlib import Path

import etscope
from etscope.api import results

FIX = Path(__file__).parents[1] / "fixtures"


def test_framework_overhead_not_ranked_among_ops():
    r = results(etscope.load(FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"))
    rows = r.view.placement
    assert rows and all(x.category == "NPU (QNN)" for x in rows)
    assert not any(x.op_type == "framework overhead" or x.category == "framework overhead" for x in rows)
    # the overhead is still in the split of Method::execute
    assert any(b.kind == "framework_overhead" for b in r.summary.breakdown)
