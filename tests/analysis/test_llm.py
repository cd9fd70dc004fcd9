"""LLM runs (analysis.llm): phases found exactly on fixtures whose schedule is known.

Schedules come from ``gen_manifest.json`` (tools/make_fixtures.py) and ``shared_manifest.json``;
timings are never hard-coded.
"""
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.render.json import to_jsonable
from etscope.analysis import llm, stats
from etscope.analysis.llm import drift as llm_drift
from etscope.analysis.stats import describe
from etscope.formats.pte import read_pte
from etscope.profile import load, select_runs

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
QNN_ETDUMP = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_etdump"


def _plain_report(*args, **kw) -> dict:
    """The result as ``llm --json`` writes it: these tests read the schema."""
    return to_jsonable(llm.llm_report(*args, **kw))


def _schedule(name):
    m = json.loads((REAL / "gen_manifest.json").read_text())
    return m["fixtures"][name]["schedule"]


def _report(*names, **kw):
    return _plain_report([load(REAL / f"{n}.etdump") for n in names], **kw)


def _phase(r, name):
    return next(p for p in r["llm"]["phases"] if p["name"] == name)


@pytest.mark.parametrize("name", ["gen_llama", "gen_llama_multimethod"])
def test_phases_match_the_generated_schedule(name):
    sched = _schedule(name)
    r = _report(name)
    l = r["llm"]
    assert l["runs"] == len(sched)
    assert [p["name"] for p in l["phases"]] == ["prefill", "decode"]
    want_prefill = [i for i, s in enumerate(sched) if s["phase"] == "prefill"]
    want_decode = [i for i, s in enumerate(sched) if s["phase"] == "decode"]
    assert _phase(r, "prefill")["runs"] == want_prefill
    assert _phase(r, "decode")["runs"] == want_decode
    # No debug events in these files: the split comes from the cost profile, and says why.
    assert l["phase_split"]["by"] == "cost profile"
    assert "index_put" in l["phase_split"]["evidence"]
    assert l["series"]["phase"] == [s["phase"] for s in sched]


def test_debug_tensor_shapes_give_exact_token_counts():
    shared = json.loads((REAL / "shared_manifest.json").read_text())["llama"]
    r = _report("llama")
    l = r["llm"]
    assert l["phase_split"]["by"] == "token counts"
    assert _phase(r, "prefill")["runs"] == [0]
    assert _phase(r, "prefill")["tokens_per_run"] == shared["prompt_len"] == 8
    assert _phase(r, "decode")["tokens_per_run"] == 1
    assert l["series"]["tokens"] == [8] + [1] * (shared["executes"] - 1)
    # Token positions: decodes continue after the 8-token prompt.
    assert l["series"]["position"][1:4] == [8, 9, 10]
    assert l["drift"]["x"] == "token position"


def test_single_prefill_without_debug_events_is_found_and_flagged():
    r = _report("llama_nodebug")
    l = r["llm"]
    assert _phase(r, "prefill")["runs"] == [0]
    assert _phase(r, "decode")["runs"] == list(range(1, 24))
    # The only prefill is also the first run: the output says warm-up could explain it too.
    assert "--prompt-runs" in l["phase_split"]["evidence"]


@pytest.mark.parametrize("name", ["cnn", "gen_cnn", "gen_multipart", "gen_loop"])
def test_non_llm_runs_form_one_phase(name):
    r = _report(name)
    l = r["llm"]
    assert len(l["phases"]) == 1 and l["phase_split"]["by"] == "none"
    assert l["decode_tokens_per_s"] is None and l["ttft_ms"] is None


def test_qnn_per_op_cycles_tell_the_prefill():
    # Synthetic QNN LLM: run 0 is the prefill (per-op cycles 8x the decodes').
    r = _plain_report(load(QNN_ETDUMP / "synthetic_qnn_llm.etdump"))
    assert _phase(r, "prefill")["runs"] == [0]
    assert "cycles" in r["llm"]["phase_split"]["evidence"]


def test_accumulating_qnn_events_are_not_phases():
    r = _plain_report(load(QNN_ETDUMP / "synthetic_qnn_accumulate.etdump"))
    assert len(r["llm"]["phases"]) == 1


def test_prompt_runs_override():
    r = _report("gen_llama", prompt_runs=[0, 16])
    assert r["llm"]["phase_split"]["by"] == "--prompt-runs"
    assert _phase(r, "prefill")["runs"] == [0, 16]
    r = _report("gen_llama", prompt_runs=[5])
    assert _phase(r, "prefill")["runs"] == [5]
    with pytest.raises(ValueError):
        _report("gen_llama", prompt_runs=[99])


def test_phases_none():
    r = _report("gen_llama", phases="none")
    assert len(r["llm"]["phases"]) == 1 and len(r["llm"]["phases"][0]["runs"]) == 32


def test_numbers_follow_their_definitions():
    r = _report("gen_llama")
    l = r["llm"]
    lat = np.array(l["series"]["latency_ms"])
    dec, pre = _phase(r, "decode"), _phase(r, "prefill")
    steady = [i for i in dec["runs"] if i not in l["warmup_runs"]]
    assert dec["steady_runs"] == len(steady)
    s = describe(lat[steady])
    for k in ("p50", "p90", "p99", "max"):
        assert dec["latency_ms"][k] == pytest.approx(s[k])
    # gen_llama logs no tensors and nothing else gives the tokens per run: rates per run, no tokens/s.
    assert l["decode_tokens_per_s"] is None and dec["tokens_per_run"] is None and dec["ms_per_token"] is None
    assert l["decode_runs_per_s"] == dec["runs_per_s"] == pytest.approx(1000.0 / dec["latency_ms"]["p50"])
    assert l["tokens_unknown"]["phases"] == ["prefill", "decode"]
    assert "--prompt-tokens" in l["tokens_unknown"]["how"] and "--decode-tokens" in l["tokens_unknown"]["how"]
    assert not any("tokens/s" in f for f in r["findings"]) and any("Decode: " in f and "runs/s" in f for f in r["findings"])
    given = _report("gen_llama", decode_tokens=1)["llm"]
    assert given["decode_tokens_per_s"] == pytest.approx(1000.0 / dec["latency_ms"]["p50"])
    assert _phase({"llm": given}, "decode")["tokens_from"] == "--decode-tokens" and given["tokens_unknown"]["phases"] == ["prefill"]
    assert l["ttft_ms"] == pytest.approx(pre["latency_ms"]["p50"])
    assert l["ttft_first_ms"] == pytest.approx(lat[0])
    # The breakdown adds up to the phase's mean latency.
    assert sum(b["mean_ms"] for b in dec["breakdown"]) == pytest.approx(dec["latency_ms"]["mean"], rel=1e-6)
    kinds = [b["kind"] for b in dec["breakdown"]]
    assert kinds[-2:] == ["cpu_ops", "framework_overhead"] and "delegate" in kinds
    # The KV-cache update is a CPU fallback in decode and is named as such.
    assert any(t["op_type"].startswith("aten.index_put") for t in dec["fallback_op_types"])
    assert any("index_put" in f and "KV-cache" in f for f in r["findings"])


def test_warmup_runs_are_listed_and_left_out():
    # gen_cnn: no phases; the first run is far slower than the rest (cold caches).
    r = _report("cnn")
    l = r["llm"]
    lat = l["series"]["latency_ms"]
    ph = l["phases"][0]
    for w in l["warmup"]:
        assert w["latency_ms"] > stats.WARMUP_FACTOR * w["phase_p50_ms"]
        assert w["run"] in l["warmup_runs"] and w["run"] not in [i for i in range(len(lat)) if not
                                                                l["series"]["warmup"][i]]
    steady = [lat[i] for i in ph["runs"] if i not in l["warmup_runs"]]
    assert ph["latency_ms"]["max"] == pytest.approx(max(steady))


def test_json_shape_from_the_issue():
    from etscope.render.json import dumps

    r = json.loads(dumps(_report("gen_llama")))
    l = r["llm"]
    assert r["schema"] == "etscope.llm/1"
    assert set(l) >= {"runs", "warmup_runs", "phases", "decode_tokens_per_s", "ttft_ms"}
    for p in l["phases"]:
        assert set(p) >= {"name", "runs", "latency_ms", "breakdown"}
        assert set(p["latency_ms"]) >= {"p50", "p90", "p99", "max"}
    assert len(l["series"]["latency_ms"]) == l["runs"]


def test_several_etdumps_form_one_series_grouped_by_what_ran():
    r = _report("cnn", "llama_nodebug")
    l = r["llm"]
    assert l["runs"] == 10 + 24
    assert l["series"]["file"] == [0] * 10 + [1] * 24
    # Each file's phases are its own (issue 34): the CNN has none, the LLM session's are found by
    # their cost profile; a file's runs are never a "phase" of their own because they are a file.
    assert [(f["file"], f["by"]) for f in l["phase_split"]["files"]] == [(0, "none"), (1, "cost profile")]
    assert l["phase_split"]["by"] == "cost profile"
    names = [p["name"] for p in l["phases"]]
    assert names[1:] == ["prefill", "decode"]
    assert l["phases"][0]["runs"] == list(range(10))
    assert _phase(r, "prefill")["runs"] == [10]


def _fuzz_harness():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import fuzz_harness

    return fuzz_harness


def test_two_methods_with_different_instructions_are_two_phases(tmp_path):
    """Like QNN's separate prefill and decode graphs: runs differ in what they executed."""
    pytest.importorskip("flatbuffers")
    h = _fuzz_harness()
    rng = np.random.default_rng(1)
    t = [1_000_000_000]

    def run(n_instr, scale):
        events, t0 = [], t[0]
        for i in range(n_instr):
            d = int(scale * rng.uniform(9_000, 11_000))
            name = "DELEGATE_CALL" if i % 2 else "OPERATOR_CALL"
            events.append(("P", name, 0, i, None, None, None, t[0] + 100, t[0] + 100 + d))
            t[0] += d + 200
        events.append(("P", "Method::execute", -1, 0, None, None, None, t0, t[0] + 50))
        t[0] += 100_000
        return {"name": "Execute", "events": events}

    schedule = ["prefill"] + ["decode"] * 7 + ["prefill"] + ["decode"] * 7
    runs = [{"name": "Default", "events": [("P", "Method::init", -1, 0, None, None, None, 10, 20)]}]
    runs += [run(14, 8.0) if s == "prefill" else run(10, 1.0) for s in schedule]
    p = tmp_path / "two_methods.etdump"
    p.write_bytes(h.build_etdump(runs))
    r = _plain_report(load(p))
    assert r["llm"]["phase_split"]["by"] == "instruction sequence"
    assert [ph["name"] for ph in r["llm"]["phases"]] == ["prefill", "decode"]
    assert r["llm"]["series"]["phase"] == schedule


# ---- several methods in one ETDump ------------------------------------------------------------------
@pytest.mark.parametrize("given", ["pte", "etrecord"])
def test_methods_run_into_one_etdump_are_the_phases(given):
    """gen_llama_mixed: prefill and decode methods with different instructions, interleaved."""
    sched = _schedule("gen_llama_mixed")
    p = load(REAL / "gen_llama_mixed.etdump", **{given: REAL / f"gen_llama_mixed.{given}"})
    r = _plain_report(p, all_methods=True)
    l = r["llm"]
    assert l["runs"] == len(sched) and r["method"] == ["prefill", "decode"]
    assert l["phase_split"]["by"] == "instruction sequence" and "method" in l["phase_split"]["evidence"]
    assert [ph["name"] for ph in l["phases"]] == ["prefill", "decode"]
    for ph in l["phases"]:
        assert ph["runs"] == [i for i, s in enumerate(sched) if s["method"] == ph["name"]]
        assert ph["method"] == ph["name"]
    assert l["series"]["method"] == [s["method"] for s in sched]
    assert l["series"]["phase"] == [s["phase"] for s in sched]
    # Each run traced to its RunData in the file (executorch's own decode of it).
    raw = json.load(gzip.open(REAL / "gen_llama_mixed.raw.json.gz"))
    assert l["series"]["etdump_run"] == [i for i, rd in enumerate(raw["run_data"]) if rd["name"] == "Execute"]
    one = _plain_report(load(REAL / "gen_llama_mixed.etdump", method="prefill", **{given: REAL / f"gen_llama_mixed.{given}"}))
    assert one["llm"]["series"]["etdump_run"] == [r for r, s in zip(l["series"]["etdump_run"], sched)
                                                  if s["method"] == "prefill"]
    # The "only one method shown" note is for summary/ops; here every method is read.
    assert not any("this shows" in w for w in r["warnings"])


def test_methods_run_into_one_etdump_without_the_program_are_the_phases():
    """Without .pte or ETRecord the methods are unnamed, but still one phase each."""
    sched = _schedule("gen_llama_mixed")
    r = _plain_report(load(REAL / "gen_llama_mixed.etdump"), all_methods=True)
    l = r["llm"]
    assert r["method"] == ["method #1", "method #2"]
    assert l["series"]["phase"] == [s["phase"] for s in sched]
    unnamed = dict(zip(l["series"]["method"], (s["method"] for s in sched)))
    assert [unnamed[m] for m in l["series"]["method"]] == [s["method"] for s in sched]


def test_phase_tables_use_that_method_s_instructions():
    p = load(REAL / "gen_llama_mixed.etdump", pte=REAL / "gen_llama_mixed.pte")
    r = _plain_report(p, all_methods=True, top=0)
    methods = {m.name: m for m in read_pte(REAL / "gen_llama_mixed.pte").methods}
    for ph in r["llm"]["phases"]:
        program = methods[ph["name"]].instructions
        assert len(ph["top_ops"]) == len(p.method_split.profiles[ph["name"]].instructions)
        for op in ph["top_ops"]:
            ins = program[op["instruction_id"]]
            if op["kind"] == "cpu":
                assert ins.kind == "kernel" and op["op_type"] == ins.operator.replace("::", ".")
            else:
                assert ins.kind == "delegate" and op["placement"] == ins.backend_id
        calls = {b.get("backend", b["kind"]): b.get("calls_per_run") for b in ph["breakdown"]}
        assert calls["XnnpackBackend"] == sum(i.kind == "delegate" for i in program)


def test_a_profile_alone_is_read_as_loaded():
    # Views (report, export) analyse the runs of the profile they show: one method's.
    p = load(REAL / "gen_llama_mixed.etdump", pte=REAL / "gen_llama_mixed.pte")
    r = _plain_report(p)
    assert r["llm"]["runs"] == p.n_runs and r["method"] == p.method
    assert p.method_split.note in r["warnings"]


# ---- prefills as many as decodes, or more ------------------------------------------------------------
def test_prefill_majority_split_matches_the_schedule():
    """gen_llama_chunked: gen_llama's program run with chunked prompts: 10 prefills, 4 decodes."""
    sched = _schedule("gen_llama_chunked")
    r = _report("gen_llama_chunked")
    l = r["llm"]
    assert sum(s["phase"] == "prefill" for s in sched) > len(sched) / 2
    assert l["phase_split"]["by"] == "cost profile" and "cheaper runs" in l["phase_split"]["evidence"]
    assert l["series"]["phase"] == [s["phase"] for s in sched]
    assert _phase(r, "decode")["tokens_per_run"] is None      # no logged tensors: unknown, not assumed 1


def test_as_many_prefills_as_decodes():
    """A real 50/50 case: of each sequence of gen_llama_chunked, the last two prompt chunks and the
    decodes (selected from the same ETDump)."""
    sched = _schedule("gen_llama_chunked")
    last_chunks = {}
    for i, s in enumerate(sched):
        if s["phase"] == "prefill":
            last_chunks.setdefault(s["seq"], []).append(i)
    keep = np.array([s["phase"] == "decode" or i in last_chunks[s["seq"]][-2:] for i, s in enumerate(sched)])
    sub = [s for s, k in zip(sched, keep) if k]
    assert sum(s["phase"] == "prefill" for s in sub) == sum(s["phase"] == "decode" for s in sub)
    r = _plain_report(select_runs(load(REAL / "gen_llama_chunked.etdump"), keep))
    assert r["llm"]["phase_split"]["by"] == "cost profile"
    assert r["llm"]["series"]["phase"] == [s["phase"] for s in sub]


@pytest.mark.parametrize("name, phase", [("gen_llama", "decode"), ("gen_llama_chunked", "prefill"),
                                         ("gen_llama_mixed", "decode")])
def test_runs_of_one_phase_alone_are_not_split(name, phase):
    """Noise in real runs (contention in XNNPACK's thread pool, a burst in part of one run, the
    file's cold first run) is not a phase."""
    p = load(REAL / f"{name}.etdump")
    sched = _schedule(name)
    runs = p.method_split.runs_of(p.method) if p.method_split else np.arange(len(sched))  # mixed: one method
    keep = np.array([sched[i]["phase"] == phase for i in runs])
    r = _plain_report(select_runs(p, keep))
    assert r["llm"]["phase_split"]["by"] == "none"
    assert len(r["llm"]["phases"]) == 1


# ---- the cost split on its own -------------------------------------------------------------------
def _sensitive(n_ops, k=10):
    """Token-dependent instructions recur in every layer: spread over the run."""
    return np.linspace(0, n_ops - 1, k).round().astype(int)


def _matrix(n_runs, n_ops, prefill, sensitive=10, factor=6.0, seed=0):
    rng = np.random.default_rng(seed)
    T = rng.uniform(5_000, 50_000, n_ops)[None, :] * rng.lognormal(0, 0.1, (n_runs, n_ops))
    T[np.ix_(prefill, _sensitive(n_ops, sensitive))] *= factor
    return T


def test_cost_split_finds_the_token_dependent_runs():
    pre = [0, 40, 80]
    res = llm.cost_split(_matrix(120, 30, pre))
    assert np.nonzero(res["prefill"])[0].tolist() == pre
    assert sorted(res["ops"].tolist()) == _sensitive(30).tolist()


def test_cost_split_among_a_thousand_runs_a_few_may_show_part_of_the_pattern():
    """Like the 1000-run benchmark dump: 18 prompts, and two decodes hit by contention in 4 of the
    10 token-dependent instructions."""
    pre = list(range(0, 1000, 57))
    T = _matrix(1000, 30, pre)
    T[np.ix_([300, 700], _sensitive(30)[:4])] *= 6.0
    res = llm.cost_split(T)
    assert np.nonzero(res["prefill"])[0].tolist() == pre


def test_cost_split_ignores_contention_in_delegate_calls_alone():
    """Runs slower in most delegate calls (a thread pool slowed by contention) while their CPU
    operators keep their cost are not prefills."""
    T = _matrix(40, 33, [])
    clock = np.array([1, 1, 2] * 11)              # delegate calls between CPU operators
    slowed = np.nonzero(clock == 2)[0][::2]      # 6 of the 11, across the run
    T[np.ix_([3, 17, 25], slowed)] *= 8.0
    assert llm.cost_split(T, timed=clock) is None
    assert llm.cost_split(T) is not None          # without telling the classes apart it would split
    pre = [3, 17, 25]                             # a real prefill moves CPU operators too
    T2 = _matrix(40, 33, pre)
    T2[np.ix_(pre, slowed)] *= 8.0
    assert np.nonzero(llm.cost_split(T2, timed=clock)["prefill"])[0].tolist() == pre


def test_cost_split_ignores_a_burst_in_one_stretch_of_the_run():
    T = _matrix(40, 40, [])
    T[10, 12:22] *= 10.0         # a spell of contention: ten consecutive instructions of one run
    assert llm.cost_split(T) is None
    T = _matrix(40, 40, [])
    T[10, _sensitive(40)] *= 10.0
    assert np.nonzero(llm.cost_split(T)["prefill"])[0].tolist() == [10]


def test_a_lone_run_needs_a_pattern_as_strong_as_a_prompt_s():
    """One run among many is one test among many: a few contention spikes (50x) and some 2x
    instructions are not a prompt; a dozen instructions several times costlier are."""
    cols = _sensitive(30, 8)
    T = _matrix(200, 30, [])
    T[77, cols[:2]] *= 50.0
    T[77, cols[2:]] *= 2.6
    assert llm.cost_split(T) is None
    T = _matrix(200, 30, [77], sensitive=12, factor=4.5)
    assert np.nonzero(llm.cost_split(T)["prefill"])[0].tolist() == [77]


def test_cost_split_needs_instructions_shared_by_the_group():
    T = _matrix(60, 30, [])
    T[12, [1, 5, 9, 13, 17]] *= 6.0     # two runs with spikes in 7 instructions, 3 in common
    T[33, [9, 13, 17, 21, 25]] *= 6.0
    assert llm.cost_split(T) is None


def test_cost_split_ignores_runs_slower_everywhere_and_lone_spikes():
    T = _matrix(60, 30, [])
    T[7] *= 4.0                 # the machine was busy: every instruction slower
    T[20, 3] *= 20.0            # one instruction hiccup
    assert llm.cost_split(T) is None


@pytest.mark.parametrize("share", [0.05, 0.3, 0.5, 0.7, 0.9])
def test_cost_split_at_any_share_of_prefills(share):
    rng = np.random.default_rng(3)
    pre = sorted(rng.choice(40, max(1, int(share * 40)), replace=False).tolist())
    res = llm.cost_split(_matrix(40, 30, pre))
    assert np.nonzero(res["prefill"])[0].tolist() == pre
    assert sorted(res["ops"].tolist()) == _sensitive(30).tolist()


def test_cost_split_ignores_runs_faster_everywhere_and_lucky_instructions():
    T = _matrix(60, 30, [])
    T[[3, 7]] /= 4.0            # quieter machine: every instruction faster
    T[[12, 40], :4] /= 4.0      # a few instructions escaped contention in two runs
    assert llm.cost_split(T) is None


def test_cost_split_needs_enough_instructions():
    assert llm.cost_split(_matrix(50, 5, [0, 25], sensitive=5)) is None


def test_drift_slope_per_100_tokens():
    n = 200
    assign = np.array([0] + [1] * (n - 1))
    latency = np.concatenate([[5.0], 1.0 + 0.002 * np.arange(1, n)])
    steps, pos = llm_drift.positions(assign, ["prefill", "decode"], np.full(n, -1))
    d = llm_drift.decode_drift(assign, ["prefill", "decode"], np.zeros(n, bool), latency, steps, pos, {"name": "decode"})
    assert d.slope_ms_per_100_tokens == pytest.approx(0.2)
    assert d.by_position.rows[0][0] == 2          # the first decode after a prefill is reported apart


def test_instructions_left_out_of_the_tables_are_the_least_called_and_counted(tmp_path):
    """Every run calls instruction 0 and one of its own: runs x instructions cells would be
    quadratic in the file. The table keeps at most 16 cells per event + 1M; what it leaves out is
    the least-called instructions, counted in the JSON and said in a warning; instruction 0 (called
    in every run) keeps its column and is the top instruction with its true mean."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import generators as G

    def op(instr, t, dur):
        return [("P", "OPERATOR_CALL", 0, instr, None, None, t, t + dur),
                ("P", "native_call_add.out", 0, instr, None, None, t + 1, t + dur - 1)]

    n = 1200
    runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, 10 ** 4 * i, 10 ** 4 * i + 900)]
                 + op(0, 10 ** 4 * i + 1, 500 + i % 7) + op(i + 1, 10 ** 4 * i + 600, 5)) for i in range(n)]
    f = tmp_path / "x.etdump"
    f.write_bytes(G.build_etdump_shared(runs))
    p = load(f)
    n_events = p.n_events
    r = _plain_report(p)
    cap = (llm.MAX_TABLE_CELLS_PER_EVENT * n_events + llm.MAX_TABLE_CELLS_BASE) // n
    assert cap < n + 1                                           # the case is over budget
    assert r["llm"]["instructions_left_out"] == {"instructions": n + 1, "left_out": n + 1 - cap}
    assert any(f"{n + 1 - cap:,} of {n + 1:,} instructions" in w for w in r["warnings"])
    (phase,) = r["llm"]["phases"]
    top = phase["top_ops"][0]
    assert top["instruction_id"] == 0
    assert top["mean_ms"] == pytest.approx(np.mean([500 + i % 7 for i in range(n)]) / 1e6)


def test_nothing_is_left_out_of_an_honest_profile():
    r = _report("gen_llama")
    assert "instructions_left_out" not in r["llm"]
    assert not any("left out of the per-instruction tables" in w for w in r["warnings"])


def _profiles_of_every_fixture():
    for path in sorted(REAL.glob("*.etdump")) + sorted(QNN_ETDUMP.glob("*.etdump")):
        p = load(path)
        yield from ((path.name, q) for q in (p.method_split.profiles.values() if p.method_split else [p]))


def test_run_signatures_from_the_first_run_when_all_runs_logged_the_same(monkeypatch):
    """A static graph's runs are hashed from the first one (profile.repeats.identical_runs); hashing
    every event gives the same signatures, on every fixture and per method of multi-method ones."""
    from etscope.analysis.llm import runs as llm_runs
    from etscope.profile.repeats import identical_runs

    taken = []
    for name, profile in _profiles_of_every_fixture():
        if profile.n_runs == 0:
            continue
        shortcut = llm_runs._run_signatures(profile)
        taken.append(identical_runs(profile) is not None)
        with monkeypatch.context() as m:
            m.setattr(llm_runs, "identical_runs", lambda p: None)
            every_event = llm_runs._run_signatures(profile)
        assert all(np.array_equal(a, b) for a, b in zip(shortcut, every_event)), name
    assert any(taken) and not all(taken)


def test_runs_differing_in_one_event_are_not_taken_as_identical():
    from etscope.profile.repeats import identical_runs

    profile = load(REAL / "gen_llama.etdump")
    assert identical_runs(profile) is not None
    block = identical_runs(profile)
    k = block.stop - block.start
    for col in ("name", "instruction_id", "role"):
        saved = profile.events[col]
        changed = saved.copy()
        changed[block.start + 3 * k + 5] += 1           # one event of the fourth run
        profile.events[col] = changed
        assert identical_runs(profile) is None, col
        profile.events[col] = saved


def test_time_table_of_identical_runs_is_the_bincount_one(monkeypatch):
    """The (runs x instructions) time table read from identical runs equals, to the bit, the one
    the bincount over every call gives, on every fixture whose runs are identical."""
    from etscope.analysis.ops import placement
    from etscope.analysis.llm import runs as llm_runs
    from etscope.profile import load
    from etscope.profile.repeats import identical_runs

    taken = 0
    for path in sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("**/*.etdump")):
        p = load(path)
        for q in (p.method_split.profiles.values() if p.method_split else (p,)):
            fast = llm_runs._time_table(q)
            with monkeypatch.context() as m:
                m.setattr(placement, "identical_instruction_table", lambda prof, cpu_only=False: None)
                full = llm_runs._time_table(q)
            assert fast[1] == full[1] and np.array_equal(fast[0], full[0]), path
            assert fast[2].dtype == full[2].dtype and np.array_equal(fast[2], full[2], equal_nan=True), path
            taken += identical_runs(q) is not None and fast[2].size > 0
    assert taken >= 10


def test_positions_counted_with_running_sums_are_those_of_walking_the_runs():
    """Decode steps and token positions (drift.positions) equal a walk over the runs, on random
    schedules: prefills with known or unknown token counts, decodes before any prefill, other
    phases in between, no prefill at all."""
    from etscope.analysis.llm.drift import positions

    def walk(assign, names, tokens):
        steps, pos = np.full(len(assign), -1), np.full(len(assign), -1)
        if "decode" not in names:
            return steps, pos
        d, p = names.index("decode"), names.index("prefill") if "prefill" in names else -1
        step, cur, seen = 0, -1, False
        for i, a in enumerate(assign):
            if a == p:
                seen, step, cur = True, 0, (int(tokens[i]) if tokens[i] > 0 else -1)
            elif a == d:
                step += 1
                steps[i] = step
                if cur >= 0:
                    pos[i] = cur
                    cur += int(tokens[i]) if tokens[i] > 0 else 1
        if not seen:
            steps[:] = np.where(np.asarray(assign) == d, np.cumsum(np.asarray(assign) == d), -1)
        return steps, pos

    rng = np.random.default_rng(0)
    for t in range(2000):
        names = [["prefill", "decode"], ["decode"], ["decode", "prefill", "other"], ["x"]][t % 4]
        assign = rng.integers(0, len(names), int(rng.integers(0, 50)))
        tokens = rng.choice([-1, 0, 1, 3, 128], assign.size) if t % 3 else np.full(assign.size, -1)
        got, want = positions(assign, names, tokens), walk(assign, names, tokens)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), t
