"""QNN events accumulating across executes (execute k logging the events of executes 1..k) are
de-duplicated once, when the ETDump becomes a Profile, so every command sees each execute's
events once. Fixtures: synthetic_qnn_accumulate and synthetic_qnn_vit_2part_accumulate, the
accumulating twins of synthetic_qnn_cnn and synthetic_qnn_vit_2part (same values and timestamps,
tools/synth_qnn_etdump.py)."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope import api
from etscope.analysis import qnn
from etscope.analysis.diff.compare import compare
from etscope.analysis.ops.per_op import op_table
from etscope.cli import main
from etscope.formats.etdump import read_etdump
from etscope.profile import build, load
from etscope.analysis.views import tables as export
from qnn_typed import plain as as_json

D = Path(__file__).parents[1] / "fixtures" / "qnn_etdump"
MANIFEST = json.loads((D / "manifest.json").read_text())["fixtures"]
TWINS = [("synthetic_qnn_cnn", "synthetic_qnn_accumulate"),
         ("synthetic_qnn_vit_2part", "synthetic_qnn_vit_2part_accumulate")]


def _paths(name):
    m = MANIFEST[name]
    return D / m["etdump"], D / m["etrecord"]


def _load(name):
    etdump, etrecord = _paths(name)
    return load(etdump, etrecord=etrecord)


@pytest.fixture(scope="module", params=TWINS, ids=[t[1] for t in TWINS])
def twins(request):
    plain, acc = request.param
    return _load(plain), _load(acc), acc


def test_twins_are_what_the_manifest_says():
    for plain, acc in TWINS:
        assert not MANIFEST[plain]["accumulate"] and MANIFEST[acc]["accumulate"]
        copies = [c["copies_logged"] for r in MANIFEST[acc]["runs"] for c in r["calls"] if c["kind"] == "delegate"]
        assert max(copies) > 1


def test_events_become_those_of_the_plain_twin(twins):
    plain, acc, name = twins
    assert plain.accumulation is None
    # Removed: every logged event beyond the execute's own block, per delegate instruction.
    expected: dict[int, int] = {}
    for run in MANIFEST[name]["runs"]:
        for c in run["calls"]:
            if c["kind"] == "delegate":
                own = c["events_logged"] // c["copies_logged"]
                expected[c["instruction_id"]] = expected.get(c["instruction_id"], 0) + c["events_logged"] - own
    assert acc.accumulation.events_removed == expected
    assert acc.accumulation.file_events == sum(r["n_events"] for r in MANIFEST[name]["runs"]) + \
        (acc.etdump.event_count - sum(int(c) for c in acc.runs["event_count"]))
    for k, v in plain.events.items():
        assert np.array_equal(np.asarray(acc.events[k]), np.asarray(v)), k
    for k, v in plain.runs.items():
        assert np.array_equal(np.asarray(acc.runs[k]), np.asarray(v), equal_nan=True), k
    assert [r.event_count for r in acc.etdump.runs] == [r.event_count for r in plain.etdump.runs]
    assert any("accumulate across executes" in w for w in acc.warnings)


def test_ops_agree(twins):
    plain, acc, _ = twins
    assert op_table(acc) == op_table(plain)
    assert all(r.calls_per_run == 1 for r in op_table(acc))


def test_diff_against_the_twin_finds_no_change(twins):
    plain, acc, _ = twins
    d = compare([plain], [acc])
    changed = [o for o in d.ops if o.status != "same"]
    assert changed == []
    assert d.placement_changes == ()


def test_export_and_sql_agree(twins):
    plain, acc, _ = twins
    ta, tp = export.tables(acc, qnn=api.qnn(acc)), export.tables(plain, qnn=api.qnn(plain))
    for name in ("ops", "runs"):
        assert ta[name].to_pylist() == tp[name].to_pylist(), name
    ea, ep = ta["events"].to_pylist(), tp["events"].to_pylist()
    assert len(ea) == len(ep)
    # Same rows; only the index in the file differs (the accumulating file holds the older copies).
    assert [{k: v for k, v in r.items() if k != "event"} for r in ea] == \
           [{k: v for k, v in r.items() if k != "event"} for r in ep]
    events = np.array([r["event"] for r in ea])
    assert (np.diff(events) > 0).all() and events[-1] < acc.accumulation.file_events
    q = "select role, unit, count(*) n, sum(value) v from events group by 1, 2 order by 1, 2"
    assert api.sql(acc, q).to_dict("records") == api.sql(plain, q).to_dict("records")


def test_qnn_still_says_it_accumulated(twins):
    plain, acc, _ = twins
    ra, rp = as_json(qnn.qnn_report(acc)), as_json(qnn.qnn_report(plain))
    for a, p in zip(ra["partitions"], rp["partitions"]):
        assert a["accumulating"] and not p["accumulating"]
        assert a["per_run"] == p["per_run"] and a["ops"] == p["ops"]
        assert any("accumulate" in c["check"] for c in a["checks"])
        assert any("older copies were removed" in n for n in a["notes"])


def test_every_command_warns(tmp_path):
    etdump, etrecord = _paths("synthetic_qnn_accumulate")
    r = CliRunner()
    for args in (["ops", str(etdump)], ["sql", str(etdump), "select count(*) from events"],
                 ["export", str(etdump), "-o", str(tmp_path / "x")],
                 ["diff", str(_paths("synthetic_qnn_cnn")[0]), str(etdump)]):
        res = r.invoke(main, args)
        assert res.exit_code == 0, (args, res.output)
        assert "older copies" in res.stderr and "accumulate" in res.stderr, args
    text = r.invoke(main, ["summary", str(etdump)], terminal_width=400).stdout
    assert "510 older copies of 777 events removed, each run keeps its own" in " ".join(text.split())
    res = r.invoke(main, ["summary", str(etdump), "--json"])
    facts = json.loads(res.stdout)["etdump"]
    assert facts["events"] == 777 and facts["events_analysed"] == 267
    assert facts["accumulated_copies_removed"] == 510
    assert any("accumulate" in w for w in json.loads(res.stdout)["warnings"])


def test_older_copies_that_differ_are_not_removed():
    """Events growing 1x, 2x, 3x… per run whose older copies do not repeat the earlier runs'
    values (e.g. a loop running longer each run) are not accumulation: nothing is removed."""
    data = read_etdump(_paths("synthetic_qnn_accumulate")[0])
    untouched = build(data)
    assert untouched.accumulation is not None
    ev = data.events
    # The first event of the second Execute run is run 1's copy of execute 1's first event.
    second = data.runs[2].first_event
    ev["end"] = ev["end"].copy()
    ev["end"][second] += 1
    p = build(data)
    assert p.accumulation is None
    assert p.etdump.event_count == 777
    assert any("not de-duplicated" in w for w in p.warnings)


def test_non_accumulating_files_are_untouched():
    for name in ("synthetic_qnn_cnn", "synthetic_qnn_llm", "synthetic_qnn_resnet50_device"):
        p = _load(name)
        assert p.accumulation is None and "file_event" not in p.events
        assert p.etdump.event_count == sum(r["n_events"] for r in MANIFEST[name]["runs"]) + \
            p.etdump.runs[0].event_count


def test_runs_that_logged_the_same_events_skip_the_accumulation_test(monkeypatch):
    """Identical runs (profile.repeats) cannot hold events that grow run by run: the test is
    skipped for them, and running it anyway finds nothing, on every fixture; accumulating files
    are never taken as identical."""
    from etscope.profile import accumulation, repeats

    paths = sorted((D.parent / "real").glob("*.etdump")) + sorted(D.glob("*.etdump"))
    skipped = 0
    for path in paths:
        fast = load(path)
        with monkeypatch.context() as m:
            m.setattr(accumulation, "identical_runs", lambda p: None)
            full = load(path)
        for a, b in zip(*((p.method_split.profiles.values() if p.method_split else [p]) for p in (fast, full))):
            assert (a.accumulation is None) == (b.accumulation is None), path.name
            assert a.n_events == b.n_events
            skipped += repeats.identical_runs(a) is not None
    assert skipped > 5
    for _, acc in TWINS:
        raw = build(read_etdump(_paths(acc)[0]))
        assert raw.accumulation is not None
