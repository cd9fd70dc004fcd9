"""Intermediate-output tap sidecar (``etscope.taps/1``): which program output is which tap.

ExecuTorch 1.5.1's backend-agnostic numerical debugger (``devtools/intermediate_output_tap``)
appends each tapped node's value (``FULL_TENSOR``) or a vector of its statistics (``STATS``, or a
user reducer) to the program's outputs, so it works through any delegate; the runtime's debug
buffer then holds them as program outputs. Which output is which tap lives only in the Python
``TapSpec`` list returned by ``tap_intermediate_outputs_`` (an ETRecord of a tapped program
cannot be serialized: its ``tap.Tensor`` nodes have no schema), so the user writes it next to
the program with one line::

    json.dump({"schema": "etscope.taps/1", "taps": [dataclasses.asdict(s) for s in specs]},
              open("model.taps.json", "w"))

Each tap: ``node_name`` (the exported program's node, which the edge graph's ``from_node``
provenance names), ``op_target``, ``output_index`` (position in the method's flat outputs),
``reducer_name``, ``fields`` (the reducer's output fields, empty for FULL_TENSOR), and optionally
``module_path``, ``module_class``, ``stack_trace`` (ignored).

Hostile input: at most ``MAX_BYTES``; JSON nesting and huge numbers are ``FormatError``; at most
one tap per 16 bytes of the file; indices are non-negative ints below 2**31; duplicate output
indices refused; strings cut at 1,000 characters.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from etscope.errors import FormatError
from etscope.paths import open_input

SCHEMA = "etscope.taps/1"
MAX_BYTES = 64 << 20
_MAX_STR = 1000


@dataclass(frozen=True)
class Tap:
    node_name: str
    op_target: str
    output_index: int
    reducer_name: str
    fields: tuple[str, ...]
    module_path: str | None = None
    module_class: str | None = None

    @property
    def full_tensor(self) -> bool:
        return self.reducer_name == "FULL_TENSOR"


def read_taps(path: str | os.PathLike) -> dict[int, Tap]:
    """output index -> Tap. Raises FormatError (naming the file) on anything else."""
    name = os.fspath(path)
    try:
        with open_input(name, "tap sidecar") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FormatError as err:
        raise err.with_file(name) from None
    except OSError as err:
        raise FormatError(f"cannot read tap sidecar: {err.strerror or err}", name) from None
    if len(data) > MAX_BYTES:
        raise FormatError(f"tap sidecar larger than {MAX_BYTES} bytes", name)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise FormatError(f"tap sidecar is not valid JSON ({type(e).__name__})", name) from None
    try:
        return _taps(doc, len(data))
    except FormatError as err:
        raise err.with_file(name) from None


def _str(v, what: str, optional: bool = False) -> str | None:
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise FormatError(f"tap sidecar: {what} is not a string")
    return v[:_MAX_STR]


def _taps(doc, size: int) -> dict[int, Tap]:
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise FormatError(f'tap sidecar: expected an object with "schema": "{SCHEMA}"')
    taps = doc.get("taps")
    if not isinstance(taps, list):
        raise FormatError('tap sidecar: "taps" is not a list')
    if len(taps) > size // 16 + 1:
        raise FormatError("tap sidecar: more taps than its size allows")
    out: dict[int, Tap] = {}
    for k, t in enumerate(taps):
        if not isinstance(t, dict):
            raise FormatError(f"tap sidecar: tap {k} is not an object")
        idx = t.get("output_index")
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < 1 << 31:
            raise FormatError(f"tap sidecar: tap {k}: output_index is not an integer in [0, 2**31)")
        if idx in out:
            raise FormatError(f"tap sidecar: output_index {idx} given twice")
        fields = t.get("fields") or []
        if not isinstance(fields, list) or len(fields) > 4096:
            raise FormatError(f"tap sidecar: tap {k}: fields is not a list of names")
        out[idx] = Tap(node_name=_str(t.get("node_name"), f"tap {k}: node_name"),
                       op_target=_str(t.get("op_target", ""), f"tap {k}: op_target"), output_index=idx,
                       reducer_name=_str(t.get("reducer_name"), f"tap {k}: reducer_name"),
                       fields=tuple(_str(f, f"tap {k}: a field") for f in fields),
                       module_path=_str(t.get("module_path"), f"tap {k}: module_path", True),
                       module_class=_str(t.get("module_class"), f"tap {k}: module_class", True))
    return out
