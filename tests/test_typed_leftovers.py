"""Issue 33 item 1, the consumers' leftovers: what the CLI, the notebook API and the renderers read
of analysed results is typed (frozen dataclasses), and their JSON is what the dicts were."""
import dataclasses
import json
from pathlib import Path

import pytest

import etscope
from etscope import api
from etscope.analysis.qnn.partition_files import PlacedFile, assign, partition_op_names
from etscope.analysis.views.qnn_view import QnnPhaseView
from etscope.formats.pte import read_pte
from etscope.formats.qnn_compile_spec import QnnSoc, soc_from_pte
from etscope.render.json import dumps

FIX = Path(__file__).resolve().parent / "fixtures"
HYBRID = FIX / "qnn_hybrid" / "synthetic_qnn_hybrid_stories.etdump"
HYBRID_PTE = FIX / "shared" / "qnn-device" / "stories260k_hybrid_llama_qnn.pte"
SHARDS = FIX / "qnn_hybrid" / "synthetic_qnn_4shard"
CNN = FIX / "real"


def _frozen(x) -> bool:
    return dataclasses.is_dataclass(x) and type(x).__dataclass_params__.frozen


def test_soc_from_pte_is_typed_and_writes_the_keys_it_had():
    soc = soc_from_pte(read_pte(str(HYBRID_PTE)))
    assert isinstance(soc, QnnSoc) and _frozen(soc)
    assert (soc.soc_model, soc.htp_arch, soc.vtcm_bytes) == ("SM8650", "V75", 8 << 20)
    assert list(json.loads(dumps(soc))) == ["soc_model", "htp_arch", "vtcm_bytes", "profile_level"]
    assert soc_from_pte(None) is None


def test_qnn_phases_are_typed_entries_with_the_row_keys_then_qnn():
    view = api.qnn_from_files(str(HYBRID), pte=str(HYBRID_PTE))
    assert len(view.phases) == 2
    for part, row in zip(view.phases, view.phase_rows):
        assert isinstance(part, QnnPhaseView) and _frozen(part) and part.qnn.phase.name == row.name
        doc = json.loads(dumps(part))
        assert list(doc) == ["name", "method", "runs", "warmup_runs", "latency_ms", "qnn"]
        assert {k: v for k, v in doc.items() if k != "qnn"} == json.loads(json.dumps(row.to_dict()))


def test_assigned_qnn_files_are_typed():
    from etscope import profile as P
    from etscope.inputs import read_view_qnn_files

    files = read_view_qnn_files([f"{SHARDS}.shard{k}.qhas.json" for k in (0, 1)], [f"{SHARDS}.shard0.optrace.json"])
    profile = P.load(f"{SHARDS}.etdump", etrecord=f"{SHARDS}.etrecord")
    rows = assign(files, partition_op_names(profile), profile.method)
    assert len(rows) == 3 and all(isinstance(r, PlacedFile) and _frozen(r) for r in rows)
    assert all(r.partition is not None and r.how == "op names" and r.match_ratio > 0 for r in rows)


def test_notebook_load_takes_profile_arguments_and_input_kinds_by_name():
    p = etscope.load(str(CNN / "cnn.etdump"), str(CNN / "cnn.etrecord"), str(CNN / "cnn.pte"))
    assert p.source_files.pte == str(CNN / "cnn.pte") and p.source_files.etdump == str(CNN / "cnn.etdump")
    assert "program_constants" in p.llm_options
    assert api.runs_df(p).shape[0] == p.n_runs and list(p.tables)[:3] == ["events", "ops", "runs"]
    with pytest.raises(TypeError, match="no_such_kind"):
        etscope.load(str(CNN / "cnn.etdump"), no_such_kind="x")


def test_profile_sources_typed_write_only_the_files_given():
    p = etscope.load(str(CNN / "cnn.etdump")).profile
    assert json.loads(dumps(p.source_files)) == p.sources == {"etdump": str(CNN / "cnn.etdump")}


def test_html_writers_return_a_typed_record(tmp_path):
    from etscope.render.files import Written
    from etscope.render.html import write_report

    out = tmp_path / "r.html"
    w = write_report(str(out), api.results(etscope.load(str(CNN / "cnn.etdump"))).view)
    assert isinstance(w, Written) and _frozen(w) and w.bytes == out.stat().st_size
