"""The registry of delegate backends (issue 33 item 3: "adding a delegate's per-op events has no
seam"): backend identity is read from ``formats.backends``, not compared as a string, and a new
delegate with its own per-op event naming, added to a copy of the package by touching its registry
entry and its naming rule only, is told from its event names, its per-op events get op kinds, are
matched to the partition's graph nodes (``analysis.ops.delegate_ops``) and are seen by ``diff``'s
placement changes, as XNNPACK's are."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from etscope.formats import backends as B
from etscope.formats.etdump import read_etdump
from etscope.formats.kinds import resolve

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "etscope"
D = ROOT / "tests" / "fixtures" / "diff"
sys.path.insert(0, str(ROOT / "tests"))
from test_input_kinds import _changed, package_copy  # noqa: E402  (a patched package copy, compared by directory)


# ---- the registry as it is --------------------------------------------------------------------------
def test_backend_ids_are_unique_and_rules_resolve_in_the_analysis():
    ids = [b.backend_id for b in B.BACKENDS]
    assert len(ids) == len(set(ids)) and {B.QNN_BACKEND_ID, B.XNNPACK_BACKEND_ID} <= set(ids)
    for b in B.BACKENDS:
        assert b.per_op_events in (B.NODE_NAMES, B.OPERATOR_TYPES)
        if b.event_kind is not None:
            assert b.event_kind.startswith("etscope.analysis.ops.") and callable(resolve(b.event_kind)), b.backend_id


def test_backend_ids_are_compared_only_through_the_registry():
    """No module compares a backend with a written-out id: a new delegate would be missed there."""
    ids = "|".join(re.escape(b.backend_id) for b in B.BACKENDS)
    compare = re.compile(rf"""[=!]=\s*["']({ids})["']|["']({ids})["']\s*[=!]=|\bin\s*\(\s*["']({ids})["']""")
    found = [f"{p.relative_to(SRC)}:{n}" for p in [*SRC.rglob("*.py"), *SRC.rglob("*.js")]
             for n, line in enumerate(p.read_text().splitlines(), 1) if compare.search(line)]
    assert found == []


def test_the_pages_know_the_npu_backends_from_the_registry():
    """The pages colour and label a placement "NPU (...)" from the registry's list they carry."""
    from etscope.render.html import glossary_words

    assert glossary_words()["npu_backends"] == [b.backend_id for b in B.BACKENDS if b.npu]


def test_the_backend_guess_from_event_names_is_the_registry_order():
    assert B.backend_from_event_names(["Convolution (NHWC, F32) IGEMM #1"]) == "XnnpackBackend"
    assert B.backend_from_event_names(["aten_convolution_default:OpId_3 (cycles)"]) == "QnnBackend"
    assert B.backend_from_event_names(["Convolution #1", "QNN accelerator (execute) time (us)"]) == "QnnBackend"
    assert B.backend_from_event_names(["my_op"]) is None


# ---- a new delegate, added the way a contributor would ----------------------------------------------
# 1. its entry in the registry (formats/backends.py)
ENTRY = '''    DelegateBackend("SyntheticNpuBackend", "SyntheticNpu", npu=True, event_hint=re.compile(r"^npu\\[\\d+\\] "),
                    event_kind="etscope.analysis.ops.npu_events:npu_event_kind"),
'''

# 2. its per-op naming rule (analysis/ops/npu_events.py): "npu[<seq>] <ATen op>"
RULE = '''"""The synthetic NPU names a per-op event ``npu[<seq>] <ATen op base name>``, e.g. ``npu[4] convolution``."""
from __future__ import annotations

import re

from etscope.analysis.ops.kinds import kind_of_op_type

_NAME = re.compile(r"^npu\\[\\d{1,9}\\] (?P<op>[A-Za-z0-9_]{1,80})$")


def npu_event_kind(name: str, in_partition: bool) -> str | None:
    m = _NAME.match(name)
    return kind_of_op_type(m.group("op"), in_partition=in_partition) if m else None
'''

# The per-op events XNNPACK logged in the diff fixture, as the synthetic NPU names them.
RENAME = {"Convolution (NHWC, F32) IGEMM #1": "npu[1] convolution", "Max Pooling (NHWC, F32) #1": "npu[2] max_pool2d",
          "Static Reshape (NC) #1": "npu[3] view_copy", "Fully Connected (NC, F32) GEMM #1": "npu[4] linear",
          "Transpose (ND, X32) #1": "npu[5] layout_in", "Transpose (ND, X32) #2": "npu[6] layout_out"}


def _renamed_etdump(src: Path, dst: Path, rename: dict[str, str]) -> None:
    """``src`` written again with its event names renamed (profiling events only, as the fixture)."""
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import fuzz_harness as H

    data = read_etdump(src)
    ev, strings = data.events, [rename.get(s, s) for s in data.strings]
    assert set(ev["kind"].tolist()) == {0} and not ev["metadata_len"].any()
    text = lambda c: strings[c] if c >= 0 else None     # noqa: E731
    runs = []
    for run in data.runs:
        rows = range(run.first_event, run.first_event + run.event_count)
        runs.append({"name": run.name, "bundled": run.bundled_input_index, "allocators": run.allocators,
                     "events": [("P", text(int(ev["name"][i])), int(ev["chain"][i]), int(ev["instruction_id"][i]),
                                 int(ev["delegate_id_int"][i]), text(int(ev["delegate_id_str"][i])), None,
                                 int(ev["start"][i]), int(ev["end"][i])) for i in rows]})
    dst.write_bytes(H.build_etdump(runs, version=data.version))


def _renamed_etrecord(src: Path, dst: Path, backend: str) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            payload = zin.read(info)
            if info.filename == "delegate_map":
                payload = payload.replace(b'"XnnpackBackend"', json.dumps(backend).encode())
            zout.writestr(info, payload)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the package with the new delegate: its registry entry and its naming rule."""
    anchor = '                    event_kind="etscope.analysis.ops.kinds:xnnpack_event_kind"),\n'
    return package_copy(tmp_path_factory.mktemp("backend") / "src", {"formats/backends.py": (anchor, anchor + ENTRY)},
                        {"analysis/ops/npu_events.py": RULE})


@pytest.fixture(scope="module")
def npu_files(tmp_path_factory):
    """diff_conv_xnnpack's run as the synthetic NPU logs it (and its ETRecord naming that delegate)."""
    folder = tmp_path_factory.mktemp("npu")
    _renamed_etdump(D / "diff_conv_xnnpack.etdump", folder / "npu.etdump", RENAME)
    _renamed_etrecord(D / "diff_conv_xnnpack.etrecord", folder / "npu.etrecord", "SyntheticNpuBackend")
    return folder / "npu.etdump", folder / "npu.etrecord"


PROBE = r'''
import json, sys
import etscope
import etscope.api
from etscope.analysis.ops.kinds import kind_of_delegate_event
from etscope.analysis.views.report import category_of
etdump, etrecord, xnn_etdump, xnn_etrecord = sys.argv[1:5]

def nodes(etd, etr):
    table = etscope.api.results(etscope.load(etd, etrecord=etr)).nodes
    return {n.name: [n.placement, n.time_us, n.time_how] for n in table.nodes}

print(json.dumps({
    "kinds": [kind_of_delegate_event(n, backend="SyntheticNpuBackend", in_partition=True)
              for n in ("npu[1] convolution", "npu[3] view_copy", "npu[5] layout_in", "Convolution (NHWC, F32) IGEMM #1")],
    "guessed": sorted({i.backend for i in etscope.load(etdump).profile.instructions.values() if i.kind == "delegate"}),
    "category": category_of("SyntheticNpuBackend"),
    "nodes": nodes(etdump, etrecord), "xnnpack_nodes": nodes(xnn_etdump, xnn_etrecord),
}))
'''


def run(tree: Path | None, *args, code: str | None = None):
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree if tree is not None else SRC.parent)
    argv = [sys.executable, *(["-c", code] if code else ["-m", "etscope.cli"]), *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def test_a_new_delegate_touches_two_source_files(tree):
    assert sorted(_changed(SRC, tree / "etscope")) == ["etscope/analysis/ops/npu_events.py",
                                                        "etscope/formats/backends.py"]


def test_its_events_get_kinds_and_are_matched_to_nodes_as_xnnpack_s_were(tree, npu_files):
    proc = run(tree, *npu_files, D / "diff_conv_xnnpack.etdump", D / "diff_conv_xnnpack.etrecord", code=PROBE)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # Its own rule, and only for its events.
    assert got["kinds"] == ["conv", "reshape", None, None]
    # Told from its event names alone (no .pte or ETRecord), and shown as an NPU.
    assert got["guessed"] == ["SyntheticNpuBackend"]
    assert got["category"] == "NPU (SyntheticNpu)"
    # Matched to the same nodes with the same times as the XNNPACK events it renamed (oracle: the
    # XNNPACK run, whose matching tests/analysis/test_delegate_ops.py checks against the Inspector).
    matched = {n: v for n, v in got["xnnpack_nodes"].items() if v[2] == "matched by kind and order"}
    assert {"aten_convolution_default", "aten_convolution_default_1", "aten_linear_default"} <= set(matched)
    for name, (placement, us, how) in matched.items():
        assert got["nodes"][name] == ["SyntheticNpuBackend", pytest.approx(us, rel=1e-12), how], name
    assert {n: v[1:] for n, v in got["nodes"].items()} == {n: v[1:] for n, v in got["xnnpack_nodes"].items()}


def _moved(proc) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    return [c for c in json.loads(proc.stdout)["placement_changes"] if c["kind"] == "moved_to_cpu"]


def test_diff_sees_its_ops_move_to_the_cpu_without_an_etrecord(tree, npu_files):
    """diff_conv_cpu ran the two convolutions on the CPU: without ETRecords, the NPU's convolution
    events that disappeared tell that they moved, as XNNPACK's do (test_diff_sessions)."""
    (moved,) = _moved(run(tree, "diff", npu_files[0], D / "diff_conv_cpu.etdump", "--json", "--no-html"))
    assert moved["from"] == "SyntheticNpuBackend" and moved["count"] == 2
    assert moved["op_type"] == "aten.convolution.out"
    assert moved["evidence"] == ["npu[1] convolution (in SyntheticNpuBackend #1)",
                                 "npu[1] convolution (in SyntheticNpuBackend #2)"]


def test_without_its_entry_nothing_knows_it(npu_files):
    """The same files read by the package as it is: an unknown delegate, events of no kind, no node
    matched, no move."""
    proc = run(None, *npu_files, D / "diff_conv_xnnpack.etdump", D / "diff_conv_xnnpack.etrecord", code=PROBE)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["kinds"][:3] == [None, None, None] and got["guessed"] == ["delegate"]   # (unknown: every rule)
    assert got["category"] == "other delegate (SyntheticNpuBackend)"
    assert not [n for n, v in got["nodes"].items() if v[2] == "matched by kind and order"]
    proc = run(None, "diff", npu_files[0], D / "diff_conv_cpu.etdump", "--json", "--no-html")
    assert _moved(proc) == []
    changes = json.loads(proc.stdout)["placement_changes"]
    assert any(c["kind"] == "new_cpu_op" and c["op_type"] == "aten.convolution.out" for c in changes)
