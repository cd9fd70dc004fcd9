"""trend explains a change point with the facts the dataset stores about each file (issue 37 item
4): metadata given at collect (a sidecar's keys other than the partition and order) that differ
from the build before, in words on the page, in the text and in the JSON; and a fact that changes
where the latency does not is in the build table, not a change point."""
from __future__ import annotations

import json

from etdump_series import write_series
from test_collect import cli


def test_change_point_names_the_stored_facts_that_changed(tmp_path):
    paths = write_series(tmp_path / "in", seed=1, slower=(1.3, 5))
    for p in paths:
        side = p.with_name(p.stem + ".meta.json")
        meta = json.loads(side.read_text())
        b = int(meta["order"])
        meta["executorch"] = "1.4" if b < 5 else "1.5"        # the upgrade that made it slower
        meta["runner"] = "r1" if b < 2 else "r2"              # changed where the latency did not
        side.write_text(json.dumps(meta))
    r = cli("collect", tmp_path / "in", "--to", tmp_path / "ds", "--workers", "2")
    assert r.returncode == 0, r.stderr
    r = cli("trend", "--dataset", tmp_path / "ds", "--json", "--html", tmp_path / "t.html")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["series"][0]
    assert [(c["build"], c["verdict"]) for c in s["changes"]] == [("9aab", "regression")]
    assert [(f["build"], f["changed"]) for f in s["fact_changes"]] == [
        ("3dde", [{"name": "runner", "before": "r1", "after": "r2"}]),
        ("9aab", [{"name": "executorch", "before": "1.4", "after": "1.5"}])]
    page = (tmp_path / "t.html").read_text()
    blob = json.loads(page.split('id="etscope-data">', 1)[1].split("</script>", 1)[0])
    (marker,) = blob["series"][0]["markers"]
    assert marker["build"] == "9aab"
    assert marker["explain"][-1] == f"recorded facts changed after {4 * 7919 % 65536:04x}: executorch 1.4 → 1.5"
    rows = {b["build"]: b for b in blob["series"][0]["builds"]}
    assert rows["3dde"]["facts"] == "runner r1 → r2" and rows["3dde"]["marker"] is None
    r = cli("trend", "--dataset", tmp_path / "ds")
    text = " ".join(r.stdout.split())
    assert f"At 9aab: recorded facts changed after {4 * 7919 % 65536:04x}: executorch 1.4 → 1.5" in text and "{'" not in text


def test_a_qnn_file_has_its_htp_clock_and_metadata_as_facts(tmp_path):
    from etscope.fleet.dataset import Dataset, trend_inputs
    from test_collect import QNN

    r = cli("collect", QNN / "synthetic_qnn_cnn.etdump", "--to", tmp_path / "ds", "--meta", "build=b1",
            "--meta", "qnn_sdk=2.30", "--meta", "order=1")
    assert r.returncode == 0, r.stderr
    clock = json.loads(cli("sql", "--dataset", tmp_path / "ds", "SELECT median(clock_mhz_used) c, "
                           "any_value(clock_source) s FROM qnn", "--format", "json").stdout)[0]
    sessions, _ = trend_inputs(Dataset(tmp_path / "ds"))
    assert {x.facts for x in sessions} == {(("HTP clock", f"{clock['c']:.0f} MHz ({clock['s']})"), ("qnn_sdk", "2.30"))}
