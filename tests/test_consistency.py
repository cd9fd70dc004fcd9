"""Every command agrees with every other (issue 19): each fixture goes through the CLI commands that
expose numbers (summary, ops, qnn, llm, diff, trace, export, sql, report) and the numbers they
share must be equal: event and run counts, per-run latencies and the statistics labelled alike,
per-op values, the time split, QNN cycles and their estimated µs.

Each command runs in-process (click's CliRunner) from the files, as a user would run it: no
profile or analysis result is shared between commands.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from etscope.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
DIRS = ("real", "qnn_etdump", "diff", "qnn_hybrid")
# QNN hybrid prefill/KV ETDumps (tests/fixtures/qnn_hybrid): the loader puts the runs of both
# look-alike methods under one method, so ``ops`` lists each QNN op of the prefill graph and of the
# kv graph (OpId_N differs) while ``diff``'s op identity (OpId_N stripped) merges the two: diff's
# per-op rows cannot be one per ops row there. Every other check holds and runs.
LOOKALIKE_MERGED = {"synthetic_qnn_hybrid_stories", "synthetic_qnn_4shard"}
REL = dict(rel=1e-9, abs=1e-12)
_BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)


def _companions(etdump: Path) -> dict[str, Path]:
    """The ETRecord and .pte that belong to an ETDump: named in a manifest, else NAME.* or, for
    sessions NAME_NN, the shared NAME.*; a run of the same program without its own (llama_nodebug)
    uses the program's."""
    d, stem = etdump.parent, etdump.stem
    named = {}
    for manifest in ("gen_manifest.json", "manifest.json"):
        if (d / manifest).exists():
            entry = (json.loads((d / manifest).read_text()).get("fixtures") or {}).get(stem) or {}
            named.update({k: entry[k] for k in ("etrecord", "pte") if isinstance(entry.get(k), str)})
    session_of = re.sub(r"_\d+$", "", stem)
    out = {}
    for kind in ("etrecord", "pte"):
        cands = ([d / named[kind]] if kind in named else []) + [
            d / f"{stem}.{kind}", d / f"{session_of}.{kind}", d / f"{stem.removesuffix('_nodebug')}.{kind}"]
        found = [c for c in cands if c.exists()]
        if found:
            out[kind] = found[0]
    return out


ALL = sorted(p for d in DIRS for p in (FIXTURES / d).glob("*.etdump"))


def _run(args: list[str], runner=CliRunner()) -> str:
    res = runner.invoke(main, [str(a) for a in args], env={"COLUMNS": None})   # no width limit: one row a line
    assert res.exit_code == 0, f"etscope {' '.join(map(str, args))}: exit {res.exit_code}\n{res.output}{res.exception!r}"
    return res.stdout


def _inputs(etdump: Path) -> list:
    comp = _companions(etdump)
    return [etdump] + [x for kind in ("etrecord", "pte") if kind in comp for x in (f"--{kind}", comp[kind])]


def _same(a, b, rel: float = 0.0, path: str = "") -> None:
    """a == b, numbers within ``rel`` (the report rounds its numbers to 6 significant digits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            _same(a[k], b[k], rel, f"{path}.{k}")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, rel, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=rel, abs=1e-300), (path, a, b)
    else:
        assert a == b, (path, a, b)


ROUNDED = 5e-6      # the HTML report's numbers: 6 significant digits


def _p50(values) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), 50))


def _diff_comparisons(d: dict, llm: dict, n_runs: int) -> list[tuple[dict, list[int]]]:
    """The comparisons a `diff` of a file with itself holds, each with its steady runs: the whole
    runs, or (an LLM) each phase's, whose runs are `llm --json`'s for that phase."""
    if not d.get("phases"):
        return [(d, list(range(d["latency"]["warmup_runs_dropped"]["base"][0], n_runs)))]
    llm_runs = {p["name"]: p["runs"] for p in llm["phases"]}
    out = []
    for e in d["phases"]:
        assert e["runs"]["base"] == e["runs"]["new"] == [llm_runs[e["name"]]], e["name"]
        assert e["verdict"] == "no_change", e["name"]
        out.append((e, llm_runs[e["name"]][e["latency"]["warmup_runs_dropped"]["base"][0]:]))
    assert d["verdict"] == "no_change" and sorted(r for e in d["phases"] for r in e["runs"]["base"][0]) == \
        list(range(n_runs))
    return out


def _steady_op_p50s(events: list[dict], steady_runs) -> list[float]:
    """What `diff` compares per op, from the exported events alone: each instruction event
    (delegate call, operator call, delegate-internal event; a kernel event where its instruction has
    no call wrapper), the k-th of its kind in a run kept apart, p50 of its values over the steady
    runs (``steady_runs``: Execute run indices; warm-up runs left out), as the diff's statistic says."""
    steady_runs = set(steady_runs)
    roles = ("delegate_call", "operator_call", "delegate_internal")
    rows = [e for e in events if e["execute"] is not None and e["kind"] == "profile" and e["chain_index"] >= 0
            and e["instruction_id"] is not None and e["role"] in roles + ("kernel",)]
    have_top = {e["instruction_id"] for e in rows if e["role"] in ("delegate_call", "operator_call")}
    values: dict = {}
    seen: dict = {}
    for e in sorted(rows, key=lambda e: e["event"]):
        if e["role"] == "kernel" and e["instruction_id"] in have_top:
            continue
        name = e["name"] if e["role"] == "delegate_internal" else None
        k = (e["execute"], e["instruction_id"], e["role"], name)
        seen[k] = seen.get(k, -1) + 1
        if e["execute"] in steady_runs:
            values.setdefault((e["instruction_id"], e["role"], name, seen[k]), []).append(e["value"])
    return sorted(_p50(v) for v in values.values())


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    cache = {}

    def get(etdump: Path) -> dict:
        if etdump not in cache:
            cache[etdump] = _all_commands(etdump, tmp_path_factory.mktemp(etdump.stem))
        return cache[etdump]
    return get


def _all_commands(etdump: Path, tmp: Path) -> dict:
    inp = _inputs(etdump)
    out: dict = {"inputs": inp}
    out["summary"] = json.loads(_run(["summary", *inp, "--json"]))
    out["ops"] = json.loads(_run(["ops", *inp, "--json"]))
    s = out["summary"]
    method = ["--method", s["method"]] if "events_of_method" in s["etdump"] and s["method"] else []
    out["llm"] = json.loads(_run(["llm", *inp, *method, "--json"]))["llm"]
    out["qnn"] = json.loads(_run(["qnn", *inp, "--json"]))["qnn"] if s["qnn"] else None
    _run(["export", *inp, "--format", "parquet", "-o", tmp / "export"])
    out["tables"] = {t: pq.read_table(tmp / "export" / f"{t}.parquet").to_pylist() for t in ("events", "ops", "runs")}
    # One query (each sql run loads the files again): whole-file facts on every row, then the
    # per-(instruction, role, unit) counts and sums of the Execute runs' instruction events.
    facts = ("select (select count(*) from events) events, (select count(*) from runs) runs, "
             "(select quantile_cont(latency_ms, 0.5) from runs) p50_ms, (select avg(latency_ms) from runs) mean_ms, "
             "(select count(*) from ops) op_rows")
    # Per op over the steady runs, as the op table counts them: each phase's warm-up runs (llm's) left out.
    warm = out["llm"]["warmup_runs"]
    steady = f"and execute not in ({', '.join(str(r) for r in warm)}) " if warm else ""
    per_op = ("select instruction_id, role, unit, count(*) n, sum(value) total from events where execute is not null "
              f"{steady}and kind = 'profile' and chain_index >= 0 and instruction_id is not null and role in "
              "('delegate_call', 'operator_call', 'kernel', 'delegate_internal') group by 1, 2, 3")
    query = f"select f.*, g.* from ({facts}) f left join ({per_op}) g on true order by 6, 7, 8"
    rows = json.loads(_run(["sql", *inp, query, "--format", "json", "--limit", "0"]))
    out["sql"] = {k: rows[0][k] for k in ("events", "runs", "p50_ms", "mean_ms", "op_rows")}
    out["sql_per_op"] = [r for r in rows if r["instruction_id"] is not None]
    _run(["trace", *inp, "-o", tmp / "trace.json"])
    out["trace"] = json.loads((tmp / "trace.json").read_text())
    _run(["report", *inp, "-o", tmp / "report.html"])
    out["report"] = json.loads(_BLOB.search((tmp / "report.html").read_text()).group(1))
    out["diff"] = json.loads(_run(["diff", etdump, etdump, *_diff_inputs(etdump), "--json"]))
    return out


def _diff_inputs(etdump: Path) -> list:
    comp = _companions(etdump)
    return [x for kind in ("etrecord", "pte") if kind in comp
            for side in ("base", "new") for x in (f"--{kind}-{side}", comp[kind])]


def test_every_fixture_is_covered_with_its_program():
    assert len(ALL) >= 30
    # Each ETDump goes with its ETRecord (and .pte where one exists): a wrong pairing would not load.
    # synthetic_qnn_chain8_device has none by design (a device profile without its graph: the
    # ETDump-alone path).
    assert [p.name for p in ALL if "etrecord" not in _companions(p)] == ["synthetic_qnn_chain8_device.etdump"]


@pytest.mark.parametrize("etdump", ALL, ids=[p.stem for p in ALL])
def test_commands_agree(etdump, outputs):
    o = outputs(etdump)
    s, ops, t = o["summary"], o["ops"], o["tables"]
    runs, events = t["runs"], t["events"]
    lat = [r["latency_ms"] for r in runs]

    # ---- counts -------------------------------------------------------------------------------
    n_runs = s["runs"]["count"]
    assert len(runs) == o["sql"]["runs"] == n_runs
    assert len(events) == o["sql"]["events"] == s["etdump"]["events_analysed"]
    facts = s["etdump"]
    if "events_of_method" not in facts:
        assert facts["events"] == facts["events_analysed"] + facts["accumulated_copies_removed"]
    # The ops table is one block per phase when the runs are several (each phase's own op
    # table, as ops --json lists it under phases[]); else the rows of ops --json.
    blocks = [(p["name"], p["method"], p["ops"]) for p in ops["phases"]] if "phases" in ops else \
        [(runs[0]["phase"] if runs else "all", runs[0]["method"] if runs else None, ops["ops"])]
    assert o["sql"]["op_rows"] == len(t["ops"]) == sum(len(b[2]) for b in blocks)
    assert t["ops"] == [dict(r, phase=name, method=m) for name, m, rows in blocks for r in rows]

    # ---- whole-run latency: summary, export runs, sql, llm, trace, report, diff ---------------
    # Every statistic over runs is over the steady runs: each phase's runs without its leading
    # warm-up runs, as `llm` finds them; the per-run tables (export, sql, trace) keep every run.
    llm = o["llm"]
    warm = set(llm["warmup_runs"])
    kept = [i for i in range(n_runs) if i not in warm]
    slat = [lat[i] for i in kept]
    ls = s["runs"]["latency_ms"]
    assert ls["p50"] == pytest.approx(_p50(slat), **REL)
    assert ls["mean"] == pytest.approx(float(np.mean(slat)), **REL)
    assert (ls["min"], ls["max"]) == (min(slat), max(slat))
    assert (o["sql"]["p50_ms"], o["sql"]["mean_ms"]) == pytest.approx((_p50(lat), float(np.mean(lat))), **REL)
    assert s["runs"].get("warmup", {"runs": []})["runs"] == sorted(warm)
    assert llm["runs"] == n_runs
    assert llm["series"]["latency_ms"] == pytest.approx(lat, **REL)
    assert sorted(r for ph in llm["phases"] for r in ph["runs"]) == list(range(n_runs))
    phase_names = {ph["name"] for ph in llm["phases"]}
    if len(llm["phases"]) > 1 or phase_names & {"prefill", "decode"}:     # an LLM: its phases, every view
        assert [r["phase"] for r in runs] == llm["series"]["phase"]
    else:
        assert {r["phase"] for r in runs} <= {"all"}
    for ph in llm["phases"]:       # each phase's statistics: over its runs after its warm-up runs
        steady = [i for i in ph["runs"] if i not in set(ph["warmup_runs"])]
        assert len(steady) == ph["steady_runs"]
        if not steady or not ph["latency_ms"]:
            continue
        x = [lat[i] for i in steady]
        pl = ph["latency_ms"]
        assert (pl["p50"], pl["mean"], pl["min"], pl["max"]) == pytest.approx(
            (_p50(x), float(np.mean(x)), min(x), max(x)), **REL), ph["name"]
        for b in ph["breakdown"]:
            col = {"delegate": f"delegate_{b.get('backend')}", "cpu_ops": "cpu_ops",
                   "framework_overhead": "framework_overhead"}.get(b["kind"])
            if col and f"{col}_ms" in runs[0]:
                assert b["mean_ms"] == pytest.approx(float(np.mean([runs[i][f"{col}_ms"] for i in steady])),
                                                     **REL), (ph["name"], col)
    tr = [e for e in o["trace"]["traceEvents"] if e.get("cat") == "method_execute"]
    assert len(tr) == n_runs
    assert [e["dur"] for e in sorted(tr, key=lambda e: e["args"]["run"])] == pytest.approx(
        [x * 1e3 for x in lat], abs=2e-3)
    rep = o["report"]
    _same(rep["runs"]["columns"]["latency_ms"], lat, ROUNDED)
    if rep.get("llm"):             # the report's LLM section is the llm command's analysis
        for k in ("runs", "phases", "series", "decode_tokens_per_s", "ttft_ms"):
            _same(rep["llm"].get(k), llm.get(k), ROUNDED)
    assert rep["summary"]["runs"] == s["runs"]
    for cmp, steady_runs in _diff_comparisons(o["diff"], llm, n_runs):   # an LLM: each phase's (issue 34)
        d = cmp["latency"]
        steady = [lat[i] for i in steady_runs]                  # leading warm-up runs dropped
        assert d["base_p50_ms"] == pytest.approx(_p50(steady), **REL) == pytest.approx(d["new_p50_ms"], **REL)
        assert d["base_runs"] == len(steady)

    # ---- the summary inside ops --json and the report is the summary -------------------------
    for k in ("etdump", "runs", "breakdown", "fallback_ops", "delegate_calls", "qnn", "warnings"):
        assert ops[k] == s[k], k
        assert rep["summary"][k] == s[k], k

    # ---- time split: summary breakdown, export runs table, report hierarchy, diff -----------
    for b in s["breakdown"]:
        col = {"delegate": f"delegate_{b.get('backend')}", "cpu_ops": "cpu_ops",
               "framework_overhead": "framework_overhead"}[b["kind"]]
        steady_rows = [runs[i] for i in kept]
        assert b["mean_ms"] == pytest.approx(float(np.mean([r[f"{col}_ms"] for r in steady_rows])), **REL), col
        if "calls_per_run" in b and b["kind"] != "framework_overhead":
            assert b["calls_per_run"] == pytest.approx(float(np.mean([r[f"{col}_calls"] for r in steady_rows])),
                                                       **REL)
    assert sum(b["mean_ms"] for b in s["breakdown"]) == pytest.approx(ls["mean"], rel=1e-9)
    _same(rep["hierarchy"]["ms"], ls["mean"], ROUNDED)
    for b in o["diff"]["breakdown"]:
        mine = [x for x in s["breakdown"] if x["kind"] == b["kind"] and x.get("backend") == b.get("backend")]
        if "base_mean_ms" in b and mine:
            assert b["base_mean_ms"] == pytest.approx(mine[0]["mean_ms"], **REL) == pytest.approx(b["new_mean_ms"], **REL)

    # ---- per-op values: ops --json, export ops table, report, sql over events, diff ---------
    _same([dict(zip(rep["ops"]["columns"], r)) for r in rep["ops"]["rows"]], ops["ops"], ROUNDED)
    sums: dict = {}
    for r in ops["ops"]:
        key = (r["instruction_id"], r["role"], r["unit"])
        n, tot = sums.get(key, (0, 0.0))
        # A counter has no sum over runs (ops shows it per run): its events' sum is not compared.
        sums[key] = (n + r["runs"], None if r["unit"] == "count" else tot + r["total"])
    from_sql = {(r["instruction_id"], r["role"], r["unit"]): (r["n"], r["total"]) for r in o["sql_per_op"]}
    assert set(sums) == set(from_sql)
    for key, (n, tot) in sums.items():
        assert n == from_sql[key][0], key
        if tot is not None:
            assert tot == pytest.approx(from_sql[key][1], rel=1e-9), key
    top: dict = {}                 # instruction -> its level-0 rows (one per call within a run)
    for r in ops["ops"]:
        if r["level"] == 0:
            top.setdefault(r["instruction_id"], []).append(r)
    for f in s["fallback_ops"]:
        rows = top[f["instruction_id"]]
        assert f["total_ms"] == pytest.approx(sum(r["total_ms"] for r in rows), **REL)
        assert f["calls_per_run"] == pytest.approx(sum(r["calls_per_run"] for r in rows), **REL)
        if len(rows) == 1 and rows[0]["calls_per_run"] == 1:
            assert (f["p50_ms"], f["mean_ms"]) == pytest.approx((rows[0]["p50_ms"], rows[0]["mean_ms"]), **REL)
    for dc in s["delegate_calls"]:
        r = top[dc["instruction_id"]][0]
        assert (dc["p50_ms"], dc["mean_ms"]) == pytest.approx((r["p50_ms"], r["mean_ms"]), **REL)
    compared = [r for r in ops["ops"] if r["role"] in ("delegate_call", "operator_call", "delegate_internal")
                or (r["role"] == "kernel" and r["level"] == 0)]
    if not o["diff"].get("phases"):
        diff_ops = o["diff"]["ops"]
        assert all(x["status"] == "same" for x in diff_ops) and o["diff"]["placement_changes"] == []
        merged = etdump.stem in LOOKALIKE_MERGED
        assert (len(diff_ops) < len(compared)) if merged else (len(diff_ops) == len(compared))
        dropped = o["diff"]["latency"]["warmup_runs_dropped"]["base"][0]
        if not merged:
            assert sorted(x["base_p50"] for x in diff_ops) == pytest.approx(
                _steady_op_p50s(o["tables"]["events"], range(dropped, n_runs)), **REL)
        if not merged:         # the op table is over the steady runs diff compares
            assert dropped == len(warm)
            assert sorted(x["base_p50"] for x in diff_ops) == pytest.approx(sorted(r["p50"] for r in compared), **REL)
    for cmp, steady_runs in _diff_comparisons(o["diff"], llm, n_runs) if o["diff"].get("phases") else ():
        # Each phase's ops over that phase's steady runs only (a phase's look-alike ops are its own).
        assert all(x["status"] == "same" for x in cmp["ops"]) and cmp["placement_changes"] == []
        assert sorted(x["base_p50"] for x in cmp["ops"]) == pytest.approx(
            _steady_op_p50s(o["tables"]["events"], steady_runs), **REL), cmp["name"]

    # ---- trace: each instruction event of the runs, on the main track (delegate calls also
    # on their partition's track), with its duration -----------------------------------------
    trace = o["trace"]["traceEvents"]
    for cat in ("delegate_call", "operator_call"):
        rows = [r for r in ops["ops"] if r["role"] == cat]
        # the trace shows every run; the op table counts the steady ones
        main = [e for e in trace if e.get("cat") == cat and e["tid"] == 1 and e["args"]["run"] not in warm]
        assert len(main) == sum(r["runs"] for r in rows), cat
        assert sum(e["dur"] for e in main) == pytest.approx(sum(r["total"] for r in rows) / 1e3,
                                                            abs=1e-3 * len(main) + 1e-9), cat
        if cat == "delegate_call":
            assert sorted(e["dur"] for e in trace if e.get("cat") == cat and e["tid"] != 1
                          and e["args"]["run"] not in warm) == sorted(e["dur"] for e in main)

    if o["qnn"] is not None:
        _qnn_agrees(o, n_runs)


def _qnn_agrees(o: dict, n_runs: int) -> None:
    q, s, ops, events = o["qnn"], o["summary"], o["ops"]["ops"], o["tables"]["events"]
    parts = {p["instruction_id"]: p for p in q["partitions"]}
    brief = {p["instruction_id"]: p for p in s["qnn"]}
    assert set(parts) == set(brief)
    rep = {p["instruction_id"]: p for p in o["report"]["qnn"]["partitions"]}
    for iid, p in parts.items():
        assert p["runs"] == n_runs
        b = brief[iid]
        assert b["ops"] == len(p["ops"])
        assert b["checks_failed"] == [c["check"] for c in p["checks"] if not c["ok"]]
        for k in set(b) - {"ops", "checks_failed"}:
            assert p[k] == b[k], k
        _same(rep[iid]["ops"], p["ops"], ROUNDED)
        _same(rep[iid]["per_run"], p["per_run"], ROUNDED)
        mine = [e for e in events if e["instruction_id"] == iid and e["role"] == "delegate_internal"]
        accel = sorted((e["execute"], e["value"]) for e in mine if e["name"] == "Accelerator (execute) time (cycles)")
        assert [v for _, v in accel] == p["per_run"]["accel_cycles"]
        rows = {(r["name"], r["occurrence"]): r for r in ops if r["instruction_id"] == iid and r["level"] == 1}
        assert rows[("Accelerator (execute) time (cycles)", 0)]["p50"] == pytest.approx(p["accel_cycles"], **REL)
        for op in p["ops"]:
            name, _, k = op["qnn_name"].partition(" #")
            r = rows[(name, int(k) - 1 if k else 0)]
            assert r["p50"] == pytest.approx(op["cycles_p50"], **REL) and r["runs"] == op["runs"]
            assert r["mean"] == pytest.approx(op["cycles_mean"], **REL)
            est = [e["est_us"] for e in mine if e["name"] == name and e["unit"] == "cycles"]
            if op["est_us_p50"] is not None and len(est) == n_runs and not k:
                assert _p50(est) == pytest.approx(op["est_us_p50"], **REL)
        dc = next((x for x in s["delegate_calls"] if x["instruction_id"] == iid), None)
        top = next(r for r in ops if r["instruction_id"] == iid and r["level"] == 0)  # the DELEGATE_CALL
        if dc and top["calls_per_run"] == 1:
            assert p["delegate_call_ms"] == pytest.approx(dc["p50_ms"], **REL)
    # The trace lays out each run's per-op cycles with that run's estimate, as export does.
    est_of = {(e["execute"], e["instruction_id"], e["name"]): e for e in events
              if e["unit"] == "cycles" and e["role"] == "delegate_internal"}
    for e in (x for x in o["trace"]["traceEvents"] if x.get("cat") == "qnn_op_estimated"):
        a = e["args"]
        row = est_of[(a["run"], a["instruction_id"], e["name"].removesuffix(" (est.)"))]
        assert a["cycles"] == row["value"]
        assert a["est_us"] == pytest.approx(row["est_us"], abs=1e-3)


QNN_FILES = sorted(p for p in (FIXTURES / "qnn").iterdir()
                   if re.search(r"(profile\.(csv|txt)|qnn_profile\.(csv|json))$", p.name) or p.name.endswith("edge_cases.csv"))


@pytest.mark.parametrize("path", QNN_FILES, ids=[p.name for p in QNN_FILES])
def test_qnn_files_text_shows_the_json_numbers(path):
    """QNN profiles alone are read by `qnn` only: its text view shows the numbers of its JSON."""
    q = json.loads(_run(["qnn", "--qnn-csv", path, "--json"]))["qnn"]
    text = _run(["qnn", "--qnn-csv", path, "--top", "100000"])
    blocks = text.split("QNN partition: ")[1:]
    assert len(blocks) == len(q["partitions"])
    for p, block in zip(q["partitions"], blocks):
        assert f"{p['runs']} execute(s)" in block
        for lv in p["levels"]:
            shown = f"{lv['p50_cycles']:,.0f} cycles" if lv["unit"] == "cycles" else f"{lv['p50_us']:,.1f} µs"
            assert shown in block, lv["name"]
        # piped, COLUMNS unset: one row per line, columns two spaces apart (render.screen)
        rows = re.findall(r"(?m)^(\S.*?\S)  +([\d,—]+)  +([\d,.—]+)  +([\d.%—]+)(?:  |$)", block)
        by_name = {o["qnn_name"]: o for o in p["ops"]}
        shown_ops = [r for r in rows if r[0] in by_name]
        assert len(shown_ops) == len(p["ops"])
        for name, cycles, est, share in shown_ops:
            o = by_name[name]
            assert cycles == ("—" if o["cycles_p50"] is None else f"{o['cycles_p50']:,.0f}")
            # the text's est. µs column is cycles p50 ÷ the clock it states (issue 19 #5)
            assert est == ("—" if o.get("est_us_at_clock") is None else f"{o['est_us_at_clock']:,.2f}")
            assert share == ("—" if o["share"] is None else f"{o['share']:.1%}")


def _pairs() -> list[tuple[Path, Path]]:
    d, q, r = FIXTURES / "diff", FIXTURES / "qnn_etdump", FIXTURES / "real"
    base = d / "diff_same_00.etdump"
    return [(base, p) for p in sorted(d.glob("diff_*.etdump")) if p.stem in
            ("diff_same_01", "diff_slower", "diff_faster", "diff_cpu_moved")] + [
        (r / "gen_cnn.etdump", r / "gen_cnn_b.etdump"),
        (q / "synthetic_qnn_cnn.etdump", q / "synthetic_qnn_vit_2part.etdump"),
        (q / "synthetic_qnn_cnn.etdump", q / "synthetic_qnn_accumulate.etdump")]


@pytest.mark.parametrize("base,new", _pairs(), ids=[f"{a.stem}-vs-{b.stem}" for a, b in _pairs()])
def test_diff_agrees_with_each_side(base, new, outputs):
    """What `diff` says of each side is what the other commands say of that file alone."""
    comp_b, comp_n = _companions(base), _companions(new)
    args = [x for kind in ("etrecord", "pte") for side, comp in (("base", comp_b), ("new", comp_n))
            if kind in comp for x in (f"--{kind}-{side}", comp[kind])]
    d = json.loads(_run(["diff", base, new, *args, "--json"]))
    for side, path in (("base", base), ("new", new)):
        o = outputs(path)
        lat = [r["latency_ms"] for r in o["tables"]["runs"]]
        dropped = d["latency"]["warmup_runs_dropped"][side][0]
        steady = lat[dropped:]
        assert d["latency"][f"{side}_p50_ms"] == pytest.approx(_p50(steady), **REL)
        assert d["latency"][f"{side}_runs"] == len(steady)
        for b in d["breakdown"]:
            mine = [x for x in o["summary"]["breakdown"] if x["kind"] == b["kind"] and x.get("backend") == b.get("backend")]
            if b[f"{side}_p50_ms"] is not None and not dropped:
                # diff's breakdown: p50 per run over the steady runs; with none dropped, the p50 of
                # the part's per-run time, which summary's breakdown also gives.
                assert b[f"{side}_p50_ms"] == pytest.approx(mine[0]["p50_ms"], **REL), (side, b["kind"])
        shown = [x[f"{side}_p50"] for x in d["ops"] if x[f"{side}_p50"] is not None]
        assert sorted(shown) == pytest.approx(_steady_op_p50s(o["tables"]["events"], range(dropped, len(lat))), **REL), side
        if d.get("qnn"):
            parts = (o["qnn"] or {}).get("partitions") or []
            for k, dq in enumerate(d["qnn"]):
                mine = parts[dq["partition"]] if dq["partition"] < len(parts) else None
                for key in ("accel_cycles", "clock_mhz_est", "accel_us", "qnn_execute_us", "delegate_call_ms"):
                    assert dq[key][side] == (mine[key] if mine else None), (side, key)
                cycles = [x[f"{side}_cycles_p50"] for x in dq["ops"] if x[f"{side}_cycles_p50"] is not None]
                assert sorted(cycles) == (sorted(op["cycles_p50"] for op in mine["ops"]) if mine else []), side
