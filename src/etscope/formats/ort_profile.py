"""ONNX Runtime's own profile (``SessionOptions.enable_profiling`` / ``profile_file_prefix``): a
Chrome-trace JSON list of complete events (``ph`` "X", ``ts``/``dur`` in µs).

What it holds, as ORT writes it (checked on the QNN EP emulator sessions in shared/data):

* ``cat`` "Session": ``model_loading_uri``, ``session_initialization``, and per inference
  ``model_run`` (the whole ``Run`` call) with ``SequentialExecutor::Execute`` inside it;
* ``cat`` "Node": one ``<node>_kernel_time`` per node executed, ``args.provider`` the execution
  provider that ran it (``QNNExecutionProvider`` / ``QNN`` for a fused QNN partition, whose
  ``args.op_name`` is ``QNN_<hash>_<k>``; ``CPUExecutionProvider`` for a CPU fallback),
  ``args.op_name`` the ONNX op type, ``args.node_index``.

The QNN levels inside a partition (QNN execute, accelerator time, per-op cycles) are not in this
file: ORT writes them to the QNN profile (``ep.qnn.profiling_file_path``, read by ``--qnn-csv``).
This reader returns plain columns; nothing here interprets them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from etscope.errors import FormatError
from etscope.formats.qnn_names import load_json, read_input_bytes

__all__ = ["OrtProfile", "parse_ort_profile", "read_ort_profile", "QNN_PROVIDERS"]

QNN_PROVIDERS = ("QNN", "QNNExecutionProvider")
MAX_EVENTS = 5_000_000          # more than any real session profile; bounds the work on crafted input
_NAME_CHARS = 300


@dataclass
class OrtProfile:
    """The events of an ORT profile as columns. Times in µs (ORT's unit)."""

    path: str
    run_start_us: np.ndarray           # float64 per ``model_run``, in file order sorted by start
    run_dur_us: np.ndarray
    node_name: np.ndarray              # object (str) per Node event
    node_op: np.ndarray                # object (str): args.op_name ('' when absent)
    node_provider: np.ndarray          # object (str): args.provider ('' when absent)
    node_start_us: np.ndarray          # float64
    node_dur_us: np.ndarray            # float64
    node_run: np.ndarray               # int64: the model_run it falls in, -1 outside any
    session: dict[str, float] = field(default_factory=dict)   # other Session events: name -> µs (first)
    warnings: list[str] = field(default_factory=list)

    @property
    def n_runs(self) -> int:
        return int(self.run_start_us.shape[0])

    def is_qnn(self) -> np.ndarray:
        """Per node, whether a QNN partition ran it."""
        return np.isin(self.node_provider, QNN_PROVIDERS)


def read_ort_profile(path, *, max_bytes: int | None = None) -> OrtProfile:
    """Read an ORT profile JSON (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "ONNX Runtime profile")
    return parse_ort_profile(data, os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path),
                             max_bytes=max_bytes)


def parse_ort_profile(data, name: str = "<input>", *, max_bytes: int | None = None) -> OrtProfile:
    try:
        doc = data if isinstance(data, list) else load_json(data, name, "ONNX Runtime profile", max_bytes)
        return _parse(doc, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"ONNX Runtime profile is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _num(v) -> float:
    """A finite, non-negative µs value, else NaN (ORT writes integers; crafted files anything)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return float("nan")
    f = float(v) if abs(v) < 1e18 else float("nan")
    return f if np.isfinite(f) and f >= 0 else float("nan")


def _text(v) -> str:
    return v[:_NAME_CHARS] if isinstance(v, str) else ""


def _parse(doc, name: str) -> OrtProfile:
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        doc = doc["traceEvents"]
    if not isinstance(doc, list):
        raise FormatError(f"ONNX Runtime profile: top level is a {type(doc).__name__}, expected a list of events")
    if len(doc) > MAX_EVENTS:
        raise FormatError(f"ONNX Runtime profile has {len(doc):,} events (more than {MAX_EVENTS:,})")
    runs: list[tuple[float, float]] = []
    nodes: list[tuple] = []
    session: dict[str, float] = {}
    skipped = 0
    for e in doc:
        if not isinstance(e, dict) or e.get("ph", "X") != "X":
            skipped += 1
            continue
        cat, ev_name = e.get("cat"), _text(e.get("name"))
        ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        if cat == "Session":
            if ev_name == "model_run":
                runs.append((ts, dur))
            elif ev_name and ev_name not in session:
                session[ev_name] = dur
        elif cat == "Node":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            nodes.append((ev_name, _text(args.get("op_name")), _text(args.get("provider")), ts, dur))
        else:
            skipped += 1
    if not runs and not nodes:
        raise FormatError("not an ONNX Runtime profile: no 'model_run' Session event and no Node event")
    r = np.array(runs, dtype=np.float64).reshape(-1, 2)
    r = r[np.argsort(r[:, 0], kind="stable")]
    cols = list(zip(*nodes)) if nodes else [(), (), (), (), ()]
    start = np.asarray(cols[3], dtype=np.float64)
    dur = np.asarray(cols[4], dtype=np.float64)
    warnings = [f"{skipped:,} event(s) of other kinds ignored"] if skipped else []
    return OrtProfile(path=name, run_start_us=r[:, 0], run_dur_us=r[:, 1],
                      node_name=np.asarray(cols[0], dtype=object), node_op=np.asarray(cols[1], dtype=object),
                      node_provider=np.asarray(cols[2], dtype=object), node_start_us=start, node_dur_us=dur,
                      node_run=_run_of(r[:, 0], r[:, 1], start), session=session, warnings=warnings)


def _run_of(run_start: np.ndarray, run_dur: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per time ``t``, the model_run that contains it (the last to start at or before it, if it has
    not ended), -1 otherwise."""
    if run_start.size == 0 or t.size == 0:
        return np.full(t.shape, -1, dtype=np.int64)
    i = np.searchsorted(run_start, t, side="right") - 1
    ok = (i >= 0) & np.isfinite(t)
    j = np.clip(i, 0, None)
    ok &= t <= run_start[j] + np.nan_to_num(run_dur[j], nan=0.0)
    return np.where(ok, i, -1).astype(np.int64)
