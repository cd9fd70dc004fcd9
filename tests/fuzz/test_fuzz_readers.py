"""Every reader on hostile input: it returns a result or raises FormatError, within its time and
memory budget (5 s per MB, 50x the input + 50 MB), never anything else.

Two kinds of input per reader:

* mutated real files (``tests/fixtures/real``, ``tests/fixtures/qnn``): truncation, bit flips,
  aligned offset/length fields overwritten with huge, negative and boundary values, duplicated,
  deleted, inserted and spliced ranges, long repeated patterns; JSON files are also mutated as
  trees, CSV/text files line by line and field by field, ETRecords entry by entry (re-zipped);
* structure-aware inputs built the way their producer writes them (``fuzz_strategies``).

Budgets (examples per test) keep the whole of ``tests/fuzz`` near two minutes in CI; set
``ETSCOPE_FUZZ_LONG=1`` for 25x more with fresh random inputs.
"""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fuzz_harness as H
import fuzz_strategies as S
from fuzz_strategies import contract, fuzz_settings

MUTATION_EXAMPLES = {"etdump": 250, "pte": 250, "qnn_compile_spec": 200, "etrecord": 150, "qhas": 150,
                     "optrace": 80, "qnn_csv": 200, "qnn_text": 200, "qnn_json": 200}


@pytest.mark.parametrize("reader", list(H.READERS))
def test_mutated_real_files(reader):
    r = H.READERS[reader]
    if not r.seeds:
        pytest.skip(f"no seed files for {reader}")
    seeds = [H.seed_bytes(p) for p in r.seeds]

    @fuzz_settings(MUTATION_EXAMPLES[reader])
    @given(st.integers(0, len(seeds) - 1), st.randoms(use_true_random=False))
    def run(i, rng):
        contract(reader, H.mutate(reader, seeds[i], rng))

    run()


# ---- structure-aware inputs -----------------------------------------------------------------------------

@pytest.mark.parametrize("reader, strategy, n", [
    ("qnn_text", S.qnn_text_files(), 120),
    ("qnn_csv", S.qnn_csv_files(), 100),
    ("qnn_json", S.qnn_json_docs(), 100),
    ("qhas", S.qhas_docs(), 60),
    ("optrace", S.optrace_docs(), 100),
    ("etrecord", S.etrecord_zips(), 80),
], ids=["qnn_text", "qnn_csv", "qnn_json", "qhas", "optrace", "etrecord"])
def test_structured_inputs(reader, strategy, n):
    @fuzz_settings(n)
    @given(strategy)
    def run(data):
        contract(reader, data)

    run()


@fuzz_settings(80)
@given(S.etdump_docs(), st.booleans(), st.randoms(use_true_random=False))
def test_built_etdumps_corrupted(doc, prefixed, rng):
    runs, version = doc
    data = H.build_etdump(runs, version=version, size_prefixed=prefixed)
    contract("etdump", data)
    contract("etdump", H.mutate_bytes(data, rng))


# ---- round trip: a well-formed ETDump reads back exactly (the reader's correctness oracle) --------------

def _expected_numel(sizes):
    clipped = [max(0, int(v)) for v in sizes]
    if math.prod(float(v) for v in clipped) >= 2 ** 62:
        return -1
    return math.prod(clipped)


_ELEM_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1, 12: 1, 13: 1, 14: 4, 15: 2,
               22: 1, 23: 1, 24: 1, 25: 1, 26: 1, 27: 1}


def _expected_events(runs):
    rows = []
    for ri, run in enumerate(runs):
        for ev in run["events"]:
            row = dict(run=ri, name=None, delegate_id_str=None, delegate_id_int=-1, instruction_id=-1, chain=0,
                       start=0, end=0, metadata_len=0, allocator_id=-1, allocation_size=0, value_type=-1,
                       tensor_shape=None, tensor_numel=-1, tensor_nbytes=-1)
            if ev[0] == "P":
                _, name, chain, instr, did_int, did_str, meta, start, end = ev
                row.update(kind=0, name=name, delegate_id_str=did_str, chain=chain or 0,
                           instruction_id=-1 if instr is None else instr, delegate_id_int=-1 if did_int is None else did_int,
                           metadata_len=len(meta or b""), start=start or 0, end=end or 0)
            elif ev[0] == "A":
                row.update(kind=1, allocator_id=ev[1], allocation_size=ev[2])
            else:
                _, name, chain, instr, did_int, did_str, value = ev
                row.update(kind=2, name=name, delegate_id_str=did_str, chain=chain or 0,
                           instruction_id=-1 if instr is None else instr, delegate_id_int=-1 if did_int is None else did_int)
                if value is not None:
                    vtype, stype, sizes = value
                    row["value_type"] = 6 if vtype == "list" else vtype
                    if sizes is not None:
                        row["tensor_shape"] = "x".join(str(v) for v in sizes) if sizes else "scalar"
                        numel = _expected_numel(sizes) if sizes else 1
                        row["tensor_numel"] = numel
                        eb = _ELEM_BYTES.get(stype, -1)
                        row["tensor_nbytes"] = numel * eb if eb > 0 and 0 <= numel and numel * eb < 2 ** 63 else -1
            rows.append(row)
    return rows


@fuzz_settings(100)
@given(S.etdump_docs(pumps=False), st.booleans())
def test_built_etdumps_read_back_exactly(doc, prefixed):
    from etscope.formats.etdump import parse_etdump

    runs, version = doc
    data = H.build_etdump(runs, version=version, size_prefixed=prefixed)
    d = parse_etdump(data, "built.etdump")
    assert d.version == version
    assert [r.name for r in d.runs] == [r["name"] or "" for r in runs]
    assert [r.bundled_input_index for r in d.runs] == [-1 if r["bundled"] is None else r["bundled"] for r in runs]
    assert [r.allocators for r in d.runs] == [r["allocators"] for r in runs]
    assert [r.event_count for r in d.runs] == [len(r["events"]) for r in runs]
    expected = _expected_events(runs)
    assert d.event_count == len(expected)
    ev = d.events
    for i, want in enumerate(expected):
        got = {k: ev[k][i].item() for k in want if k in ev}
        for k in ("name", "delegate_id_str", "tensor_shape"):
            got[k] = d.strings[got[k]] if got[k] >= 0 else None
        # debug events' chain_index is a ulong: compare modulo 2**64 (the column may be signed)
        got["chain"] %= 2 ** 64
        want = dict(want, chain=want["chain"] % 2 ** 64)
        assert got == want, f"event {i}"


# ---- about 1 MB per reader: the 5 s / MB budget on real-sized inputs ------------------------------------

def _grow_json_rows(data: bytes, key_path, factor: int) -> bytes:
    import json
    doc = json.loads(data)
    node = doc
    for k in key_path[:-1]:
        node = node[k]
    node[key_path[-1]] = node[key_path[-1]] * factor
    return json.dumps(doc).encode()


def _megabyte_inputs():
    R, Q = H.REAL, H.QNN
    out = {}

    def add(reader, make):
        try:
            out[reader] = make()
        except (OSError, KeyError, ValueError):
            pass

    add("etdump", lambda: (R / "llama.etdump").read_bytes())
    add("pte", lambda: (R / "gen_llama_multimethod.pte").read_bytes())
    add("etrecord", lambda: (R / "gen_llama.etrecord").read_bytes())
    add("qhas", lambda: _grow_json_rows((Q / "chain8_sm8650.qhas.json").read_bytes(),
                                        ("data", "htp_op_instances", "data"), 25))
    add("optrace", lambda: _grow_json_rows((Q / "chain8_sm8650.optrace.json").read_bytes(), ("traceEvents",), 10))
    add("qnn_csv", lambda: (Q / "resnet50_ortqnn.profile.csv").read_bytes() * 20)
    add("qnn_text", lambda: (Q / "chain8_sm8650.profile.txt").read_bytes() * 240)
    add("qnn_json", lambda: _grow_json_rows((Q / "tiny_sm8750.qnn_profile.json").read_bytes(), ("messages",), 250))
    return out


_MB = _megabyte_inputs()


@pytest.mark.parametrize("reader", sorted(_MB))
def test_megabyte_inputs_within_budget(reader):
    data = _MB[reader]
    assert len(data) > 400_000
    rng = random.Random(20260802)
    assert contract(reader, data) == "ok"          # the clean file itself
    for _ in range(4):
        contract(reader, H.mutate(reader, data, rng))

