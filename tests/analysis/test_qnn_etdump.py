"""QNN analysis on ETDumps built exactly as ExecuTorch's QNN backend writes them (synthetic_*,
fed with real QNN emulator/device values; see tests/fixtures/qnn_etdump/README.md)."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis import qnn
from etscope.analysis.ops import placement
from etscope.analysis.ops.per_op import op_table
from etscope.cli import main
from etscope.profile import load
from qnn_typed import plain

D = Path(__file__).parents[1] / "fixtures" / "qnn_etdump"
MANIFEST = json.loads((D / "manifest.json").read_text())["fixtures"]


def _load(name, with_etrecord=True):
    m = MANIFEST[name]
    return load(D / m["etdump"], etrecord=(D / m["etrecord"]) if with_etrecord and m["etrecord"] else None)


def _expected(name, partition_index):
    """Per run: (accelerator cycles, node cycle sum, DELEGATE_CALL ns, cold) of one partition."""
    rows = []
    for run in MANIFEST[name]["runs"]:
        for call in run["calls"]:
            if call["kind"] == "delegate" and call["partition"] == partition_index:
                rows.append((call["accelerator_cycles"], call["node_cycles_sum"], call["DELEGATE_CALL_ns"], run["cold"]))
    return rows


@pytest.mark.parametrize("name", ["synthetic_qnn_cnn", "synthetic_qnn_vit_2part", "synthetic_qnn_llm",
                                  "synthetic_qnn_accumulate", "synthetic_qnn_resnet50_device"])
def test_per_run_values_match_what_was_written(name):
    report = plain(qnn.qnn_report(_load(name)))
    parts = report["partitions"]
    assert len(parts) == len(MANIFEST[name]["partitions"])
    for i, p in enumerate(parts):
        exp = _expected(name, i)
        assert p["per_run"]["accel_cycles"] == [float(e[0]) for e in exp]
        assert p["per_run"]["node_cycles_sum"] == [float(e[1]) for e in exp]
        assert p["per_run"]["delegate_call_us"] == pytest.approx([e[2] / 1e3 for e in exp])
        assert all(c["ok"] for c in p["checks"]), p["checks"]
        assert p["accumulating"] == MANIFEST[name]["accumulate"]


def test_accumulating_events_are_detected_and_deduplicated():
    base = plain(qnn.qnn_report(_load("synthetic_qnn_cnn")))["partitions"][0]
    acc = plain(qnn.qnn_report(_load("synthetic_qnn_accumulate")))["partitions"][0]
    assert acc["accumulating"] and not base["accumulating"]
    assert acc["per_run"] == base["per_run"]
    assert [o["cycles_p50"] for o in acc["ops"]] == [o["cycles_p50"] for o in base["ops"]]
    assert any("accumulate" in c["check"] for c in acc["checks"])


def test_cold_first_run_flagged():
    p = plain(qnn.qnn_report(_load("synthetic_qnn_cnn")))["partitions"][0]
    cold = [i for i, e in enumerate(_expected("synthetic_qnn_cnn", 0)) if e[3]]
    assert p["cold_runs"] == cold == [0]


def test_ops_joined_to_etrecord_graph():
    name = "synthetic_qnn_vit_2part"
    report = plain(qnn.qnn_report(_load(name)))
    graph_ops = {g["fx_name"]: g for g in MANIFEST[name]["graph_ops"]}
    for p in report["partitions"]:
        named = [o for o in p["ops"] if o["graph_op"]]
        assert {o["base"] for o in p["ops"] if not o["graph_op"]} <= {"Input", "Output", None}
        assert named
        expected_missing = []
        for o in named:
            stem = o["qnn_name"].split(":")[0].split("_token_")[0]
            if stem not in graph_ops or graph_ops[stem]["inserted"]:
                # QNN inserted this op (e.g. a layout transpose): no FX node exists; it must be listed.
                expected_missing.append(o["qnn_name"])
                assert o["node"] is None
                continue
            assert o["node"] == stem, o["qnn_name"]
            assert graph_ops[o["node"]]["target"] == o["op_type"]
            assert o["source"] and ".py:" in o["source"]
        assert p["unmatched_ops"] == expected_missing
        assert p["ops_matched_to_graph"] == len(named) - len(expected_missing) > 0


def test_without_etrecord_ops_still_listed_but_unjoined():
    report = plain(qnn.qnn_report(_load("synthetic_qnn_cnn", with_etrecord=False)))
    p = report["partitions"][0]
    assert p["ops"] and all(o["node"] is None for o in p["ops"])
    assert p["backend"] == "QnnBackend"  # told from the event names


def test_summary_and_ops_keep_qnn_units():
    profile = _load("synthetic_qnn_vit_2part")
    rows = op_table(profile)
    qnn_rows = [r for r in rows if r.role == "delegate_internal"]
    units = {r.unit for r in qnn_rows}
    assert units <= {"us", "cycles", "count", "bytes", "unknown"} and "cycles" in units and "us" in units
    for r in qnn_rows:
        assert r.p50_ms is None and r.share is None  # never shown as time of Method::execute
    b = placement.breakdown(profile)
    assert b[0].backend == "QnnBackend" and b[0].calls_per_run == 2
    fb = placement.fallback_ops(profile)
    assert [f.instruction_id for f in fb] == [i["instruction_id"] for i in MANIFEST["synthetic_qnn_vit_2part"]["instructions"]
                                                if i["kind"] == "cpu_op"]


def test_qnn_cli_on_etdump_json():
    m = MANIFEST["synthetic_qnn_llm"]
    r = CliRunner().invoke(main, ["qnn", str(D / m["etdump"]), "--etrecord", str(D / m["etrecord"]), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert len(out["qnn"]["partitions"]) == 2
    p = out["qnn"]["partitions"][0]
    assert p["clock_mhz_est"] and p["clock_is_estimate"] is True
    assert np.isfinite(p["delegate_call_ms"])


@pytest.mark.parametrize("name", ["synthetic_qnn_cnn", "synthetic_qnn_vit_2part", "synthetic_qnn_llm",
                                  "synthetic_qnn_accumulate", "synthetic_qnn_resnet50_device"])
def test_walking_events_in_small_slices_gives_the_same_report(name):
    """Big files are walked in run-aligned slices; slices of a few events must change nothing."""
    profile = _load(name)
    assert len(qnn.run_slices(profile, 7)) > 3

    def analysed(slice_events):
        return json.dumps([qnn.analyse_series(s) for s in qnn.series_from_profile(profile, slice_events)],
                          default=str)

    assert analysed(7) == analysed(qnn.SLICE_EVENTS)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_events_grouped_by_instruction_the_same_by_scans_and_by_sort(name, monkeypatch):
    """A few delegate instructions are grouped by a scan each, many by one sort: same groups."""
    from etscope import profile as P
    from etscope.analysis.qnn import etdump as qe

    profile = _load(name, with_etrecord=False)
    for role in (P.ROLE_DELEGATE_INTERNAL, P.ROLE_DELEGATE_CALL, P.ROLE_OPERATOR_CALL):
        monkeypatch.setattr(qe, "_SCANNED_INSTRUCTIONS", 10 ** 6)
        scanned = qe._group_by_instruction(profile, role)
        monkeypatch.setattr(qe, "_SCANNED_INSTRUCTIONS", 0)
        sorted_ = qe._group_by_instruction(profile, role)
        for a, b in zip(scanned, sorted_):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        idx, ids, starts = scanned
        assert starts[-1] == idx.size and (len(ids) == len(starts) - 1 or idx.size == 0)
        for g, iid in enumerate(ids):          # each group: that instruction's events, in file order
            assert np.array_equal(idx[starts[g]:starts[g + 1]],
                                  np.flatnonzero((profile.events["role"] == role)
                                                 & (profile.events["instruction_id"] == iid)))


@pytest.mark.parametrize("name", sorted(MANIFEST))
@pytest.mark.parametrize("slice_events", [7, 1 << 20])
def test_static_slices_read_from_their_first_run_give_the_same_series(name, slice_events, monkeypatch):
    """Slices whose runs all log the same names in the same order are read from their first run
    (qnn.etdump._period); reading every event gives the same series, and the shortcut is taken."""
    from etscope.analysis.qnn import etdump as qe

    profile = _load(name)
    taken = []
    period = qe._period
    monkeypatch.setattr(qe, "_period", lambda run, code: taken.append(period(run, code)) or taken[-1])
    fast = json.dumps([qnn.analyse_series(s) for s in qe._read_series(profile, slice_events)], default=str)
    monkeypatch.setattr(qe, "_period", lambda run, code: 0)
    slow = json.dumps([qnn.analyse_series(s) for s in qe._read_series(profile, slice_events)], default=str)
    assert fast == slow
    if slice_events > 7 and name != "synthetic_qnn_accumulate":
        assert any(taken)


def test_period_only_for_whole_runs_of_one_sequence():
    from etscope.analysis.qnn.etdump import _period

    run, code = np.repeat(np.arange(3), 4), np.tile(np.array([5, 6, 5, 7]), 3)
    assert _period(run, code) == 4
    assert _period(run[:-1], code[:-1]) == 0                  # a run cut short
    c = code.copy(); c[10] = 6
    assert _period(run, c) == 0                                # one name differs in one run
    assert _period(np.repeat([0, 2, 1], 4), code) == 0         # runs out of order
    assert _period(np.repeat([0, 0, 1], 4), code) == 0         # a run split in two
    assert _period(np.zeros(4, np.int64), code[:4]) == 0       # one run: nothing to repeat


def test_delegate_string_codes_per_instruction_match_a_scan_of_each():
    """qnn_instructions reads each delegate's event names from one keyed pass (_internal_codes):
    the same sorted codes as selecting that instruction's delegate events, on every fixture."""
    from etscope import profile as P
    from etscope.analysis.qnn import etdump as qe
    from etscope.arrays import unique

    checked = 0
    for path in sorted(D.parent.glob("**/*.etdump")):
        try:
            p = load(path)
        except Exception:       # fuzz/upstream files that are meant to be refused
            continue
        for q in (p.method_split.profiles.values() if p.method_split else [p]):
            ev, codes = q.events, qe._internal_codes(q)
            for ins in q.instructions.values():
                if ins.kind == "delegate":
                    sel = (ev["role"] == P.ROLE_DELEGATE_INTERNAL) & (ev["instruction_id"] == ins.id)
                    assert np.array_equal(codes.get(ins.id, np.zeros(0, np.int64)),
                                          unique(ev["delegate_id_str"][sel])), (path.name, ins.id)
                    checked += 1
    assert checked > 100
