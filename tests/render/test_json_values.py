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


def _json_reference(obj, indent):
    return json.JSONEncoder(indent=indent, ensure_ascii=False, allow_nan=False).encode(obj)


def test_indented_text_is_jsons_byte_for_byte():
    """render.json_indent joins plain lists and rows in one step: the text must stay json's own,
    for every kind of value, nesting, empty containers and strings that need escaping."""
    from etscope.render.json_indent import chunks

    class Str(str):
        pass

    class Int(int):
        pass

    rng = np.random.default_rng(2)
    floats = (rng.normal(size=300) * 10.0 ** rng.integers(-12, 15, 300)).tolist() + [0.0, -0.0, 1e308, 5e-324]
    cases = [
        floats, [1, 2, 10 ** 30, -5], [1, 2.5, -0.0], [10 ** 400, 1.0], ["a", "é\n\"\\", "\x00\x1f", ""],
        [None, True, False, 0, 1.5, "x"], [], {}, [[]], [{}], {"": []}, [[1, 2], [3.0, None], []],
        {"rows": [{"name": "op\t1", "ms": 1.25, "n": 3, "cpu": True, "note": None}, {"name": "b"}],
         "series": {"latency_ms": floats[:50], "phase": ["prefill", "decode"] * 5, "warmup": [True, False]},
         "empty": {}, "nested": {"a": {"b": {"c": [1, {"d": []}]}}}},
        {1.5: "float key", True: 1, None: 2, 7: 3, "s": 4}, (1, (2, 3)), [Str("sub"), Int(4)], "top",
        3, None, 2.5, [math.pi] * 3 + ["mix"],
    ]
    for indent in (2, 1, 4, 0):
        for c in cases:
            assert "".join(chunks(c, indent)) == _json_reference(c, indent), (indent, c)


def test_indented_text_refuses_what_json_refuses():
    import pytest

    from etscope.render.json_indent import chunks

    for bad in ([1.0, math.nan], [math.inf], {"a": -math.inf}, [10 ** 400, math.inf]):
        with pytest.raises(ValueError):
            "".join(chunks(bad, 2))
    for bad in ([object()], {"a": {1, 2}}, {(1, 2): 3}):
        with pytest.raises(TypeError):
            "".join(chunks(bad, 2))


def _clean_item_by_item(x, depth=0):
    """render.html._clean written out item by item (the rule before its list fast path)."""
    from etscope.render.html import MAX_LIST
    from etscope.display import without_controls

    if depth > 20:
        return None
    if isinstance(x, str):
        return without_controls(x)
    if isinstance(x, dict):
        return {without_controls(str(k)): _clean_item_by_item(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean_item_by_item(v, depth + 1) for v in x[:MAX_LIST]]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float):
        return None if (math.isnan(x) or math.isinf(x)) else x
    if isinstance(x, str):
        return without_controls(x)
    return x


def test_report_data_cleaning_of_plain_lists_is_item_by_item():
    """The page's data: lists of plain numbers, or of strings, take a path without a call per item,
    with the same result (NaN and infinities to None, controls replaced, lists cut, deep nesting
    cut), types included."""
    from etscope.render.html import MAX_LIST, _clean

    rng = np.random.default_rng(3)
    long = rng.normal(size=MAX_LIST + 10).tolist() + [math.nan, math.inf]
    deep: list = [1.5, math.nan]
    for _ in range(25):
        deep = [deep, [2.0, math.inf], ["a\x1bb"]]
    cases = [long, (1, 2.0, math.nan), [True, None, 0, -0.0, math.inf, 10 ** 30], ["ok", "bell\x07", "\u202eevil"],
             [np.float64(1.0), 2.0], [1, "x", math.nan], [], {"a": [math.nan, 1], "b": ("x\x00", "y")}, deep,
             [[1.0, math.nan], ["s"], []]]
    for c in cases:
        got, want = _clean(c), _clean_item_by_item(c)
        assert json.dumps(got) == json.dumps(want)
        flat = lambda v: [type(i) for i in v] if isinstance(v, list) else type(v)   # noqa: E731
        assert flat(got) == flat(want)


def test_the_escape_scan_finds_exactly_what_is_escaped():
    """_safe skips its translation when one scan finds nothing to escape: the scan's characters are
    the escaped ones (C1, DEL, direction marks, separators) and the lone surrogates, no others."""
    import re

    from etscope.render import json as J

    scan = re.compile(J._TO_ESCAPE)
    for c in [*range(0x3000), *range(0xD700, 0xE100), 0xFEFF, 0x10FFFF]:
        assert bool(scan.match(chr(c))) == (c in J._C1 or 0xD800 <= c <= 0xDFFF), hex(c)
    assert dumps(["µs → ok"], indent=None) == '["µs → ok"]'
    assert dumps(["a\x85b\u2028"], indent=None) == '["a\\u0085b\\u2028"]'
