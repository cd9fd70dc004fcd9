"""ETRecords that are old or partly unreadable: the command goes on with what the other files give."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL = FIXTURES / "real"
UPSTREAM = FIXTURES / "upstream" / "executorch_example_etrecord.bin"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "etscope.cli", *map(str, args)], capture_output=True, text=True)


def test_upstream_2023_etrecord_is_accepted():
    """Upstream's own sample ETRecord (torch.export schema 1) used to exit 2 on an entry nobody needs."""
    proc = _cli("summary", REAL / "gen_cnn.etdump", "--etrecord", UPSTREAM, "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert any("no debug handle or delegate map" in w for w in s["warnings"])  # that file has empty maps


def test_unreadable_graph_warns_and_the_rest_still_counts(tmp_path):
    """The edge program in a structure the reader cannot follow: the maps, the ETDump and the .pte
    still give backends, kernels and op types; the warning says what is missing. Exit 0."""
    f = tmp_path / "future.etrecord"
    with zipfile.ZipFile(REAL / "gen_cnn.etrecord") as zin, zipfile.ZipFile(f, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "edge_dialect_exported_program/forward":
                data = b'{"graph_module": {"graph": {"nodes": {"a": "future layout"}}}, "schema_version": 99}'
            zout.writestr(info.filename, data)
    proc = _cli("summary", REAL / "gen_cnn.etdump", "--etrecord", f, "--pte", REAL / "gen_cnn.pte", "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    (w,) = [w for w in s["warnings"] if "cannot be read" in w]
    assert "edge_dialect_exported_program/forward" in w and "schema 99" in w and "left out" in w
    (fb,) = s["fallback_ops"]
    assert fb["kernel"] == "native_call_cumsum.out" and fb["op_type"] == "aten.cumsum.out"  # from the .pte
    assert fb["source"] is None                              # that needs the graph
    good = json.loads(_cli("summary", REAL / "gen_cnn.etdump", "--etrecord", REAL / "gen_cnn.etrecord",
                           "--pte", REAL / "gen_cnn.pte", "--json").stdout)
    assert s["breakdown"] == good["breakdown"]


def test_damaged_etrecord_still_exits_2(tmp_path):
    f = tmp_path / "damaged.etrecord"
    data = bytearray((REAL / "gen_cnn.etrecord").read_bytes())
    pos = data.find(b'{"graph_module"')
    data[pos + 50] ^= 0xFF  # stored entry: its CRC no longer matches
    f.write_bytes(bytes(data))
    proc = _cli("summary", REAL / "gen_cnn.etdump", "--etrecord", f)
    assert proc.returncode == 2 and "damaged" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
