"""What the issue-31 long campaign found on the merged code (seeds 2000-2179 of campaign.py), each
a child-process run of the generated file that failed before its fix:
- ``export ETDUMP --qhas`` on a QHAS whose thread id or bytes pass int64: OverflowError traceback
  building the ``htp_ops`` table (analysis/qnn/tables.py now writes such a value as null);
- ``diff F F`` on an ETDump whose runs have no latency: numpy's "All-NaN slice" RuntimeWarning on
  stderr (arrays.nanmedian now returns NaN without it)."""
import random

import pytest

import campaign as C
import generators as G


@pytest.mark.parametrize("kind, seed, argv", [
    ("qhas", "qhas-2003", ["export", "{e}", "--qhas", "{f}", "-o", "{o}"]),
    ("qhas", "qhas-2091", ["export", "{e}", "--qhas", "{f}", "-o", "{o}"]),
    ("etdump", "etdump-2007", ["diff", "{f}", "{f}"]),
])
def test_campaign_find(tmp_path, kind, seed, argv):
    data = G.GENERATORS[kind](random.Random(seed))
    o = C.run_case(kind, data, argv, tmp_path)
    assert not o.problems(), f"{o.describe()}: {o.problems()}\n{o.stderr[-2000:]}"


def test_qhas_without_timeline_cycles(tmp_path):
    """A QHAS with dominant-path idle rows but no timeline length: the HTP-op headline formatted
    None (TypeError, caught as 'the QNN analysis failed' and the QNN section left out)."""
    data = G.GENERATORS["qhas"](random.Random("qhas-3001"))
    for argv in (["qnn", "--json", "{e}", "--qhas", "{f}"], ["trace", "{e}", "--qhas", "{f}", "-o", "{o}.json"]):
        o = C.run_case("qhas", data, argv, tmp_path)
        assert not o.problems() and "analysis failed" not in o.stderr, o.stderr[-2000:]


@pytest.mark.parametrize("seed", ["dataset-3001", "dataset-3002"])
def test_refused_adopt_says_one_line(tmp_path, seed):
    """``collect --adopt`` on a dataset with a symlinked folder printed "already layout ...; nothing
    to adopt" before its refusal: two lines for one error."""
    gen = C.EXTRA_KINDS["dataset"].make(random.Random(seed), tmp_path / "in")
    o = C.run_generated("dataset", gen, ["collect", "--adopt", "--to", "{d}"], tmp_path)
    assert not o.problems(), o.stderr


def test_deep_list_literal_is_refused_in_one_line(tmp_path):
    """Seed sql-2114: a 500-deep list literal (1 kB of query) took 2.9 s of DuckDB planning, then
    a pyarrow traceback (Arrow carries 64 levels of nested types). Now refused before parsing."""
    (tmp_path / "in").mkdir()
    gen = C.EXTRA_KINDS["sql"].make(random.Random("sql-2114"), tmp_path / "in")
    for argv in (["sql", "{f}", "--", "{q}"], ["sql", "--format", "json", "{f}", "--", "{q}"]):
        o = C.run_generated("sql", gen, argv, tmp_path)
        assert not o.problems() and o.rc == 2, (o.problems(), o.stderr[-2000:])
