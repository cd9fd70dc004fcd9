"""Runs of several methods with different instructions in one ETDump (profile.MethodSplit).

gen_llama_mixed (tools/make_fixtures.py) ran a .pte whose ``prefill`` method is fully delegated to
XNNPACK and whose ``decode`` method keeps its linears on the CPU, interleaved into one ETDump;
gen_manifest.json has the method of every execute, the raw decode (executorch's deserializer) every
event, and the Inspector one block per method. Nothing here is hard-coded from the files.
"""
import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.ops import per_op as ops
from etscope.analysis.views.summary import summarize
from etscope.errors import MismatchError
from etscope.formats.pte import read_pte
from etscope.profile import event_runs, load, select_runs

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
NAME = "gen_llama_mixed"
INPUTS = {"pte": {"pte": REAL / f"{NAME}.pte"}, "etrecord": {"etrecord": REAL / f"{NAME}.etrecord"}}


def _methods_run():
    entry = json.loads((REAL / "gen_manifest.json").read_text())["fixtures"][NAME]
    return [s["method"] for s in entry["schedule"]]


def _raw_execute_runs():
    raw = json.load(gzip.open(REAL / f"{NAME}.raw.json.gz"))
    return [(i, r) for i, r in enumerate(raw["run_data"]) if r["name"] == "Execute"]


def _load(how, **kw):
    return load(REAL / f"{NAME}.etdump", **INPUTS[how], **kw)


def _pte_method(name):
    return next(m for m in read_pte(REAL / f"{NAME}.pte").methods if m.name == name)


@pytest.mark.parametrize("how", sorted(INPUTS))
def test_each_run_gets_the_method_it_executed(how):
    split = _load(how).method_split
    want = _methods_run()
    assert split is not None
    assert split.names == list(dict.fromkeys(want))          # in the order of their first run
    assert [split.names[i] for i in split.of_run] == want
    for name in split.names:
        assert split.runs_of(name).tolist() == [i for i, m in enumerate(want) if m == name]


@pytest.mark.parametrize("how", sorted(INPUTS))
def test_the_profile_holds_the_method_with_most_runs_and_names_the_others(how):
    counts = Counter(_methods_run())
    (most, n_most), (other, n_other) = counts.most_common()
    p = _load(how)
    assert p.method == most and p.n_runs == n_most
    note = p.method_split.note
    assert note in p.warnings
    assert f"{other} {n_other} run(s)" in note and f"--method {other}" in note


def test_each_method_profile_holds_exactly_its_runs():
    split = _load("pte").method_split
    raw_runs = _raw_execute_runs()
    want = _methods_run()
    for name, sub in split.profiles.items():
        mine = [k for k, m in enumerate(want) if m == name]
        assert sub.method == name and sub.n_runs == len(mine)
        assert sub.runs["etdump_run"].tolist() == [raw_runs[k][0] for k in mine]
        # Latency: Method::execute of each run, from executorch's own decode of the file.
        lat = [next(e[7] - e[6] for e in raw_runs[k][1]["events"] if e[0] == "P" and e[1] == "Method::execute")
               for k in mine]
        assert sub.runs["latency_ns"].tolist() == lat
        in_runs = sub.events["execute"] >= 0
        assert int(in_runs.sum()) == sum(len(raw_runs[k][1]["events"]) for k in mine)
        assert np.bincount(sub.events["execute"][in_runs]).tolist() == [len(raw_runs[k][1]["events"]) for k in mine]


@pytest.mark.parametrize("how", sorted(INPUTS))
def test_instructions_are_those_of_the_run_s_method(how):
    split = _load(how).method_split
    for name, sub in split.profiles.items():
        method = _pte_method(name)
        assert {i.id for i in sub.instructions.values() if i.kind == "delegate"} == \
            {i.index for i in method.delegate_calls}
        for ins in sub.instructions.values():
            p = method.instructions[ins.id]
            if ins.kind == "delegate":
                assert p.kind == "delegate" and ins.backend == p.backend_id
            else:
                assert p.kind == "kernel"
                if how == "pte":
                    assert ins.operator == p.operator
        assert not any("both DELEGATE_CALL and operator" in w for w in sub.warnings)


def test_summary_of_each_method_counts_that_method_s_calls():
    split = _load("pte").method_split
    raw = json.load(gzip.open(REAL / f"{NAME}.raw.json.gz"))
    for name, sub in split.profiles.items():
        s = summarize(sub)
        assert s.method == name and s.runs.count == sub.n_runs
        # The file's events, and this method's (its runs plus load/init, which every method shows).
        assert s.etdump.events == sum(len(r["events"]) for r in raw["run_data"])
        assert s.etdump.events_of_method == sub.n_events
        delegate = next(b for b in s.breakdown if b.kind == "delegate")
        assert delegate.calls_per_run == len(_pte_method(name).delegate_calls)


def test_statistics_per_method_match_the_inspector_s_blocks():
    """The Inspector groups runs with the same events into one block: here one block per method."""
    split = _load("pte").method_split
    blocks = [b for b in json.load(gzip.open(REAL / f"{NAME}.inspector.json.gz"))["event_blocks"]
              if b["name"] == "Execute"]
    assert len(blocks) == len(split.names)
    for block in blocks:
        runs = next(e["num_runs"] for e in block["events"] if e["name"] == "Method::execute")
        sub = next(p for p in split.profiles.values() if p.n_runs == runs)
        ours = defaultdict(list)
        # The Inspector counts every run of the block (the views: the steady ones).
        for s in ops.event_stats(sub, execute_only=True, steady=np.ones(sub.n_runs, dtype=bool)):
            ours[(s.name, s.instruction_id)].append(s)
        for e in block["events"]:
            key = (e["name"], None if e["name"] == "Method::execute" else e["instruction_id"])
            last = max(ours[key], key=lambda r: r.occurrence)
            assert last.runs == e["num_runs"], key
            assert last.p50_ms == pytest.approx(e["p50"], rel=1e-3, abs=1e-9), key
            assert last.in_ms("max") == pytest.approx(e["max"], rel=1e-3, abs=1e-9), key


def test_method_option_picks_that_method_s_runs():
    counts = Counter(_methods_run())
    (most, _), (other, n_other) = counts.most_common()
    p = _load("pte", method=other)
    assert p.method == other and p.n_runs == n_other and p.method_split.explicit
    assert f"--method {most}" in p.method_split.note
    with pytest.raises(MismatchError, match="not found"):
        _load("pte", method="forward")


@pytest.mark.parametrize("pte", ["gen_llama.pte", "gen_llama_multimethod.pte", "cnn.pte"])
def test_a_program_that_fits_no_run_is_still_a_mismatch(pte):
    with pytest.raises(MismatchError, match="does not match the ETDump"):
        load(REAL / f"{NAME}.etdump", pte=REAL / pte)


def test_methods_with_the_same_instructions_are_not_split():
    p = load(REAL / "gen_llama_multimethod.etdump", pte=REAL / "gen_llama_multimethod.pte")
    assert p.method_split is None and p.n_runs == len(
        json.loads((REAL / "gen_manifest.json").read_text())["fixtures"]["gen_llama_multimethod"]["schedule"])


def test_select_runs_keeps_events_and_runs_aligned():
    p = load(REAL / "gen_cnn.etdump", pte=REAL / "gen_cnn.pte")
    keep = np.arange(p.n_runs) % 3 == 1
    sub = select_runs(p, keep)
    assert sub.n_runs == int(keep.sum()) and sub.method == p.method
    assert sub.runs["latency_ns"].tolist() == p.runs["latency_ns"][keep].tolist()
    ev, full = sub.events, p.events
    for k, r in enumerate(sub.runs["etdump_run"]):
        rd = sub.etdump.runs[int(r)]
        window = slice(rd.first_event, rd.first_event + rd.event_count)
        assert (event_runs(sub)[window] == r).all() and (ev["execute"][window] == k).all()
        orig = p.etdump.runs[int(r)]
        whole = slice(orig.first_event, orig.first_event + orig.event_count)
        assert ev["start"][window].tolist() == full["start"][whole].tolist()
    # Events outside the runs (load, init) stay; dropped runs keep their RunData, with no events.
    assert int((ev["execute"] < 0).sum()) == int((full["execute"] < 0).sum())
    dropped = set(p.runs["etdump_run"][~keep].tolist())
    assert all(sub.etdump.runs[r].event_count == 0 for r in dropped)
    # Columns holding one value everywhere stay zero-stride views.
    for name, col in full.items():
        if col.ndim == 1 and col.strides[0] == 0 and len(col):
            assert ev[name].strides[0] == 0 and len(ev[name]) == sub.n_events


# ---- without the program -------------------------------------------------------------------------------
def test_without_the_program_runs_that_contradict_each_other_are_split():
    """An instruction id that is a delegate call in some runs and a CPU operator in others cannot
    be one method: the runs are split as with the program, the methods unnamed."""
    p = load(REAL / f"{NAME}.etdump")
    split = p.method_split
    want = _methods_run()
    assert split is not None and split.names == ["method #1", "method #2"]
    named = dict(zip((split.names[i] for i in split.of_run), want))
    assert len(set(named.values())) == 2
    assert [named[split.names[i]] for i in split.of_run] == want
    assert p.n_runs == Counter(want).most_common()[0][1]
    assert "unnamed" in split.note and "--method 'method #1'" in split.note
    for sub in split.profiles.values():
        assert not any("both DELEGATE_CALL and operator" in w for w in sub.warnings)
    # The same runs, statistics and instructions (kinds) as with the program.
    with_pte = _load("pte").method_split
    for unnamed, method in named.items():
        a, b = split.profiles[unnamed], with_pte.profiles[method]
        assert a.runs["etdump_run"].tolist() == b.runs["etdump_run"].tolist()
        assert {i: x.kind for i, x in a.instructions.items()} == {i: x.kind for i, x in b.instructions.items()}
    assert load(REAL / f"{NAME}.etdump", method="method #1").n_runs == Counter(want).most_common()[1][1]
    with pytest.raises(MismatchError, match="no run of the ETDump executed method 'prefill'"):
        load(REAL / f"{NAME}.etdump", method="prefill")


@pytest.mark.parametrize("path", ["real/gen_llama.etdump", "real/gen_llama_multimethod.etdump", "real/gen_loop.etdump",
                                  "real/gen_multipart.etdump", "real/llama.etdump", "real/cnn.etdump",
                                  "qnn_etdump/synthetic_qnn_llm.etdump", "qnn_etdump/synthetic_qnn_vit_2part.etdump"])
def test_without_the_program_runs_that_agree_stay_one_method(path):
    p = load(REAL.parent / path)
    assert p.method_split is None


def test_ambiguous_runs_go_to_the_method_that_explains_most_runs():
    from etscope.profile.methods import fewest_methods

    # Groups of runs x methods they fit: group 0 fits both, 1 only method 0, 2 only method 1.
    fits = np.array([[True, True], [True, False], [False, True]])
    assert fewest_methods(fits, np.array([5, 1, 1])).tolist() == [0, 0, 1]
    assert fewest_methods(fits, np.array([5, 1, 9])).tolist() == [1, 0, 1]
