"""`etscope diff`: separate axes of change, each with its own verdict, and the attribution of the
latency change (issue 37, items 1 and 2). Expectations come from the fixtures' manifests: the
conv-fallback pair (tests/fixtures/diff/conv_fallback_manifest.json) records which ops the
partitioner left on the CPU; the QNN compile spec fixtures (tests/fixtures/qnn_pte) record the
SoC each spec was built for."""
import copy
import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import diff_json as diff
from etscope.analysis.diff.result import ProgramIdentity
from etscope.cli import main
from etscope.profile import load

F = Path(__file__).parents[1] / "fixtures"
D = F / "diff"
pytestmark = pytest.mark.skipif(not (D / "diff_conv_cpu.etdump").exists(), reason="diff fixtures not generated")


def _conv(name):
    return load(D / f"diff_conv_{name}.etdump", etrecord=D / f"diff_conv_{name}.etrecord")


@pytest.fixture(scope="module")
def conv_pair():
    return diff.compare(_conv("xnnpack"), _conv("cpu"))


def _moved_per_manifest() -> set[tuple[str, int]]:
    """(op, source line) of the ops delegated in the base fixture and on the CPU in the new one."""
    m = json.loads((D / "conv_fallback_manifest.json").read_text())["fixtures"]

    def where(fx):
        return {(op["op"], op["source"]["line"]): ins["kind"] for ins in m[fx]["placement"] for op in ins["ops"]}

    a, b = where("diff_conv_xnnpack"), where("diff_conv_cpu")
    return {k for k, v in a.items() if v == "delegate" and b.get(k) == "cpu"}


def test_conv_fallback_pair_has_a_placement_axis_that_changed_and_a_headline_that_says_so(conv_pair):
    moved = _moved_per_manifest()
    assert len(moved) == 2
    ax = conv_pair["axes"]
    assert set(ax) == {"latency", "placement", "program", "environment"}
    assert ax["placement"]["verdict"] == "changed"
    lines = {int(f["detail"].split(":")[-1].split(")")[0]) for f in ax["placement"]["facts"]}
    assert lines == {line for _, line in moved}
    assert "placement" in conv_pair["changed_axes"]
    assert "placement changed" in conv_pair["headline"]
    assert ax["latency"]["verdict"] == conv_pair["verdict"]


def test_the_moved_convolutions_explain_at_least_80_percent_of_the_delta(conv_pair):
    at = conv_pair["attribution"]
    lines = {line for _, line in _moved_per_manifest()}
    moved = [p for p in at["parts"] if p["kind"] == "moved_op"]
    assert {int(p["name"].rsplit(":", 1)[1].rstrip(")")) for p in moved} == lines
    assert at["moved_ops_pct"] >= 80
    assert sum(p["change_ms"] for p in moved) / at["change_ms"] >= 0.8
    # Largest first, and the parts plus the stated rest are the whole change.
    sizes = [abs(p["change_ms"]) for p in at["parts"]]
    assert sizes == sorted(sizes, reverse=True)
    assert at["explained_ms"] + at["unexplained_ms"] == pytest.approx(at["change_ms"])
    assert at["change_ms"] == pytest.approx(conv_pair["latency"]["new_p50_ms"] - conv_pair["latency"]["base_p50_ms"])


def test_headline_never_says_no_change_while_an_axis_changed():
    from etscope.analysis.diff import axes as diff_axes

    from etscope.analysis.diff.result import Axes, Axis

    def axis(verdict, summary=""):
        return Axis(verdict=verdict, summary=summary, facts=())

    ax = Axes(latency=axis("no_change"), placement=axis("changed", "2 op(s) moved XnnpackBackend → cpu"),
              program=axis("unknown"), environment=axis("no_change"))
    h = diff_axes.headline("no_change", ax)
    assert h.startswith("no latency change, but") and "placement changed: 2 op(s) moved" in h
    assert diff_axes.headline("no_change", dataclasses.replace(ax, placement=axis("no_change"))) == "no change"


def test_same_program_rerun_stays_no_change_or_inconclusive_on_every_axis():
    pte, rec = D / "diff_same.pte", D / "diff_same.etrecord"
    a = load(D / "diff_same_00.etdump", etrecord=rec, pte=pte)
    b = load(D / "diff_same_01.etdump", etrecord=rec, pte=pte)
    d = diff.compare(a, b)
    ax = d["axes"]
    assert ax["latency"]["verdict"] in ("no_change", "inconclusive")
    assert ax["placement"]["verdict"] == "no_change"
    assert ax["program"]["verdict"] == "no_change" and ax["program"]["facts"] == []
    assert ax["environment"]["verdict"] in ("no_change", "unknown")
    assert d["changed_axes"] == []
    assert "changed" not in d["headline"]


def _with_spec(profile, spec: bytes):
    """The profile with its .pte's QNN compile spec replaced (the same program built for another SoC)."""
    methods = [dataclasses.replace(m, delegates=[dataclasses.replace(dl, compile_specs={**dl.compile_specs,
                                                                                       "qnn_compile_spec": spec})
                                                 for dl in m.delegates]) for m in profile.pte.methods]
    q = copy.copy(profile)
    q.pte = dataclasses.replace(profile.pte, methods=methods)
    return q


def test_qnn_pair_built_for_two_socs_shows_the_program_axis():
    from etscope.analysis.diff import axes as diff_axes

    manifest = json.loads((F / "qnn_pte" / "synthetic_manifest.json").read_text())
    assert "SM8750" in json.dumps(manifest)
    base = load(F / "qnn_etdump" / "synthetic_qnn_cnn.etdump", pte=F / "qnn_pte" / "synthetic_qnn_cnn.pte")
    new = _with_spec(base, (F / "qnn_pte" / "synthetic_compile_spec_sm8750_optrace.bin").read_bytes())
    ax = diff_axes.program_axis(base, new, None)
    assert ax.verdict == "changed"
    facts = {f.what: (f.base, f.new) for f in ax.facts}
    assert facts["QNN soc model"] == ("SM8650", "SM8750")
    assert facts["QNN profile level"][1] == "optrace"
    assert "QNN precision" in facts and "QNN shared buffer" in facts
    same = diff_axes.program_axis(base, base, ProgramIdentity(identical=True, basis="x"))
    assert same.verdict == "no_change"


def test_no_op_is_labelled_same_while_its_p50_moved_by_the_minimum_effect():
    pairs = [("xnnpack", "cpu")]
    for a, b in pairs:
        d = diff.compare(_conv(a), _conv(b), min_effect_pct=2.0)
        for o in d["ops"]:
            if o["status"] == "same" and o["change_pct"] is not None:
                assert abs(o["change_pct"]) < 2.0, o
    same = [load(D / f"diff_same_{i:02d}.etdump", etrecord=D / "diff_same.etrecord") for i in (0, 1)]
    d = diff.compare(same[0], same[1])
    for o in d["ops"]:
        assert o["status"] != "same" or o["change_pct"] is None or abs(o["change_pct"]) < 2.0, o
    assert all(o["status"] in ("new", "removed", "slower", "faster", "uncertain", "same") for o in d["ops"])


def test_signed_durations_read_in_the_unit_that_fits():
    from etscope.render.diff_text import signed_ms

    assert signed_ms(-58.6776) == "-58.68 ms"
    assert signed_ms(0.0229) == "+22.9 µs"
    assert signed_ms(0.0) == "±0 ns"


def test_cli_text_and_json_show_the_axes_and_the_attribution():
    args = ["diff", str(D / "diff_conv_xnnpack.etdump"), str(D / "diff_conv_cpu.etdump"),
            "--etrecord-base", str(D / "diff_conv_xnnpack.etrecord"), "--etrecord-new", str(D / "diff_conv_cpu.etrecord")]
    r = CliRunner().invoke(main, args + ["--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["axes"]["placement"]["verdict"] == "changed" and d["attribution"]["moved_ops_pct"] >= 80
    r = CliRunner().invoke(main, args, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    assert "placement changed" in r.output.splitlines()[0] + r.output.splitlines()[1]
    assert "Axes of change" in r.output and "Where the change came from" in r.output
    assert "unexplained" in r.output
    # Durations of 1 ms or more are in ms, never "-58,677.6 µs".
    for ln in r.output.splitlines():
        words = ln.split()
        assert not any(w == "µs" and "," in prev for prev, w in zip(words, words[1:])), ln


def _gen_model(name: str) -> str:
    return json.loads((F / "real" / "gen_manifest.json").read_text())["fixtures"][name]["model"]


@pytest.mark.parametrize("a,b", [
    (("qnn_etdump", "synthetic_qnn_cnn"), ("qnn_etdump", "synthetic_qnn_vit_2part")),
    (("real", "gen_cnn"), ("real", "gen_llama")),
], ids=["qnn-cnn-vs-vit", "cnn-vs-llama"])
def test_two_different_models_are_flagged_not_comparable_first(a, b):
    if a[0] == "real":      # the manifest says these are different models
        assert "conv" in _gen_model(a[1]) and "Transformer" in _gen_model(b[1])
    pa = load(F / a[0] / f"{a[1]}.etdump", etrecord=F / a[0] / f"{a[1]}.etrecord")
    pb = load(F / b[0] / f"{b[1]}.etdump", etrecord=F / b[0] / f"{b[1]}.etrecord")
    d = diff.compare(pa, pb, fail_on_regression_pct=5, fail_on_fallback=True)
    top = d["phases"][0] if d.get("phases") and "comparable" not in d else d
    assert d["verdict"] == "not_comparable"
    assert d["headline"].startswith("not comparable: different programs")
    assert top["comparable"]["comparable"] is False
    # latency only as a fact; nothing judged per op, placement or part; no gate
    assert top["placement_changes"] == [] and top["attribution"] is None
    assert top["ops"] and all(o["status"] == "not_compared" and o["change_pct"] is None for o in top["ops"])
    assert top["latency"]["base_p50_ms"] and top["latency"]["new_p50_ms"]
    assert not d["gate"]["fail"]


@pytest.mark.parametrize("new", ["conv_cpu", "slower", "faster", "cpu_moved"])
def test_one_model_re_exported_stays_comparable(new):
    base = _conv("xnnpack") if new == "conv_cpu" else load(D / "diff_same_00.etdump", etrecord=D / "diff_same.etrecord")
    other = _conv("cpu") if new == "conv_cpu" else load(D / f"diff_{new}.etdump", etrecord=D / f"diff_{new}.etrecord")
    d = diff.compare(base, other)
    assert d["comparable"]["comparable"] is True and d["verdict"] != "not_comparable"


RUNTRACE = F / "shared" / "qnn-device" / "chain8_sm8650.runtrace.json"


@pytest.mark.skipif(not RUNTRACE.exists(), reason="shared runtrace not in tests/fixtures/shared")
def test_runtrace_per_side_gives_the_environment_axis_a_measured_clock():
    from etscope.analysis.diff.axes import runtrace_clock_mhz
    from etscope.formats.runtrace import read_runtrace

    q = F / "qnn_etdump"
    r = CliRunner().invoke(main, ["diff", str(q / "synthetic_qnn_cnn.etdump"), str(q / "synthetic_qnn_accumulate.etdump"),
                                  "--runtrace-base", str(RUNTRACE), "--runtrace-new", str(RUNTRACE), "--json"])
    assert r.exit_code == 0, r.output
    env = json.loads(r.output[r.output.index("{"):])["axes"]["environment"]
    mhz = runtrace_clock_mhz(read_runtrace(RUNTRACE))
    assert 100 < mhz < 3000
    assert env["facts"][0] == {"what": "HTP clock measured (runtrace, MHz)", "base": mhz, "new": mhz}
    assert env["verdict"] == "no_change"


def test_a_clock_that_moved_is_an_environment_change():
    from etscope.analysis.diff.axes import environment_axis
    from etscope.analysis.diff.result import Latency, Sides

    lat = Latency(base_p50_ms=1.0, new_p50_ms=1.0, change_pct=0.0, ci_pct=(0.0, 0.0), base_runs=5, new_runs=5,
                  base_sessions=1, new_sessions=1, warmup_runs_dropped=Sides((0,), (0,)), significant=False,
                  session_allowance_pct=160.0, method="")
    assert environment_axis(lat, None, {"base": 1800.0, "new": 1000.0, "source": "runtrace"}).verdict == "changed"
    assert environment_axis(lat, None, {"base": 1800.0, "new": 1810.0, "source": "runtrace"}).verdict == "no_change"
    assert environment_axis(lat, None).verdict == "unknown"


def test_qnn_nesting_splits_a_delegate_call_by_level_and_clock():
    from etscope.analysis.diff.attribution import _qnn_nesting

    from etscope.analysis.diff.result import Change, OpChange, QnnPartitionChange

    none = Change(None, None, None)
    qnn = (QnnPartitionChange(partition=0, accel_cycles=none, clock_mhz_est=Change(1000.0, 500.0, -50.0),
                              accel_us=Change(1000.0, 1500.0, 50.0), qnn_execute_us=Change(1200.0, 1800.0, 50.0),
                              delegate_call_ms=none, ops=()),)
    op = OpChange(identity=("delegate", "QnnBackend", "0", "call", "0"), name="DELEGATE_CALL QnnBackend #1",
                  role="delegate_call", unit="ns", op_type=None, source=None, placement_base="QnnBackend",
                  placement_new="QnnBackend", status="slower", base_p50=None, new_p50=None, change_pct=None,
                  p_value=None, significant=None)
    parts = {p.name: p.change_ms for p in _qnn_nesting(qnn, op, 0.7)}
    assert parts["HTP clock (same cycles at the new clock)"] == pytest.approx(1.0)   # 1 ms at half the clock
    assert parts["HTP accelerator cycles"] == pytest.approx(-0.5)                    # fewer cycles
    assert parts["QnnGraph_execute outside the accelerator"] == pytest.approx(0.1)
    assert parts["delegate call outside QnnGraph_execute"] == pytest.approx(0.1)
    assert sum(parts.values()) == pytest.approx(0.7)


def test_etdump_settings_are_part_of_the_environment():
    """Issue 37: what the ETDumps recorded is an environment fact. llama.etdump logged intermediate
    outputs (debug events); llama_nodebug.etdump is a run of the same program without them: the
    environment axis changes and says which recording was turned off (counted from the events)."""
    from etscope import profile as P
    from diff_json import compare

    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    a, b = P.load(str(real / "llama.etdump")), P.load(str(real / "llama_nodebug.etdump"))
    d = compare(a, b)
    env = (d.get("phases") or [d])[0]["axes"]["environment"]
    assert env["verdict"] == "changed" and "debug events off in new" in env["summary"]
    fact = next(f for f in env["facts"] if f["what"].startswith("debug events per run"))
    debug = (a.events["role"] == P.ROLE_DEBUG) & (a.events["execute"] >= 0)
    assert fact["base"] == round(int(debug.sum()) / a.n_runs, 2) > 0 and fact["new"] == 0
    same = compare(a, a)
    env_same = (same.get("phases") or [same])[0]["axes"]["environment"]
    assert not any(f["what"].startswith("debug") and f["base"] != f["new"] for f in env_same["facts"])
