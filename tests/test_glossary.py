"""One name per quantity (issue 33 item 2): the levels and statistics are defined once, in
analysis/glossary.py, and read by the analyses (QNN's levels, the containers, the trace, llm's
accelerator) and the README."""
from pathlib import Path

from etscope.analysis import glossary
from etscope.analysis.qnn import container, model
from etscope.analysis.views import trace
from etscope.render.glossary_text import markdown, with_glossary

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_glossary_is_the_modules():
    text = README.read_text(encoding="utf-8")
    assert with_glossary(text) == text, "python -m etscope.render.glossary_text README.md"
    assert markdown() in text


def test_every_qnn_level_list_is_the_glossarys_nesting():
    events = [lv.event for lv in glossary.QNN_TIME_LEVELS]
    assert [k[0] if isinstance(k, tuple) else k for k, _, _ in model.LEVELS] == ["DELEGATE_CALL", *events]
    assert list(trace.QNN_LEVELS) == events
    assert [k[0] for k in container.CONTAINER_LEVELS] == events[::-1]
    assert container.BOUND_LEVELS[0] == model.ACCEL_US == (glossary.ACCELERATOR.event, "us")


def test_names_and_keys_are_unique():
    for items, attr in ((glossary.NESTING, "key"), (glossary.NESTING, "event"), (glossary.NESTING, "label"),
                        (glossary.STATISTICS, "label"), (glossary.TERMS, "word")):
        names = [getattr(i, attr) for i in items]
        assert len(names) == len(set(names)), attr


def test_steady_run_words_match_the_warmup_rule():
    from etscope.analysis import stats
    (steady,) = [t for t in glossary.TERMS if t.word == "steady run"]
    assert f"{stats.WARMUP_FACTOR:g}×" in steady.meaning
    assert f"{stats.WARMUP_MAX_SHARE:.0%}" in steady.meaning
    assert f"{stats.WARMUP_MIN_RUNS} runs" in steady.meaning
