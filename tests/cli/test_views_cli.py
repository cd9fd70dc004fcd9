"""CLI of the views: report, trace, export, sql, demo's report; exit codes and one-line errors."""
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from etscope.cli import main

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
QNN = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "etscope.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_report_writes_one_file(tmp_path):
    out = tmp_path / "sub" / "r.html"
    args = ("report", REAL / "cnn.etdump", "--etrecord", REAL / "cnn.etrecord", "--pte", REAL / "cnn.pte", "-o", out)
    r = run(*args)
    assert r.exit_code == 2 and "folder does not exist" in r.output    # folders are never created
    assert not out.parent.exists()
    out.parent.mkdir()
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert out.exists() and "wrote" in r.output
    assert [p.name for p in out.parent.iterdir()] == ["r.html"]     # no temp file left behind


def test_trace_and_runs_option(tmp_path):
    out = tmp_path / "t.json"
    r = run("trace", REAL / "gen_llama.etdump", "-o", out, "--runs", "0:3")
    assert r.exit_code == 0, r.output
    t = json.loads(out.read_text())
    # an LLM's run slices are named by their phase ("Execute 0 · prefill"); their category says what they are
    assert len([e for e in t["traceEvents"] if e.get("cat") == "method_execute"]) == 3
    r = run("trace", REAL / "cnn.etdump", "-o", out, "--runs", "a:b")
    assert r.exit_code == 2


def test_export_formats(tmp_path):
    for fmt in ("csv", "parquet", "json"):
        r = run("export", REAL / "cnn.etdump", "--format", fmt, "-o", tmp_path / fmt)
        assert r.exit_code == 0, r.output
        assert sorted(p.name for p in (tmp_path / fmt).iterdir()) == [f"events.{fmt}", f"ops.{fmt}", f"runs.{fmt}"]
    r = run("export", REAL / "cnn.etdump", "--etrecord", REAL / "cnn.etrecord", "--format", "model-explorer",
            "-o", tmp_path / "me")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "me").iterdir()) == ["node_placement.json", "node_time_how.json",
                                                              "node_time_us.json"]
    r = run("export", REAL / "cnn.etdump", "--format", "model-explorer", "-o", tmp_path / "me2")
    assert r.exit_code == 2 and "etrecord" in r.output


def test_sql_query_and_formats():
    r = run("sql", REAL / "cnn.etdump", "SELECT op_type, sum(dur_us) FROM events GROUP BY 1 ORDER BY 2 DESC")
    assert r.exit_code == 0, r.output
    assert "op_type" in r.output and "aten.cumsum" in r.output and "rows)" in r.output
    r = run("sql", REAL / "cnn.etdump", "--format", "json", "SELECT count(*) AS n FROM runs")
    assert json.loads(r.output) == [{"n": 10}]
    r = run("sql", REAL / "cnn.etdump", "--format", "csv", "SELECT execute FROM runs ORDER BY 1 LIMIT 2")
    assert r.output.split() == ['"execute"', "0", "1"]


def test_bad_sql_is_one_clean_line_and_exit_2():
    proc = cli("sql", REAL / "cnn.etdump", "SELEC broken FROM")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("etscope: sql: ") and "Traceback" not in proc.stderr
    proc = cli("sql", REAL / "cnn.etdump", "SELECT nope FROM events")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_missing_qnn_file_exits_2(tmp_path):
    proc = cli("report", REAL / "cnn.etdump", "--qhas", tmp_path / "none.json", "-o", tmp_path / "r.html")
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_bad_etdump_exits_2_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.etdump"
    bad.write_bytes(b"not an etdump")
    for cmd in (["report", bad, "-o", tmp_path / "r.html"], ["trace", bad, "-o", tmp_path / "t.json"],
                ["sql", bad, "SELECT 1"], ["export", bad, "-o", tmp_path / "x"]):
        proc = cli(*cmd)
        assert proc.returncode == 2, cmd
        assert len(proc.stderr.strip().splitlines()) == 1 and str(bad) in proc.stderr
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "t.json").exists()


def test_report_with_qnn_files(tmp_path):
    qnn = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_etdump"
    if not (qnn / "synthetic_qnn_cnn.etdump").exists():
        import pytest

        pytest.skip("QNN ETDump fixtures not present")
    out = tmp_path / "q.html"
    r = run("report", qnn / "synthetic_qnn_cnn.etdump", "--etrecord", qnn / "synthetic_qnn_cnn.etrecord",
            "--qhas", QNN / "chain8_sm8650.qhas.json", "--optrace", QNN / "chain8_sm8650.optrace.json", "-o", out)
    assert r.exit_code == 0, r.output
    assert 'id="qnn"' in out.read_text()


def test_demo_also_writes_the_report(tmp_path):
    proc = cli("demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "demo-report.html").stat().st_size > 10_000
    proc = cli("demo", "--json", "--report", tmp_path / "d.html", cwd=tmp_path)
    assert proc.returncode == 0
    json.loads(proc.stdout)                         # stdout stays one JSON object
    assert (tmp_path / "d.html").exists()


def test_importing_the_cli_stays_light():
    code = ("import sys, etscope.cli; print(sorted(m for m in ('numpy', 'rich', 'pandas', 'duckdb', 'jinja2', "
            "'pyarrow', 'playwright') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    assert out == "[]"


def test_summary_of_a_cpu_program_loads_only_what_it_uses():
    """The 1000-run budget of issue 20: no QNN package, numpy.ma, zipfile (and the pathlib, shutil
    it pulls in), renderers or table libraries for `summary --json` of a program without QNN
    partitions, with its ETRecord."""
    # Only what etscope imports counts: a site .pth may load zipfile/pathlib before any of it.
    code = ("import sys; before = set(sys.modules); from etscope.cli import main\n"
            "sys.argv = ['etscope', 'summary', '--json', sys.argv[1], '--etrecord', sys.argv[2]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = ('numpy.ma', 'etscope.analysis.qnn.report', 'etscope.analysis.qnn.partition', 'rich', "
            "'pandas', 'pyarrow', 'duckdb', 'jinja2', 'zipfile', 'pathlib')\n"
            "print(sorted(m for m in heavy if m in sys.modules and m not in before), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(REAL / "gen_llama.etdump"), str(REAL / "gen_llama.etrecord")],
                          capture_output=True, text=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_llm_does_not_import_numpy_ma():
    """np.percentile and plain np.unique import numpy.ma (~10 ms): the llm path uses etscope.arrays'."""
    # Only what etscope imports counts: a site .pth may load zipfile/pathlib before any of it.
    code = ("import sys; before = set(sys.modules); from etscope.cli import main\n"
            "sys.argv = ['etscope', 'llm', '--json', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('numpy.ma' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(REAL / "gen_llama.etdump")], capture_output=True,
                          text=True, check=False)
    assert proc.stderr.strip().splitlines()[-1] == "False"
