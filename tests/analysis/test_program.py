"""`etscope program`: what a .pte holds, checked on the real QNN LLM program and the XNNPACK fixtures."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from etscope.analysis.ops.program import DelegateView, MethodView, QnnSpecView, program_checks, program_report
from etscope.formats.pte import read_pte
from etscope.formats.qnn_compile_spec import decode_qnn_compile_spec
from etscope.render.json import dumps
from etscope.render.program_text import WIDTH, program_lines

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STORIES = SHARED / "qnn-device/stories260k_hybrid_llama_qnn.pte"
REAL_PTES = sorted((ROOT / "fixtures" / "real").glob("*.pte"))
QNN_PTE = ROOT / "fixtures" / "qnn_pte"

needs_stories = pytest.mark.skipif(not STORIES.exists(), reason="shared QNN device data not present")


@needs_stories
def test_stories260k_methods_shared_segment_and_spec():
    r = program_report(read_pte(STORIES))
    by_name = {m.name: m for m in r.methods}
    live = [m.name for m in r.methods if not m.constant]
    assert sorted(live) == ["kv_forward", "prefill_forward"]
    assert by_name["get_ar_len"].constant and by_name["get_max_seq_len"].constant
    for name in live:
        m = by_name[name]
        assert m.instructions == 1 and m.mix == {"delegate": 1}
        (d,) = m.delegates
        assert d.backend == "QnnBackend" and d.instructions == (0,)
        assert d.location == "segment" and d.blob_bytes == 1_331_456
        other = "kv_forward #0" if name == "prefill_forward" else "prefill_forward #0"
        assert d.shared_with == (other,)
        q = d.qnn
        assert (q.soc_model, q.htp_arch, q.vtcm_mb) == ("SM8650", "V75", 8)
        assert (q.performance_mode, q.precision, q.profile_level) == ("burst", "quantized", "off")
        assert q.shared_buffer is False and q.weight_sharing is False
        assert q.graph_names is None   # the v1.1+ layout has no graph name field
    # the one segment both delegates use is listed with both users
    seg = r.segments[by_name["kv_forward"].delegates[0].data_index]
    assert set(seg.used_by) == {"kv_forward #0", "prefill_forward #0"}
    warnings = [c.text for c in r.checks if c.severity == "warning"]
    assert len(warnings) == 1 and "no QNN events" in warnings[0] and "profile_level=2" in warnings[0]
    assert "kv_forward #0" in warnings[0] and "prefill_forward #0" in warnings[0]


@needs_stories
def test_stories260k_text_names_everything_within_80_columns():
    lines = program_lines(program_report(read_pte(STORIES)))
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    text = " ".join(" ".join(lines).split())
    for needle in ("prefill_forward", "kv_forward", "SHARED", "SM8650", "HTP V75", "8 MB VTCM", "burst",
                   "quantized", "profile level off", "warning:", "no QNN events", "(identical)"):
        assert needle in text, needle


@needs_stories
def test_stories260k_json_schema():
    j = json.loads(dumps(program_report(read_pte(STORIES)).to_json()))
    assert j["schema"] == "etscope.program/1"
    kv = next(m for m in j["methods"] if m["name"] == "kv_forward")
    d = kv["delegates"][0]
    assert d["shared"] is True and d["qnn"]["vtcm_bytes"] == 8 << 20 and d["qnn"]["profile_level"] == "off"


@pytest.mark.parametrize("path", REAL_PTES, ids=lambda p: p.name)
def test_xnnpack_fixtures_invariants(path):
    program = read_pte(path)
    r = program_report(program)
    for m, pm in zip(r.methods, program.methods):
        assert sum(m.mix.values()) == m.instructions == len(pm.instructions)
        assert m.mix.get("delegate", 0) == sum(len(d.instructions) for d in m.delegates)
        assert sum(m.operators.values()) == m.mix.get("kernel", 0)
        assert m.planned_bytes == sum(pm.non_const_buffer_sizes[1:])
        for d in m.delegates:
            assert d.backend == "XnnpackBackend" and d.qnn is None
            if d.location == "segment":
                assert d.blob_bytes == program.segments[d.data_index].size
    # every delegate is listed among the users of its segment, and a segment with several
    # delegate users marks each as shared with the others
    for s in r.segments:
        users = [u for u in s.used_by if "#" in u]
        for d in r.delegates:
            if d.location == "segment" and d.data_index == s.index:
                assert d.label in users
                assert set(d.shared_with) == set(users) - {d.label}
    assert not r.checks   # no QNN delegate: nothing to check
    lines = program_lines(r)
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    json.loads(dumps(r.to_json()))


def test_xnnpack_blob_shared_between_methods():
    """gen_llama_mixed.pte: exir de-duplicated one identical XNNPACK partition of decode and prefill."""
    r = program_report(read_pte(ROOT / "fixtures" / "real" / "gen_llama_mixed.pte"))
    shared = [d for d in r.delegates if d.shared_with]
    assert sorted(d.label for d in shared) == ["decode #13", "prefill #7"]
    assert shared[0].data_index == shared[1].data_index


def _method_with(spec_file: str) -> MethodView:
    spec = decode_qnn_compile_spec((QNN_PTE / spec_file).read_bytes())
    d = DelegateView(method="forward", index=0, instructions=(0,), backend="QnnBackend", location="segment",
                     data_index=1, blob_bytes=10, blob_offset=0, shared_with=(),
                     compile_spec_keys=("qnn_compile_spec",), qnn=QnnSpecView.of(spec), qnn_spec_error=None)
    return MethodView(name="forward", instructions=1, mix={"delegate": 1}, operators={}, delegates=(d,),
                      planned_bytes=0, planned_buffers=(), inputs=1, outputs=1)


@pytest.mark.parametrize("spec_file, severity, needles", [
    ("synthetic_compile_spec_sm8450_basic.bin", "warning", ("basic", "no per-op rows", "profile_level=2")),
    ("synthetic_compile_spec_sm8650_detailed.bin", "info", ("detailed", "per-op cycles", "profile_level=3")),
    ("synthetic_compile_spec_sm8750_optrace.bin", "info", ("optrace", "generate_optrace", "QHAS", "--qhas")),
    ("synthetic_compile_spec_sm8650_gpu_off.bin", "warning", ("off", "no QNN events")),
])
def test_profile_level_checks(spec_file, severity, needles):
    checks = [c for c in program_checks([_method_with(spec_file)]) if "profile level" in c.text]
    (c,) = checks
    assert c.severity == severity
    for n in needles:
        assert n in c.text, n


def test_legacy_spec_graph_names_shown():
    m = _method_with("synthetic_compile_spec_legacy_v0_6_sm8550_optrace.bin")
    q = m.delegates[0].qnn
    assert q.graph_names == ("forward",) and q.multiple_graphs is True


# Expected values: executorch 1.5.1's own reader (/work/venv-oracle,
# exir._serialize._program.deserialize_pte_binary, each constant plan's values[outputs[i]].val).
STORIES_CONSTANTS = {
    "get_ar_len": [1], "get_max_seq_len": [128], "get_max_context_len": [128], "get_vocab_size": [512],
    "get_n_layers": [5], "get_use_kv_cache": [True], "get_kv_io_bit_width": [8],
    "get_logits_scale": [0.0006798750255256891], "get_logits_zero_point": [31143],
    "get_kv_output_9_quant_attr": [0.14956776797771454, 128, 0, 255, "torch.uint8"],
}


@needs_stories
def test_stories260k_constant_method_values_match_executorch():
    from etscope.formats.pte_constants import constant_method_values

    values = constant_method_values(STORIES)
    assert len(values) == 27
    for name, expected in STORIES_CONSTANTS.items():
        assert values[name] == expected, name
    r = program_report(read_pte(STORIES), constants=values)
    by_name = {m.name: m for m in r.methods}
    assert by_name["get_max_seq_len"].values == (128,) and by_name["kv_forward"].values is None
    assert "get_max_seq_len = 128" in " ".join(" ".join(program_lines(r)).split())


@pytest.mark.parametrize("path", REAL_PTES, ids=lambda p: p.name)
def test_no_constant_methods_in_xnnpack_fixtures(path):
    from etscope.formats.pte_constants import constant_method_values

    assert constant_method_values(path) == {}


def _shared_blob_report(delegates: int = 300, blobs: int = 3):
    import sys

    sys.path.insert(0, str(ROOT / "fuzz"))
    import generators as G

    spec = (QNN_PTE / "synthetic_compile_spec_sm8650_detailed.bin").read_bytes()
    m = dict(name="forward", delegates=[("QnnBackend", i % blobs) for i in range(delegates)],
             inline=[bytes([i]) * 16 for i in range(blobs)], instructions=[(2, i, [0]) for i in range(delegates)],
             spec=spec)
    from etscope.formats.pte import parse_pte

    return program_report(parse_pte(G.build_pte([m]), "x.pte"))


def test_shared_blob_users_named_first_and_counted():
    from etscope.analysis.ops.program import SHARED_NAMED

    r = _shared_blob_report()
    d = r.methods[0].delegates[0]
    assert d.shared_by_others == 99 and len(d.shared_with) == SHARED_NAMED
    assert d.shared_with == tuple(f"forward #{i}" for i in range(3, 3 * (SHARED_NAMED + 1), 3))
    # one QNN spec for all: one line per profile level, naming four and counting the rest
    (level,) = [c for c in r.checks if "profile level" in c.text]
    assert "forward #0, forward #1, forward #2, forward #3 and 296 more" in level.text


def test_shared_blob_text_piped_and_on_a_terminal():
    r = _shared_blob_report()
    piped = program_lines(r, None, complete=True)
    delegate_lines = [ln for ln in piped if ln.startswith("    #")]
    assert len(delegate_lines) == 300                     # every delegate once, one line each
    assert delegate_lines[0].endswith("shared with " + ", ".join(f"forward #{i}" for i in range(3, 27, 3))
                                      + ", … 91 more")
    term = program_lines(r, WIDTH, complete=False)
    assert all(len(ln) <= WIDTH for ln in term)
    assert sum(ln.startswith("    #") for ln in term) == 50
    assert any("… 250 more delegates (--json lists all)" in ln for ln in term)
    # the compile spec shown once: piped, each of its delegates named once; on a terminal the first 8
    (title,) = [ln for ln in piped if ln.startswith("QNN compile spec of")]
    assert title == "QNN compile spec of " + ", ".join(f"forward #{i}" for i in range(300)) + " (identical)"
    (title,) = [ln for ln in program_lines(r, 10_000, complete=False) if ln.startswith("QNN compile spec of")]
    assert title == ("QNN compile spec of " + ", ".join(f"forward #{i}" for i in range(8)) + ", … 292 more (identical)")
