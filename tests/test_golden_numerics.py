"""Golden guard for `etscope numerics --json` (issue 33 item 1): the statistics and comparison JSON,
byte for byte, as the dict-building code wrote it before the results became typed (tests/golden/
numerics/NAME.json.gz, written by that code). Covers the stats of a quantized program, taps, one
phase's runs (``phase`` key), comparisons with and without ETRecords, taps on either side, an LLM
drift table, several methods, and NaN/Inf/layout/refused pairs (a synthetic pair made here).

    PYTHONPATH=src python tests/test_golden_numerics.py   # rewrite the files (an intended change)
"""
from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from etscope.cli import main

ROOT = Path(__file__).resolve().parents[1]
NUM = ROOT / "tests" / "fixtures" / "numerics"
REAL = ROOT / "tests" / "fixtures" / "real"
GOLDEN = ROOT / "tests" / "golden" / "numerics"


def _inputs(name, program=None, pte=True):
    program = program or name
    a = [NUM / f"{name}.etdump", "--debug-buffer", NUM / f"{name}.debugbuf"]
    if (NUM / f"{program}.etrecord").exists():
        a += ["--etrecord", NUM / f"{program}.etrecord"]
    if pte and (NUM / f"{program}.pte").exists():
        a += ["--pte", NUM / f"{program}.pte"]
    return a


def _ref(name):
    a = ["--reference", NUM / f"{name}.etdump", "--reference-buffer", NUM / f"{name}.debugbuf"]
    if (NUM / f"{name}.etrecord").exists():
        a += ["--reference-etrecord", NUM / f"{name}.etrecord"]
    return a


def _synthetic(folder: Path) -> dict[str, list]:
    """A candidate/reference pair without ETRecords: an NHWC layout, a NaN, refused shapes, int8 at its
    limits, infinities on both sides."""
    spec = importlib.util.spec_from_file_location("synth_debug_buffer", ROOT / "tools" / "synth_debug_buffer.py")
    synth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synth)
    rng = np.random.default_rng(3)
    nchw = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    bad = rng.standard_normal(6).astype(np.float32)
    cand_bad = bad.copy()
    cand_bad[2] = np.nan
    i8 = np.array([127, -128, 3, 4, 127, 0], np.int8)
    inf = np.array([1.0, np.inf, -np.inf, 2.0], np.float32)
    sides = {"cand": [np.ascontiguousarray(nchw.transpose(0, 2, 3, 1)), cand_bad, np.ones((2, 2), np.float32), i8, inf],
             "ref": [nchw, bad, np.ones((2, 3), np.float32), i8, inf * 2]}
    for name, arrays in sides.items():
        raw, tensors = synth.pack(arrays)
        events = [("P", "Method::execute", -1, 0, 100)] + [(f"op{k}", k, [t], False) for k, t in enumerate(tensors)]
        (folder / f"{name}.etdump").write_bytes(synth.build_etdump([events]))
        (folder / f"{name}.bin").write_bytes(raw)
    cand = [folder / "cand.etdump", "--debug-buffer", folder / "cand.bin"]
    return {"stats_synth": cand,
            "cmp_synth": [*cand, "--reference", folder / "ref.etdump", "--reference-buffer", folder / "ref.bin"]}


CASES = {
    "stats_num_q8": _inputs("num_q8"),
    "stats_num_cpu_noer": [NUM / "num_cpu.etdump", "--debug-buffer", NUM / "num_cpu.debugbuf"],
    "stats_tap": [*_inputs("tap_cnn_xnn"), "--taps", NUM / "tap_cnn_xnn.taps.json"],
    "stats_llm_decode": [*_inputs("pair_llm_xnn", pte=False), "--phase", "decode"],
    "cmp_q8_cpu": [*_inputs("num_q8"), *_ref("num_cpu"), "--threshold", "snr=40"],
    "cmp_noer": [NUM / "num_cpu_b.etdump", "--debug-buffer", NUM / "num_cpu_b.debugbuf", "--reference",
                 NUM / "num_cpu.etdump", "--reference-buffer", NUM / "num_cpu.debugbuf"],
    "cmp_pq8": [*_inputs("pair_q8_xnn"), *_ref("pair_q8_cpu")],
    "cmp_tap": [*_inputs("tap_cnn_xnn"), "--taps", NUM / "tap_cnn_xnn.taps.json", *_ref("pair_cnn_cpu")],
    "cmp_tap_rev": [*_inputs("pair_cnn_cpu"), *_ref("tap_cnn_xnn"), "--reference-taps", NUM / "tap_cnn_xnn.taps.json"],
    "cmp_drift_cos_off": [*_inputs("drift_llm_q8"), *_ref("drift_llm_cpu"), "--threshold", "cosine=off"],
    "cmp_llm_decode": [*_inputs("pair_llm_xnn", pte=False), *_ref("pair_llm_cpu"), "--phase", "decode"],
    "cmp_mixed": [REAL / "gen_llama_mixed.etdump", "--etrecord", REAL / "gen_llama_mixed.etrecord", "--debug-buffer",
                  "<empty>", "--reference", REAL / "gen_llama_mixed.etdump", "--reference-buffer", "<empty>",
                  "--reference-etrecord", REAL / "gen_llama_mixed.etrecord"],
}


def _args(name: str, folder: Path) -> list[str]:
    args = CASES.get(name) or _synthetic(folder)[name]
    empty = folder / "empty.bin"
    empty.write_bytes(b"")
    return ["numerics", *[str(empty) if a == "<empty>" else str(a) for a in args], "--json"]


def _output(name: str, folder: Path) -> str:
    r = CliRunner().invoke(main, _args(name, folder))
    assert r.exit_code == 0, r.output
    return r.stdout


NAMES = [*CASES, "stats_synth", "cmp_synth"]


@pytest.mark.parametrize("name", NAMES)
def test_numerics_json_identical_to_golden(name, tmp_path):
    want = gzip.decompress((GOLDEN / f"{name}.json.gz").read_bytes()).decode()
    assert _output(name, tmp_path) == want


if __name__ == "__main__":
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    for n in NAMES:
        with tempfile.TemporaryDirectory() as d:
            (GOLDEN / f"{n}.json.gz").write_bytes(gzip.compress(_output(n, Path(d)).encode(), mtime=0))
