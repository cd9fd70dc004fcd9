"""Several ETDumps (``etscope llm a b ...``, sessions of one program, issue 34 item 3): phases are
found per file (each its own structure groups, cost split and token evidence), then joined by
phase name; warm-up is judged within a phase and a file; a file given twice is counted once.

Truth: ``gen_manifest.json``'s per-execute schedule of gen_llama (2 x [prefill + 15 decodes]) and
gen_llama_chunked (the same program, another session: 2 x [5 prefill chunks + 2 decodes]).
"""
import json
import shutil
from pathlib import Path

import pytest

from etscope.render.json import to_jsonable
from etscope.analysis import llm
from etscope.profile import load

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _plain_report(*args, **kw) -> dict:
    """The result as ``llm --json`` writes it: these tests read the schema."""
    return to_jsonable(llm.llm_report(*args, **kw))


def _schedule(name):
    return json.loads((REAL / "gen_manifest.json").read_text())["fixtures"][name]["schedule"]


def _report(*paths, **kw):
    return _plain_report([load(p) for p in paths], **kw)


def _runs_of(r, name):
    return next(p["runs"] for p in r["llm"]["phases"] if p["name"] == name)


@pytest.mark.parametrize("names", [("gen_llama", "gen_llama_chunked"), ("gen_llama_chunked", "gen_llama")])
def test_two_sessions_phases_per_run_match_the_schedules(names):
    scheds = [_schedule(n) for n in names]
    r = _report(*(REAL / f"{n}.etdump" for n in names))
    l = r["llm"]
    truth = [s["phase"] for sched in scheds for s in sched]
    assert l["runs"] == len(truth)
    # Joined by name: one prefill and one decode phase holding both files' runs.
    assert [p["name"] for p in l["phases"]] == ["prefill", "decode"]
    assert l["series"]["phase"] == truth
    assert _runs_of(r, "prefill") == [i for i, p in enumerate(truth) if p == "prefill"]
    assert _runs_of(r, "decode") == [i for i, p in enumerate(truth) if p == "decode"]
    # Every run says which file and which of its runs it is.
    assert l["series"]["file"] == [i for i, sched in enumerate(scheds) for _ in sched]
    assert l["series"]["file_run"] == [j for sched in scheds for j in range(len(sched))]
    assert len(l["series"]["method"]) == len(truth)
    # Each file's own split is reported, by the file's own evidence.
    per_file = l["phase_split"]["files"]
    assert [f["file"] for f in per_file] == [0, 1]
    assert all(f["by"] == "cost profile" for f in per_file)
    text = json.dumps(r)
    assert "groups of runs executed different events" not in text
    assert "(group 2)" not in text


@pytest.mark.parametrize("names", [("gen_llama", "gen_llama_chunked"), ("gen_llama_chunked", "gen_llama")])
def test_warmup_is_judged_within_a_phase_and_a_file(names):
    r = _report(*(REAL / f"{n}.etdump" for n in names))
    l = r["llm"]
    s = l["series"]
    for w in l["warmup"]:
        run = w["run"]
        assert w["phase"] == s["phase"][run] and w["file"] == s["file"][run]
        # Leading runs of that phase in that file: no run of the same file and phase comes before
        # it unless it is a warm-up run too.
        before = [i for i in range(run) if s["file"][i] == w["file"] and s["phase"][i] == w["phase"]]
        assert all(s["warmup"][i] for i in before)
        # Compared with the later runs of the same phase in the same file only.
        later = [i for i in range(run + 1, l["runs"]) if s["file"][i] == w["file"] and s["phase"][i] == w["phase"]]
        assert w["later_runs"] == len(later)


def test_same_file_twice_is_counted_once():
    one = _report(REAL / "gen_llama.etdump")
    r = _report(REAL / "gen_llama.etdump", REAL / "gen_llama.etdump")
    l = r["llm"]
    assert len(r["inputs"]) == 2
    assert l["runs"] == one["llm"]["runs"]
    assert [(p["name"], p["runs"], p["latency_ms"]) for p in l["phases"]] == \
           [(p["name"], p["runs"], p["latency_ms"]) for p in one["llm"]["phases"]]
    assert l["duplicates"] == [{"file": 1, "same_as": 0, "by": "same file"}]
    assert sum("counted once" in w for w in r["warnings"]) == 1
    assert "groups of runs executed different events" not in json.dumps(r)
    assert set(l["series"]["file"]) == {0}


def test_a_copy_of_a_file_is_recognised_by_its_run_data(tmp_path):
    copy = tmp_path / "copy.etdump"
    shutil.copyfile(REAL / "gen_llama_chunked.etdump", copy)
    r = _report(REAL / "gen_llama.etdump", REAL / "gen_llama_chunked.etdump", copy)
    l = r["llm"]
    assert l["duplicates"] == [{"file": 2, "same_as": 1, "by": "same run data"}]
    assert l["runs"] == len(_schedule("gen_llama")) + len(_schedule("gen_llama_chunked"))
    w = [w for w in r["warnings"] if "counted once" in w]
    assert len(w) == 1 and "copy.etdump" in w[0] and "gen_llama_chunked.etdump" in w[0]


def test_a_file_without_phases_is_named_not_merged():
    """A plain CNN beside an LLM session: its runs cannot be told into prefill and decode; it keeps
    a phase of its own and a warning names it."""
    r = _report(REAL / "cnn.etdump", REAL / "llama_nodebug.etdump")
    l = r["llm"]
    names = [p["name"] for p in l["phases"]]
    assert names[1:] == ["prefill", "decode"]
    assert l["phases"][0]["runs"] == list(range(10))
    assert "cnn.etdump" in names[0]
    assert any("cnn.etdump" in w and "prefill" in w for w in r["warnings"])


def test_two_sessions_without_phases_join_into_one():
    """gen_cnn and gen_cnn_b: one program, two sessions, no LLM: one phase of 20 runs."""
    r = _report(REAL / "gen_cnn.etdump", REAL / "gen_cnn_b.etdump")
    l = r["llm"]
    assert len(l["phases"]) == 1 and l["phases"][0]["runs"] == list(range(20))
    assert "groups of runs executed different events" not in json.dumps(r)


def test_one_file_is_unchanged_by_the_per_file_path():
    """One file: no file columns, no per-file split, the split as before."""
    r = _report(REAL / "gen_llama.etdump")
    l = r["llm"]
    assert "file" not in l["series"] and "files" not in l["phase_split"] and "duplicates" not in l
    assert all("file" not in w for w in l["warmup"])


def test_sessions_of_a_qnn_hybrid_program_keep_its_method_names():
    """The QNN hybrid fixture (prefill_forward / kv_forward: look-alike methods) cut into two
    sessions, each loaded with the program's ETRecord: phases per the truth file, named after the
    methods as for one file."""
    from etscope.profile import select_runs

    fix = REAL.parent / "qnn_hybrid"
    truth = json.loads((fix / "synthetic_qnn_hybrid_stories.truth.json").read_text())["runs"]
    whole = load(fix / "synthetic_qnn_hybrid_stories.etdump", etrecord=fix / "synthetic_qnn_hybrid_stories.etrecord")
    cut = next(t["run"] for t in truth if t["phase"] == "prefill" and t["run"] > 0)   # the second prompt
    halves = []
    for name, keep in (("first.etdump", [t["run"] < cut for t in truth]), ("second.etdump", [t["run"] >= cut for t in truth])):
        p = select_runs(whole, keep)
        p.sources["etdump"] = name
        halves.append(p)
    r = _plain_report(halves, all_methods=True)
    l = r["llm"]
    assert l["series"]["phase"] == [t["phase"] for t in truth]
    assert l["series"]["method"] == [t["method"] for t in truth]
    assert {p["name"]: p["method"] for p in l["phases"]} == {"prefill": "prefill_forward", "decode": "kv_forward"}
    assert l["series"]["file"] == [int(t["run"] >= cut) for t in truth]
    assert not any("different instructions" in w for w in r["warnings"])


def test_phases_joined_over_files_with_different_qnn_shards():
    """Two QNN programs (one partition; four): joined by name with a warning that they ran different
    instructions; each phase's shard table covers every shard, a run of the other file counting 0."""
    fix = REAL.parent / "qnn_hybrid"
    paths = [fix / "synthetic_qnn_hybrid_stories.etdump", fix / "synthetic_qnn_4shard.etdump"]
    r = _report(*paths)
    l = r["llm"]
    assert [p["name"] for p in l["phases"]] == ["prefill", "decode"]
    assert sum("executed different instructions" in w for w in r["warnings"]) == 2
    singles = [_report(p)["llm"] for p in paths]
    for ph in l["phases"]:
        shards = {s["instruction_id"] for s in ph["qnn"]["shards"]}
        assert shards == {s["instruction_id"] for one in singles for p in one["phases"] if p["name"] == ph["name"]
                          for s in p["qnn"]["shards"]}
        assert ph["qnn"]["totals"]["delegate_call_ms"]["runs"] == ph["steady_runs"]
        assert sum(s["delegate_call_ms"]["mean"] for s in ph["qnn"]["shards"]) == \
               pytest.approx(ph["qnn"]["totals"]["delegate_call_ms"]["mean"])


def test_token_counts_logged_by_one_file_only_are_said_so():
    """llama logged tensor shapes (token counts), llama_nodebug did not: each file's phases by its
    own evidence; the joined phases' tokens per run stay unknown, and the finding says how many runs
    the logged shapes cover instead of claiming none were logged."""
    r = _report(REAL / "llama.etdump", REAL / "llama_nodebug.etdump")
    l = r["llm"]
    assert [(f["etdump"], f["by"]) for f in l["phase_split"]["files"]] == [
        ("llama.etdump", "token counts"), ("llama_nodebug.etdump", "cost profile")]
    # shared_manifest: "execute #0 = prefill(8 tokens), then 1-token decodes" (llama_nodebug: the same run)
    assert l["series"]["phase"] == ["prefill"] + ["decode"] * 23 + ["prefill"] + ["decode"] * 23
    assert l["tokens_unknown"]["runs_with_logged_tokens"] == 24
    assert any("only 24 of them" in f for f in r["findings"])


def test_hostile_valid_files_side_by_side(tmp_path):
    """Issue 12's hostile-but-valid ETDumps (no Execute runs, zero-length runs, huge timestamps, ...)
    beside a real session, after it, and given twice: a result, no traceback, no warning."""
    import sys
    import warnings

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import hostile_valid as HV

    paths = HV.write_all(tmp_path)
    real = REAL / "gen_llama.etdump"
    for case in sorted(HV.CASES):
        for pair in ((paths[case], real), (real, paths[case]), (paths[case], paths[case])):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = _report(*pair)
            l = r["llm"]
            assert l["runs"] == len(l["series"]["latency_ms"]) == sum(len(p["runs"]) for p in l["phases"])
            if pair[0] == pair[1]:
                assert l["duplicates"] == [{"file": 1, "same_as": 0, "by": "same file"}]
