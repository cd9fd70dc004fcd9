"""The QNN compile spec's schema as etscope reads it (``qc_compiler_spec.fbs``, namespace
``qnn_delegate``): its enums, the SoC table ExecuTorch assumes, and the four table layouts the
schema went through (the history is in :mod:`etscope.formats.qnn_compile_spec`, which decodes with
them). Plain data: nothing here reads bytes."""
from __future__ import annotations

from typing import Any

# ---- enums (qc_compiler_spec.fbs; values are the schema's) ---------------------------------------

QCOM_CHIPSET = {
    0: "UNKNOWN_SM", 30: "SM8350", 36: "SM8450", 39: "SA8295", 42: "SM8475", 43: "SM8550",
    45: "SXR1230P", 46: "SSG2115P", 52: "SA8255", 53: "SXR2230P", 57: "SM8650", 58: "SSG2125P",
    60: "SC8380XP", 69: "SM8750", 72: "SA8797", 75: "SXR2330P", 77: "QCS9100", 87: "SM8850",
    93: "QCM6490", 95: "SAR2230P", 96: "SW6100", 97: "SM8845",
}
HTP_ARCH = {0: "NONE", 68: "V68", 69: "V69", 73: "V73", 75: "V75", 79: "V79", 81: "V81"}
LPAI_HW_VERSION = {0: "NONE", 6: "V6", 7: "V7"}
BACKEND_TYPE = {0: "kUndefinedBackend", 1: "kGpuBackend", 2: "kHtpBackend", 3: "kDspBackend",
                4: "kLpaiBackend"}
HTP_PERFORMANCE_MODE = {
    0: "kHtpDefault", 1: "kHtpSustainedHighPerformance", 2: "kHtpBurst", 3: "kHtpHighPerformance",
    4: "kHtpPowerSaver", 5: "kHtpLowPowerSaver", 6: "kHtpHighPowerSaver", 7: "kHtpLowBalanced",
    8: "kHtpBalanced",
}
HTP_PRECISION = {0: "kHtpQuantized", 1: "kHtpFp16"}
HTP_PD_SESSION = {0: "kHtpUnsignedPd", 1: "kHtpSignedPd"}
GPU_PERFORMANCE_MODE = {0: "kGpuPerfHintHigh", 1: "kGpuPerfHintNormal", 2: "kGpuPerfHintLow"}
GPU_PRECISION = {0: "kGpuPrecisionFp32", 1: "kGpuPrecisionFp16", 2: "kGpuPrecisionHybrid",
                 3: "kGpuPrecisionUserProvided"}
LOG_LEVEL = {0: "kLogOff", 1: "kLogLevelError", 2: "kLogLevelWarn", 3: "kLogLevelInfo",
             4: "kLogLevelVerbose", 5: "kLogLevelDebug"}
PROFILE_LEVEL = {0: "kProfileOff", 1: "kProfileBasic", 2: "kProfileDetailed", 3: "kProfileOptrace"}
OP_PACKAGE_TARGET = {0: "UNKNOWN", 1: "CPU", 2: "HTP"}
OP_PACKAGE_PLATFORM = {0: "UNKNOWN", 1: "X86_64", 2: "AARCH64_ANDROID"}
LPAI_CLIENT_PERF = {0: "kUndefined", 1: "kRealTime", 2: "kNonRealTime"}
LPAI_CORE_AFFINITY = {0: "kUndefined", 1: "kSoft", 2: "kHard"}
LPAI_TARGET_ENV = {0: "kX86", 1: "kArm", 2: "kAdsp"}

# Short names for the typed fields of QnnCompileSpec (raw keeps the schema's identifiers).
SHORT_NAMES = {
    "backend_type": {0: "undefined", 1: "GPU", 2: "HTP", 3: "DSP", 4: "LPAI"},
    "profile_level": {0: "off", 1: "basic", 2: "detailed", 3: "optrace"},
    "log_level": {0: "off", 1: "error", 2: "warn", 3: "info", 4: "verbose", 5: "debug"},
    "htp_performance_mode": {0: "default", 1: "sustained_high_performance", 2: "burst",
                             3: "high_performance", 4: "power_saver", 5: "low_power_saver",
                             6: "high_power_saver", 7: "low_balanced", 8: "balanced"},
    "htp_precision": {0: "quantized", 1: "fp16"},
    "htp_pd_session": {0: "unsigned", 1: "signed"},
    "gpu_performance_mode": {0: "high", 1: "normal", 2: "low"},
    "gpu_precision": {0: "fp32", 1: "fp16", 2: "hybrid", 3: "user_provided"},
}

# SoC -> (HTP arch, VTCM MB, LPAI hardware version or None): ``_soc_info_table`` in
# ``backends/qualcomm/serialization/qc_schema.py`` of executorch 1.5.1 (SC8380XP is in that wheel
# but not on upstream main). The values of the SoCs present in older releases never changed; SoCs
# not in the table (none up to now) default to nothing.
SOC_TABLE: dict[str, tuple[str, int, str | None]] = {
    "SA8295": ("V68", 8, None), "SA8797": ("V81", 16, None), "SC8380XP": ("V73", 8, None),
    "SM8350": ("V68", 4, None), "SM8450": ("V69", 8, None), "SM8475": ("V69", 8, None),
    "SM8550": ("V73", 8, None), "SA8255": ("V73", 8, None), "SM8650": ("V75", 8, None),
    "SM8750": ("V79", 8, None), "SM8850": ("V81", 8, "V6"), "SSG2115P": ("V73", 2, None),
    "SSG2125P": ("V73", 2, None), "SXR1230P": ("V73", 2, None), "SXR2230P": ("V69", 8, None),
    "SXR2330P": ("V79", 8, None), "QCS9100": ("V73", 8, None), "SAR2230P": ("V81", 4, "V6"),
    "SW6100": ("V81", 4, None), "QCM6490": ("V68", 2, None), "SM8845": ("V81", 8, None),
}


def soc_table() -> dict[str, tuple[str, int]]:
    """SoC model -> (HTP arch, VTCM size in MB) as ExecuTorch's QNN backend assumes them."""
    return {soc: (arch, mb) for soc, (arch, mb, _) in SOC_TABLE.items()}


# ---- schema layouts -----------------------------------------------------------------------------
# A table is a tuple of fields in slot order: (name, kind, ref). kinds: "bool", "i32", "u32",
# "enum" (i32; ref = value->name), "str", "[str]", "table" (ref = table name), "[table]".

TableLayout = tuple[tuple[str, str, Any], ...]

_COMMON: dict[str, TableLayout] = {
    "SocInfo": (("soc_model", "enum", QCOM_CHIPSET), ("htp_info", "table", "HtpInfo"),
                ("lpai_info", "table", "LpaiInfo")),
    "HtpInfo": (("htp_arch", "enum", HTP_ARCH), ("vtcm_size_in_mb", "u32", None)),
    "LpaiInfo": (("lpai_hardware_version", "enum", LPAI_HW_VERSION),),
    "QnnExecuTorchBackendOptions": (
        ("backend_type", "enum", BACKEND_TYPE),
        ("htp_options", "table", "QnnExecuTorchHtpBackendOptions"),
        ("gpu_options", "table", "QnnExecuTorchGpuBackendOptions"),
        ("lpai_options", "table", "QnnExecuTorchLpaiBackendOptions")),
    "QnnExecuTorchGpuBackendOptions": (
        ("performance_mode", "enum", GPU_PERFORMANCE_MODE), ("precision", "enum", GPU_PRECISION),
        ("use_memory_optimizations", "bool", None), ("use_node_optimizations", "bool", None),
        ("use_queue_recording", "bool", None), ("use_weight_sharing", "bool", None)),
    "QnnExecuTorchLpaiBackendOptions": (
        ("fps", "i32", None), ("ftrt_ratio", "i32", None),
        ("client_perf_type", "enum", LPAI_CLIENT_PERF), ("affinity", "enum", LPAI_CORE_AFFINITY),
        ("core_selection", "u32", None), ("target_env", "enum", LPAI_TARGET_ENV)),
    "QnnExecuTorchOpPackageOptions": (
        ("op_package_infos", "[table]", "QnnExecuTorchOpPackageInfo"),),
    "QnnExecuTorchOpPackageInfo": (
        ("op_package_name", "str", None), ("op_package_path", "str", None),
        ("interface_provider", "str", None), ("target", "enum", OP_PACKAGE_TARGET),
        ("custom_op_name", "str", None), ("qnn_op_type_name", "str", None),
        ("platform", "enum", OP_PACKAGE_PLATFORM)),
}

_HTP_HEAD: TableLayout = (("max_sf_buf_size", "i32", None),
                 ("performance_mode", "enum", HTP_PERFORMANCE_MODE),
                 ("precision", "enum", HTP_PRECISION), ("pd_session", "enum", HTP_PD_SESSION))
_HTP_FLAGS: TableLayout = (("use_conv_hmx", "bool", None), ("use_dlbc", "bool", None),
                  ("use_fold_relu", "bool", None), ("use_multi_contexts", "bool", None),
                  ("use_weight_sharing", "bool", None))
_HTP_OLD = _HTP_HEAD + (("skel_library_dir", "str", None),) + _HTP_FLAGS
_HTP_NEW = _HTP_HEAD + _HTP_FLAGS + (("use_slc_allocator", "bool", None),)

_OPT_HEAD: TableLayout = (("soc_info", "table", "SocInfo"),
                 ("backend_options", "table", "QnnExecuTorchBackendOptions"))
_OPT_V02 = _OPT_HEAD + (
    ("graph_name", "str", None), ("library_path", "str", None), ("log_level", "enum", LOG_LEVEL),
    ("online_prepare", "bool", None), ("tensor_dump_output_path", "str", None),
    ("profile_level", "enum", PROFILE_LEVEL), ("shared_buffer", "bool", None))
_OPT_V04 = _OPT_V02[:6] + (("dump_intermediate_outputs", "bool", None),) + _OPT_V02[7:] + (
    ("is_from_context_binary", "bool", None), ("multiple_graphs", "bool", None))
_OPT_V07 = _OPT_HEAD + (("graph_name", "[str]", None),) + _OPT_V04[3:10] + (
    ("saver", "bool", None), ("saver_output_dir", "str", None),
    ("op_package_options", "table", "QnnExecuTorchOpPackageOptions"))
_OPT_V11 = _OPT_HEAD + (
    ("library_path", "str", None), ("log_level", "enum", LOG_LEVEL),
    ("online_prepare", "bool", None), ("dump_intermediate_outputs", "bool", None),
    ("profile_level", "enum", PROFILE_LEVEL), ("shared_buffer", "bool", None),
    ("is_from_context_binary", "bool", None), ("saver", "bool", None),
    ("saver_output_dir", "str", None),
    ("op_package_options", "table", "QnnExecuTorchOpPackageOptions"), ("use_mha2sha", "bool", None))


def _layout(options: TableLayout, htp: TableLayout) -> dict[str, TableLayout]:
    return {**_COMMON, "QnnExecuTorchOptions": options, "QnnExecuTorchHtpBackendOptions": htp}


# Newest first: ties go to the newest.
LAYOUTS: dict[str, dict[str, TableLayout]] = {
    "v1.1+": _layout(_OPT_V11, _HTP_NEW),
    "v0.7-v1.0": _layout(_OPT_V07, _HTP_OLD),
    "v0.4-v0.6": _layout(_OPT_V04, _HTP_OLD),
    "v0.2-v0.3": _layout(_OPT_V02, _HTP_OLD[:-1]),  # use_weight_sharing came in v0.5
}
ROOT_TABLE = "QnnExecuTorchOptions"
MAX_DEPTH = 8  # the schema nests 4 deep
