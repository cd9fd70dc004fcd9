"""One p50 per quantity (issue 33 item 2): every single-file view's statistics over runs (p50, mean
per run, share of mean, the per-op table) are over the steady runs, the runs `etscope llm` and
`etscope diff` keep: each phase's runs without its leading warm-up runs (``stats.leading_warmup``,
picked once by ``stats.steady_runs``). So summary, ops, qnn, report and llm give the same p50 for
the same quantity on the same file; the per-run series keep every run, and each view says once
how many warm-up runs were left out.

Files: the real ``cnn`` fixture (run 0 is warm-up: 0.145 ms, 4.6x the later runs' median) and a
QNN file with a warm-up run, ``synthetic_qnn_cnn_warmup``, built here by the fixture script
(``tools/synth_qnn_etdump.py``) from the committed ``synthetic_qnn_cnn``: its run 0's DELEGATE_CALL
made 4x longer. ``synthetic_qnn_cnn`` itself has no warm-up run: its output is unchanged.
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.cli import main

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "real"
QNN = ROOT / "tests" / "fixtures" / "qnn_etdump"
_BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)
REL = dict(rel=1e-9)


def _run(args: list) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": None})
    assert res.exit_code == 0, res.output
    return res.stdout


def _synth():
    """tools/synth_qnn_etdump.py (the fixture script), registered as a module: its dataclasses need it."""
    name = "synth_qnn_etdump"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "synth_qnn_etdump.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


@pytest.fixture(scope="module")
def qnn_warmup(tmp_path_factory) -> Path:
    """synthetic_qnn_cnn with its first execute's DELEGATE_CALL 4x longer: a warm-up run."""
    synth = _synth()
    spec = synth.spec_from_etdump((QNN / "synthetic_qnn_cnn.etdump").read_bytes())
    first = spec["runs"][0]
    for iid in first["wall_ns"]:
        first["wall_ns"][iid] *= 4
    path = tmp_path_factory.mktemp("steady") / "synthetic_qnn_cnn_warmup.etdump"
    path.write_bytes(synth.build_qnn_etdump(spec))
    return path


def _views(etdump: Path, tmp: Path, qnn: bool) -> dict:
    out = {c: json.loads(_run([c, etdump, "--json"])) for c in ("summary", "ops", "llm")}
    out["qnn"] = json.loads(_run(["qnn", etdump, "--json"]))["qnn"] if qnn else None
    _run(["report", etdump, "-o", tmp / "r.html"])
    out["report"] = json.loads(_BLOB.search((tmp / "r.html").read_text()).group(1))
    out["text"] = {c: _run([c, etdump]) for c in ("summary", "ops")}
    return out


@pytest.mark.parametrize("which", ["real_cnn", "synthetic_qnn_cnn_warmup"])
def test_every_view_gives_the_steady_p50(which, qnn_warmup, tmp_path):
    etdump, qnn = (REAL / "cnn.etdump", False) if which == "real_cnn" else (qnn_warmup, True)
    v = _views(etdump, tmp_path, qnn)
    s, ops, llm, rep = v["summary"], v["ops"], v["llm"]["llm"], v["report"]
    (phase,) = llm["phases"]
    assert llm["warmup_runs"] == [0] and phase["steady_runs"] == s["runs"]["count"] - 1
    lat = llm["series"]["latency_ms"]                  # every run, as every per-run series keeps them
    steady = lat[1:]

    # Method::execute p50: one number in summary, ops, report and llm (and qnn's outermost band)
    p50 = float(np.percentile(steady, 50))
    assert s["runs"]["latency_ms"]["p50"] == pytest.approx(p50, **REL)
    assert ops["runs"]["latency_ms"]["p50"] == s["runs"]["latency_ms"]["p50"]
    assert rep["summary"]["runs"]["latency_ms"]["p50"] == s["runs"]["latency_ms"]["p50"]
    assert phase["latency_ms"]["p50"] == pytest.approx(s["runs"]["latency_ms"]["p50"], **REL)
    assert s["runs"]["latency_ms"]["p50"] != pytest.approx(float(np.percentile(lat, 50)), **REL)  # it did move
    assert s["runs"]["warmup"]["runs"] == [0] and s["runs"]["warmup"]["count"] == 1
    assert s["runs"]["warmup"]["latency_ms"] == [pytest.approx(lat[0], **REL)]

    # The per-op p50 of the delegate call: ops row, summary's delegate calls, llm's top op (and qnn)
    row = next(r for r in ops["ops"] if r["role"] == "delegate_call")
    dc = next(d for d in s["delegate_calls"] if d["instruction_id"] == row["instruction_id"])
    top = next(t for t in phase["top_ops"] if t["instruction_id"] == row["instruction_id"])
    assert row["runs"] == len(steady)
    assert dc["p50_ms"] == row["p50_ms"] and dc["mean_ms"] == row["mean_ms"]
    assert top["p50_ms"] == pytest.approx(row["p50_ms"], **REL) and top["mean_ms"] == pytest.approx(row["mean_ms"], **REL)
    report_rows = [dict(zip(rep["ops"]["columns"], r)) for r in rep["ops"]["rows"]]
    assert next(r for r in report_rows if r["role"] == "delegate_call")["p50_ms"] == pytest.approx(row["p50_ms"], rel=5e-6)

    # The shares are of the same runs' mean: the split adds up to the steady mean, the op rows'
    # shares with the overhead to one, and each part's share is its mean over that mean.
    mean = s["runs"]["latency_ms"]["mean"]
    assert mean == pytest.approx(float(np.mean(steady)), **REL)
    assert sum(b["mean_ms"] for b in s["breakdown"]) == pytest.approx(mean, **REL)
    assert sum(b["share"] for b in s["breakdown"]) == pytest.approx(1.0, **REL)
    for b in s["breakdown"]:
        assert b["share"] == pytest.approx(b["mean_ms"] / mean, **REL)
    overhead = next(b["share"] for b in s["breakdown"] if b["kind"] == "framework_overhead")
    assert sum(r["share"] for r in ops["ops"] if r["level"] == 0 and r["unit"] == "ns") + overhead == \
        pytest.approx(1.0, **REL)
    assert row["share"] == pytest.approx(row["total_ms"] / (mean * len(steady)), **REL)
    for b in phase["breakdown"]:                       # llm's split of the same runs
        mine = next(x for x in s["breakdown"] if x["kind"] == b["kind"] and x.get("backend") == b.get("backend"))
        assert (b["mean_ms"], b["share"]) == pytest.approx((mine["mean_ms"], mine["share"]), **REL)
    assert rep["hierarchy"]["ms"] == pytest.approx(mean, rel=5e-6)

    if qnn:
        (part,) = v["qnn"]["partitions"]
        assert part["runs"] == len(lat) and part["warmup_runs_left_out"] == 1
        assert len(part["per_run"]["delegate_call_us"]) == len(lat)           # the per-run series: every run
        assert part["delegate_call_ms"] == pytest.approx(row["p50_ms"], **REL)
        band = next(b for b in part["nesting"]["bands"] if b["name"] == "Method::execute")
        assert band["us_p50"] / 1e3 == pytest.approx(s["runs"]["latency_ms"]["p50"], **REL)
        (brief,) = s["qnn"]
        assert brief["delegate_call_ms"] == part["delegate_call_ms"]
        assert "1 warm-up run of the ETDump left out of the statistics" in _run(["qnn", etdump])

    # Each view says it once, in plain words; the run chart and the trace keep the warm-up run.
    said = "1 warm-up run left out of the statistics (run 0: "
    assert v["text"]["summary"].count(said) == 1 and v["text"]["ops"].count(said.capitalize()) == 1
    assert sum(line.count(said) for line in rep["guide"]) == 1
    assert len(rep["runs"]["columns"]["latency_ms"]) == len(lat)
    _run(["trace", etdump, "-o", tmp_path / "t.json"])
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert len([e for e in trace if e.get("cat") == "method_execute"]) == len(lat)


def test_a_file_without_warmup_is_unchanged(tmp_path):
    """No warm-up run (synthetic_qnn_cnn: 5 runs, none over 2x the later runs' median): the
    statistics are over every run, as before, and no view mentions warm-up."""
    etdump = QNN / "synthetic_qnn_cnn.etdump"
    s = json.loads(_run(["summary", etdump, "--json"]))
    llm = json.loads(_run(["llm", etdump, "--json"]))["llm"]
    q = json.loads(_run(["qnn", etdump, "--json"]))["qnn"]
    lat = llm["series"]["latency_ms"]
    assert llm["warmup_runs"] == [] and "warmup" not in s["runs"]
    assert s["runs"]["latency_ms"]["p50"] == pytest.approx(float(np.percentile(lat, 50)), **REL)
    assert all("warmup_runs_left_out" not in p for p in q["partitions"])
    for command in ("summary", "ops", "qnn"):
        assert "warm-up run" not in _run([command, etdump])


def test_steady_runs_is_the_warmup_rule_per_phase():
    """stats.steady_mask: leading_warmup within each phase's runs, in order."""
    from etscope.analysis.stats import leading_warmup, steady_mask

    lat = np.array([9.0, 5, 1, 1, 1, 1, 40, 10, 10, 10, 10], dtype=float)
    phase = np.array([0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0])
    got = steady_mask(lat, phase)
    # phase 0: runs 0, 2, 3, 4, 5, 10 -> run 0 is warm-up; phase 1: runs 1, 6, 7, 8, 9 -> 5 is not
    # more than 2x the median of (40, 10, 10, 10)
    assert np.flatnonzero(~got).tolist() == [0]
    assert steady_mask(lat).tolist() == [i >= leading_warmup(lat) for i in range(len(lat))]
