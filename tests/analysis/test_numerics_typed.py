"""`etscope numerics` results are typed (issue 33 item 1): a tree of frozen dataclasses with tuples,
built once by the analysis; the figures the views show (first divergence, lowest SNR per run, match
rules per run, a drift layer's largest max abs error) come from it, not from the renderers."""
from __future__ import annotations

import csv
import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.analysis.numerics.compare import compare
from etscope.analysis.numerics.tensors import numerics
from etscope.cli import main
from etscope.formats.debug_buffer import DebugBuffer
from etscope.profile import load
from etscope.render.numerics_text import compare_lines

ROOT = Path(__file__).resolve().parents[2]
NUM = ROOT / "tests" / "fixtures" / "numerics"


def _load(name, program=None):
    program = program or name
    return load(NUM / f"{name}.etdump", NUM / f"{program}.etrecord", NUM / f"{program}.pte")


def _walk(x, path="result"):
    """Every dataclass in the tree is frozen; its containers are tuples, never lists or dicts."""
    if dataclasses.is_dataclass(x):
        assert type(x).__dataclass_params__.frozen, path
        for f in dataclasses.fields(x):
            _walk(getattr(x, f.name), f"{path}.{f.name}")
    elif isinstance(x, (list, dict, set)):
        raise AssertionError(f"{path} is a {type(x).__name__}")
    elif isinstance(x, tuple):
        for k, v in enumerate(x):
            _walk(v, f"{path}[{k}]")


@pytest.fixture(scope="module")
def drift_comparison():
    pc, pr = _load("drift_llm_q8"), _load("drift_llm_cpu")
    with DebugBuffer(NUM / "drift_llm_q8.debugbuf") as bc, DebugBuffer(NUM / "drift_llm_cpu.debugbuf") as br:
        return compare(pc, bc, pr, br)


def test_results_are_frozen_trees_of_tuples(drift_comparison):
    with DebugBuffer(NUM / "num_q8.debugbuf") as b:
        stats = numerics(_load("num_q8"), b)
    _walk(stats)
    _walk(drift_comparison)
    assert drift_comparison.drift is not None and drift_comparison.runs[0].tensors[0].layer is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        drift_comparison.runs[0].tensors[0].diverged = False


def test_per_run_figures_agree_with_the_tensors(drift_comparison):
    """What the text view prints per run, recomputed from the tensors by brute force."""
    for rc in drift_comparison.runs:
        snrs = [t.metrics.snr_db for t in rc.tensors if t.compared and not t.metrics.equal
                and math.isfinite(t.metrics.snr_db)]
        assert rc.lowest_snr_db == (min(snrs) if snrs else None)
        rules = [t.matched_by for t in rc.tensors]
        assert dict(rc.matched_by_counts) == {r: rules.count(r) for r in set(rules)}
        assert [n for _, n in rc.matched_by_counts] == sorted((n for _, n in rc.matched_by_counts), reverse=True)
        first = next((i for i, t in enumerate(rc.tensors) if t.diverged), None)
        assert rc.first_divergence == first
        assert rc.first_divergence_name == (rc.tensors[first].name if first is not None else None)


def test_drift_layer_max_abs_is_its_largest_cell(drift_comparison):
    d = drift_comparison.drift
    for lay, row in zip(d.layers, d.cells):
        got = [c.max_abs for c in row if c is not None]
        if any(math.isnan(x) for x in got):
            assert math.isnan(lay.max_abs)
        else:
            assert lay.max_abs == max(got)
    text = "\n".join(x for x in compare_lines(drift_comparison) if isinstance(x, str))
    lay = d.layers[0]
    row = next(ln for ln in text.splitlines() if ln.startswith(lay.name + " "))
    assert row.split()[-1] == f"{lay.max_abs:.3g}"


def _synthetic(tmp_path, name, arrays):
    spec = importlib.util.spec_from_file_location("synth_debug_buffer", ROOT / "tools" / "synth_debug_buffer.py")
    synth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synth)
    raw, tensors = synth.pack(arrays)
    # one kernel call logging both its outputs: two tensors of one name ("instruction 0", no ETRecord)
    events = [("P", "Method::execute", -1, 0, 100), ("op0", 0, tensors, False)]
    (tmp_path / f"{name}.etdump").write_bytes(synth.build_etdump([events]))
    (tmp_path / f"{name}.bin").write_bytes(raw)
    return tmp_path / f"{name}.etdump", tmp_path / f"{name}.bin"


def test_first_divergence_is_one_tensor_when_two_share_its_name(tmp_path):
    """Both outputs of one kernel call diverge and share a name: the export marks only the first
    (it matched by name and marked both), the text view likewise."""
    ref = [np.arange(6, dtype=np.float32), np.ones(4, np.float32)]
    cand = [ref[0] + 1.0, ref[1] * -1.0]
    ce, cb = _synthetic(tmp_path, "cand", cand)
    re_, rb = _synthetic(tmp_path, "ref", ref)
    out = tmp_path / "cmp.csv"
    r = CliRunner().invoke(main, ["numerics", str(ce), "--debug-buffer", str(cb), "--reference", str(re_),
                                  "--reference-buffer", str(rb), "--export", str(out)])
    assert r.exit_code == 0, r.output
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [x["name"] for x in rows] == ["instruction 0", "instruction 0"]
    assert [x["diverged"] for x in rows] == ["true", "true"]
    assert [x["first_divergence"] for x in rows] == ["true", "false"]
    assert r.output.count("<- first divergence") == 1
