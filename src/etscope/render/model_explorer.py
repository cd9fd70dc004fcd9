"""Google Model Explorer node data (``GraphNodeData`` JSON) from the graph's node table
(``analysis.ops.nodes.node_table``): ``results`` keyed by the FX node names of the ETRecord's edge
graph, so time and placement can be overlaid on the graph in Model Explorer.

Files: ``node_time_us.json`` (mean µs per run of every timed node: CPU kernels measured, XNNPACK
ops matched by kind and order, QNN ops estimated: their share of the measured accelerator time), ``node_time_how.json`` (how each
node's time was obtained, or why a delegated node has none) and ``node_placement.json`` (the
backend, coloured per backend).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from etscope import profile as P
from etscope.analysis.ops.nodes import NodeTable
from etscope.formats.backends import QNN_BACKEND_ID

if TYPE_CHECKING:
    from etscope.analysis.ops.per_op import OpRow

PLACEMENT_COLORS = {QNN_BACKEND_ID: "#2e7d32", "cpu": "#c62828"}
OTHER_DELEGATE_COLOR = "#1565c0"
MODEL_EXPLORER_FILES = ("node_time_us.json", "node_time_how.json", "node_placement.json")
HOW_COLORS = {"measured": "#c62828", "matched by kind and order": "#1565c0", "estimate": "#2e7d32"}
UNTIMED_COLOR = "#9e9e9e"


def _how_color(how: str | None) -> str:
    """QNN nodes say what their estimate is a share of ("estimate: share of measured ...")."""
    if how and how.startswith("estimate"):
        return HOW_COLORS["estimate"]
    return HOW_COLORS.get(how or "", UNTIMED_COLOR)


def placement_color(placement: str | None) -> str:
    if placement is None:
        return "#9e9e9e"
    return PLACEMENT_COLORS.get(placement, OTHER_DELEGATE_COLOR)


def node_data(nodes: NodeTable | None) -> dict[str, dict]:
    """The node data files {file name: GraphNodeData dict} of a node table; empty without one."""
    if nodes is None:
        return {}
    time_results, how_results, placement_results = {}, {}, {}
    for n in nodes.nodes:
        if n.time_us is not None:
            time_results[n.name] = {"value": round(float(n.time_us), 3)}
            how_results[n.name] = {"value": n.time_how or "", "bgColor": _how_color(n.time_how),
                                   "textColor": "#ffffff"}
        elif n.untimed_why:
            how_results[n.name] = {"value": "untimed: " + n.untimed_why, "bgColor": UNTIMED_COLOR,
                                   "textColor": "#ffffff"}
        if n.placement is not None:
            placement_results[n.name] = {"value": n.placement, "bgColor": placement_color(n.placement),
                                         "textColor": "#ffffff"}
    return {
        "node_time_us.json": {
            "results": time_results,
            "gradient": [{"stop": 0, "bgColor": "#fff5f0"}, {"stop": 0.5, "bgColor": "#fb6a4a"},
                         {"stop": 1, "bgColor": "#67000d"}],
        },
        "node_time_how.json": {"results": how_results},
        "node_placement.json": {"results": placement_results, "showExpandedSummaryOnGroupNode": True,
                                "showLabelCountColumnsInChildrenStatsTable": True},
    }


def model_explorer(profile: P.Profile, ops: list[OpRow] | None = None, qnn: dict | None = None) -> dict[str, dict]:
    """Model Explorer node data files of a profile: {file name: GraphNodeData dict}. Empty without
    an ETRecord graph."""
    from etscope.analysis.ops.nodes import node_table

    if ops is None:
        from etscope.analysis.ops.per_op import op_table

        ops = op_table(profile)
    return node_data(node_table(profile, ops, qnn))
