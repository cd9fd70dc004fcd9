"""Notebook API: etscope.load(...) -> NotebookProfile (the Profile with DataFrames and an HTML repr)."""
import pandas as pd

import etscope
from etscope.api import NotebookProfile
from etscope.profile import Profile
from views_helpers import REAL, XSS, xss_etdump


def test_dataframes_are_arrow_backed():
    p = etscope.load(REAL / "cnn.etdump", etrecord=REAL / "cnn.etrecord")
    # The notebook object holds the model; the model itself knows nothing of DataFrames.
    assert isinstance(p, NotebookProfile) and isinstance(p.profile, Profile)
    assert not hasattr(p.profile, "ops") and not callable(p.profile.runs)
    ops, runs, events = p.ops(), p.runs(), p.events()
    for df in (ops, runs, events):
        assert isinstance(df, pd.DataFrame)
        assert all(isinstance(t, pd.ArrowDtype) for t in df.dtypes)
    assert len(runs) == p.n_runs == 10 and len(events) == p.etdump.event_count
    assert "op_type" in ops and "latency_ms" in runs and "dur_us" in events
    # The columns dicts analysis uses are still there.
    assert p.runs["latency_ns"].shape == (10,) and "role" in p.events
    df = p.sql("SELECT role, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC")
    assert df["n"].sum() == p.etdump.event_count


def test_repr_html_escapes(tmp_path):
    p = etscope.load(REAL / "cnn.etdump")
    html = p._repr_html_()
    assert "Method::execute" in html and "<table>" in html
    path = xss_etdump(tmp_path)
    p = etscope.load(path)
    assert XSS not in p._repr_html_()


def test_report_and_trace_methods(tmp_path):
    p = etscope.load(REAL / "cnn.etdump")
    assert p.report(tmp_path / "r.html").endswith("r.html") and (tmp_path / "r.html").stat().st_size > 10_000
    assert p.trace(tmp_path / "t.json").endswith("t.json") and (tmp_path / "t.json").stat().st_size > 1000
