"""QHAS: QNN HTP Analysis Summary JSON (``*_qnn_htp_analysis_summary.json``).

Written by ``qnn-profile-viewer`` with the HTP optrace reader; it describes the **first** inference
of an optrace-level run. Layout (real file ``chain8_sm8650.qhas.json``, QHAS 1.0.0)::

    {"header": {"header_version": {...}, "version": {"major": 1, "minor": 0, "patch": 0},
                "artifact_type": "QHAS"},
     "model_id": "model_encoded",
     "data": {"htp_overall_summary": {"data": [{..., "htp_resources": {"data": [...]}}]},
              "qnn_op_types": {"data": [...]}, "qnn_op_instances_nodes": {"data": [...]},
              "htp_op_types": {"data": [...]}, "htp_op_instances": {"data": [...]},
              "dominant_path_htp_0": {"data": [...]}}}

Tables are returned as **lists of row dicts**, exactly as in the file (QNN's field names, values
unchanged; rows with unknown fields keep them; a missing field is simply absent, so use
``row.get``). Units of the numeric fields are given by :func:`field_unit` (QHAS names carry them
only partly: ``cycles``/``start_cycle`` are cycles, ``dram_read``/``peak_vtcm_alloc`` bytes,
``time_us`` microseconds, ``percent_*``/``utilization`` percent). :meth:`Qhas.column` gives one
field of a table as a numpy array.

Known fields are type-checked (numbers must be numbers, flags booleans, names strings); a wrong
type is a :class:`FormatError` naming table, row and field. Missing tables are empty lists
(authors trim them: the real ``resnet50_ortqnn_trimmed.qhas.json`` has empty
``htp_op_instances`` and ``dominant_path_htp_0``). Unknown tables are kept in ``tables`` and
listed in ``unknown_tables``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from etscope.errors import FormatError
from etscope.formats.qnn_names import head_text, load_json, read_input_bytes

__all__ = ["FLAG_FIELDS", "KNOWN_TABLES", "LIST_FIELDS", "Qhas", "STRING_FIELDS", "field_unit", "parse_qhas",
           "read_qhas", "sniff"]

ARTIFACT_TYPE = "QHAS"
KNOWN_TABLES = ("htp_overall_summary", "qnn_op_types", "qnn_op_instances_nodes", "htp_op_types",
                "htp_op_instances")
_DOMINANT = re.compile(r"^dominant_path_htp_(\d+)$")

# Field -> unit. Applies to every table; see field_unit() for the rules behind unlisted names.
_UNITS = {
    "time_us": "us", "graph_execute_us": "us",
    "inf_per_s": "1/s",
    "timeline_cycles": "cycles", "cycles": "cycles", "cycles_used": "cycles", "dp_cycles": "cycles",
    "start_cycle": "cycles", "end_cycle": "cycles", "num_dominant_path_cycles": "cycles",
    "cycles_per_packet": "cycles",
    "percent_utilization": "percent", "percent_idle": "percent", "utilization": "percent",
    "percent_active_cycles": "percent", "percent_dominant_path_cycles": "percent",
    "total_dram": "bytes", "total_dram_read": "bytes", "total_dram_write": "bytes",
    "total_vtcm": "bytes", "total_vtcm_read": "bytes", "total_vtcm_write": "bytes",
    "peak_vtcm_alloc": "bytes", "dram_read": "bytes", "dram_write": "bytes",
    "vtcm_read": "bytes", "vtcm_write": "bytes",
    "num_htp_ops": "count", "instances": "count", "unique_qnn_ops": "count", "qnn_nodes": "count",
    "unique_htp_ops": "count", "htp_nodes": "count", "rank": "count",
    "htp": "index", "tid": "id", "zero_offset": "dimensionless", "step_size": "dimensionless",
}
# The type each QHAS record field must have (a field of another type is refused): flags, strings, lists.
FLAG_FIELDS = {"hmx", "hvx", "dma", "dma_wait", "dma_set", "sync", "ref_op", "fmt_change", "partial",
               "format_change", "reference_op"}
STRING_FIELDS = {"op", "qnn_op", "qnn_op_type", "htp_op", "op_id", "dtype", "type"}
LIST_FIELDS = {"dims", "input_nodes"}


def field_unit(name: str) -> str | None:
    """Unit of a QHAS field: ``cycles``, ``us``, ``bytes``, ``percent``, ``count``, ``1/s``, ...

    ``index``/``id`` for ``htp``/``tid``, ``dimensionless`` for quantisation parameters, ``None``
    for non-numeric fields (names, flags) and unknown ones. Per-HTP variants such as
    ``num_dominant_path_cycles_htp_0`` / ``percent_dominant_path_cycles_htp_0`` follow their stem.
    """
    if name in _UNITS:
        return _UNITS[name]
    stem = re.sub(r"_htp_\d+$", "", name)
    if stem in _UNITS:
        return _UNITS[stem]
    if name.startswith("percent_"):
        return "percent"
    if name.endswith("_us"):
        return "us"
    if "cycle" in name:
        return "cycles"
    if any(k in name for k in ("dram", "vtcm", "bytes")):
        return "bytes"
    return None


@dataclass
class Qhas:
    """A QHAS file: summary and tables as row dicts (see module docstring)."""

    path: str
    version: tuple[int, int, int] | None          # header.version
    header: dict[str, Any]
    model_id: str | None
    overall: dict[str, Any]                       # htp_overall_summary row of HTP 0 (first row);
                                                  # overall["htp_resources"] is a list of row dicts
    overall_rows: list[dict[str, Any]]            # all htp_overall_summary rows (one per HTP)
    qnn_op_types: list[dict[str, Any]]
    qnn_op_instances_nodes: list[dict[str, Any]]
    htp_op_types: list[dict[str, Any]]
    htp_op_instances: list[dict[str, Any]]
    dominant_paths: dict[int, list[dict[str, Any]]]   # HTP index -> dominant_path_htp_<N> rows
    tables: dict[str, list[dict[str, Any]]]       # every table in the file by name, incl. unknown ones
    unknown_tables: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def htp_resources(self) -> list[dict[str, Any]]:
        """HMX/HVX units of HTP 0: ``type``, ``tid``, ``utilization`` (percent), ``cycles_used``, ..."""
        return self.overall.get("htp_resources", [])

    @property
    def dominant_path_htp_0(self) -> list[dict[str, Any]]:
        return self.dominant_paths.get(0, [])

    def column(self, table: str, name: str, dtype=None) -> np.ndarray:
        """Field ``name`` of every row of ``table`` as an array.

        Numeric fields (those with a :func:`field_unit`) give float64 with NaN where absent or not a
        number; others (or ``dtype=object``) give the raw values, None where absent.
        """
        rows = self.tables.get(table, [])
        vals = [r.get(name) for r in rows]
        unit = field_unit(name)
        if dtype is None:
            dtype = np.float64 if unit is not None and name not in ("tid", "htp") else object
        if dtype is np.float64:
            return np.array([_as_float(v) for v in vals], dtype=np.float64)
        if dtype is object:
            out = np.empty(len(vals), dtype=object)     # 1-D even when values are lists (dims)
            out[:] = vals
            return out
        return np.array(vals, dtype=dtype)


def _as_float(v: Any) -> float:
    """Number -> float; anything else (None, strings, lists, huge ints) -> NaN."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    try:
        return float(v)
    except OverflowError:
        return math.nan


def _check_row(row: Any, where: str) -> dict:
    if not isinstance(row, dict):
        raise FormatError(f"{where}: expected an object, got {type(row).__name__}")
    for k, v in row.items():
        if v is None:
            continue
        if k in FLAG_FIELDS:
            if not isinstance(v, bool) and not (isinstance(v, int) and v in (0, 1)):
                raise FormatError(f"{where}.{k}: expected true/false, got {str(v)[:40]!r}")
        elif k in STRING_FIELDS:
            if not isinstance(v, str):
                raise FormatError(f"{where}.{k}: expected a string, got {type(v).__name__}")
        elif k in LIST_FIELDS:
            if not isinstance(v, list):
                raise FormatError(f"{where}.{k}: expected a list, got {type(v).__name__}")
        elif k in _UNITS or re.sub(r"_htp_\d+$", "", k) in _UNITS:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise FormatError(f"{where}.{k}: expected a number, got {str(v)[:40]!r}")
    return row


def _rows(table: Any, where: str) -> list[dict]:
    """``{"data": [rows]}`` (or a bare list of rows) -> list of row dicts."""
    if isinstance(table, dict):
        if "data" not in table:
            return []
        table = table["data"]
    if table is None:
        return []
    if not isinstance(table, list):
        raise FormatError(f"{where}: expected a list of rows, got {type(table).__name__}")
    return [_check_row(r, f"{where}[{i}]") for i, r in enumerate(table)]


def _version(v: Any) -> tuple[int, int, int] | None:
    if not isinstance(v, dict):
        return None
    parts = []
    for k in ("major", "minor", "patch"):
        x = v.get(k, 0)
        if isinstance(x, bool) or not isinstance(x, int):
            raise FormatError(f"header.version.{k}: expected an integer, got {str(x)[:40]!r}")
        parts.append(x)
    return tuple(parts)  # type: ignore[return-value]


def parse_qhas(data: bytes | str | dict, name: str = "<input>", *, max_bytes: int | None = None) -> Qhas:
    """Parse QHAS JSON text, bytes or an already-loaded dict."""
    try:
        doc = data if isinstance(data, dict) else load_json(data, name, "QHAS JSON", max_bytes)
        return _parse(doc, name)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"QHAS JSON is malformed ({e.__class__.__name__}: {e})", file=name) from None


def _parse(doc: Any, path: str) -> Qhas:
    if not isinstance(doc, dict):
        raise FormatError(f"QHAS: top level is a {type(doc).__name__}, expected an object")
    header = doc.get("header")
    if not isinstance(header, dict):
        raise FormatError("not a QHAS file: no 'header' object")
    kind = header.get("artifact_type")
    if kind != ARTIFACT_TYPE:
        raise FormatError(f"not a QHAS file: header.artifact_type is {str(kind)[:40]!r}, expected 'QHAS'")
    version = _version(header.get("version"))
    data = doc.get("data")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FormatError(f"QHAS: 'data' is a {type(data).__name__}, expected an object")
    warnings: list[str] = []
    tables: dict[str, list[dict]] = {}
    unknown: list[str] = []
    dominant: dict[int, list[dict]] = {}
    for tname, tval in data.items():
        tname = str(tname)
        rows = _rows(tval, f"data.{tname}.data")
        tables[tname] = rows
        m = _DOMINANT.match(tname)
        if m:
            dominant[int(m.group(1))] = rows
        elif tname not in KNOWN_TABLES:
            unknown.append(tname)
    for t in KNOWN_TABLES:
        if t not in tables:
            warnings.append(f"table {t} is missing")
            tables[t] = []
    overall_rows = []
    for i, row in enumerate(tables["htp_overall_summary"]):
        row = dict(row)
        row["htp_resources"] = _rows(row.get("htp_resources"), f"data.htp_overall_summary.data[{i}].htp_resources")
        overall_rows.append(row)
    tables["htp_overall_summary"] = overall_rows
    if not overall_rows:
        warnings.append("htp_overall_summary has no rows")
    model_id = doc.get("model_id")
    return Qhas(
        path=path, version=version, header=header,
        model_id=model_id if isinstance(model_id, str) else None,
        overall=overall_rows[0] if overall_rows else {"htp_resources": []},
        overall_rows=overall_rows,
        qnn_op_types=tables["qnn_op_types"],
        qnn_op_instances_nodes=tables["qnn_op_instances_nodes"],
        htp_op_types=tables["htp_op_types"],
        htp_op_instances=tables["htp_op_instances"],
        dominant_paths=dict(sorted(dominant.items())),
        tables=tables, unknown_tables=unknown, warnings=warnings,
    )


def read_qhas(path, *, max_bytes: int | None = None) -> Qhas:
    """Read a QHAS JSON file (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "QHAS JSON")
    return parse_qhas(data, str(path), max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` looks like a QHAS JSON document."""
    t = head_text(head, 65536)
    return t.lstrip().startswith("{") and (
        re.search(r'"artifact_type"\s*:\s*"QHAS"', t) is not None or '"htp_overall_summary"' in t)
