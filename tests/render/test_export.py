"""Tables (events, ops, runs) in true units, their files, and the Model Explorer overlay."""
import json
import os

import pyarrow.parquet as pq
import pytest

import etscope
from etscope import api
from etscope.analysis.views import tables as T
from etscope.render import export
from etscope.sql.engine import SqlError, query
from views_helpers import REAL, qnn_fixture


@pytest.fixture(scope="module")
def cnn():
    return etscope.load(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord", pte=REAL / "cnn.pte")


def test_columns_are_documented(cnn):
    t = T.tables(cnn)
    for name, table in t.items():
        doc = T.COLUMNS[name]
        for col in table.column_names:
            key = col if col in doc else ("delegate_<Backend>_ms" if col.endswith("_ms") else "delegate_<Backend>_calls")
            assert key in doc, (name, col)


def test_events_table_units_and_times(cnn):
    ev = T.events_table(cnn).to_pylist()
    assert len(ev) == cnn.etdump.event_count
    methods = [e for e in ev if e["role"] == "method_execute"]
    assert len(methods) == 10
    for e in methods:
        assert e["unit"] == "ns" and e["dur_us"] == pytest.approx(e["value"] / 1e3)
        assert e["end_us"] - e["start_us"] == pytest.approx(e["dur_us"], abs=1e-3)
    assert min(e["start_us"] for e in ev if e["start_us"] is not None) == 0
    cpu = [e for e in ev if e["role"] == "operator_call"]
    assert cpu and all(e["placement"] == "cpu" and e["op_type"] == "aten.cumsum.default" for e in cpu)
    debug = [e for e in ev if e["kind"] == "debug"]
    assert debug and all(e["dur_us"] is None for e in debug)


def test_qnn_cycles_are_not_durations_but_have_estimates():
    path = qnn_fixture("synthetic_qnn_llm")
    p = etscope.load(path, etrecord=path.with_suffix(".etrecord"))
    q = api.qnn(p)
    ev = T.events_table(p, q).to_pylist()
    cyc = [e for e in ev if e["unit"] == "cycles" and ":OpId_" in (e["name"] or "")]
    assert cyc and all(e["dur_us"] is None for e in cyc)
    with_est = [e for e in cyc if e["est_us"] is not None]
    assert len(with_est) > len(cyc) // 2
    assert any(e["op_type"] and e["op_type"].startswith("aten.") for e in with_est)
    us = [e for e in ev if e["unit"] == "us"]
    assert us and all(e["dur_us"] == e["value"] for e in us)


def test_runs_table_adds_up(cnn):
    runs = T.runs_table(cnn).to_pylist()
    assert len(runs) == 10
    for r in runs:
        parts = r["delegate_XnnpackBackend_ms"] + r["cpu_ops_ms"] + r["framework_overhead_ms"]
        assert parts == pytest.approx(r["latency_ms"], rel=1e-9)


def test_runs_table_has_llm_phases():
    p = etscope.load(REAL / "gen_llama.etdump")
    r = api.results(p)
    runs = T.runs_table(p.profile, r.phases).to_pylist()
    assert {x["phase"] for x in runs} == {"prefill", "decode"}
    assert runs == r.tables.runs.to_pylist()
    assert [x["phase"] for x in runs] == list(api.llm(p).llm.series.phase)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_files_written_atomically(cnn, tmp_path, fmt):
    written = export.export(api.results(cnn), fmt, tmp_path / "out")
    assert sorted(os.path.basename(w) for w in written) == sorted(f"{n}.{fmt}" for n in ("events", "ops", "runs"))
    assert not [f for f in os.listdir(tmp_path / "out") if f.endswith(".tmp")]
    events = T.events_table(cnn)
    if fmt == "parquet":
        back = pq.read_table(tmp_path / "out" / "events.parquet")
        assert back.num_rows == events.num_rows and back.column_names == events.column_names
    elif fmt == "json":
        rows = json.loads((tmp_path / "out" / "events.json").read_text())
        assert len(rows) == events.num_rows and set(rows[0]) == set(events.column_names)
    else:
        lines = (tmp_path / "out" / "events.csv").read_text().splitlines()
        assert len(lines) == events.num_rows + 1 and lines[0].startswith('"event"')


def test_model_explorer_overlay_is_keyed_by_graph_nodes(tmp_path):
    path = qnn_fixture("synthetic_qnn_vit_2part")
    p = etscope.load(path, etrecord=path.with_suffix(".etrecord"))
    written = export.export(api.results(p), "model-explorer", tmp_path)
    files = {os.path.basename(w): json.loads(open(w).read()) for w in written}
    names = {n.name for n in p.etrecord.lowering_input(p.method).nodes}
    time_ = files["node_time_us.json"]
    assert time_["results"] and set(time_["results"]) <= names
    assert all(isinstance(v["value"], (int, float)) and v["value"] >= 0 for v in time_["results"].values())
    assert [g["stop"] for g in time_["gradient"]][0] == 0 and time_["gradient"][-1]["stop"] == 1
    placement = files["node_placement.json"]["results"]
    assert {v["value"] for v in placement.values()} == {"QnnBackend", "cpu"}
    assert set(placement) <= names
    # The CPU fallback node carries its measured time.
    assert time_["results"]["aten_pow_tensor_scalar"]["value"] > 0


def test_model_explorer_without_etrecord_is_empty():
    p = etscope.load(REAL / "cnn.etdump")
    assert api.results(p).nodes is None and export.node_data(None) == {}


def test_sql(cnn):
    t = query(cnn.tables, "SELECT op_type, sum(dur_us) AS us FROM events WHERE role = 'operator_call' GROUP BY 1")
    rows = t.to_pylist()
    assert rows[0]["op_type"] == "aten.cumsum.default" and rows[0]["us"] > 0
    t = query(cnn.tables, "SELECT count(*) AS n FROM runs JOIN ops ON true WHERE ops.level = 0")
    assert t.to_pylist()[0]["n"] == 10 * 2
    with pytest.raises(SqlError) as e:
        query(cnn.tables, "SELECT no_such_column FROM events")
    assert "\n" not in str(e.value) and "no_such_column" in str(e.value)


def test_model_explorer_cnn_xnnpack_nodes_carry_their_times(tmp_path):
    p = etscope.load(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord", pte=REAL / "cnn.pte")
    written = export.export(api.results(p), "model-explorer", tmp_path)
    files = {os.path.basename(w): json.loads(open(w).read()) for w in written}
    time_, how = files["node_time_us.json"]["results"], files["node_time_how.json"]["results"]
    for node in ("aten_convolution_default", "aten_convolution_default_1", "aten_linear_default"):
        assert time_[node]["value"] > 0
        assert how[node]["value"] == "matched by kind and order"
    assert how["aten_cumsum_default"]["value"] == "measured"
    assert "aten_relu_default" not in time_ and how["aten_relu_default"]["value"].startswith("untimed: ")
