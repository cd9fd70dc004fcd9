"""Intermediate-output taps (issue 32 item 4): ExecuTorch 1.5.1's devtools/intermediate_output_tap
on an XNNPACK-delegated CNN (taps inside the partition; tools/make_numerics_pairs.py,
tap_cnn_xnn.*), read through the etscope.taps/1 sidecar and compared like debug-buffer tensors
against the fp32 CPU run of the same model (pair_cnn_cpu, another session)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from etscope.analysis.numerics.identity import tensor_ids
from etscope.analysis.numerics.tensors import numerics
from etscope.analysis.numerics.compare import compare
from etscope.errors import FormatError
from etscope.formats.debug_buffer import DebugBuffer
from etscope.formats.taps import read_taps
from etscope.profile import load
from tests.analysis.numerics_oracle import oracle_of

NUM = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "numerics"
TAP = "tap_cnn_xnn"


def _tapped():
    return load(NUM / f"{TAP}.etdump", None, NUM / f"{TAP}.pte"), read_taps(NUM / f"{TAP}.taps.json")


def test_tap_values_are_the_runtime_outputs_the_tap_module_saw():
    p, taps = _tapped()
    ids, _ = tensor_ids(p, taps=taps)
    want = np.load(NUM / f"{TAP}.taps_oracle.npz")
    seen = 0
    with DebugBuffer(NUM / f"{TAP}.debugbuf") as buf:
        buf.check(p.etdump.tensors)
        for t in ids:
            if t.role != "tap":
                continue
            got = np.array(buf.array(p.etdump.tensors, t.index))
            rt = want[f"rt_r{t.run}_o{t.tap.output_index}"]
            assert got.shape == rt.shape and got.tobytes() == rt.tobytes()
            assert t.name == t.tap.node_name
            seen += 1
    assert seen == 3 * len(taps) == 18


def test_full_tensor_taps_inside_the_partition_pair_with_the_cpu_nodes():
    pc, taps = _tapped()
    pr = load(NUM / "pair_cnn_cpu.etdump", NUM / "pair_cnn_cpu.etrecord", NUM / "pair_cnn_cpu.pte")
    with DebugBuffer(NUM / f"{TAP}.debugbuf") as bc, DebugBuffer(NUM / "pair_cnn_cpu.debugbuf") as br:
        c = compare(pc, bc, pr, br, taps_c=taps)
    rt = np.load(NUM / f"{TAP}.taps_oracle.npz")
    orf = oracle_of(pr, "pair_cnn_cpu")
    frames = json.loads((NUM / f"{TAP}.taps_oracle.json").read_text())["runs"]
    assert c.first_divergence is None
    full = 0
    for rc in c.runs:
        by_node = {t.ref.node: t for t in rc.tensors}
        for node in ("aten_relu_default", "aten_max_pool2d_with_indices_default", "aten_relu_default_1",
                     "aten_max_pool2d_with_indices_default_1"):
            t = by_node[node]
            assert t.role == "tap" and t.cand.tap.full_tensor and t.matched_by.startswith("tap node name")
            a = rt[f"rt_r{rc.run}_o{t.cand.tap.output_index}"].astype(np.float64).ravel()
            b = orf(t.ref).astype(np.float64).ravel()
            d = a - b
            assert t.metrics.snr_db == pytest.approx(10 * np.log10(np.dot(b, b) / np.dot(d, d)), rel=1e-9)
            assert t.metrics.snr_db > 100
            # the tap module's own comparison (runtime vs eager AOT) agrees on its values
            row = next(r for r in frames[rc.run] if r["output_index"] == t.cand.tap.output_index)
            aot = rt[f"aot_r{rc.run}_o{t.cand.tap.output_index}"].astype(np.float64).ravel()
            e = aot - a
            mine = math.inf if not np.dot(e, e) else 10 * np.log10(np.dot(aot, aot) / np.dot(e, e))
            assert row["sqnr_db"] == pytest.approx(mine, abs=0.05) or (math.isinf(mine) and row["sqnr_db"] is None)
            full += 1
        stats = [t for t in rc.tensors if t.role == "tap" and not t.cand.tap.full_tensor]
        assert len(stats) == 2 and all(t.metrics is None and "STATS tap" in t.note for t in stats)
    assert full == 12


def test_stats_taps_hold_the_reducers_fields():
    p, taps = _tapped()
    rt = np.load(NUM / f"{TAP}.taps_oracle.npz")
    with DebugBuffer(NUM / f"{TAP}.debugbuf") as buf:
        r = numerics(p, buf, taps=taps)
    rows = [row for row in r.rows if row.id.role == "tap" and not row.id.tap.full_tensor]
    assert len(rows) == 6 and any("reduced on the device" in n for n in r.notes)
    for row in rows:
        vals = rt[f"rt_r{row.id.run}_o{row.id.tap.output_index}"]
        assert row.id.shape == (len(row.id.tap.fields),) == vals.shape
        assert row.stats.min == float(vals.min()) and row.stats.max == float(vals.max())


@pytest.mark.parametrize("text, what", [
    ('{"schema": "x", "taps": []}', "schema"),
    ('{"schema": "etscope.taps/1", "taps": [{"output_index": -1}]}', "output_index"),
    ('{"schema": "etscope.taps/1", "taps": [{"output_index": 1' + "0" * 400 + '}]}', "output_index"),
    ('{"schema": "etscope.taps/1", "taps": [' + '{"output_index": 1, "node_name": "a", "reducer_name": "S"},' * 2
     + '{"output_index": 2, "node_name": "a", "reducer_name": "S"}]}', "twice"),
    ('[' * 100000 + ']' * 100000, "JSON"),
    ('{"schema": "etscope.taps/1", "taps": [{"output_index": 1, "node_name": 5, "reducer_name": "S"}]}', "node_name"),
])
def test_bad_sidecars_are_one_line(tmp_path, text, what):
    f = tmp_path / "m.taps.json"
    f.write_text(text)
    with pytest.raises(FormatError) as ei:
        read_taps(f)
    assert what in str(ei.value) and "\n" not in str(ei.value) and "m.taps.json" in str(ei.value)


def test_stats_taps_face_the_reference_tensors_statistics():
    """A STATS tap against the CPU run's full conv output: the reference's fields computed by
    etscope equal the tap module's own eager STATS (same model and input, float32 rounding apart)."""
    from etscope.analysis.numerics.tapstats import STATS_FIELDS, reference_stats

    pc, taps = _tapped()
    pr = load(NUM / "pair_cnn_cpu.etdump", NUM / "pair_cnn_cpu.etrecord", NUM / "pair_cnn_cpu.pte")
    rt = np.load(NUM / f"{TAP}.taps_oracle.npz")
    with DebugBuffer(NUM / f"{TAP}.debugbuf") as bc, DebugBuffer(NUM / "pair_cnn_cpu.debugbuf") as br:
        c = compare(pc, bc, pr, br, taps_c=taps)
        n = 0
        for rc in c.runs:
            for t in rc.tensors:
                if t.role != "tap" or t.cand.tap.full_tensor:
                    continue
                assert "STATS tap vs the reference tensor's statistics" in t.note and "largest relative" in t.note
                ref = reference_stats(br.array(pr.etdump.tensors, t.ref.index), 6, 7)
                aot = rt[f"aot_r{rc.run}_o{t.cand.tap.output_index}"]
                for f, v in zip(STATS_FIELDS, aot):
                    assert ref[f] == pytest.approx(float(v), rel=1e-4, abs=1e-5), f
                n += 1
    assert n == 6


def test_reference_stats_of_hostile_values_warn_nothing():
    import warnings

    from etscope.analysis.numerics.tapstats import compare_fields, reference_stats

    x = np.array([1e300, -1e300, np.inf, np.nan, 0.0, 1e-310])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = reference_stats(x, 7, 2)
        cmp = compare_fields(np.full(13, 1e300), tuple(ref), ref)
    assert ref["nan_count"] == 1 and ref["inf_count"] == 1 and ref["zero_count"] == 1
    assert cmp.note().startswith("STATS tap")
