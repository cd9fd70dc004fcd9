"""render.json.to_jsonable: what JSON cannot hold becomes null; lists of plain numbers (per-run
series) take a path without a call per value, with the same result."""
import json
import math

import numpy as np

from etscope.render.json import dumps, to_jsonable


def _slow(x):
    """The rule written out item by item (the reference)."""
    if isinstance(x, dict):
        return {str(k): _slow(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_slow(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, np.ndarray):
        return _slow(x.tolist())
    return x


def test_same_as_item_by_item_on_mixed_and_numeric_lists():
    rng = np.random.default_rng(0)
    series = rng.normal(size=1000).tolist() + [math.nan, math.inf, -math.inf, 0, -0.0, 10 ** 30, 3]
    cases = [series, tuple(series), [True, 1.5, None], [np.float64(2.5), 1.0], [1, "x", math.nan],
             {"a": [1, 2, math.nan], 3: (math.inf,), "b": np.array([1.0, np.nan])}, [[1.0, math.nan], [2]],
             [], [math.nan], [False, 0]]
    for c in cases:
        got = to_jsonable(c)
        assert json.dumps(got) == json.dumps(_slow(c))
        assert [type(v) for v in (got if isinstance(got, list) else [])] == \
            [type(v) for v in (_slow(c) if isinstance(got, list) else [])]
    assert dumps([1.0, math.nan, math.inf, 2], indent=None) == "[1.0, null, null, 2]"


def test_report_run_columns_rounded_as_value_by_value():
    from etscope.render.html import _r, _rounded_column

    rng = np.random.default_rng(1)
    values = (rng.normal(size=500) * 10.0 ** rng.integers(-9, 12, 500)).tolist() + [
        math.nan, math.inf, -math.inf, 0.0, -0.0, 1, None, True, np.float64(1.23456789), "x", 123456789.0]
    got = _rounded_column(values)
    want = [_r(x) if isinstance(x, float) else x for x in values]
    assert json.dumps(got) == json.dumps(want)
    assert [type(v) for v in got] == [type(v) for v in want]
