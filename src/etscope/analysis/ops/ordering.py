"""Row orders of the per-op tables (``--sort``): largest first, by the statistic the table shows.


if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

The ops table keeps its nesting when sorted: an instruction's rows (the call, then what is logged
inside it) stay together; instructions are ordered by their call row, the rows inside by the same
key. Ties and rows without the key keep their original (instruction) order.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

SORT_KEYS = ("p50", "mean", "total", "share", "cycles")
OPS_DEFAULT = "total"
QNN_DEFAULT = "cycles"

OPS_SORT_TITLE = {
    "p50": "instructions by largest p50 first", "mean": "instructions by largest mean first",
    "total": "instructions by largest total first", "share": "instructions by largest share first",
    "cycles": "instructions by most cycles (p50 of the rows in cycles) first",
}
QNN_SORT_TITLE = {"cycles": "highest p50 first", "p50": "highest p50 first", "mean": "highest mean first",
                  "total": "highest share first", "share": "highest share first"}

_NONE = float("-inf")


def _op_value(row: OpRow, by: str) -> float:
    """The row's value for ``by``: time keys in ms (rows in time units only), ``share``, or the p50
    of a row counted in cycles; -inf when the row has none."""
    if by == "cycles":
        v = row.p50 if row.unit == "cycles" else None
    elif by == "share":
        v = row.share
    else:
        v = getattr(row, f"{by}_ms")          # p50_ms, mean_ms, total_ms
    return _NONE if v is None or v != v else float(v)


def order_ops(rows: list[OpRow], by: str = OPS_DEFAULT) -> list[OpRow]:
    """``analysis.ops.per_op.op_table`` rows, instructions from the largest ``by`` down (see the module doc)."""
    if by not in SORT_KEYS:
        raise ValueError(f"sort key {by!r}: use one of {', '.join(SORT_KEYS)}")
    groups: list[list[OpRow]] = []
    for r in rows:
        if groups and r.instruction_id == groups[-1][0].instruction_id:
            groups[-1].append(r)
        else:
            groups.append([r])

    def key(r):
        return -_op_value(r, by)

    def group_key(g):
        calls = [r for r in g if r.level == 0] or g
        best = max(_op_value(r, by) for r in (g if by == "cycles" else calls))
        return -best

    out: list[OpRow] = []
    for g in sorted(groups, key=group_key):
        out += sorted((r for r in g if r.level == 0), key=key)
        out += sorted((r for r in g if r.level != 0), key=key)
    return out


def ops_sort_used(rows: list[OpRow], by: str) -> tuple[str, str]:
    """The key the ops table is really sorted by, and its title: ``cycles`` on a profile without
    rows in cycles (a CPU-only or XNNPACK model) would leave instruction order under a "most cycles
    first" title, so it falls back to ``total``, and the title says so."""
    if by == "cycles" and not any(r.unit == "cycles" for r in rows):
        return "total", "no rows in cycles, so " + OPS_SORT_TITLE["total"]
    return by, OPS_SORT_TITLE[by]


def order_qnn_ops(ops, by: str = QNN_DEFAULT) -> list:
    """A QNN partition's per-op rows (``analysis.qnn``), largest first: ``cycles`` / ``p50`` by the
    cycles p50, ``mean`` by the cycles mean, ``total`` / ``share`` by the share of the accelerator's
    cycles (total cycles over all runs)."""
    if by not in SORT_KEYS:
        raise ValueError(f"sort key {by!r}: use one of {', '.join(SORT_KEYS)}")
    field = {"cycles": "cycles_p50", "p50": "cycles_p50", "mean": "cycles_mean"}.get(by, "share")
    return sorted(ops, key=lambda o: -(getattr(o, field) or 0))
