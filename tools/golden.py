"""Golden outputs (issue 14): what each command prints for every ETDump fixture, saved before a
behaviour-unchanged refactor so that a test can show the outputs did not change.

For each ETDump under tests/fixtures/{real,qnn_etdump,diff}, with its ETRecord/.pte paired as
tests/test_consistency.py pairs them (its ``_companions``), this runs in-process (click's CliRunner):
``summary --json``, ``ops --json``, ``ops --by module --json`` (with an ETRecord), ``qnn --json`` (when the summary names QNN partitions),
``llm --json``, ``diff A A --json``, ``export --format csv`` (events, ops, runs tables), ``trace``
and the data blob of ``report``; for the diff sessions also ``diff diff_same_00 X --json`` for
every other ETDump X of tests/fixtures/diff.

Normalised (legitimately volatile) before saving and comparing: absolute paths. Every string that
holds the fixtures folder is rewritten to start with ``<fixtures>``, and the temporary output folder
to ``<tmp>``; the report's creation time (``generated``) becomes ``<time>``. Nothing else is touched: numbers, order and wording must be identical.

Stored as one gzip JSON per fixture in tests/golden/NAME.json.gz.

    PYTHONPATH=src python tools/golden.py          # (re)write tests/golden/
    PYTHONPATH=src python tools/golden.py --check  # compare, list what differs
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
DIRS = ("real", "qnn_etdump", "diff")
_BLOB = re.compile(r'<script type="application/json" id="etscope-data">(.*?)</script>', re.S)


def _companions(etdump: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_consistency import _companions as pair
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return pair(etdump)


def fixtures() -> list[Path]:
    return sorted(p for d in DIRS for p in (FIXTURES / d).glob("*.etdump"))


def _run(args: list) -> str:
    from etscope.cli import main
    res = CliRunner().invoke(main, [str(a) for a in args])
    if res.exit_code != 0:
        raise RuntimeError(f"etscope {' '.join(map(str, args))}: exit {res.exit_code}\n{res.output}{res.exception!r}")
    return res.stdout


def _inputs(etdump: Path) -> list:
    comp = _companions(etdump)
    return [etdump] + [x for kind in ("etrecord", "pte") if kind in comp for x in (f"--{kind}", comp[kind])]


def _pair_inputs(base: Path, new: Path) -> list:
    cb, cn = _companions(base), _companions(new)
    out = [base, new]
    for kind in ("etrecord", "pte"):
        out += [x for side, c in (("base", cb), ("new", cn)) if kind in c for x in (f"--{kind}-{side}", c[kind])]
    return out


def _normalise(x, tmp: str):
    if isinstance(x, dict):
        return {k: _normalise(v, tmp) for k, v in x.items()}
    if isinstance(x, list):
        return [_normalise(v, tmp) for v in x]
    if isinstance(x, str):
        return x.replace(tmp, "<tmp>").replace(str(FIXTURES), "<fixtures>")
    return x


def collect(etdump: Path) -> dict:
    """Every command's output for one ETDump (normalised)."""
    inp = _inputs(etdump)
    out: dict = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        out["summary"] = json.loads(_run(["summary", *inp, "--json"]))
        out["ops"] = json.loads(_run(["ops", *inp, "--json"]))
        if "--etrecord" in inp:
            out["ops_by_module"] = json.loads(_run(["ops", *inp, "--by", "module", "--json"]))
        s = out["summary"]
        method = ["--method", s["method"]] if "events_of_method" in s["etdump"] and s["method"] else []
        out["llm"] = json.loads(_run(["llm", *inp, *method, "--json"]))
        out["qnn"] = json.loads(_run(["qnn", *inp, "--json"])) if s.get("qnn") else None
        _run(["export", *inp, "--format", "csv", "-o", tmp / "export"])
        out["export_csv"] = {f.name: list(csv.reader(io.StringIO(f.read_text())))
                             for f in sorted((tmp / "export").iterdir())}
        _run(["trace", *inp, "-o", tmp / "trace.json"])
        out["trace"] = json.loads((tmp / "trace.json").read_text())
        _run(["report", *inp, "-o", tmp / "report.html"])
        out["report_data"] = json.loads(_BLOB.search((tmp / "report.html").read_text()).group(1))
        out["report_data"]["generated"] = "<time>"      # the report's creation time
        out["diff_self"] = json.loads(_run(["diff", *_pair_inputs(etdump, etdump), "--json"]))
        base = FIXTURES / "diff" / "diff_same_00.etdump"
        if etdump.parent.name == "diff" and etdump != base:
            out["diff_from_same_00"] = json.loads(_run(["diff", *_pair_inputs(base, etdump), "--json"]))
        return _normalise(out, str(tmp))


def golden_path(etdump: Path) -> Path:
    return GOLDEN / f"{etdump.parent.name}__{etdump.stem}.json.gz"


def load(etdump: Path) -> dict:
    return json.loads(gzip.decompress(golden_path(etdump).read_bytes()))


def first_difference(a, b, path: str = "") -> str | None:
    """Where ``a`` and ``b`` first differ (exact: same keys, order, types and values)."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r:.80} != {type(b).__name__} {b!r:.80}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and a != a and b != b:      # NaN is NaN
        return None
    return None if a == b else f"{path}: {a!r:.120} != {b!r:.120}"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    GOLDEN.mkdir(parents=True, exist_ok=True)
    bad = 0
    for etdump in fixtures():
        got = collect(etdump)
        if check:
            d = first_difference(load(etdump), got)
            if d:
                bad += 1
                print(f"{etdump.name}: {d}")
        else:
            # mtime=0: the same outputs give the same bytes (no spurious git changes).
            golden_path(etdump).write_bytes(gzip.compress(json.dumps(got, separators=(",", ":")).encode(), 9, mtime=0))
            print(f"{golden_path(etdump).relative_to(ROOT)}: {golden_path(etdump).stat().st_size} bytes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
