"""The summary (``etscope summary``) is a tree of frozen dataclasses (issue 33 item 1): no dict but
the mappings keyed by the data (the inputs by kind, blob bytes by backend, the input kinds' views),
and a stored summary read back is the same typed result, printed the same."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from rich.console import Console

from etscope import api
from etscope.analysis.views.stored_summary import stored_result
from etscope.render.json import to_jsonable
from etscope.render.text import render_summary

FIX = Path(__file__).resolve().parents[1] / "fixtures"

FIXTURES = {"cnn": ("real/gen_cnn", False), "llama_phases": ("real/gen_llama", False),
            "multipart": ("real/gen_multipart", True), "mixed": ("real/gen_llama_mixed", True),
            "qnn": ("qnn_etdump/synthetic_qnn_llm", True), "qnn_device": ("qnn_etdump/synthetic_qnn_chain8_device", True)}
MAPPINGS = {"inputs", "delegate_blob_bytes", "views"}     # keyed by the data, not by the schema


def _results(name):
    stem, with_companions = FIXTURES[name]
    kw = {k: FIX / f"{stem}.{k}" for k in ("etrecord", "pte") if with_companions and (FIX / f"{stem}.{k}").exists()}
    return api.results(api.load(FIX / f"{stem}.etdump", **kw))


def _untyped(x, path="summary") -> list[str]:
    """Paths in ``x`` that are neither a frozen dataclass, a tuple, a scalar nor an allowed mapping."""
    if dataclasses.is_dataclass(x):
        if not x.__dataclass_params__.frozen:
            return [f"{path}: {type(x).__name__} is not frozen"]
        return [p for f in dataclasses.fields(x) if f.name != "qnn_heap"
                for p in (_mapping(getattr(x, f.name), f"{path}.{f.name}") if f.name in MAPPINGS
                          else _untyped(getattr(x, f.name), f"{path}.{f.name}"))]
    if isinstance(x, tuple):
        return [p for i, v in enumerate(x) for p in _untyped(v, f"{path}[{i}]")]
    if x is None or isinstance(x, (str, int, float, bool)):
        return []
    return [f"{path}: {type(x).__name__}"]


def _mapping(x, path) -> list[str]:
    if x is None:
        return []
    if not isinstance(x, dict):
        return [f"{path}: {type(x).__name__}, not a mapping"]
    return [p for k, v in x.items() for p in _untyped(v, f"{path}.{k}")]


@pytest.mark.parametrize("name", FIXTURES)
def test_summary_is_a_tree_of_frozen_dataclasses(name):
    r = _results(name)
    assert _untyped(r.summary_view) == []
    doc = api.summary_document(r)
    assert _untyped(doc, "document") == []


def test_qnn_files_alone_summary_is_typed():
    from etscope.inputs import read_view_qnn_files, view_results

    r = view_results(None, read_view_qnn_files(qnn_csv=str(FIX / "qnn" / "chain8_sm8650.profile.txt")))
    s = r.summary_view
    assert _untyped(s) == [] and s.qnn_only is not None and s.phase is None
    assert "phase" not in to_jsonable(s) and to_jsonable(s)["qnn_only"]["files"] == ["qnn_csv"]


def _text(s, findings=()) -> str:
    buf = io.StringIO()
    render_summary(s, Console(file=buf, width=120, highlight=False, force_terminal=False), findings=findings)
    return buf.getvalue()


@pytest.mark.parametrize("name", FIXTURES)
def test_a_stored_summary_reads_back_as_the_same_result(name):
    """What collect stores (the JSON) read back: the same JSON, and the same text."""
    r = _results(name)
    s = r.summary_view
    stored = to_jsonable(s)
    back = stored_result(stored)
    assert to_jsonable(dataclasses.replace(back, findings=s.findings)) == stored
    assert _text(back, r.findings) == _text(s, r.findings)
