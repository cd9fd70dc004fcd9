"""The object etscope.load() returns, as a notebook user meets it (issue 21 item 2): a one-line
repr, a small HTML repr, ops() whose level-0 rows add up to the summary's split (no double
counting), and typed qnn() / llm() / diff() results with DataFrame accessors."""
from __future__ import annotations

from pathlib import Path

import pytest

import etscope
from etscope.render.json import to_jsonable
from etscope.analysis.diff.compare import compare
from etscope.errors import FormatError
from etscope.frames import DiffResult, LlmResult, QnnResult
from qnn_typed import plain

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REAL, Q, D = FIX / "real", FIX / "qnn_etdump", FIX / "diff"


def _load(name: str) -> etscope.api.NotebookProfile:
    folder, stem = name.split("/")
    base = FIX / folder / stem
    kw = {k: f"{base}.{k}" for k in ("etrecord", "pte") if Path(f"{base}.{k}").exists()}
    return etscope.load(f"{base}.etdump", **kw)


PROFILES = ["real/llama", "real/cnn", "real/gen_multipart", "real/gen_loop", "qnn_etdump/synthetic_qnn_llm",
            "qnn_etdump/synthetic_qnn_vit_2part"]


@pytest.mark.parametrize("name", PROFILES)
def test_repr_is_one_short_line_and_html_small(name):
    p = _load(name)
    for text in (repr(p), str(p), repr(p.profile)):
        assert "\n" not in text and len(text) < 400, text
    assert f"{p.n_runs} run(s)" in repr(p) and p.sources["etdump"] in repr(p)
    html = p._repr_html_()
    assert len(html) < 8000 and "<script" not in html


@pytest.mark.parametrize("name", PROFILES)
def test_level_0_rows_add_up_to_the_summary_split(name):
    """The documented way to sum: level 0 rows per placement = the summary's mean per run x runs
    (the steady runs both are over: warm-up runs left out)."""
    p = _load(name)
    d = p.ops()
    sums = d[lambda d: d.level == 0].groupby("placement").total_ms.sum()
    expected = {}
    for b in p.results.summary.breakdown:
        key = b.backend if b.kind == "delegate" else "cpu" if b.kind == "cpu_ops" else None
        if key is not None and b.mean_ms:
            expected[key] = b.mean_ms * (p.results.summary.runs.count - (
                p.results.summary.runs.warmup.count if p.results.summary.runs.warmup else 0))
    assert set(sums.index) == set(expected)
    for k, v in expected.items():
        assert float(sums[k]) == pytest.approx(v, rel=1e-9), k
    assert p.ops(level=0).equals(d[d.level == 0].reset_index(drop=True))
    assert len(p.ops(level=0)) + len(p.ops(level=1)) == len(d)


def test_summing_every_row_double_counts():
    """Why the level column matters: the nested rows repeat time already in their instruction."""
    d = _load("real/llama").ops()
    cpu_all = float(d[d.placement == "cpu"].total_ms.sum())
    cpu_level0 = float(d[(d.placement == "cpu") & (d.level == 0)].total_ms.sum())
    assert cpu_all > 1.5 * cpu_level0


def test_qnn_result_frames_match_the_report():
    p = _load("qnn_etdump/synthetic_qnn_llm")
    q = p.qnn()
    assert isinstance(q, QnnResult) and "2 partition(s)" in repr(q) and len(repr(q)) < 300
    parts = plain(q.report)["partitions"]
    assert list(q.partitions()["key"]) == [x["key"] for x in parts]
    ops = q.ops()
    assert len(ops) == sum(len(x["ops"]) for x in parts)
    first = parts[0]["ops"][0]
    row = ops[(ops.partition == parts[0]["key"]) & (ops.qnn_name == first["qnn_name"])].iloc[0]
    assert row.cycles_p50 == first["cycles_p50"] and row.share == pytest.approx(first["share"])
    assert len(q.levels()) == sum(len(x["levels"]) for x in parts)
    assert q._repr_html_().startswith("<div>")
    assert _load("real/llama").qnn() is None                     # no QNN partition, no QNN file


def test_llm_result_frames_match_the_report():
    p = _load("real/llama")
    lr = p.llm()
    assert isinstance(lr, LlmResult) and "prefill ×1" in repr(lr) and "decode ×23" in repr(lr)
    ph = lr.phases()
    assert list(ph.phase) == [x.name for x in lr.report.llm.phases]
    assert ph.p50_ms.tolist() == [x.latency_ms.p50 for x in lr.report.llm.phases]
    runs = lr.runs()
    assert len(runs) == p.n_runs and runs.latency_ms.tolist() == list(lr.report.llm.series.latency_ms)
    assert lr.ttft_ms == lr.report.llm.ttft_ms and lr.findings
    assert set(lr.top_ops().phase) == {"prefill", "decode"}


def test_diff_result(tmp_path):
    base = etscope.load(D / "diff_same_00.etdump")
    d = base.diff(D / "diff_slower.etdump")
    assert isinstance(d, DiffResult)
    ref = compare(base.profile, etscope.load(D / "diff_slower.etdump").profile)
    assert d.verdict == ref.verdict and d.reasons == list(ref.reasons)
    assert d.latency.new_p50_ms == pytest.approx(ref.latency.new_p50_ms)
    assert len(d.ops()) == len(ref.ops)
    assert len(d.ops(changed_only=True)) == sum(1 for o in ref.ops if o.status != "same") > 0
    assert set(d.breakdown().kind) == {"delegate", "cpu_ops", "framework_overhead"}
    text = repr(d)
    assert "\n" not in text and d.verdict.replace("_", " ") in text and "95% CI" in text
    out = d.html(tmp_path / "d.html")
    assert "etscope diff: diff_same_00.etdump → diff_slower.etdump" in Path(out).read_text()
    with pytest.raises(FormatError):
        d.html(D / "diff_same_00.etdump")                        # never over an input
    # A loaded profile works as well as a path.
    assert base.diff(etscope.load(D / "diff_slower.etdump")).verdict == d.verdict


@pytest.mark.parametrize("name", ["real/cnn", "real/llama", "qnn_etdump/synthetic_qnn_llm"])
def test_modules_result_adds_up_and_equals_the_cli_json(name):
    """p.modules(): the root's total = Method::execute minus framework overhead (from the summary's
    split, read independently) = the sum of self_us over the frame = `ops --by module --json`."""
    import json

    from click.testing import CliRunner

    from etscope.cli import main
    from etscope.frames import ModulesResult

    p = _load(name)
    m = p.modules()
    assert isinstance(m, ModulesResult)
    s = p.results.summary
    lat = s.runs.latency_ms.mean
    overhead = sum(b.mean_ms for b in s.breakdown if b.kind == "framework_overhead")
    df = m.modules()
    root = df[df.depth == 0]
    assert len(root) == 1 and root.path.iloc[0] == ""
    assert root.total_us.iloc[0] == pytest.approx((lat - overhead) * 1e3, rel=1e-9) == m.total_us
    assert df.self_us.sum() == pytest.approx(m.total_us, rel=1e-9)           # self times: no double count
    assert df.total_us.sum() > m.total_us * 1.5                               # inclusive: summing double counts
    assert m.how().groupby("path").us.sum()[""] == pytest.approx(m.total_us, rel=1e-9)
    assert m.placement().groupby("path").us.sum()[""] == pytest.approx(m.total_us, rel=1e-9)
    args = ["ops", p.sources["etdump"], "--etrecord", p.sources["etrecord"], "--by", "module", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    cli = json.loads(r.output)
    assert cli["modules"] == to_jsonable(m.report)["modules"] and cli["attributed_us"] == m.total_us
    assert list(df.path) == [x["path"] for x in cli["modules"]]
    assert "\n" not in repr(m) and len(repr(m)) < 400 and len(m._repr_html_()) < 8000


def test_modules_needs_the_etrecord():
    assert etscope.load(REAL / "cnn.etdump").modules() is None


def test_notebook_qnn_reads_files_as_the_cli_does():
    """Issue 33: p.qnn() takes what `etscope qnn` takes (several files, pins, --qnn-csv, a phase)
    and gives the same report: partitions and findings equal the CLI's --json."""
    import json

    from click.testing import CliRunner

    from etscope.cli import main

    s = FIX / "shared" / "qnn-device"
    etd = FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"
    files = {"qhas": str(s / "chain8_sm8650.qhas.json"), "optrace": str(s / "chain8_sm8650.optrace.json"),
             "qnn_csv": str(s / "chain8_sm8650.profile.txt")}
    q = etscope.load(etd).qnn(**files)
    cli = CliRunner().invoke(main, ["qnn", str(etd), "--qhas", files["qhas"], "--optrace", files["optrace"],
                                    "--qnn-csv", files["qnn_csv"], "--json"])
    assert cli.exit_code == 0, cli.output
    want = json.loads(cli.output)["qnn"]
    assert plain(q.report.findings) == want["findings"]
    assert [p.key for p in q.report.partitions] == [p["key"] for p in want["partitions"]]
    pinned = etscope.load(etd).qnn(qhas=[f"forward:0={files['qhas']}"])
    assert pinned.report.shards.files[0].partition is not None
    hybrid = etscope.load(FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump",
                          pte=s / "stories260k_hybrid_llama_qnn.pte")
    assert hybrid.qnn(phase="decode").report.partitions[0].runs == 15
