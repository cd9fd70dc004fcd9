"""Per-tensor quantization parameters of an edge-graph node (to dequantize an integer tensor
before comparing it with a float one)."""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class QuantParams:
    """Per-tensor affine quantization: real = (q - zero_point) * scale."""

    scale: float
    zero_point: int
    quant_min: int | None
    quant_max: int | None
    node: str          # the quantize node the parameters come from


_QUANTIZE_PER_TENSOR = "quantized_decomposed.quantize_per_tensor.default"


class Quantization:
    """Quantization of each node's output from the edge graph (users indexed once): its own
    arguments when it is a ``quantize_per_tensor``, else those of the ``quantize_per_tensor``
    consuming it. Per-channel parameters (and ``.tensor`` variants) are constant tensors, torch
    pickles in the ETRecord: never read, reported unavailable (``of`` returns why, as a string)."""

    def __init__(self, graph):
        self.graph = graph
        self.users: dict[str, list] = {}
        for u in (graph.nodes if graph is not None else ()):
            if u.target and "quantize" in u.target and "dequantize" not in u.target:
                for src in u.inputs:
                    self.users.setdefault(src, []).append(u)

    def of(self, node: str) -> QuantParams | str:
        n = self.graph.by_name.get(node) if self.graph is not None else None
        if n is None:
            return "no edge graph node to take quantization parameters from"
        users = self.users.get(node, [])
        for q in ([n] if n.target == _QUANTIZE_PER_TENSOR else []) + users:
            if q.target == _QUANTIZE_PER_TENSOR:
                lit = dict(q.literals)
                if isinstance(lit.get("scale"), (int, float)) and isinstance(lit.get("zero_point"), int):
                    bad = unusable_params(lit["scale"], lit["zero_point"])
                    if bad:
                        return f"{q.name}: {bad}: unavailable"
                    return QuantParams(float(lit["scale"]), int(lit["zero_point"]), lit.get("quant_min"),
                                       lit.get("quant_max"), q.name)
        if any("per_channel" in (u.target or "") for u in users):
            return ("per-channel quantization: its scales and zero points are constant tensors (torch pickles "
                    "in the ETRecord), not read: unavailable")
        if users:
            return f"quantized by {users[0].target} whose parameters are tensors (not read): unavailable"
        return "no quantize_per_tensor node after it in the edge graph: scale/offset unknown"


def unusable_params(scale, zero_point: int) -> str | None:
    """Why (q - zero_point) * scale cannot be computed in float64 for any 32-bit q, or None.
    Real quantize nodes have a positive finite scale and a zero point inside the integer type;
    JSON allows 10**400 (and 1e400, read as inf)."""
    if abs(zero_point) > 1 << 63:
        return f"zero point of {zero_point.bit_length()} bits (beyond any integer type)"
    try:
        s = float(scale)
    except OverflowError:
        return "scale beyond float64"
    if not (math.isfinite(s) and s > 0.0):
        return f"scale {s!r} is not a positive finite number"
    if not math.isfinite((abs(zero_point) + 2.0 ** 32) * s * 2.0 ** 64):
        return f"scale {s!r} with zero point {zero_point} puts dequantized values past float64"
    return None

