"""The registry of delegate backends: every delegate etscope knows, in one place (issue 33 item 3, the
seam a delegate's per-op events plug into). Each backend declares

- its ``backend_id``, as the .pte's delegates and the ETRecord's delegate map name it
  (``QnnBackend``); readers below the analysis compare with the constants here, defined once;
- a short display ``name`` and whether it is an ``npu`` (its time is shown as "NPU (<name>)");
- whether it is ``qnn``'s: its ETDump events are QNN profile levels (cycles, µs, counts) and QNN's
  own files (profile, optrace, QHAS, runtrace) describe its partitions (``analysis.qnn``);
- ``event_hint``: a delegate-internal event name only this backend writes, which tells the backend
  when no .pte or ETRecord names it (``profile.instructions``; the first backend that matches wins);
- ``event_kind``: its rule from a per-op event name to a coarse op kind (``analysis.ops.kinds``),
  named as ``"module:function"`` like the readers of ``formats.kinds`` and resolved by the analysis
  layer when used, never here;
- ``per_op_events``: how its per-op events name graph nodes: by the node itself (QNN: the edge FX
  node name ``aten_convolution_default_3`` with a ``:OpId_N`` suffix, joined by name in
  ``analysis.qnn``) or by operator type only (XNNPACK: ``Convolution (NHWC, F32) IGEMM #3``,
  matched to the partition's nodes by kind and order in ``analysis.ops.delegate_ops``).

So a new delegate is one entry here and its per-op naming rule; the analyses (placement, per-op
matching, diff's placement changes, the report's categories) take it from here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# The backend ids the readers below the analysis compare with (formats, profile): defined once.
QNN_BACKEND_ID = "QnnBackend"
XNNPACK_BACKEND_ID = "XnnpackBackend"

NODE_NAMES = "node names"            # per-op events carry their graph node's name
OPERATOR_TYPES = "operator types"    # per-op events name the operator type only: matched by kind and order


@dataclass(frozen=True)
class DelegateBackend:
    backend_id: str
    name: str                                       # short display name: "QNN"
    npu: bool = False
    qnn: bool = False
    event_hint: re.Pattern | None = None
    event_kind: str | Callable | None = None        # (event name, in_partition) -> op kind or None
    per_op_events: str = OPERATOR_TYPES


BACKENDS: tuple[DelegateBackend, ...] = (
    DelegateBackend(QNN_BACKEND_ID, "QNN", npu=True, qnn=True,
                    event_hint=re.compile(r"\((?:us|cycles|bytes|count)\)$|OpId_\d+|^QNN "),
                    event_kind="etscope.analysis.ops.kinds:qnn_event_kind", per_op_events=NODE_NAMES),
    DelegateBackend(XNNPACK_BACKEND_ID, "XNNPACK",
                    event_hint=re.compile(r"\((?:N[CDH]|ND|NHWC|NCHW)[^()]*\)|#\d+$"),
                    event_kind="etscope.analysis.ops.kinds:xnnpack_event_kind"),
)

_BY_ID = {b.backend_id: b for b in BACKENDS}


def backend_of(backend_id: str | None) -> DelegateBackend | None:
    """The registered backend of ``backend_id`` (None: not a delegate etscope knows)."""
    return _BY_ID.get(backend_id) if backend_id is not None else None


def is_qnn(backend_id: str | None) -> bool:
    """Whether ``backend_id`` is a QNN delegate (its partitions are what QNN's files describe)."""
    b = backend_of(backend_id)
    return b is not None and b.qnn


def events_name_nodes(backend_id: str | None) -> bool:
    """Whether the backend's per-op events carry their graph node's name (joined by name, not
    matched by kind and order)."""
    b = backend_of(backend_id)
    return b is not None and b.per_op_events == NODE_NAMES


def backend_from_event_names(names) -> str | None:
    """The first registered backend one of whose delegate-internal event ``names`` only it writes,
    or None."""
    for b in BACKENDS:
        if b.event_hint is not None and any(b.event_hint.search(n) for n in names):
            return b.backend_id
    return None
