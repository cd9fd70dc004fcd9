"""One LLM story in every view (issue 34): on every LLM fixture, ``summary``, ``ops``, ``qnn``,
``trace``, ``export``, ``sql`` and ``collect`` show the same runs in each phase as ``llm --json``
(its ``llm.phases[].runs`` and ``series.phase``), and ``--phase decode`` on summary / ops / qnn
reads exactly the llm's decode runs (their count and p50). Checked against the truth where the
fixture has one: the generated schedule (``gen_manifest.json``) and the hybrid QNN fixtures'
``*.truth.json`` (each run's phase, known by construction).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from etscope.cli import main

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
HYBRID_PTE = FIXTURES / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
LLM_FIXTURES = sorted(FIXTURES.glob("real/gen_llama*.etdump")) + [
    FIXTURES / "real" / "llama.etdump", FIXTURES / "qnn_etdump" / "synthetic_qnn_llm.etdump",
    *sorted(FIXTURES.glob("qnn_hybrid/*.etdump"))]


def _companions(etdump: Path) -> list:
    if etdump.name == "synthetic_qnn_hybrid_stories.etdump":
        return ["--pte", HYBRID_PTE]
    sys.path.insert(0, str(TESTS))
    try:
        from test_consistency import _companions as pair
    finally:
        sys.path.remove(str(TESTS))
    comp = pair(etdump)
    return [x for kind in ("etrecord", "pte") if kind in comp for x in (f"--{kind}", comp[kind])]


def _run(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": None})
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.stdout


def _json(*args) -> dict:
    return json.loads(_run(*args, "--json"))


def _truth(etdump: Path, method, n_runs: int) -> list[str] | None:
    """Each Execute run's phase by construction, in file order (of ``method``'s runs when the
    file holds several methods' runs), when the fixture's generator says."""
    truth = etdump.with_suffix(".truth.json")
    if truth.exists():
        return [r["phase"] for r in sorted(json.loads(truth.read_text())["runs"], key=lambda r: r["run"])]
    if etdump.name == "synthetic_qnn_llm.etdump":      # tools/synth_qnn_etdump.py _fixture_llm: run 0 the prompt
        return ["prefill"] + ["decode"] * 20
    if etdump.parent.name != "real":
        return None
    shared = json.loads((FIXTURES / "real" / "shared_manifest.json").read_text()).get(etdump.stem) or {}
    if shared.get("schedule") == "execute #0 = prefill(8 tokens), then 1-token decodes":
        return ["prefill"] + ["decode"] * (shared["executes"] - 1)
    entry = json.loads((FIXTURES / "real" / "gen_manifest.json").read_text())["fixtures"].get(etdump.stem)
    if not entry or "schedule" not in entry:
        return None
    sched = entry["schedule"]
    if len(sched) != n_runs and isinstance(method, str):       # the file's other method's runs are not read
        sched = [s for s in sched if s["method"] == method]
    return [s["phase"] for s in sched]


class Case:
    """The inputs of one fixture and what ``llm --json`` says of its runs."""

    def __init__(self, etdump: Path):
        self.etdump = etdump
        self.inputs = [etdump, *_companions(etdump)]
        s = _json("summary", *self.inputs)
        self.n_runs = s["runs"]["count"]
        self.method = s["method"]
        # An ETDump of several methods' runs: the views read the loaded method's runs; so does llm --method.
        method = ["--method", s["method"]] if s["etdump"].get("events_of_method") and s["method"] else []
        self.llm = _json("llm", *self.inputs, *method)["llm"]
        assert len(self.llm["series"]["phase"]) == self.n_runs
        phases = self.llm["phases"]
        self.split = len(phases) > 1
        # What every view must show: phase -> its runs (indices among the Execute runs read).
        self.runs = {p["name"]: list(p["runs"]) for p in phases} if self.is_llm() else {"all": list(range(self.n_runs))}
        self.methods = {p["name"]: p.get("method") for p in phases}
        per_run = [None] * self.n_runs
        for name, runs in self.runs.items():
            for r in runs:
                per_run[r] = name
        self.per_run = per_run
        if self.is_llm():
            assert per_run == self.llm["series"]["phase"]

    def is_llm(self) -> bool:
        names = {p["name"] for p in self.llm["phases"]}
        return len(self.llm["phases"]) > 1 or bool(names & {"prefill", "decode"})


_CASES: dict[Path, Case] = {}


def case(etdump: Path) -> Case:
    if etdump not in _CASES:
        _CASES[etdump] = Case(etdump)
    return _CASES[etdump]


def _phase_runs(rows: list[dict]) -> dict[str, list[int]]:
    return {p["name"]: list(p["runs"]) for p in rows}


IDS = [f"{p.parent.name}/{p.stem}" for p in LLM_FIXTURES]


def test_every_llm_fixture_is_covered_and_split():
    assert len(LLM_FIXTURES) >= 8
    split = [p.stem for p in LLM_FIXTURES if case(p).split]
    assert len(split) >= 7, split          # all but the one-method view of gen_llama_mixed


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_llm_agrees_with_the_truth(etdump):
    c = case(etdump)
    truth = _truth(etdump, c.method, c.n_runs)
    if truth is None or len(truth) != c.n_runs:
        pytest.skip("no per-run truth for these runs")
    assert c.per_run == truth


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_summary_ops_qnn_show_the_llm_phases(etdump):
    c = case(etdump)
    views = [("summary", _json("summary", *c.inputs)), ("ops", _json("ops", *c.inputs))]
    if views[0][1].get("qnn"):
        views.append(("qnn", _json("qnn", *c.inputs)["qnn"]))
    for name, out in views:
        if c.split:
            assert _phase_runs(out["phases"]) == c.runs, name
            assert {p["name"]: p["method"] for p in out["phases"]} == c.methods, name
        else:
            assert "phases" not in out, name


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_phase_decode_reads_the_llm_decode_runs(etdump):
    c = case(etdump)
    if not c.split or "decode" not in c.runs:
        # No decode phase beside another: --phase decode names no phase of these runs (exit 2, one line).
        from click.testing import CliRunner

        from etscope.cli import main

        # Unless the one phase is itself named decode (the decode method's runs of a two-method
        # file): then it is every run.
        res = CliRunner().invoke(main, ["summary", *map(str, c.inputs), "--phase", "decode"])
        one = [p["name"] for p in c.llm["phases"]] == ["decode"]
        assert (res.exit_code == 0 and "(0 other run(s) left out)" in res.output) if one else \
            (res.exit_code == 2 and "--phase decode" in res.output), res.output
        return
    runs = c.runs["decode"]
    p50 = statistics.median(c.llm["series"]["latency_ms"][r] for r in runs)
    for cmd in ("summary", "ops"):
        out = _json(cmd, *c.inputs, "--phase", "decode")
        assert out["phase"]["name"] == "decode" and out["phase"]["runs"] == runs, cmd
        assert out["runs"]["count"] == len(runs), cmd
        assert out["runs"]["latency_ms"]["p50"] == pytest.approx(p50, rel=1e-9), cmd
    whole = _json("summary", *c.inputs)
    if whole.get("qnn"):
        q = _json("qnn", *c.inputs, "--phase", "decode")["qnn"]
        assert q["phase"]["runs"] == runs
        assert all(p["runs"] == len(runs) for p in q["partitions"])
        pooled = _json("qnn", *c.inputs)["qnn"]
        own = next(p for p in pooled["phases"] if p["name"] == "decode")["qnn"]
        assert [p["delegate_call_ms"] for p in q["partitions"]] == [p["delegate_call_ms"] for p in own["partitions"]]


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_trace_names_each_run_with_its_phase(etdump, tmp_path):
    c = case(etdump)
    _run("trace", *c.inputs, "-o", tmp_path / "t.json")
    t = json.loads((tmp_path / "t.json").read_text())
    runs = {e["args"]["run"]: e for e in t["traceEvents"] if e.get("cat") == "method_execute"}
    assert sorted(runs) == list(range(c.n_runs))
    for r, e in runs.items():
        assert e["args"]["phase"] == c.per_run[r]
        if c.per_run[r] != "all":
            assert e["args"]["method"] == c.methods[c.per_run[r]]
            assert e["name"] == f"Execute {r} · {c.per_run[r]}"
    if c.split:      # --phase decode: only the decode runs, named by their index in the file
        _run("trace", *c.inputs, "--phase", "decode", "-o", tmp_path / "d.json")
        d = json.loads((tmp_path / "d.json").read_text())
        names = [e["name"] for e in d["traceEvents"] if e.get("cat") == "method_execute"]
        assert sorted(names) == sorted(f"Execute {r} · decode" for r in c.runs["decode"])


def _by_phase(rows: list[dict], key: str = "execute") -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in rows:
        out.setdefault(r["phase"], []).append(r[key])
    return {k: sorted(v) for k, v in out.items()}


def _check_tables(c: Case, runs: list[dict], events: list[dict], ops: list[dict], what: str) -> None:
    assert _by_phase(runs) == c.runs, what
    for r in runs:
        if r["phase"] != "all":
            assert r["method"] == c.methods[r["phase"]], what
    ev = {}
    for e in events:
        if e["execute"] is None:
            assert e["phase"] is None, what
        else:
            ev.setdefault(e["execute"], set()).add(e["phase"])
    assert all(ev[r] == {c.per_run[r]} for r in ev), what
    # ops: one block per phase (each phase's own aggregate), never pooled
    assert {o["phase"] for o in ops} == set(c.runs), what


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_export_and_sql_carry_the_phases(etdump, tmp_path):
    c = case(etdump)
    _run("export", *c.inputs, "--format", "parquet", "-o", tmp_path / "x")
    read = {n: pq.read_table(tmp_path / "x" / f"{n}.parquet").to_pylist() for n in ("runs", "events", "ops")}
    _check_tables(c, read["runs"], read["events"], read["ops"], "export")
    got = json.loads(_run("sql", *c.inputs, "SELECT phase, list(execute ORDER BY execute) AS runs FROM runs "
                          "GROUP BY phase", "--format", "json"))
    assert {r["phase"]: r["runs"] for r in got} == c.runs
    if c.split:       # each phase's ops block is that phase's own op table (ops --phase X)
        for name in c.runs:
            want = _json("ops", *c.inputs, "--phase", name)["ops"]
            block = [o for o in read["ops"] if o["phase"] == name]
            assert [(o["name"], o["level"], o["runs"]) for o in block] == [(o["name"], o["level"], o["runs"]) for o in want]
            # total_ms is None on rows not in time (cycles, µs, counts): compared as NaN (recent
            # pytest refuses None inside approx)
            nan = float("nan")
            assert [nan if o["total_ms"] is None else o["total_ms"] for o in block] == pytest.approx(
                [nan if o.get("total_ms") is None else o["total_ms"] for o in want], rel=1e-12, nan_ok=True)


@pytest.mark.parametrize("etdump", LLM_FIXTURES, ids=IDS)
def test_collect_rows_carry_the_phases(etdump):
    from etscope.fleet.collect import file_tables
    from etscope.fleet.jobs import Job

    c = case(etdump)
    comps = tuple(sorted((str(k).removeprefix("--"), str(v)) for k, v in zip(c.inputs[1::2], c.inputs[2::2])))
    _, tables = file_tables(Job(str(etdump), companions=comps))
    _check_tables(c, tables["runs"].to_pylist(), tables["events"].to_pylist(), tables["ops"].to_pylist(), "collect")
    if "qnn" in tables and c.split:
        assert {r["phase"] for r in tables["qnn"].to_pylist()} == set(c.runs)
