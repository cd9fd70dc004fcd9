"""QNN runtrace reader (RUN_TRACE JSON): the measured HTP clock, on the real SM8650 files."""
import json
import random
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats import runtrace
from etscope.formats.runtrace import parse_runtrace, read_runtrace
from tests.conftest import shared_or_skip

Q = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


def test_chain8_graph_execute_clock():
    rt = read_runtrace(Q / "chain8_sm8650.runtrace.json")
    assert rt.version == (1, 1, 0) and rt.graphs == ["model_encoded"] and not rt.warnings
    assert len(rt) == 12 and list(rt.name[:4]) == ["QNN DSP Execute", "VTCM Acquire", "Resource Power On",
                                                   "Graph Execute"]
    assert rt.graph_execute_mhz().tolist() == pytest.approx([806.365, 1868.14, 1894.34])
    # independent check: cycles ÷ summary_time_us, and time = ticks ÷ 19.2 MHz
    ge = rt.name == "Graph Execute"
    assert (rt.cycles[ge] / rt.time_us[ge]).tolist() == pytest.approx(rt.mhz[ge].tolist(), rel=1e-5)
    assert (rt.ticks / rt.time_us).tolist() == pytest.approx([19.2] * 12, rel=1e-4)
    assert rt.cycles[ge].tolist() == [69591, 41352, 29599]


def test_shared_runtraces_match_fixtures():
    for name in ("chain8_sm8650", "indep8_native_sm8650"):
        p = shared_or_skip(f"qnn-device/{name}.runtrace.json")
        assert p.read_bytes() == (Q / f"{name}.runtrace.json").read_bytes()
    rt = read_runtrace(Q / "indep8_native_sm8650.runtrace.json")
    assert rt.graph_execute_mhz().tolist() == pytest.approx([1938.73, 1892.83, 1893.4])


def _doc():
    return json.loads((Q / "chain8_sm8650.runtrace.json").read_text())


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["header"].update(artifact_type="OP_TRACE"), "not a QNN runtrace"),
    (lambda d: d.pop("traceEvents"), "no 'traceEvents'"),
    (lambda d: d["traceEvents"].__setitem__(0, 5), "expected an object"),
    (lambda d: d["traceEvents"][3]["args"].update(stat_end_cycles=1), "before stat_start_cycles"),
    (lambda d: d["traceEvents"][3]["args"].update(summary_htp_frequency_ghz=1e9), "not an HTP clock"),
    (lambda d: d["traceEvents"][3]["args"].update(summary_time_us=-3), "non-negative"),
    (lambda d: d["traceEvents"][3]["args"].update(stat_start_ticks="7"), "expected a number"),
    (lambda d: d["traceEvents"][3]["args"].update(summary_htp_frequency_ghz=True), "expected a number"),
    (lambda d: d["traceEvents"][3].update(name=None), "name"),
])
def test_bad_values_are_format_errors(mutate, words):
    d = _doc()
    mutate(d)
    with pytest.raises(FormatError, match=words):
        parse_runtrace(json.dumps(d), "x.json")


def test_inconsistent_frequency_warns_and_missing_header():
    d = _doc()
    d["traceEvents"][3]["args"]["summary_htp_frequency_ghz"] = 1.0
    del d["header"]
    rt = parse_runtrace(json.dumps(d))
    assert any("differs" in w for w in rt.warnings) and any("artifact_type" in w for w in rt.warnings)
    assert rt.graph_execute_mhz()[0] == 1000.0


def test_fuzzed_bytes_only_format_error():
    data = (Q / "chain8_sm8650.runtrace.json").read_bytes()
    rng = random.Random(7)
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            rt = parse_runtrace(bytes(b))
        except FormatError:
            continue
        assert np.all((rt.mhz[~np.isnan(rt.mhz)] > 0) & (rt.mhz[~np.isnan(rt.mhz)] < 10_000))


def test_sniff_and_size_cap(tmp_path):
    assert runtrace.sniff((Q / "chain8_sm8650.runtrace.json").read_bytes()[:4096])
    assert not runtrace.sniff((Q / "chain8_sm8650.optrace.json").read_bytes()[:4096])
    with pytest.raises(FormatError, match="limit"):
        read_runtrace(Q / "chain8_sm8650.runtrace.json", max_bytes=100)
    with pytest.raises(FormatError):
        read_runtrace(tmp_path / "missing.json")
