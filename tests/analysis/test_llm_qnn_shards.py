"""QNN LLMs as they ship (issue 16 item 3): per method (prefill_forward / kv_forward) and per QNN
shard, DELEGATE_CALL, accelerator time, HTP cycles and the FastRPC / QNN overhead per run; tokens
per run from the user (--prompt-tokens) or the program (get_ar_len).

Fixture: ``tests/fixtures/qnn_hybrid/synthetic_qnn_4shard`` (tools/synth_qnn_shards.py: 4 QNN
shards per method, CPU ops between, SM8650 device overheads); its truth file holds what was written."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.render.json import to_jsonable
from etscope.analysis.llm import llm_report as _llm_report
from etscope.formats.etdump import read_etdump
from etscope.profile import load

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "qnn_hybrid"
ETDUMP = FIX / "synthetic_qnn_4shard.etdump"
ETRECORD = FIX / "synthetic_qnn_4shard.etrecord"
TRUTH = json.loads((FIX / "synthetic_qnn_4shard.truth.json").read_text())["runs"]
SHARD_IDS = [0, 2, 4, 6]
DATA = SHARED
needs_data = pytest.mark.skipif(not (DATA / "qnn-htp-emulator").exists() or not (DATA / "qnn-device").exists(),
                                reason="shared QNN data not present")


def _plain_report(*args, **kw) -> dict:
    """The result as ``llm --json`` writes it: these tests read the schema."""
    return to_jsonable(_llm_report(*args, **kw))


def _report(path=ETDUMP, **kw):
    return _plain_report([load(str(path), etrecord=str(ETRECORD))], all_methods=True, **kw)


def _phases(r):
    return {p["name"]: p for p in r["llm"]["phases"]}


def test_runs_are_assigned_to_their_method():
    """The 4 shards' per-call overhead (~2.35 ms each on the device) keeps the prefill/decode latency
    ratio under 2 (20.3 / 11.0 ms) while the HTP cycles differ 9x: the phases are still named."""
    r = _report()
    ph = _phases(r)
    assert set(ph) == {"prefill", "decode"}
    for name in ("prefill", "decode"):
        assert ph[name]["runs"] == [t["run"] for t in TRUTH if t["phase"] == name]
    assert r["llm"]["series"]["method"] == [t["method"] for t in TRUTH]
    assert ph["prefill"]["method"] == "prefill_forward" and ph["decode"]["method"] == "kv_forward"


def test_shard_numbers_match_what_was_written():
    ph = _phases(_report())
    for name, row in ph.items():
        assert not row["warmup_runs"]
        truth = [t for t in TRUTH if t["phase"] == name]
        assert [s["instruction_id"] for s in row["qnn"]["shards"]] == SHARD_IDS
        # The accelerator is 'Accelerator (execute) time', as etscope qnn calls it (one name, one level).
        assert row["qnn"]["accel_basis"] == "Accelerator (execute) time"
        for k, shard in enumerate(row["qnn"]["shards"]):
            call_ms = np.array([t["shards"][k]["delegate_call_ns"] for t in truth]) / 1e6
            accel_ms = np.array([t["shards"][k]["Accelerator (execute) time"] for t in truth]) / 1e3
            cycles = np.array([t["shards"][k]["Accelerator (execute) time (cycles)"] for t in truth], dtype=float)
            assert shard["runs_called"] == len(truth)
            assert shard["delegate_call_ms"]["mean"] == pytest.approx(call_ms.mean(), rel=1e-12)
            assert shard["delegate_call_ms"]["p50"] == pytest.approx(np.median(call_ms), rel=1e-12)
            assert shard["accel_ms"]["mean"] == pytest.approx(accel_ms.mean(), rel=1e-12)
            assert shard["accel_cycles"]["mean"] == pytest.approx(cycles.mean(), rel=1e-12)
            assert shard["overhead_ms"]["p50"] == pytest.approx(np.median(call_ms - accel_ms), rel=1e-12)


def test_shards_add_up_to_the_per_run_totals():
    """Invariant: the shards' per-run means add up to the totals' mean, the totals equal the phase
    breakdown's QnnBackend delegate time, and per run they equal the sum of that run's
    DELEGATE_CALL events (numpy on the event columns)."""
    p = load(str(ETDUMP), etrecord=str(ETRECORD))
    r = _plain_report([p], all_methods=True)
    ev = p.events
    is_call = ev["name"] == p.strings.index("DELEGATE_CALL")
    per_run_ms = np.bincount(ev["execute"][is_call & (ev["execute"] >= 0)],
                             weights=(_raw_end(p, ETDUMP) - ev["start"])[is_call & (ev["execute"] >= 0)].astype(float),
                             minlength=p.n_runs) / 1e6
    for row in r["llm"]["phases"]:
        q = row["qnn"]
        for k in ("delegate_call_ms", "accel_ms", "accel_cycles", "overhead_ms"):
            assert sum(s[k]["mean"] for s in q["shards"]) == pytest.approx(q["totals"][k]["mean"], rel=1e-12)
        assert sum(s["share"] for s in q["shards"]) == pytest.approx(1.0, rel=1e-12)
        qnn_bd = next(b for b in row["breakdown"] if b.get("backend") == "QnnBackend")
        assert q["totals"]["delegate_call_ms"]["mean"] == pytest.approx(qnn_bd["mean_ms"], rel=1e-12)
        runs = np.array(row["runs"])
        assert q["totals"]["delegate_call_ms"]["mean"] == pytest.approx(per_run_ms[runs].mean(), rel=1e-12)
        assert q["totals"]["delegate_call_ms"]["p50"] == pytest.approx(np.median(per_run_ms[runs]), rel=1e-12)
        assert q["totals"]["overhead_ms"]["mean"] == pytest.approx(
            q["totals"]["delegate_call_ms"]["mean"] - q["totals"]["accel_ms"]["mean"], rel=1e-9)


def test_overhead_finding_only_where_it_dominates():
    r = _report()
    ph = _phases(r)
    lines = [f for f in r["findings"] if "FastRPC / QNN overhead" in f]
    # Overhead = DELEGATE_CALL minus Accelerator (execute) time: 90% of decode, 51% of prefill here.
    over = {n: row["qnn"]["totals"]["overhead_share"] for n, row in ph.items()}
    assert over["decode"] > over["prefill"]
    want = sorted(f"{n} (" for n, share in over.items() if share > 0.5)
    assert sorted(x.split("(")[0] + "(" for x in lines) == want and want


def _decode_p50_ns_from_events(path, decode_runs) -> float:
    """Method::execute of the decode runs, straight from the event columns (numpy)."""
    p = load(str(path))
    ev = p.events
    sel = (ev["name"] == p.strings.index("Method::execute")) & (ev["execute"] >= 0)
    dur = np.zeros(p.n_runs)
    dur[ev["execute"][sel]] = (_raw_end(p, path)[sel] - ev["start"][sel]).astype(float)
    return float(np.median(dur[np.asarray(decode_runs)]))


def _raw_end(p, path) -> np.ndarray:
    """The file's end_time of each of the profile's events, as the reader gives it (the profile
    keeps none when its values give it back)."""
    raw = read_etdump(str(path)).events["end"]
    return raw[p.events["file_event"]] if "file_event" in p.events else raw


def test_tokens_per_second_from_prompt_tokens_and_the_program():
    decode_runs = [t["run"] for t in TRUTH if t["phase"] == "decode"]
    p50_ns = _decode_p50_ns_from_events(ETDUMP, decode_runs)
    plain = _report()
    # Nothing gives the tokens per run: rates per run (runs/s), no tokens/s, no cycles per token.
    assert _phases(plain)["decode"]["tokens_per_run"] is None and "tokens_from" not in _phases(plain)["decode"]
    assert _phases(plain)["prefill"]["tokens_per_run"] is None
    assert plain["llm"]["decode_tokens_per_s"] is None
    assert plain["llm"]["decode_runs_per_s"] == pytest.approx(1e9 / p50_ns, rel=1e-12)
    assert _phases(plain)["decode"]["qnn"]["totals"]["cycles_per_token"] is None
    assert plain["llm"]["tokens_unknown"]["phases"] == ["prefill", "decode"]
    r = _report(prompt_tokens=32, program_constants={"get_ar_len": [1], "get_max_seq_len": [128]})
    ph = _phases(r)
    assert ph["prefill"]["tokens_per_run"] == 32 and ph["prefill"]["tokens_from"] == "--prompt-tokens"
    assert ph["decode"]["tokens_from"] == "the program's get_ar_len = 1"
    pre = ph["prefill"]["qnn"]["totals"]
    assert pre["cycles_per_token"] == pytest.approx(pre["accel_cycles"]["mean"] / 32, rel=1e-12)
    assert ph["prefill"]["ms_per_token"] == pytest.approx(ph["prefill"]["latency_ms"]["p50"] / 32, rel=1e-12)


@needs_data
@pytest.mark.parametrize("ar_len", [2, 4])
def test_decode_processing_ar_len_tokens_per_run(tmp_path, ar_len):
    """A static LLM whose decode method takes ar_len tokens per run: tokens/s = ar_len / decode p50,
    the p50 taken here from the events directly."""
    sys.path.insert(0, str(ROOT / "tools"))
    import synth_qnn_shards

    fx = synth_qnn_shards.build(schedule=(4, 6), seed=10 + ar_len, decode_ar_len=ar_len, data_root=SHARED)
    path = tmp_path / "x.etdump"
    path.write_bytes(fx["etdump"])
    r = _plain_report([load(str(path))], all_methods=True, program_constants={"get_ar_len": [ar_len]})
    decode_runs = [t["run"] for t in fx["truth"] if t["phase"] == "decode"]
    ph = _phases(r)
    assert ph["decode"]["runs"] == decode_runs and not ph["decode"]["warmup_runs"]
    assert ph["decode"]["tokens_per_run"] == ar_len
    p50_ns = _decode_p50_ns_from_events(path, decode_runs)
    assert r["llm"]["decode_tokens_per_s"] == pytest.approx(ar_len * 1e9 / p50_ns, rel=1e-12)
    assert any(f"{ar_len} token(s) per run from the program's get_ar_len = {ar_len}" in f for f in r["findings"])


@pytest.mark.parametrize("constants", [{}, {"get_ar_len": [0]}, {"get_ar_len": ["4"]}, {"get_ar_len": [True]},
                                       {"get_ar_len": [1, 2]}, {"get_ar_len": "<tensor>"}])
def test_unusable_ar_len_is_not_used(constants):
    ph = _phases(_report(program_constants=constants))
    assert ph["decode"]["tokens_per_run"] is None and "tokens_from" not in ph["decode"]
