"""``analysis.diff.compare`` with its results as ``etscope diff --json`` writes them (``render.json.
to_jsonable`` of the typed result): the diff tests that check the schema's keys and values read
this; the typed result itself is tested by attribute in tests/analysis/test_diff_typed.py."""
from etscope.analysis.diff import compare as _compare
from etscope.render.json import to_jsonable


def compare(*args, **kwargs) -> dict:
    return to_jsonable(_compare.compare(*args, **kwargs))


def compare_runs(*args, **kwargs) -> dict:
    return to_jsonable(_compare.compare_runs(*args, **kwargs))


def __getattr__(name):          # everything else as the module has it
    return getattr(_compare, name)
