"""The tables of analysed results (``Results.tables``) by what they hold: the profile's events, ops
and runs (``analysis.views.tables``) and the QNN tables (``analysis.qnn.tables``). ``named()``
gives them by table name, the names DuckDB queries (``etscope sql``), the export writes files
of and the dataset stores."""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa


@dataclass(frozen=True)
class TableSet:
    events: pa.Table | None          # one row per event; None: QNN files alone (no ETDump)
    ops: pa.Table | None             # the per-op table, one block per phase
    runs: pa.Table | None            # one row per Execute run
    # The QNN tables that have rows, by table name (qnn_ops, qnn_units, ...: ``QNN_COLUMNS``).
    qnn: dict[str, pa.Table] = field(default_factory=dict)

    def named(self) -> dict[str, pa.Table]:
        """Every table by its name: events, ops, runs (when there is a profile), then the QNN tables."""
        profile = {"events": self.events, "ops": self.ops, "runs": self.runs} if self.events is not None else {}
        return {**profile, **self.qnn}
