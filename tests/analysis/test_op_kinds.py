"""Op kinds shared by ATen op types and delegate per-op event names (diff's fallback matching)."""
import pytest

from etscope.analysis.ops.kinds import kind_of_delegate_event, kind_of_op_type


@pytest.mark.parametrize("name, kind", [
    ("Convolution (NHWC, F32) IGEMM #1", "conv"),                 # real XNNPACK names (tests/fixtures/diff)
    ("Convolution (NHWC, QD8, F32, QC8W) IGEMM #3", "conv"),
    ("Fully Connected (NC, F32) GEMM #1", "fully_connected"),
    ("Max Pooling (NHWC, F32) #1", "max_pool"),
    ("Global Average Pooling (NWC, F32) #1", "avg_pool"),
    ("Transpose (ND, X32) #1", None),                             # layout ops: no ATen counterpart to claim
    ("Static Reshape (NC) #1", None),
    ("Clamp (NC) #1", None),                                      # relu, hardtanh, clamp: ambiguous
    ("aten_convolution_default_3", "conv"),                       # QNN: the edge FX node name
    ("aten_max_pool2d_with_indices_default", "max_pool"),
    ("aten_linear_default_12", "fully_connected"),
    ("aten_cumsum_default", None),
    ("", None),
])
def test_delegate_event_kinds(name, kind):
    assert kind_of_delegate_event(name) == kind


@pytest.mark.parametrize("op, kind", [
    ("aten.convolution.out", "conv"), ("aten::convolution.out", "conv"), ("native_call_convolution.out", "conv"),
    ("aten.convolution.default", "conv"), ("aten.addmm.out", "fully_connected"), ("aten.linear.default", "fully_connected"),
    ("native_call_max_pool2d_with_indices.out", "max_pool"), ("aten.cumsum.out", None), (None, None),
])
def test_op_type_kinds(op, kind):
    assert kind_of_op_type(op) == kind


def test_a_backend_uses_its_own_naming_rule():
    """Issue 33: `backend` is not ignored: each backend's per-op names follow its own rule (the seam
    a new delegate's events plug into); without a backend every known rule is tried."""
    from etscope.analysis.ops import kinds as op_kinds

    qnn, xnn = "aten_convolution_default_3", "Convolution (NHWC, F32) IGEMM #3"
    assert kind_of_delegate_event(qnn) == kind_of_delegate_event(xnn) == "conv"
    assert kind_of_delegate_event(qnn, backend="QnnBackend") == "conv"
    assert kind_of_delegate_event(qnn, backend="XnnpackBackend") is None
    assert kind_of_delegate_event(xnn, backend="QnnBackend") is None
    assert kind_of_delegate_event(xnn, backend="SomeNewBackend") == "conv"     # unknown: every rule
    assert set(op_kinds.event_kind_rules()) == {"QnnBackend", "XnnpackBackend"}
