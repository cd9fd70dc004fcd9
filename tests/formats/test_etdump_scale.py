"""The chunked, vtable-grouped ETDump reader: same events as ExecuTorch's own deserializer, the same
columns whatever the chunk size, bounded-memory details (constant columns, page release, progress)."""
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from etscope.formats import etdump as E

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
GEN = sorted(p.name[: -len(".raw.json.gz")] for p in REAL.glob("gen_*.raw.json.gz"))


@pytest.mark.parametrize("name", GEN)
def test_every_event_as_executorch_decodes_it(name):
    raw = json.load(gzip.open(REAL / f"{name}.raw.json.gz"))
    d = E.read_etdump(REAL / f"{name}.etdump")
    assert [r.name for r in d.runs] == [r["name"] for r in raw["run_data"]]
    ev = d.events
    s = d.strings

    def text(code):
        return s[code] if code >= 0 else None

    i = 0
    for run in raw["run_data"]:
        for e in run["events"]:
            kind = {"P": E.PROFILE, "D": E.DEBUG, "A": E.ALLOCATION}[e[0]]
            assert ev["kind"][i] == kind
            if e[0] in "PD":
                assert (text(ev["name"][i]) or None) == (e[1] or None)
                assert int(ev["chain"][i]) == (e[2] if e[2] < 2 ** 63 else e[2] - 2 ** 64)
                assert ev["instruction_id"][i] == e[3]
                assert ev["delegate_id_int"][i] == e[4]
                assert text(ev["delegate_id_str"][i]) == e[5]
            if e[0] == "P":
                assert int(ev["start"][i]) == e[6] and int(ev["end"][i]) == e[7]
            if e[0] == "D" and e[6] and e[6].get("tensor"):
                sizes = e[6]["tensor"]["sizes"]
                assert text(ev["tensor_shape"][i]) == ("x".join(map(str, sizes)) if sizes else "scalar")
            i += 1
    assert i == d.event_count == raw["num_events"]


def _columns(d):
    return {k: (np.asarray(v), d.strings) for k, v in d.events.items()}


@pytest.mark.parametrize("name", ["llama.etdump", "gen_llama_multimethod.etdump", "cnn.etdump"])
def test_chunk_size_does_not_change_anything(monkeypatch, name):
    ref = E.read_etdump(REAL / name)
    monkeypatch.setattr(E, "CHUNK_EVENTS", 7)
    monkeypatch.setattr(E, "RUN_CHUNK", 3)
    small = E.read_etdump(REAL / name)
    assert [r.__dict__ for r in small.runs] == [r.__dict__ for r in ref.runs]
    for k in E.EVENT_COLUMNS:
        a, b = ref.events[k], small.events[k]
        if k in ("name", "delegate_id_str", "tensor_shape"):
            a = [ref.strings[c] if c >= 0 else None for c in a]
            b = [small.strings[c] if c >= 0 else None for c in b]
            assert a == b, k
        else:
            np.testing.assert_array_equal(a, b, err_msg=k)


def test_columns_a_file_does_not_use_cost_no_memory():
    d = E.read_etdump(REAL / "llama_nodebug.etdump")   # no debug or allocation events
    for k in ("allocation_size", "allocator_id", "tensor_shape", "tensor_numel", "tensor_nbytes", "value_type",
              "metadata_len"):
        col = d.events[k]
        assert col.shape == (d.event_count,) and col.strides == (0,) and not col.flags.writeable
        assert (col == E.FILL[k]).all()
    # The chain column holds -1 and 0 only: one byte per event; comparisons work as before.
    assert d.events["chain"].itemsize == 1 and set(np.unique(d.events["chain"]).tolist()) == {-1, 0}


def test_progress_and_page_release():
    data = (REAL / "llama.etdump").read_bytes()
    calls, released = [], []
    E.CHUNK_EVENTS, old = 1000, E.CHUNK_EVENTS
    try:
        d = E.parse_etdump(data, progress=lambda a, b: calls.append((a, b)),
                           release=lambda lo, hi: released.append((lo, hi)))
    finally:
        E.CHUNK_EVENTS = old
    assert calls[0] == (0, d.event_count) and calls[-1] == (d.event_count, d.event_count)
    assert [a for a, _ in calls] == sorted(a for a, _ in calls)
    assert released and all(0 <= lo < hi <= len(data) + 64 for lo, hi in released)


def test_replicated_big_file_reads_back(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from replicate_etdump import replicate

    src = REAL / "llama_nodebug.etdump"
    out = tmp_path / "big.etdump"
    info = replicate(str(src), 30_000, str(out))
    a, b = E.read_etdump(src), E.read_etdump(out)
    assert b.event_count == info["events"] >= 30_000
    n_exec = sum(1 for r in a.runs if r.name == "Execute")
    assert len(b.runs) == 1 + info["copies"] * n_exec
    # Each copy of a run has the source run's events, shifted in time by whole copies.
    k = a.runs[1].event_count
    for copy in (0, info["copies"] - 1):
        r = b.runs[1 + copy * n_exec]
        sl_a = slice(a.runs[1].first_event, a.runs[1].first_event + k)
        sl_b = slice(r.first_event, r.first_event + k)
        names_a = [a.strings[c] for c in a.events["name"][sl_a]]
        names_b = [b.strings[c] for c in b.events["name"][sl_b]]
        assert names_a == names_b
        np.testing.assert_array_equal(a.events["end"][sl_a] - a.events["start"][sl_a],
                                      b.events["end"][sl_b] - b.events["start"][sl_b])
