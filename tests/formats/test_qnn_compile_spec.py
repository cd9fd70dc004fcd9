"""QNN compile-spec reader: specs made by executorch's own serializer, old layouts, a pretend newer
schema, a .pte carrying one, and hand-built / damaged bytes.

Fixtures and how they were made: tests/fixtures/qnn_pte/README.md (tools/make_qnn_pte.py). Expected
values are what the serializer was asked for; ``raw`` is also compared field by field with flatc's
own JSON decode of each file (``synthetic_manifest.json``).
"""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import flatbuffers
import pytest

from etscope.errors import FormatError
from etscope.formats.pte import PteDelegate, read_pte
from etscope.formats.qnn_compile_spec import (
    LAYOUTS, QCOM_CHIPSET, QnnHtpOptions, decode_qnn_compile_spec, find_qnn_compile_spec,
    find_qnn_compile_specs, soc_table)

FIX = Path(__file__).resolve().parents[1] / "fixtures"
QP = FIX / "qnn_pte"
MANIFEST = json.loads((QP / "synthetic_manifest.json").read_text())
SPECS = sorted(p.name for p in QP.glob("synthetic_compile_spec_*.bin"))


def spec(name: str):
    return decode_qnn_compile_spec((QP / name).read_bytes(), name)


def _drop_none(x):
    if isinstance(x, dict):
        return {k: _drop_none(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_drop_none(v) for v in x]
    return x


# ---- made by executorch 1.5.1 -------------------------------------------------------------------

def test_sm8650_detailed():
    s = spec("synthetic_compile_spec_sm8650_detailed.bin")
    assert s.schema == "v1.1+"
    assert (s.soc_model, s.soc_model_id, s.htp_arch, s.vtcm_mb) == ("SM8650", 57, "V75", 8)
    assert s.vtcm_bytes == 8 * 1024 * 1024 and s.vtcm_source == s.htp_arch_source == "compile spec"
    assert (s.backend_type, s.profile_level, s.log_level) == ("HTP", "detailed", "error")
    assert s.per_op_profiling
    assert s.htp == QnnHtpOptions(
        performance_mode="burst", precision="quantized", pd_session="unsigned", max_sf_buf_size=0,
        use_conv_hmx=True, use_dlbc=False, use_fold_relu=True, use_multi_contexts=False,
        use_weight_sharing=False, use_slc_allocator=False, skel_library_dir=None)
    assert s.gpu is None
    assert (s.online_prepare, s.shared_buffer, s.dump_intermediate_outputs, s.is_from_context_binary,
            s.saver, s.use_mha2sha, s.multiple_graphs) == (False, False, False, False, False, False, None)
    assert s.graph_names == () and s.library_path == "" and s.op_packages == ()
    assert s.notes == () and s.unknown_fields == ()
    assert s.raw["saver_output_dir"] == "saver_output"
    assert s.raw["profile_level"] == "kProfileDetailed"
    assert s.summary == ("SM8650 (HTP V75, 8 MB VTCM), HTP backend, profile level detailed, "
                         "quantized, performance mode burst")


def test_sm8750_optrace():
    s = spec("synthetic_compile_spec_sm8750_optrace.bin")
    assert (s.schema, s.soc_model, s.soc_model_id, s.htp_arch, s.vtcm_mb) == ("v1.1+", "SM8750", 69, "V79", 8)
    assert (s.profile_level, s.log_level, s.shared_buffer) == ("optrace", "debug", True)
    assert s.per_op_profiling
    h = s.htp
    assert (h.precision, h.performance_mode, h.use_multi_contexts, h.use_weight_sharing) == \
        ("fp16", "high_performance", True, True)


def test_sm8450_basic_all_fields():
    s = spec("synthetic_compile_spec_sm8450_basic.bin")
    assert (s.schema, s.soc_model, s.soc_model_id, s.htp_arch, s.vtcm_mb) == ("v1.1+", "SM8450", 36, "V69", 8)
    assert (s.profile_level, s.log_level) == ("basic", "warn")
    assert not s.per_op_profiling
    assert (s.online_prepare, s.use_mha2sha) == (True, True)
    assert s.htp == QnnHtpOptions(
        performance_mode="power_saver", precision="quantized", pd_session="signed",
        max_sf_buf_size=12345678, use_conv_hmx=True, use_dlbc=True, use_fold_relu=False,
        use_multi_contexts=False, use_weight_sharing=False, use_slc_allocator=True, skel_library_dir=None)
    (pkg,) = s.op_packages
    assert pkg == {"op_package_name": "ExampleOpPackage", "op_package_path": "/data/local/tmp/libExample.so",
                   "interface_provider": "ExampleOpPackageInterfaceProvider", "target": "HTP",
                   "custom_op_name": "my_ops.mul3.default", "qnn_op_type_name": "ExampleCustomOp",
                   "platform": "AARCH64_ANDROID"}


def test_gpu_backend():
    s = spec("synthetic_compile_spec_sm8650_gpu_off.bin")
    assert (s.backend_type, s.profile_level, s.htp) == ("GPU", "off", None)
    g = s.gpu
    assert (g.precision, g.performance_mode, g.use_memory_optimizations, g.use_node_optimizations,
            g.use_queue_recording, g.use_weight_sharing) == ("fp16", "high", True, True, True, False)
    # the spec still names the SoC's HTP (ExecuTorch copies its SoC table entry in)
    assert (s.soc_model, s.htp_arch, s.vtcm_mb) == ("SM8650", "V75", 8)


@pytest.mark.parametrize("name", SPECS)
def test_raw_matches_flatc(name):
    """Every field etscope decodes equals flatc's own JSON decode with the schema that wrote it."""
    s = spec(name)
    oracle = copy.deepcopy(MANIFEST["files"][name]["flatc_json"])
    if "future" in name:  # fields and enum names this reader cannot know: flatc used the newer schema
        del oracle["future_flag"], oracle["future_name"]
        del oracle["backend_options"]["htp_options"]["future_htp_knob"]
        oracle["soc_info"]["soc_model"] = 123
        oracle["soc_info"]["htp_info"]["htp_arch"] = 99
        oracle["profile_level"] = 4
    assert _drop_none(s.raw) == oracle


@pytest.mark.parametrize("name", [n for n in SPECS if "executorch_decode" in MANIFEST["files"][n]])
def test_matches_executorch_decode(name):
    """The typed fields agree with executorch's flatbuffer_to_option on the same bytes."""
    s = spec(name)
    ex = MANIFEST["files"][name]["executorch_decode"]
    assert s.soc_model == ex["soc_info"]["soc_model"]
    assert s.htp_arch == ex["soc_info"]["htp_info"]["htp_arch"]
    assert s.vtcm_mb == ex["soc_info"]["htp_info"]["vtcm_size_in_mb"]
    assert s.raw["profile_level"] == ex["profile_level"] and s.raw["log_level"] == ex["log_level"]
    assert s.raw["backend_options"]["backend_type"] == ex["backend_options"]["backend_type"]


# ---- old layouts and a newer one ----------------------------------------------------------------

def test_legacy_v1_0():
    s = spec("synthetic_compile_spec_legacy_v1_0_sm8650_detailed.bin")
    assert s.schema == "v0.7-v1.0"
    assert (s.soc_model, s.htp_arch, s.vtcm_mb, s.profile_level, s.log_level) == \
        ("SM8650", "V75", 8, "detailed", "error")
    assert s.graph_names == ("forward",)
    assert s.htp.skel_library_dir == "" and s.htp.use_slc_allocator is None
    assert (s.htp.use_conv_hmx, s.htp.use_fold_relu, s.htp.performance_mode) == (True, True, "burst")
    assert s.use_mha2sha is None and s.saver is False and s.unknown_fields == ()


def test_legacy_v0_6():
    s = spec("synthetic_compile_spec_legacy_v0_6_sm8550_optrace.bin")
    assert s.schema == "v0.4-v0.6"
    assert (s.soc_model, s.htp_arch, s.profile_level, s.log_level, s.shared_buffer) == \
        ("SM8550", "V73", "optrace", "debug", True)
    assert s.graph_names == ("forward",) and s.multiple_graphs is True and s.saver is None
    assert (s.htp.precision, s.htp.use_weight_sharing) == ("fp16", True)


def test_legacy_v0_3():
    s = spec("synthetic_compile_spec_legacy_v0_3_sm8450_detailed.bin")
    assert s.schema == "v0.2-v0.3"
    assert (s.soc_model, s.htp_arch, s.profile_level) == ("SM8450", "V69", "detailed")
    assert s.raw["tensor_dump_output_path"] == "" and s.is_from_context_binary is None


def test_future_fields_are_skipped_and_new_enum_values_kept():
    s = spec("synthetic_compile_spec_future_fields.bin")
    oracle = MANIFEST["files"]["synthetic_compile_spec_future_fields.bin"]["flatc_json"]
    assert (oracle["future_flag"], oracle["future_name"], oracle["soc_info"]["soc_model"]) == \
        (True, "from the future", "SM9999")
    assert s.schema == "v1.1+"
    assert s.unknown_fields == ("QnnExecuTorchHtpBackendOptions.10", "QnnExecuTorchOptions.13",
                                "QnnExecuTorchOptions.14")
    assert (s.soc_model, s.soc_model_id, s.htp_arch, s.vtcm_mb) == ("unknown_123", 123, "unknown_99", 12)
    assert s.profile_level == "unknown_4" and not s.per_op_profiling
    assert (s.log_level, s.backend_type, s.htp.performance_mode) == ("error", "HTP", "burst")
    assert any("123" in n for n in s.notes)


# ---- SoC table ----------------------------------------------------------------------------------

def test_soc_table():
    t = soc_table()
    assert set(t) == set(QCOM_CHIPSET.values()) - {"UNKNOWN_SM"}
    assert t["SM8350"] == ("V68", 4)
    for soc, arch in [("SM8450", "V69"), ("SM8475", "V69"), ("SM8550", "V73"), ("SM8650", "V75"),
                      ("SM8750", "V79"), ("SM8850", "V81")]:
        assert t[soc] == (arch, 8)
    assert t["SA8797"] == ("V81", 16) and t["QCM6490"] == ("V68", 2) and t["SW6100"] == ("V81", 4)


# ---- .pte ---------------------------------------------------------------------------------------

def test_synthetic_qnn_pte():
    path = QP / "synthetic_qnn_cnn.pte"
    p = read_pte(path)
    m = p.method("forward")
    assert [(i.kind, i.backend_id, i.operator) for i in m.instructions] == \
        [("delegate", "QnnBackend", None), ("kernel", None, "aten::cumsum.out")]
    (d,) = m.delegates
    assert d.backend_id == "QnnBackend" and d.location == "segment"
    detailed = (QP / "synthetic_compile_spec_sm8650_detailed.bin").read_bytes()
    assert d.compile_specs == {"qnn_compile_spec": detailed}
    blob = path.read_bytes()[d.blob_offset:d.blob_offset + d.blob_size]
    assert blob.startswith(b"ETSCOPE-SYNTHETIC QnnBackend placeholder")
    s = find_qnn_compile_spec(d)
    assert (s.soc_model, s.htp_arch, s.vtcm_bytes, s.profile_level) == ("SM8650", "V75", 8 << 20, "detailed")
    assert s.name == "delegate 0 (QnnBackend) compile spec 'qnn_compile_spec'"
    assert find_qnn_compile_specs(p) == {("forward", 0): s}


def test_finder_ignores_other_delegates():
    p = read_pte(FIX / "real" / "cnn.pte")
    (d,) = p.method("forward").delegates
    assert d.backend_id == "XnnpackBackend" and find_qnn_compile_spec(d) is None
    assert find_qnn_compile_specs(p) == {}
    qnn_no_spec = PteDelegate(0, "QnnBackend", {}, "inline", 0, 0, 0)
    assert find_qnn_compile_spec(qnn_no_spec) is None


def test_finder_raises_on_bad_spec():
    bad = PteDelegate(3, "QnnBackend", {"qnn_compile_spec": b"\x00" * 40}, "inline", 0, 0, 0)
    with pytest.raises(FormatError) as e:
        find_qnn_compile_spec(bad)
    assert e.value.file == "delegate 3 (QnnBackend) compile spec 'qnn_compile_spec'"


# ---- hand-built ---------------------------------------------------------------------------------

def _options(slots: dict[int, tuple[str, object]], soc: int | None = 57, n_slots: int = 13) -> bytes:
    """A QnnExecuTorchOptions built with the flatbuffers runtime; slots {n: (kind, value)}."""
    b = flatbuffers.Builder(0)
    refs = {}
    for n, (kind, v) in slots.items():
        if kind == "str":
            refs[n] = b.CreateString(v)
    soc_t = None
    if soc is not None:
        b.StartObject(3)
        b.PrependInt32Slot(0, soc, 0)
        soc_t = b.EndObject()
    b.StartObject(n_slots)
    if soc_t is not None:
        b.PrependUOffsetTRelativeSlot(0, soc_t, 0)
    for n, (kind, v) in slots.items():
        if kind == "str":
            b.PrependUOffsetTRelativeSlot(n, refs[n], 0)
        elif kind == "i32":
            b.PrependInt32Slot(n, v, 0)
        elif kind == "u8":
            b.PrependUint8Slot(n, v, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def test_hand_built_minimal():
    # profile_level (slot 6 in v1.1+) = detailed; no htp_info: arch and VTCM come from the SoC table
    s = decode_qnn_compile_spec(_options({2: ("str", ""), 3: ("i32", 1), 6: ("i32", 2)}))
    assert (s.schema, s.profile_level, s.log_level) == ("v1.1+", "detailed", "error")
    assert (s.soc_model, s.htp_arch, s.htp_arch_source, s.vtcm_mb, s.vtcm_source) == \
        ("SM8650", "V75", "soc table", 8, "soc table")
    assert s.backend_type == "undefined" and s.htp is None


def test_hand_built_no_soc():
    s = decode_qnn_compile_spec(_options({2: ("str", "libQnnHtp.so"), 3: ("i32", 1)}, soc=None))
    assert s.soc_model == "UNKNOWN_SM" and s.htp_arch is None and s.vtcm_mb is None and s.vtcm_bytes is None
    assert s.library_path == "libQnnHtp.so"
    assert any("not set" in n for n in s.notes)


def test_spec_arch_disagreeing_with_table_is_noted():
    b = flatbuffers.Builder(0)
    b.StartObject(2)
    b.PrependInt32Slot(0, 73, 0)
    b.PrependUint32Slot(1, 4, 0)
    info = b.EndObject()
    b.StartObject(3)
    b.PrependInt32Slot(0, 57, 0)
    b.PrependUOffsetTRelativeSlot(1, info, 0)
    soc = b.EndObject()
    b.StartObject(13)
    b.PrependUOffsetTRelativeSlot(0, soc, 0)
    b.PrependInt32Slot(3, 1, 0)
    b.Finish(b.EndObject())
    s = decode_qnn_compile_spec(bytes(b.Output()))
    assert (s.htp_arch, s.vtcm_mb) == ("V73", 4)  # what the spec says wins
    assert len(s.notes) == 2 and "V75" in s.notes[0] and "8 MB" in s.notes[1]


def test_bool_out_of_range_fits_no_layout():
    # slot 7 holds a byte 7: a bool in v1.1+ (shared_buffer) and v0.7/v0.4 have it as a 4-byte enum
    with pytest.raises(FormatError, match="any known layout"):
        decode_qnn_compile_spec(_options({2: ("str", ""), 3: ("i32", 1), 7: ("u8", 7), 8: ("u8", 9)}))


# ---- damaged input ------------------------------------------------------------------------------

@pytest.mark.parametrize("data,match", [
    (b"", "empty"), (b"\x08\x00\x00\x00", "too small"), (b"\xff" * 32, "root offset"),
    (b"\x00" * 64, "root offset"),
])
def test_bad_headers(data, match):
    with pytest.raises(FormatError, match=match) as e:
        decode_qnn_compile_spec(data, "x.bin")
    assert e.value.file == "x.bin"


def test_not_a_spec():
    with pytest.raises(FormatError):
        decode_qnn_compile_spec((FIX / "real" / "cnn.pte").read_bytes()[:4096])
    with pytest.raises(FormatError):
        decode_qnn_compile_spec("text")
    rng = random.Random(1)
    for _ in range(200):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(12, 200)))
        try:
            decode_qnn_compile_spec(data)
        except FormatError:
            pass


def test_accepts_buffer_types():
    data = (QP / "synthetic_compile_spec_sm8650_detailed.bin").read_bytes()
    assert decode_qnn_compile_spec(bytearray(data)) == decode_qnn_compile_spec(memoryview(data))


@pytest.mark.parametrize("name", SPECS)
def test_truncated_and_flipped(name):
    """Damage never raises anything but FormatError (and never hangs)."""
    data = (QP / name).read_bytes()
    for n in range(len(data)):
        try:
            decode_qnn_compile_spec(data[:n])
        except FormatError:
            pass
    rng = random.Random(name)
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] = rng.getrandbits(8)
        try:
            decode_qnn_compile_spec(bytes(b))
        except FormatError:
            pass


def test_layout_table_is_consistent():
    """Slots the layouts agree on have the same meaning; only the known moves differ."""
    names = {label: [f[0] for f in lay["QnnExecuTorchOptions"]] for label, lay in LAYOUTS.items()}
    assert names["v1.1+"][:2] == names["v0.2-v0.3"][:2] == ["soc_info", "backend_options"]
    assert names["v1.1+"].index("profile_level") == 6
    assert names["v0.7-v1.0"].index("profile_level") == names["v0.4-v0.6"].index("profile_level") == 7
    htp = {label: [f[0] for f in lay["QnnExecuTorchHtpBackendOptions"]] for label, lay in LAYOUTS.items()}
    assert htp["v1.1+"][4] == "use_conv_hmx" and htp["v0.7-v1.0"][4] == "skel_library_dir"
