"""A coarse op kind ("conv", "fully_connected", "max_pool", ...) shared by ATen op types and the
names delegates give their own per-op events, so `diff` can tell without an ETRecord that a CPU op
that appeared is the op whose delegate events disappeared (XNNPACK
``Convolution (NHWC, F32) IGEMM #1`` and ``aten.convolution.out`` are both "conv").

Only kinds that are unambiguous on both sides are listed; anything else has no kind (None), and
the caller then says it cannot decide. XNNPACK names are the operator names XNNPACK's runtime
logs (``xnn_operator_type`` strings, e.g. ``Fully Connected (NC, F32) GEMM``); QNN per-op events
carry the edge FX node name (``aten_convolution_default_3``), i.e. the ATen op itself. Each
backend's rule is named by its entry in the registry of delegate backends (``formats.backends``).
"""
from __future__ import annotations

import functools
import re
from typing import Callable

from etscope.formats.backends import BACKENDS
from etscope.formats.kinds import resolve

# ATen op base name -> kind. Decompositions XNNPACK fuses into one operator map to one kind
# (linear / addmm / mm -> a Fully Connected operator).
_ATEN_KIND = {
    "convolution": "conv", "_convolution": "conv", "conv1d": "conv", "conv2d": "conv", "conv3d": "conv",
    "conv_transpose1d": "deconv", "conv_transpose2d": "deconv", "conv_transpose3d": "deconv",
    "linear": "fully_connected", "addmm": "fully_connected", "mm": "fully_connected",
    "bmm": "batch_matmul",
    "max_pool2d": "max_pool", "max_pool2d_with_indices": "max_pool",
    "avg_pool2d": "avg_pool", "_adaptive_avg_pool2d": "avg_pool", "adaptive_avg_pool2d": "avg_pool",
    "add": "add", "sub": "subtract", "rsub": "subtract", "mul": "multiply", "div": "divide",
    "_softmax": "softmax", "softmax": "softmax", "_log_softmax": "log_softmax",
    "sigmoid": "sigmoid", "tanh": "tanh", "gelu": "gelu", "hardswish": "hardswish",
    "leaky_relu": "leaky_relu", "elu": "elu", "prelu": "prelu", "_prelu_kernel": "prelu",
    "cat": "concatenate", "constant_pad_nd": "pad", "mean": "mean",
    "sqrt": "sqrt", "rsqrt": "rsqrt", "neg": "negate", "abs": "abs", "floor": "floor", "ceil": "ceiling",
    "exp": "exp", "log": "log", "sin": "sin", "cos": "cos",
    "upsample_bilinear2d": "resize_bilinear",
}

# XNNPACK operator name (text before " (" and without "#N") -> kind.
_XNNPACK_KIND = {
    "Convolution": "conv", "Deconvolution": "deconv", "Fully Connected": "fully_connected",
    "Batch Matrix Multiply": "batch_matmul", "Max Pooling": "max_pool", "Average Pooling": "avg_pool",
    "Global Average Pooling": "avg_pool", "Add": "add", "Subtract": "subtract", "Multiply": "multiply",
    "Divide": "divide", "Softmax": "softmax", "Sigmoid": "sigmoid", "Tanh": "tanh", "GELU": "gelu",
    "HardSwish": "hardswish", "Leaky ReLU": "leaky_relu", "ELU": "elu", "PReLU": "prelu",
    "Concatenate": "concatenate", "Constant Pad": "pad", "Mean": "mean", "Square Root": "sqrt",
    "Reciprocal Square Root": "rsqrt", "Negate": "negate", "Abs": "abs", "Floor": "floor",
    "Ceiling": "ceiling", "Exp": "exp", "Log": "log", "Sine": "sin", "Cosine": "cos",
    "Resize Bilinear": "resize_bilinear",
}

# Kinds that are ambiguous across a whole program (XNNPACK inserts its own transposes and reshapes;
# Clamp serves relu, hardtanh and clamp; Square is a mul of a tensor by itself) but safe inside one
# delegate partition, where the matcher (analysis.ops.delegate_ops) also requires equal counts per kind.
_PARTITION_ATEN_KIND = {
    "relu": "clamp", "hardtanh": "clamp", "clamp": "clamp",
    "view_copy": "reshape", "unsqueeze_copy": "reshape", "squeeze_copy": "reshape",
    "permute_copy": "transpose",
}
_PARTITION_XNNPACK_KIND = {"Clamp": "clamp", "Static Reshape": "reshape", "Transpose": "transpose",
                           "Square": "multiply"}

_OP_TYPE = re.compile(r"^(?:aten(?:\.|::)|native_call_)?(?P<base>[A-Za-z0-9_]+?)(?:\.[A-Za-z0-9_]+)?$")
_XNNPACK_NAME = re.compile(r"^(?P<op>[A-Za-z][A-Za-z ]*?)\s*(?:\([^()]*\))?(?:\s+[A-Z0-9]+)*\s*(?:#\d+)?$")


def kind_of_op_type(op_type: str | None, in_partition: bool = False) -> str | None:
    """Kind of an ATen op type, kernel or .pte operator name: ``aten.convolution.default``,
    ``aten::convolution.out``, ``native_call_convolution.out`` -> ``conv``. ``in_partition``: also
    the kinds only safe within one delegate partition (clamp, reshape, transpose)."""
    if not op_type:
        return None
    m = _OP_TYPE.match(op_type.strip())
    if not m:
        return None
    kind = _ATEN_KIND.get(m.group("base"))
    return kind or (_PARTITION_ATEN_KIND.get(m.group("base")) if in_partition else None)


def kind_of_delegate_event(name: str, backend: str | None = None, in_partition: bool = False) -> str | None:
    """Kind of a delegate's per-op event name (QNN's ``:OpId_N`` already stripped), or None.
    ``backend``: the delegate's backend id (``QnnBackend``, ``XnnpackBackend``): its own naming
    rule (``formats.backends``, the registry a new backend's per-op events plug into); None or a
    backend without a rule: every registered rule in turn. ``in_partition``: as for
    :func:`kind_of_op_type`."""
    if not name:
        return None
    rules = event_kind_rules()
    rule = rules.get(backend) if backend is not None else None
    for r in ((rule,) if rule is not None else tuple(rules.values())):
        kind = r(name, in_partition)
        if kind:
            return kind
    return None


@functools.cache
def event_kind_rules() -> dict[str, Callable[[str, bool], str | None]]:
    """Per registered backend id with a per-op naming rule (``formats.backends``), the rule, in
    registry order."""
    return {b.backend_id: resolve(b.event_kind) for b in BACKENDS if b.event_kind is not None}


def qnn_event_kind(name: str, in_partition: bool) -> str | None:
    """QNN names a per-op event after the edge FX node, e.g. ``aten_convolution_default_3``."""
    if not name.startswith("aten_"):
        return None
    parts = re.sub(r"_\d+$", "", name[5:]).split("_")
    for k in range(len(parts), 0, -1):   # longest known op name first (max_pool2d_with_indices)
        kind = _ATEN_KIND.get("_".join(parts[:k]))
        if kind:
            return kind
    return None


def xnnpack_event_kind(name: str, in_partition: bool) -> str | None:
    """XNNPACK names a per-op event after its operator, e.g. ``Convolution (NHWC, F32) IGEMM #3``."""
    m = _XNNPACK_NAME.match(name.strip())
    if not m:
        return None
    kind = _XNNPACK_KIND.get(m.group("op"))
    return kind or (_PARTITION_XNNPACK_KIND.get(m.group("op")) if in_partition else None)
