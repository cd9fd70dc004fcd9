"""Issue 12: small, well-formed ETDumps whose values are chosen to hurt (built by
``hostile_valid.py``) give a result or one error line with exit 2 in every command: no traceback,
no numpy warning on stderr."""
from __future__ import annotations

import json
import os
import warnings

import pytest
from click.testing import CliRunner

import hostile_valid as HV
from etscope.cli import main

COMMANDS = [["summary"], ["summary", "--json"], ["ops"], ["ops", "--json"], ["qnn"], ["qnn", "--json"], ["llm"],
            ["llm", "--json"], ["report", "-o", "r.html"], ["trace", "-o", "t.json"], ["export", "-o", "exp"],
            ["export", "--format", "json", "-o", "expj"], ["sql", "select count(*) as n from events"]]


def run(args, cwd):
    """The CLI in this process: any exception other than the exit is a traceback; every warning
    (numpy RuntimeWarning included) is recorded."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    finally:
        os.chdir(old)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        raise AssertionError(f"etscope {' '.join(map(str, args))}: traceback\n"
                             + "".join(traceback.format_exception(r.exception)))
    bad = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    assert not bad, f"etscope {' '.join(map(str, args))}: warnings {[str(w.message) for w in bad]}"
    assert r.exit_code in (0, 2), (args, r.exit_code, r.output[-2000:])
    return r


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile_valid")
    return d, HV.write_all(d)


@pytest.mark.parametrize("case", sorted(HV.CASES))
def test_every_command_on_hostile_valid_etdump(files, case, tmp_path):
    d, paths = files
    for cmd in COMMANDS:
        args = [cmd[0], str(paths[case]), *cmd[1:]]
        r = run(args, tmp_path)
        if r.exit_code == 2:
            assert "etscope:" in r.output or "Error:" in r.output


def test_qnn_integer_debug_id_is_analysed(files, tmp_path):
    """The QNN partition is still found and its named events kept; the integer-id event is not a
    QNN event name (was IndexError)."""
    d, paths = files
    r = run(["qnn", str(paths["qnn_integer_debug_id"]), "--json"], tmp_path)
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["qnn"]["partitions"], doc["qnn"]
    r = run(["ops", str(paths["integer_debug_id_only"]), "--json"], tmp_path)
    names = [o["name"] for o in json.loads(r.output)["ops"]]
    assert None not in names and "(unnamed delegate event)" in names


def test_zero_length_execute_llm_has_no_rate(files, tmp_path):
    d, paths = files
    r = run(["llm", str(paths["zero_length_execute"]), "--json"], tmp_path)
    assert r.exit_code == 0
    assert "tokens/s" not in " ".join(json.loads(r.output).get("findings") or [])


@pytest.mark.parametrize("empty", ["no_execute_runs", "empty_execute_runs"])
@pytest.mark.parametrize("side", ["base", "new", "compare"])
def test_diff_side_without_execute_runs(files, tmp_path, empty, side):
    d, paths = files
    e, n = str(paths[empty]), str(paths["normal"])
    args = {"base": ["diff", e, n], "new": ["diff", n, e], "compare": ["report", n, "--compare", e, "-o", "r.html"]}[side]
    for extra in ([], ["--json"]) if side != "compare" else ([],):
        r = run(args + extra, tmp_path)
        assert r.exit_code == 2 and "no Execute run" in r.output
    assert not (tmp_path / "r.html").exists()


def test_diff_zero_length_and_huge_timestamps(files, tmp_path):
    d, paths = files
    for a, b in (("normal", "zero_length_execute"), ("zero_length_execute", "zero_length_execute"),
                 ("huge_timestamp", "normal"), ("normal", "qnn_integer_debug_id")):
        r = run(["diff", str(paths[a]), str(paths[b]), "--json", "--html", "p.html"], tmp_path)
        assert r.exit_code == 0


def test_huge_timestamps_in_views(files, tmp_path):
    """Timestamps at and past 2**63 (uint64): trace / export / sql give their values exactly."""
    d, paths = files
    r = run(["sql", str(paths["huge_timestamp"]), "select max(start_ns) as s from events", "--format", "json"],
            tmp_path)
    assert r.exit_code in (0, 2)
    r = run(["trace", str(paths["huge_timestamp"]), "-o", "t.json"], tmp_path)
    assert r.exit_code == 0
    json.loads((tmp_path / "t.json").read_text())
