"""Each command runs each analysis at most once (issue 14): the analyses are counted while the
command runs in-process, on a QNN program with its ETRecord and on an LLM run."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import etscope.analysis.diff.compare
import etscope.analysis.llm
import etscope.analysis.ops.nodes
import etscope.analysis.ops.per_op
import etscope.analysis.qnn
import etscope.analysis.views.report
import etscope.analysis.results
import etscope.analysis.views.summary
import etscope.formats.qnn_compile_spec
from etscope.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
QNN = FIXTURES / "qnn_etdump" / "synthetic_qnn_cnn"
LLM = FIXTURES / "real" / "gen_llama"

COUNTED = [
    (etscope.analysis.ops.per_op, "op_table"), (etscope.analysis.qnn, "qnn_report"), (etscope.analysis.llm, "llm_report"),
    (etscope.analysis.views.summary, "summary_of"), (etscope.formats.qnn_compile_spec, "soc_from_pte"),
    (etscope.analysis.ops.nodes, "node_table"), (etscope.analysis.views.report, "hierarchy"),
    (etscope.analysis.views.report, "placement_by_op_type"), (etscope.analysis.views.report, "checks"),
    (etscope.analysis.diff.compare, "compare"),
]


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Counts calls of each analysis per input (its first argument: a profile, or for ``diff`` the
    two sides), wherever a module holds it (``from x import f`` included). `diff` analyses two
    profiles: each is analysed once."""
    counts: Counter = Counter()
    for module, name in COUNTED:
        original = getattr(module, name)

        def counted(*a, _f=original, _n=name, **kw):
            # soc_from_pte(None): no program, nothing read (each side of a diff without a .pte asks)
            if not (_n == "soc_from_pte" and a and a[0] is None):
                counts[_n, id(a[0]) if a else None] += 1
            return _f(*a, **kw)
        for m in [m for k, m in list(sys.modules.items()) if k.startswith("etscope") and m is not None]:
            for attr, value in list(vars(m).items()):
                if value is original:
                    monkeypatch.setattr(m, attr, counted)
    return counts


def _inputs(stem: Path) -> list[str]:
    out = [f"{stem}.etdump"]
    for kind in ("etrecord", "pte"):
        if Path(f"{stem}.{kind}").exists():
            out += [f"--{kind}", f"{stem}.{kind}"]
    return out


def _commands(stem: Path, tmp: Path) -> dict[str, list[str]]:
    inp = _inputs(stem)
    return {
        "summary": ["summary", *inp, "--json"], "ops": ["ops", *inp, "--json"], "qnn": ["qnn", *inp, "--json"],
        "llm": ["llm", *inp, "--json"], "report": ["report", *inp, "-o", str(tmp / "r.html")],
        "trace": ["trace", *inp, "-o", str(tmp / "t.json")],
        "export": ["export", *inp, "-o", str(tmp / "csv")],
        "sql": ["sql", *inp, "select count(*) from events"],
        "diff": ["diff", f"{stem}.etdump", f"{stem}.etdump", "--json"],
    }


@pytest.mark.parametrize("stem", [QNN, LLM], ids=lambda s: s.name)
@pytest.mark.parametrize("command", ["summary", "ops", "qnn", "llm", "report", "trace", "export", "sql", "diff"])
def test_each_analysis_runs_once(calls, tmp_path, stem, command):
    res = CliRunner().invoke(main, _commands(stem, tmp_path)[command])
    assert res.exit_code == 0, res.output
    assert {k[0]: n for k, n in calls.items() if n > 1} == {}


def test_report_runs_the_analyses_it_shows(calls, tmp_path):
    res = CliRunner().invoke(main, _commands(QNN, tmp_path)["report"])
    assert res.exit_code == 0, res.output
    names = ("op_table", "qnn_report", "summary_of", "llm_report", "node_table", "hierarchy", "checks")
    assert Counter(k[0] for k in calls if k[0] in names) == dict.fromkeys(names, 1)
    assert all(n == 1 for n in calls.values())
