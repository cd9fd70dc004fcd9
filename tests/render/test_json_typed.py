"""Typed results are written by the JSON renderer field by field (issue 33 item 1): declared order,
nested results, NaN as null, fields marked out of the JSON left out, renamed keys."""
from dataclasses import dataclass, field

import numpy as np

from etscope.render.json import dumps, to_jsonable


@dataclass(frozen=True)
class Inner:
    ms: float
    runs: tuple[int, ...]


@dataclass(frozen=True)
class Outer:
    name: str
    inner: Inner
    rows: tuple[Inner, ...]
    table: object = field(default=None, metadata={"json": False})
    per_run_us: np.ndarray = field(default_factory=lambda: np.array([1.5, np.nan]), metadata={"json": "per run (µs)"})


def test_fields_in_declared_order_nested_and_non_finite_as_null():
    r = Outer("a", Inner(float("nan"), (1, 2)), (Inner(2.0, ()),), table=object())
    assert to_jsonable(r) == {"name": "a", "inner": {"ms": None, "runs": [1, 2]},
                              "rows": [{"ms": 2.0, "runs": []}], "per run (µs)": [1.5, None]}
    assert list(to_jsonable(r)) == ["name", "inner", "rows", "per run (µs)"]


def test_dumps_of_a_typed_result_equals_dumps_of_its_dict():
    r = Outer("a", Inner(1.0, (3,)), ())
    assert dumps(r) == dumps(to_jsonable(r))


@dataclass(frozen=True)
class Part:
    a: int
    b: float = field(metadata={"json": "b_ms"})


@dataclass(frozen=True)
class Row:
    name: str
    part: Part | None = field(default=None, metadata={"inline": Part})
    extra: str | None = field(default=None, metadata={"omit_empty": True})
    last: int = 0


def test_inline_part_and_a_key_left_out_when_none():
    assert list(to_jsonable(Row("x", Part(1, 2.5)))) == ["name", "a", "b_ms", "last"]
    assert to_jsonable(Row("x", Part(1, float("inf")), extra="e")) == {"name": "x", "a": 1, "b_ms": None,
                                                                       "extra": "e", "last": 0}
    assert to_jsonable(Row("y")) == {"name": "y", "a": None, "b_ms": None, "last": 0}


@dataclass(frozen=True)
class Optional_:
    a: int
    extra: tuple = field(default=(), metadata={"omit_empty": True})


def test_a_key_the_schema_has_only_when_there_is_something():
    assert to_jsonable(Optional_(1)) == {"a": 1}
    assert to_jsonable(Optional_(1, (2,))) == {"a": 1, "extra": [2]}
