"""The typed parts of the report's view (``analysis.views.report``): the boxes of the nesting
picture, the time per op type, the per-run columns. Frozen: the report renders them, never edits.

A box's JSON is its fields; the fields a kind of box does not have are left out (``omit_none``),
while the ones it has stay even when empty (a DELEGATE_CALL without an op type writes
``"op_type": null``): the page tells "not known" from "not this kind of box"."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

_OMIT = {"omit_none": True}


# Each kind of box is its own class, its fields in the order the page's data has always had them;
# every class has ``children`` (None: a leaf), ``estimate`` and ``children_logged_ms`` for ``fitted``.


def _kids():
    return field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class Box:
    """A box with no more than its name, ms per run (mean), kind and the boxes inside it: the
    method, the CPU kernels, a QNN level, a kernel, the framework overhead."""
    name: str
    ms: float | None
    kind: str        # method, cpu, qnn_level, kernel, overhead
    children: tuple[AnyBox, ...] | None = _kids()
    estimate: str | None = field(default=None, metadata=_OMIT)      # how an estimated ms was made
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)   # children as logged, when fitted


@dataclass(frozen=True, kw_only=True)
class DelegateBox:
    """A backend's delegate calls, all of them."""
    name: str
    ms: float | None
    kind: str
    backend: str
    children: tuple[AnyBox, ...] | None = _kids()
    estimate: str | None = field(default=None, metadata=_OMIT)
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class CallBox:
    """One DELEGATE_CALL instruction."""
    name: str
    ms: float | None
    kind: str
    backend: str
    op_type: str | None
    children: tuple[AnyBox, ...] | None = _kids()
    estimate: str | None = field(default=None, metadata=_OMIT)
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class EventBox:
    """A delegate event inside a call; ``node``, ``event`` and ``how`` when it was matched to a
    graph node (then ``name`` is the node's and ``event`` the backend's)."""
    name: str
    ms: float | None
    kind: str
    node: str | None = field(default=None, metadata=_OMIT)
    event: str | None = field(default=None, metadata=_OMIT)
    how: str | None = field(default=None, metadata=_OMIT)
    children: tuple[AnyBox, ...] | None = _kids()
    estimate: str | None = field(default=None, metadata=_OMIT)
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class QnnOpBox:
    """A QNN op: its share of the measured container, an estimate."""
    name: str
    ms: float | None
    kind: str
    estimated: bool
    estimate: str | None
    op_type: str | None
    node: str | None
    children: tuple[AnyBox, ...] | None = _kids()
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True)
class CpuOpBox:
    """A CPU kernel's OPERATOR_CALL and its source line."""
    name: str
    ms: float | None
    kind: str
    source: str | None
    children: tuple[AnyBox, ...] | None = _kids()
    estimate: str | None = field(default=None, metadata=_OMIT)
    children_logged_ms: float | None = field(default=None, metadata=_OMIT)


AnyBox = Box | DelegateBox | CallBox | EventBox | QnnOpBox | CpuOpBox


FIT_SLACK = 1e-9


def fitted(box: AnyBox) -> AnyBox:
    """``box`` where children never add up to more than their box: where logged events do
    (overlapping events, a clock that is not monotonic, whole-µs rounding), they become their
    shares of the box, marked (``estimate``), and the box keeps what they added up to
    (``children_logged_ms``, a check)."""
    kids = box.children or ()
    s = sum(k.ms or 0.0 for k in kids)
    ms = box.ms
    logged = box.children_logged_ms
    # Float sums in another order (the breakdown's parts add up to the latency) are not an overflow.
    if kids and isinstance(ms, (int, float)) and s > ms * (1 + FIT_SLACK) + 1e-12 and s > 0:
        logged = s
        kids = tuple(replace(_scaled(k, max(ms, 0.0) / s), estimate=f"estimate: share of measured {box.name}")
                     for k in kids)
    if box.children is None:
        return box
    return replace(box, children=tuple(fitted(k) for k in kids), children_logged_ms=logged)


def _scaled(box: AnyBox, factor: float) -> AnyBox:
    kids = None if box.children is None else tuple(_scaled(k, factor) for k in box.children)
    return replace(box, ms=(box.ms or 0.0) * factor, children=kids)


@dataclass(frozen=True)
class OpTypeTime:
    """Mean ms per run of one (category, op type): its ops' time added up, how many, and whether
    (and how) it is an estimate."""
    category: str                # "NPU (QNN)", "CPU", "other delegate (...)"
    placement: str | None
    op_type: str
    ms: float
    count: int
    estimated: bool
    estimate: str | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True)
class RunColumns:
    """Per-run columns (the ``runs`` table of ``render.export``) as arrays, one value per Execute
    run: start (µs since the first timed event; NaN without a start), latency and its parts (ms),
    and the LLM phase of each run (None when the runs are not phases)."""
    execute: np.ndarray
    start_us: np.ndarray
    latency_ms: np.ndarray
    delegate_ms: tuple[tuple[str, np.ndarray], ...]     # (backend, ms per run), in profile order
    cpu_ops_ms: np.ndarray
    framework_overhead_ms: np.ndarray
    phase: tuple[str | None, ...] | None

    def columns(self) -> dict[str, np.ndarray]:
        """The columns by their export names, in table order."""
        out = {"execute": self.execute, "start_us": self.start_us, "latency_ms": self.latency_ms}
        out.update((f"delegate_{b}_ms", v) for b, v in self.delegate_ms)
        out["cpu_ops_ms"] = self.cpu_ops_ms
        out["framework_overhead_ms"] = self.framework_overhead_ms
        return out

    def at_file_positions(self, file_runs, n_file_runs: int) -> RunColumns:
        """A phase's columns (one value per run of the phase) placed at the file's Execute indices
        ``file_runs``: ``execute`` counts the file's runs, the other columns are NaN where a run
        belongs to another phase, and ``phase`` is None (the page's selection is the phase).
        Unchanged when the indices do not fit the columns."""
        idx = np.asarray(file_runs, dtype=np.int64)
        if len(self.execute) != len(idx) or (len(idx) and (idx.min() < 0 or idx.max() >= n_file_runs)):
            return self

        def placed(v):
            full = np.full(n_file_runs, np.nan)
            full[idx] = np.asarray(v, dtype=np.float64)
            return full
        return RunColumns(execute=np.arange(n_file_runs), start_us=placed(self.start_us),
                          latency_ms=placed(self.latency_ms),
                          delegate_ms=tuple((b, placed(v)) for b, v in self.delegate_ms),
                          cpu_ops_ms=placed(self.cpu_ops_ms), framework_overhead_ms=placed(self.framework_overhead_ms),
                          phase=None)
