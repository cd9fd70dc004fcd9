"""QNN est. µs in the exported events table: cycles ÷ the partition's clock estimate of that run,
known from the ETDump alone (issue 19, defect 9: est_us was null for every row without an ETRecord)."""
import numpy as np
import pytest

import etscope
from etscope import api
from etscope.analysis.stats import describe
from etscope.analysis.views import tables as export
from views_helpers import QNN_ETDUMP, qnn_fixture

NAMES = ["synthetic_qnn_cnn", "synthetic_qnn_vit_2part", "synthetic_qnn_llm", "synthetic_qnn_resnet50_device"]


@pytest.mark.parametrize("with_etrecord", [False, True], ids=["etdump-only", "with-etrecord"])
@pytest.mark.parametrize("name", NAMES)
def test_every_cycles_row_has_its_estimate(name, with_etrecord):
    etrecord = QNN_ETDUMP / f"{name}.etrecord" if with_etrecord else None
    p = etscope.load(qnn_fixture(name), etrecord=etrecord)
    q = api.qnn(p)
    rows = export.events_table(p, qnn=q).to_pylist()
    cycles = [r for r in rows if r["unit"] == "cycles"]
    assert cycles and all(r["est_us"] is not None for r in cycles)
    parts = {part.instruction_id: part for part in q.partitions}
    for r in cycles:
        clock = parts[r["instruction_id"]].per_run.clock_mhz_est[r["execute"]]
        assert r["est_us"] == pytest.approx(r["value"] / clock, rel=1e-12)
    # The same figure as the qnn view's per-op est. µs (p50 over runs), and per run the per-op
    # estimates add up to the accelerator total's.
    for iid, part in parts.items():
        for op in part.ops:
            own = [r["est_us"] for r in cycles if r["instruction_id"] == iid and r["name"] == op.qnn_name]
            if len(own) == part.runs:
                assert describe(np.array(own))["p50"] == pytest.approx(op.est_us_p50, rel=1e-9)
        for run in range(p.n_runs):
            mine = [r for r in cycles if r["instruction_id"] == iid and r["execute"] == run]
            total = [r["est_us"] for r in mine if r["name"] == "Accelerator (execute) time (cycles)"]
            assert total and sum(r["est_us"] for r in mine) - total[0] == pytest.approx(total[0], rel=1e-9)


def test_no_estimate_without_a_clock():
    p = etscope.load(qnn_fixture("synthetic_qnn_cnn"))
    rows = export.events_table(p, qnn=None).to_pylist()
    assert all(r["est_us"] is None for r in rows)
