"""Work and memory bounded by the input's size (issue 13), each case a VALID file built by
``generators.py`` and run through the CLI in a child process: exit 0 or 2 with one line, CPU time
and peak RSS (``ru_maxrss`` of that child) within the command's budget ``a + b x input bytes``
(``campaign.BUDGETS``, stated in SECURITY.md).

The reproducers of the issue's items come first; then a sample of the generator campaign
(``campaign.py`` runs the long one).
"""
from __future__ import annotations

import json
import random
import time

import pytest

import campaign as C
import generators as G


def _run(tmp_path, kind: str, data: bytes, argv: list[str]) -> C.Outcome:
    o = C.run_case(kind, data, argv, tmp_path)
    assert not o.problems(), f"{o.describe()}: {'; '.join(o.problems())}\n{o.stderr[-2000:]}"
    return o


def _op(instr: int, t: int):
    return [("P", "OPERATOR_CALL", 0, instr, None, None, t, t + 5),
            ("P", "native_call_add.out", 0, instr, None, None, t + 1, t + 4)]


# ---- item 1: an instruction id of 2**31 - 2 ------------------------------------------------------

@pytest.mark.parametrize("argv", [["export", "{f}", "-o", "{o}"], ["sql", "{f}", "SELECT 1"]], ids=["export", "sql"])
def test_huge_instruction_id_allocates_nothing_by_its_value(tmp_path, argv):
    """Was ``np.full(max(ids) + 2)``: 29 s / 16.9 GB for a 400-byte file."""
    events = [("P", "Method::execute", None, None, None, None, 0, 100)] + _op(2 ** 31 - 2, 10) + _op(5, 20)
    data = G.build_etdump_shared([dict(name="Execute", events=events)])
    assert len(data) < 1000
    o = _run(tmp_path, "etdump", data, argv)
    assert o.rc == 0 and o.rss_mb < 400


def test_export_places_huge_ids_right(tmp_path):
    """The look-up by position gives each event its own instruction's placement and op type."""
    events = [("P", "Method::execute", None, None, None, None, 0, 100)] + _op(2 ** 31 - 2, 10) + _op(5, 20)
    f = tmp_path / "x.etdump"
    f.write_bytes(G.build_etdump_shared([dict(name="Execute", events=events)]))
    from etscope.profile import load
    from etscope.analysis.views.tables import events_table

    profile = load(str(f))
    table = events_table(profile).to_pylist()
    by_id = {r["instruction_id"]: r for r in table if r["role"] == "operator_call"}
    assert set(by_id) == {2 ** 31 - 2, 5}
    for iid, r in by_id.items():
        assert r["placement"] == profile.instructions[iid].backend == "cpu"


# ---- item 4: one instruction called tens of thousands of times ------------------------------------

@pytest.mark.parametrize("argv", [["report", "{f}", "-o", "{o}.html"], ["ops", "--limit", "0", "{f}"]],
                         ids=["report", "ops"])
def test_repeated_calls_of_one_instruction_are_linear(tmp_path, argv):
    """Was K x K (every call listed every kernel of the instruction): 20k calls in 350 kB took 66 s
    and 1.6 GB in ``report``; ``ops --limit 0`` compared rows by dict equality and laid out a rich
    table at 2 ms a row."""
    events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
    for i in range(20000):
        events += _op(0, 10 * i)
    data = G.build_etdump_shared([dict(name="Execute", events=events)])
    _run(tmp_path, "etdump", data, argv)


def test_report_pairs_each_call_with_its_own_kernel():
    """The k-th OPERATOR_CALL of an instruction holds the k-th kernel event (not all of them)."""
    from etscope.analysis.ops.per_op import OpRow, inner_rows_by_call

    def row(level, k, name):
        return OpRow(instruction_id=0, level=level, role="kernel", name=name, occurrence=k, op_type=None,
                     placement="cpu", runs=1, calls_per_run=1.0, unit="ns", p50=1.0, mean=1.0, total=1.0,
                     min=1.0, max=1.0, p50_ms=1e-6, mean_ms=1e-6, total_ms=1e-6, share=None, source=None)

    ops = [row(0, k, "call") for k in range(3)] + [row(1, k, f"kernel{k}") for k in range(4)]
    inside = inner_rows_by_call(ops)
    assert [[r.name for r in inside[(0, k)]] for k in range(3)] == [["kernel0"], ["kernel1"], ["kernel2", "kernel3"]]


# ---- item 6: optrace tracks x events, QHAS HTP ops under one QNN op -------------------------------

def test_optrace_many_tracks(tmp_path):
    """Was a scan of every event per track: 8,000 tracks, 57 s."""
    data = G.gen_optrace(random.Random(0), "many_tracks", lean=True)   # 1.3 MB: 13.6 s before
    _run(tmp_path, "optrace", data, ["qnn", "--json", "--optrace", "{f}"])


def test_qhas_many_htp_ops_under_one_qnn_op(tmp_path):
    """Was a list membership test per HTP op: 60k HTP ops under one QNN op, 59 s."""
    rng = random.Random(0)
    while True:
        data = G.gen_qhas(rng, "many_htp_under_one")
        if data.count(b'"htp_op"') >= 60000:
            break
    _run(tmp_path, "qhas", data, ["qnn", "--json", "--qhas", "{f}"])


def test_optrace_track_totals():
    """Per-track op counts and busy cycles from the one-pass grouping."""
    import json as _json

    from etscope.analysis.qnn import optrace_summary
    from etscope.formats.optrace import parse_optrace

    data = G.gen_optrace(random.Random(1), "tracks_x_events")
    trace = parse_optrace(data, "x.json")
    from etscope.render.json import dumps

    s = _json.loads(dumps(optrace_summary(trace)))      # its JSON form
    doc = _json.loads(data)
    overview = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 0]
    assert s["ops"] == len(overview)
    by_track = {(t["pid"], t["tid"]): t for t in s["tracks"]}
    for e in overview[:50]:
        t = by_track[(0, e["tid"])]
        assert t["ops"] == sum(1 for x in overview if x["tid"] == e["tid"])
        assert t["busy_cycles"] == sum(x["dur"] for x in overview if x["tid"] == e["tid"])


def test_qnn_profile_with_many_node_names(tmp_path):
    """Found by the campaign: node names of a QNN viewer text / CSV collected with a list
    membership test (names x names): 60k names, 13 s on 5 MB before."""
    lines = ["Execute Stats:", "    QNN (execute) time : 100 us", "Execute Stat 1"]
    lines += [f"        n{i}:OpId_{i} (cycles) : {i} cycles" for i in range(60000)]
    data = "\n".join(lines).encode()
    _run(tmp_path, "qnn_text", data, ["qnn", "--qnn-csv", "{f}"])


@pytest.mark.parametrize("argv", [["summary", "{f}"], ["qnn", "--json", "{f}"]], ids=["summary", "qnn"])
def test_qnn_names_that_differ_per_run(tmp_path, argv):
    """Found by the campaign: QNN per-op rows are a (rows x runs) table; when every run logs new
    names it was rows x runs from rows + runs events (7.7 MB: 1.8 GB, 10 s). Now left out with a note."""
    runs, k = [], 0
    for _ in range(1000):
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6),
                  ("P", "DELEGATE_CALL", 0, 0, None, None, 1, 10 ** 6 - 1)]
        for i in range(50):
            events.append(("P", None, 0, 0, None, f"n{k}:OpId_{k} (cycles)", 0, i))
            k += 1
        runs.append(dict(name="Execute", events=events))
    data = G.build_etdump_shared(runs)
    o = _run(tmp_path, "etdump", data, argv)
    assert o.rc == 0


@pytest.mark.parametrize("argv", [["summary", "{f}"], ["qnn", "{f}"], ["trace", "{f}", "-o", "{o}.json"]],
                         ids=["summary", "qnn", "trace"])
def test_many_qnn_partitions(tmp_path, argv):
    """Found by the campaign: thousands of QNN partitions (delegate calls with QNN events). Each
    partition's events were found by a scan of all events (partitions x events), ``summary``
    listed inner rows by a scan of the op table per call, ``qnn`` laid out rich tables for each:
    20k partitions in 5.9 MB, 84 s (``summary``), 96 s (``qnn``). Now indexed once; the first
    1000 partitions analysed, 50 printed."""
    events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
    for i in range(8000):
        events += [("P", None, 0, i, None, "QNN (execute) time (us)", 0, 5),
                   ("P", None, 0, i, None, f"a:OpId_{i} (cycles)", 0, 7),
                   ("P", "DELEGATE_CALL", 0, i, None, None, 10 * i, 10 * i + 9)]
    data = G.build_etdump_shared([dict(name="Execute", events=events)] * 2)
    o = _run(tmp_path, "etdump", data, argv)
    assert o.rc == 0


def test_qnn_rows_kept_when_names_recur():
    """The guard leaves normal data alone: the same names every run give one row each."""
    from etscope.analysis.qnn import series_from_profile
    from etscope.profile import load

    runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, 0, 10 ** 6),
                                          ("P", "DELEGATE_CALL", 0, 0, None, None, 1, 10 ** 6 - 1)] +
                 [("P", None, 0, 0, None, f"n{i}:OpId_{i} (cycles)", 0, i + r) for i in range(50)])
            for r in range(100)]
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".etdump") as f:
        f.write(G.build_etdump_shared(runs))
        f.flush()
        (s,) = series_from_profile(load(f.name))
    assert len(s.node_names) == 50 and s.node_values.shape == (50, 100)
    assert s.node_values[3, 7] == 3 + 7


@pytest.mark.parametrize("argv", [["llm", "{f}"], ["report", "{f}", "-o", "{o}.html"]], ids=["llm", "report"])
def test_new_instruction_in_every_run(tmp_path, argv):
    """analysis.llm held a dense (runs x instructions) table: every run calling an instruction of
    its own made it runs x runs (8,000 runs, 0.9 MB: ``llm`` 9.8 s / 2.35 GB; 4,000 runs: 601 MB).
    Now the table holds at most 16 cells per event + 1M, the least-called instructions left out
    and counted (``llm.instructions_left_out``, a warning)."""
    runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, 100 * i, 100 * i + 50)]
                 + _op(i, 100 * i + 1)) for i in range(4000)]
    _run(tmp_path, "etdump", G.build_etdump_shared(runs), argv)


def test_debug_tensor_of_a_new_instruction_in_every_run(tmp_path):
    """The token count from logged tensor shapes kept a (tensor signatures x runs) matrix: a debug
    event of a new instruction in every run made it runs x runs (8,000 runs, 1.5 MB: 3.2 s /
    538 MB). Only signatures logged in every run can give a count per run: only those are kept."""
    import fuzz_harness as H

    runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, None, 100 * i, 100 * i + 50),
                                         ("D", None, 0, i, None, None, (5, 6, [1, 8, 64]))]) for i in range(6000)]
    _run(tmp_path, "etdump", H.build_etdump(runs), ["llm", "{f}"])


# ---- item 7: runs sharing their events vector ---------------------------------------------------------

def _shared_vector_etdump(shares: int) -> bytes:
    events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6)]
    for i in range(500):   # long distinct names: the old size / 4 bound let 10x sharing through
        events += [("P", f"OPERATOR_CALL_{i}_{'x' * 200}", 0, i, None, None, 10 * i, 10 * i + 5)]
    return G.build_etdump_shared([dict(name="Execute", events=events)] +
                                 [{"name": "Execute", "events_of": 0} for _ in range(shares)])


@pytest.mark.parametrize("argv", [["trace", "{f}", "-o", "{o}.json"], ["summary", "{f}"]], ids=["trace", "summary"])
def test_shared_event_vectors_are_refused(tmp_path, argv):
    """Refused with one line naming the runs (24.5 MB shared 10x: ``trace`` 37 s / 4 GB before)."""
    data = _shared_vector_etdump(10)
    assert 11 * 501 < len(data) // 16        # within the count bound: read as 5,511 events before
    o = _run(tmp_path, "etdump", data, argv)
    assert o.rc == 2 and "share their events vector" in o.stderr, o.stderr


def test_shared_event_tables_cannot_claim_more_than_honest_events():
    """Events sharing one table: at most size / 16 events (the fewest bytes an honest event takes)."""
    from etscope.errors import FormatError
    from etscope.formats.etdump import MIN_EVENT_BYTES, parse_etdump

    events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6)] + _op(0, 10) * 5000
    data = G.build_etdump_shared([dict(name="Execute", events=events)], share_tables=True)
    assert len(events) > len(data) // MIN_EVENT_BYTES + 64
    with pytest.raises(FormatError, match="events"):
        parse_etdump(data, "x.etdump")


def test_distinct_runs_are_not_refused():
    from etscope.formats.etdump import parse_etdump

    data = G.build_etdump_shared([dict(name="Execute", events=_op(i, 10)) for i in range(5)])
    assert len(parse_etdump(data, "x.etdump").runs) == 5


# ---- issue 31: program, constant methods, diff, runtrace ----------------------------------------------

def _shared_blobs_pte(delegates: int = 3000, blobs: int = 4, method_name: str = "forward") -> bytes:
    spec = (G.H.FIXTURES / "qnn_pte" / "synthetic_compile_spec_sm8650_detailed.bin").read_bytes()
    m = dict(name=method_name, delegates=[("QnnBackend", i % blobs) for i in range(delegates)],
             inline=[bytes([i]) * 16 for i in range(blobs)], instructions=[(2, i, [0]) for i in range(delegates)],
             spec=spec)
    return G.build_pte([m])


@pytest.mark.parametrize("argv", [["program", "{f}"], ["env:COLUMNS=80", "program", "{f}"]],
                         ids=["piped", "columns80"])
def test_program_delegates_sharing_blobs(tmp_path, argv):
    """3,000 delegates over 4 blobs: every delegate listed every other user of its blob (33 MB of
    text; 21 s piped, 42 s with COLUMNS=80, each line through rich). Now each names its first 8
    and counts the rest."""
    _run(tmp_path, "pte", _shared_blobs_pte(), argv)


def test_program_json_is_linear_in_delegates():
    """The same file as JSON was 65 MB (shared_with lists of 749 labels each, per delegate)."""
    from etscope.analysis.ops.program import program_report
    from etscope.formats.pte import parse_pte
    from etscope.render.json import dumps

    data = _shared_blobs_pte()
    r = program_report(parse_pte(data, "x.pte"))
    # each delegate's decoded spec (~0.8 kB) is repeated, a constant per delegate: ~20x the file
    # (before: 65 MB, 320x the file)
    assert len(dumps(r.to_json())) < 30 * len(data)
    from etscope.analysis.ops.program import SHARED_NAMED

    d = r.methods[0].delegates[0]
    assert len(d.shared_with) == SHARED_NAMED and d.shared_by_others == 749
    one = json.loads(dumps(r.to_json()))["methods"][0]["delegates"][0]
    assert one["shared"] is True and one["shared_count"] == 749 and len(one["shared_with"]) == SHARED_NAMED


def test_program_long_method_name_not_repeated_per_delegate(tmp_path):
    """A 100 kB method name was repeated in every delegate's label (x the other users)."""
    data = _shared_blobs_pte(1000, 1, "m" * 100_000)
    o = _run(tmp_path, "pte", data, ["env:COLUMNS=80", "program", "{f}"])
    assert o.rc == 0


def test_constant_methods_sharing_one_values_vector(tmp_path):
    """10,000 constant methods over one vector of 200,000 values: each method decoded the whole
    vector to read one (1.7 MB: 9.7 s). Now only the returned values are read."""
    v = 200_000
    methods = [dict(name="get_0", values=[(2, 7)] * v, outputs=[0, v - 1])]
    methods += [dict(name=f"get_{i}", values_of=0, outputs=[i]) for i in range(1, 10_000)]
    data = G.build_pte(methods + [dict(name="forward", operators=[("aten::add", "out")], instructions=[(1, 0, [0])])])
    _run(tmp_path, "pte", data, ["program", "{f}"])


def test_constant_method_values_read_through_shared_vector():
    from etscope.formats.pte_constants import constant_method_values

    import tempfile

    methods = [dict(name="get_a", values=[(2, 5), (4, 0.5), (6, "x" * 300), (3, True)], outputs=[0, 1, 2])]
    methods += [dict(name="get_b", values_of=0, outputs=[3, 0])]
    with tempfile.NamedTemporaryFile(suffix=".pte") as f:
        f.write(G.build_pte(methods))
        f.flush()
        values = constant_method_values(f.name)
    assert values == {"get_a": [5, 0.5, "x" * 256], "get_b": [True, 5]}


def test_methods_sharing_one_plan_are_refused(tmp_path):
    data = G.build_pte([dict(name="forward", operators=[("aten::add", "out")], instructions=[(1, 0, [0])])],
                       plan_copies=2)
    o = _run(tmp_path, "pte", data, ["program", "{f}"])
    assert o.rc == 2 and "share one execution plan" in o.stderr, o.stderr


def test_diff_when_every_run_calls_its_own_instruction(tmp_path):
    """diff kept per-op samples as a (rows x runs) matrix: 8,000 runs each calling its own
    instruction made it 8,000 x 8,000 (1.2 MB file: 1.17 GB). Now (runs, values) per row."""
    runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, 100 * i, 100 * i + 50)]
                 + _op(i, 100 * i + 1)) for i in range(8000)]
    _run(tmp_path, "etdump", G.build_etdump_shared(runs), ["diff", "{f}", "{f}"])


def test_runtrace_alone_is_linear(tmp_path):
    """trace --runtrace searched every span for each execute (executes x spans): 300,000 bare
    executes (10.8 MB) took 23 s of CPU, 500,000 (18 MB) about 65 s against a budget of 38 s;
    now about 2 s."""
    _run(tmp_path, "runtrace", G.dense_runtrace(500_000), ["trace", "--runtrace", "{f}", "-o", "{o}.json"])


# ---- the generator campaign, sampled ---------------------------------------------------------------

# (kind, seeds, commands per seed): 33 files, 43 commands, about 30 s of CPU (more wall time on a
# loaded box); campaign.py runs the long one.
SAMPLE = [("etdump", 10, 2), ("qhas", 3, 1), ("optrace", 3, 2), ("qnn_csv", 3, 1), ("qnn_text", 3, 1),
          ("qnn_json", 3, 1), ("etrecord", 4, 1), ("pte", 6, 1), ("runtrace", 3, 1), ("ort_profile", 5, 2), ("numerics", 3, 1),
          ("dataset", 3, 2), ("sql", 6, 1)]


@pytest.mark.parametrize("kind, seeds, n_commands", SAMPLE, ids=[s[0] for s in SAMPLE])
def test_campaign_sample(kind, seeds, n_commands):
    t0 = time.time()
    failures: list[str] = []
    outcomes = C.campaign([kind], seeds, n_commands, first_seed=1000, log=failures.append)
    assert outcomes and not failures, "\n".join(failures)
    assert time.time() - t0 < 120


# ---- the campaign's own checks ---------------------------------------------------------------------

def test_campaign_sees_a_changed_input(tmp_path):
    f = tmp_path / "in" / "x.bin"
    f.parent.mkdir()
    f.write_bytes(b"abc")
    before = C.fingerprint([f.parent])
    f.write_bytes(b"abd")                         # same size: the hash tells
    (f.parent / "new").write_bytes(b"")
    assert C._changed(before, C.fingerprint([f.parent])) == [str(f.parent / "new"), str(f)]


def test_campaign_folder_kind(tmp_path, monkeypatch):
    """The extension point for inputs that are a folder or several files ({d}), here an ETDump and
    a runtrace side by side, run like any kind: budget, one-line errors, inputs unchanged."""
    import shutil

    def make(rng, folder):
        shutil.copy(C.ETDUMP, folder / "a.etdump")
        (folder / "b.runtrace.json").write_bytes(G.gen_runtrace(rng, "many_graphs"))
        return C.Generated({"d": str(folder)}, (folder,), C.tree_bytes(folder))

    monkeypatch.setitem(C.EXTRA_KINDS, "pair", C.ExtraKind(make, [
        ["summary", "{d}/a.etdump", "--runtrace", "{d}/b.runtrace.json"],
        ["trace", "--runtrace", "{d}/b.runtrace.json", "-o", "{o}.json"],
        ["export", "{d}/a.etdump", "-o", "{d}"]]))     # writes CSVs beside the inputs: flagged
    failures: list[str] = []
    outcomes = C.campaign(["pair"], 1, None, log=failures.append)
    assert len(outcomes) == 3 and all(o.size > 0 for o in outcomes)
    assert outcomes[0].rc == 0 and outcomes[1].rc == 0
    assert not [o for o in outcomes[:2] if o.problems()], failures
    assert outcomes[2].rc == 0 and any(c.startswith("input ") and c.endswith("runs.csv") for c in outcomes[2].changed)
