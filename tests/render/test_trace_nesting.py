"""Issue 35 item 6: Perfetto. QNN's levels are nested slices per partition (DELEGATE_CALL ⊇ QNN
execute ⊇ RPC ⊇ QNN accelerator ⊇ Accelerator ⊇ excluding wait ⊇ the per-op rows), within each
track slices nest or are disjoint (checked in whole ns, as Perfetto reads µs: no partial overlap
from rounding), and the optrace's unit tracks use one clock rule in both traces (with an ETDump,
and QNN files alone), stated in the trace's metadata."""
import json

import pytest
from click.testing import CliRunner

from etscope.cli import main
from views_helpers import QNN_FILES, qnn_fixture

FILES = ["--qhas", str(QNN_FILES / "chain8_sm8650.qhas.json"), "--optrace", str(QNN_FILES / "chain8_sm8650.optrace.json"),
         "--runtrace", str(QNN_FILES / "chain8_sm8650.runtrace.json")]
MODES = {"etdump": [str(qnn_fixture("synthetic_qnn_chain8_device")), *FILES],
         "files alone": ["--qnn-csv", str(QNN_FILES / "chain8_sm8650.profile.txt"), *FILES],
         "vit 2 partitions": [str(qnn_fixture("synthetic_qnn_vit_2part"))],
         "resnet50": [str(qnn_fixture("synthetic_qnn_resnet50_device"))]}
LEVELS = ["DELEGATE_CALL", "QNN (execute) time", "RPC (execute) time", "QNN accelerator (execute) time",
          "Accelerator (execute) time", "Accelerator (execute excluding wait) time"]


def _trace(tmp_path, args) -> dict:
    out = tmp_path / "t.json"
    res = CliRunner().invoke(main, ["trace", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def _ns(e) -> tuple[int, int]:
    s = round(e["ts"] * 1000)
    return s, s + round(e["dur"] * 1000)


@pytest.mark.parametrize("mode", MODES)
def test_slices_nest_or_are_disjoint_in_whole_ns(tmp_path, mode):
    t = _trace(tmp_path, MODES[mode])
    by_track: dict = {}
    for e in t["traceEvents"]:
        if e.get("ph") == "X":
            by_track.setdefault((e["pid"], e["tid"]), []).append((*_ns(e), e["name"]))
    bad = []
    for key, evs in by_track.items():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack: list[int] = []
        for s, end, name in evs:
            while stack and s >= stack[-1]:
                stack.pop()
            if stack and end > stack[-1]:
                bad.append((key, name, s, end, stack[-1]))
            stack.append(end)
    assert not bad, bad[:5]
    assert "clock_rule" in t["otherData"]


def test_qnn_levels_are_nested_slices_in_each_delegate_call(tmp_path):
    t = _trace(tmp_path, MODES["etdump"])
    part = [e for e in t["traceEvents"] if e.get("ph") == "X" and e["tid"] >= 100 and e["pid"] == 1]
    for run in {e["args"]["run"] for e in part}:
        mine = sorted((e for e in part if e["args"].get("run") == run), key=lambda e: (_ns(e)[0], -_ns(e)[1]))
        chain = [e for e in mine if e["cat"] in ("delegate_call", "qnn_level")]
        assert [e["name"].split(" #")[0] for e in chain] == LEVELS
        for outer, inner in zip(chain, chain[1:]):
            assert _ns(outer)[0] <= _ns(inner)[0] and _ns(inner)[1] <= _ns(outer)[1]
        for e in chain[1:]:
            assert e["dur"] * 1000 == pytest.approx(min(e["args"]["measured_us"] * 1000, e["dur"] * 1000), abs=1)
        ops = [e for e in mine if e["cat"] == "qnn_op_estimated"]
        inner = _ns(chain[-1])
        assert ops and all(inner[0] <= _ns(o)[0] and _ns(o)[1] <= inner[1] for o in ops)


def test_the_optrace_clock_is_the_same_in_both_traces(tmp_path):
    clocks = {}
    for mode in ("etdump", "files alone"):
        t = _trace(tmp_path, MODES[mode])
        units = [e for e in t["traceEvents"] if e.get("ph") == "X" and e["cat"].startswith("htp_")]
        clocks[mode] = {e["args"]["clock_mhz"] for e in units}
        assert len(units) == 45
    assert clocks["etdump"] == clocks["files alone"] and len(clocks["etdump"]) == 1
    assert clocks["etdump"] == {806.4}        # the runtrace's first Graph Execute: the optrace's inference
