"""Test helpers for the typed QNN result (``analysis.qnn.result``, ``analysis.qnn.partition_result``):
``plain`` gives a result's JSON form (what ``--json`` writes), the builders make a partition or a
report from the few fields a rule test sets (the other fields empty)."""
from __future__ import annotations

import dataclasses
import json

from etscope.analysis.qnn.model import SCHEMA
from etscope.analysis.qnn.nesting import Band, Nesting
from etscope.analysis.qnn.op_tables import QhasSummary
from etscope.analysis.qnn.partition_result import OpRow, OpTimes, Partition, PerRun
from etscope.analysis.qnn.result import QnnReport
from etscope.analysis.views.summary import QnnBrief
from etscope.render.json import dumps


def plain(result):
    """The result as its JSON writes it (dicts and lists)."""
    return json.loads(dumps(result))


def _empty(cls, **given):
    """``cls`` with ``given`` fields and every other field None (a rule test sets what it reads)."""
    return cls(**{f.name: given.get(f.name) for f in dataclasses.fields(cls)})


def nesting(bands=(), headline: str = "") -> Nesting:
    return Nesting(bands=tuple(Band(**{"adds": "", "share_of_outer": 0.0, **b}) for b in bands), scale="linear",
                   cycles_p50=None, clock_mhz=None, clock_source=None, clock_bounds_mhz=None, cycles_us=None,
                   headline=headline, headline_rule="")


def op(**given) -> OpRow:
    return _empty(OpRow, **given)


def partition(**given) -> Partition:
    """A partition of ``given`` fields; ``nesting`` / ``per_run`` / ``op_times`` / ``ops`` may be
    given as dicts (their fields)."""
    n = given.pop("nesting", None) or {}
    fields = dict(cold_runs=[], ops=(), checks=(), levels=(), notes=[], unmatched_ops=[],
                  nesting=n if isinstance(n, Nesting) else nesting(**n),
                  per_run=_empty(PerRun, **(given.pop("per_run", None) or {})),
                  op_times=_empty(OpTimes, **(given.pop("op_times", None) or {})))
    fields["ops"] = tuple(o if isinstance(o, OpRow) else op(**o) for o in given.pop("ops", ()))
    return _empty(Partition, **{**fields, **given})


def qhas(**given) -> QhasSummary:
    """A QHAS summary of ``given`` fields (the others None)."""
    return _empty(QhasSummary, **{"resources": (), "op_types": (), "warnings": (), **given})


def brief(**given) -> QnnBrief:
    """A summary's QNN row of ``given`` fields (the others None; lists empty)."""
    return _empty(QnnBrief, **{"cold_runs": [], "checks_failed": [], **given})


def report(partitions=(), **given) -> QnnReport:
    return QnnReport(**{"schema": SCHEMA, "qhas": None, "optrace": None, "htp_timeline": None, "soc": None,
                        "runtrace": None, "warnings": (), **given, "partitions": tuple(partitions)})
