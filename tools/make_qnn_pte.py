#!/usr/bin/env python3
"""Generate QNN compile-spec and QNN ``.pte`` fixtures with ExecuTorch's own serializers.

Like ``tools/make_fixtures.py`` this needs the "oracle" environment with executorch (1.5.1 was
used); the QNN SDK is NOT needed: nothing here touches PyQnnManager. Run from the repo root::

    /work/venv-et/bin/python tools/make_qnn_pte.py [--executorch-git DIR]

It writes into ``tests/fixtures/qnn_pte/`` (``--out``):

* ``synthetic_compile_spec_<soc>_<level>.bin`` -- the bytes of a ``qnn_compile_spec`` as the
  installed executorch makes them: ``generate_qnn_executorch_compiler_spec(...)`` (the call users
  make) where it can express the request, else ``option_to_flatbuffer(QnnExecuTorchOptions(...))``
  (that generator maps profile level 1 / basic to off, so the basic fixture uses the latter).
  Both end in ``flatc --binary`` on ``qc_compiler_spec.fbs`` shipped in the wheel.
* ``synthetic_compile_spec_legacy_<tag>_<soc>_<level>.bin`` (only with ``--executorch-git``, a git
  clone of pytorch/executorch with its release tags) -- specs in the OLD layouts: the schema of
  release ``<tag>`` is taken from that clone with ``git show`` and the JSON the dataclasses of that
  release serialised (every field, so empty strings and tables are present) is compiled with the
  wheel's flatc. The field slots of ``QnnExecuTorchOptions`` moved in v0.4 and v1.1 (fields were
  removed, not deprecated), so old programs need these to be read right.
* ``synthetic_compile_spec_future_fields.bin`` -- a spec from a pretend newer ExecuTorch: the
  wheel's schema with new enum values (SoC ``SM9999 = 123``, ``V99``, a fifth profile level) and
  fields appended to ``QnnExecuTorchOptions`` and ``QnnExecuTorchHtpBackendOptions``, compiled with
  the wheel's flatc.
* ``synthetic_qnn_cnn.pte`` -- ``tests/fixtures/real/cnn.pte`` (a CNN lowered to XNNPACK plus
  ``cumsum`` on the CPU) read with ``deserialize_pte_binary``; its one delegate gets backend id
  ``QnnBackend``, compile specs ``[("qnn_compile_spec", <the SM8650 detailed spec>)]`` and a small
  placeholder processed blob (NOT a QNN context binary: it cannot run), then written back with
  ``serialize_pte_binary(..., extract_delegate_segments=True)``.
* ``synthetic_qnn_cnn_sm8750.pte`` -- the same, with the SM8750 optrace spec: a pair of programs
  that differ only in their QNN compile spec.
* ``synthetic_manifest.json`` -- for every file: how it was made, what was asked for, and the
  oracle: executorch's own decode (``flatbuffer_to_option``) and ``flatc --json --defaults-json
  --raw-binary`` of the bytes with the schema that wrote them.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER_BLOB = (b"ETSCOPE-SYNTHETIC QnnBackend placeholder: not a QNN context binary; made by "
                    b"tools/make_qnn_pte.py for reader tests only.\n")


def _quiet_imports():
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


def _flatc() -> str:
    from executorch.exir._serialize._flatbuffer import _get_flatc_path

    return _get_flatc_path()


def _flatc_json(data: bytes, schema_text: bytes) -> dict:
    """flatc's own JSON view of a compile spec (all fields, defaults included)."""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "s.fbs").write_bytes(schema_text)
        Path(d, "s.bin").write_bytes(data)
        subprocess.run([_flatc(), "--json", "--strict-json", "--defaults-json", "--raw-binary",
                        "-o", d, "s.fbs", "--", "s.bin"], cwd=d, check=True)
        return json.loads(Path(d, "s.json").read_text())


def _flatc_binary(obj: dict, schema_text: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        Path(d, "s.fbs").write_bytes(schema_text)
        Path(d, "s.json").write_text(json.dumps(obj))
        subprocess.run([_flatc(), "--binary", "-o", d, "s.fbs", "s.json"], cwd=d, check=True)
        return Path(d, "s.bin").read_bytes()


def _wheel_schema() -> bytes:
    import importlib.resources

    import executorch.backends.qualcomm.serialization as ser

    return importlib.resources.files(ser).joinpath("qc_compiler_spec.fbs").read_bytes()


def _plain(obj):
    """Dataclasses/IntEnums -> JSON-able data (enums by name) for the manifest."""
    from enum import Enum

    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Enum):
        return obj.name
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    return obj


def current_specs() -> list[tuple[str, bytes, dict]]:
    """(file name, bytes, manifest entry) for specs made by the installed executorch."""
    from executorch.backends.qualcomm.serialization import qc_schema as S
    from executorch.backends.qualcomm.serialization.qc_schema_serialize import (
        flatbuffer_to_option, option_to_flatbuffer)
    from executorch.backends.qualcomm.utils.constants import QCOM_QNN_COMPILE_SPEC
    from executorch.backends.qualcomm.utils.utils import (
        generate_gpu_compiler_spec, generate_htp_compiler_spec, generate_qnn_executorch_compiler_spec)

    out = []

    def via_generator(fname, call, soc, backend_kwargs, spec_kwargs, backend="htp"):
        gen = generate_htp_compiler_spec if backend == "htp" else generate_gpu_compiler_spec
        specs = generate_qnn_executorch_compiler_spec(soc, gen(**backend_kwargs), **spec_kwargs)
        (spec,) = specs
        assert spec.key == QCOM_QNN_COMPILE_SPEC == "qnn_compile_spec"
        data = spec.value
        out.append((fname, data, {
            "made_with": call, "asked": {"soc_model": soc.name, "backend": backend,
                                         **{k: _plain(v) for k, v in backend_kwargs.items()},
                                         **{k: _plain(v) for k, v in spec_kwargs.items()}},
            "executorch_decode": _plain(flatbuffer_to_option(data)),
        }))

    via_generator(
        "synthetic_compile_spec_sm8650_detailed.bin",
        "generate_qnn_executorch_compiler_spec(QcomChipset.SM8650, "
        "generate_htp_compiler_spec(use_fp16=False), profile_level=2)",
        S.QcomChipset.SM8650, {"use_fp16": False}, {"profile_level": 2})
    via_generator(
        "synthetic_compile_spec_sm8750_optrace.bin",
        "generate_qnn_executorch_compiler_spec(QcomChipset.SM8750, generate_htp_compiler_spec("
        "use_fp16=True, use_multi_contexts=True, use_weight_sharing=True, "
        "htp_performance_mode=kHtpHighPerformance), profile_level=3, debug=True, shared_buffer=True)",
        S.QcomChipset.SM8750,
        {"use_fp16": True, "use_multi_contexts": True, "use_weight_sharing": True,
         "htp_performance_mode": S.QnnExecuTorchHtpPerformanceMode.kHtpHighPerformance},
        {"profile_level": 3, "debug": True, "shared_buffer": True})
    via_generator(
        "synthetic_compile_spec_sm8650_gpu_off.bin",
        "generate_qnn_executorch_compiler_spec(QcomChipset.SM8650, generate_gpu_compiler_spec("
        "precision=kGpuPrecisionFp16), profile_level=0)",
        S.QcomChipset.SM8650, {"precision": S.QnnExecuTorchGpuPrecision.kGpuPrecisionFp16},
        {"profile_level": 0}, backend="gpu")

    # basic: the generator turns profile level 1 into off, so build the options directly.
    htp = S.QnnExecuTorchHtpBackendOptions(
        max_sf_buf_size=12345678,
        performance_mode=S.QnnExecuTorchHtpPerformanceMode.kHtpPowerSaver,
        pd_session=S.QnnExecuTorchHtpPdSession.kHtpSignedPd,
        use_fold_relu=False, use_dlbc=True, use_slc_allocator=True)
    opts = S.QnnExecuTorchOptions(
        S._soc_info_table[S.QcomChipset.SM8450],
        S.QnnExecuTorchBackendOptions(backend_type=S.QnnExecuTorchBackendType.kHtpBackend,
                                      htp_options=htp),
        log_level=S.QnnExecuTorchLogLevel.kLogLevelWarn,
        profile_level=S.QnnExecuTorchProfileLevel.kProfileBasic,
        online_prepare=True, use_mha2sha=True,
        op_package_options=S.QnnExecuTorchOpPackageOptions([S.QnnExecuTorchOpPackageInfo(
            op_package_name="ExampleOpPackage", op_package_path="/data/local/tmp/libExample.so",
            interface_provider="ExampleOpPackageInterfaceProvider",
            target=S.QnnExecuTorchOpPackageTarget.HTP, custom_op_name="my_ops.mul3.default",
            qnn_op_type_name="ExampleCustomOp",
            platform=S.QnnExecuTorchOpPackagePlatform.AARCH64_ANDROID)]))
    data = option_to_flatbuffer(opts)
    out.append(("synthetic_compile_spec_sm8450_basic.bin", data, {
        "made_with": "option_to_flatbuffer(QnnExecuTorchOptions(_soc_info_table[SM8450], HTP "
                     "options, profile_level=kProfileBasic, ...))",
        "asked": _plain(opts), "executorch_decode": _plain(flatbuffer_to_option(data)),
    }))
    schema = _wheel_schema()
    for _, data, entry in out:
        entry["flatc_json"] = _flatc_json(data, schema)
        entry["schema"] = "qc_compiler_spec.fbs of the installed executorch wheel"
    return out


# JSON the dataclasses of old releases serialised (every field; enums as ints, as json.dumps of
# IntEnum gives). Field names and defaults from qc_schema.py of each tag.
def _legacy_htp(**kw):
    d = {"max_sf_buf_size": 0, "performance_mode": 2, "precision": 0, "pd_session": 0,
         "skel_library_dir": "", "use_conv_hmx": True, "use_dlbc": False, "use_fold_relu": True,
         "use_multi_contexts": False}
    d.update(kw)
    return d


LEGACY = [
    # (tag, schema path in that tag, file name, JSON)
    ("v1.0.0", "backends/qualcomm/serialization/qc_compiler_spec.fbs",
     "synthetic_compile_spec_legacy_v1_0_sm8650_detailed.bin",
     {"soc_info": {"soc_model": 57, "htp_info": {"htp_arch": 75, "vtcm_size_in_mb": 8}},
      "backend_options": {"backend_type": 2, "htp_options": _legacy_htp(use_weight_sharing=False)},
      "graph_name": ["forward"], "library_path": "", "log_level": 1, "online_prepare": False,
      "dump_intermediate_outputs": False, "profile_level": 2, "shared_buffer": False,
      "is_from_context_binary": False, "saver": False, "saver_output_dir": "saver_output",
      "op_package_options": {"op_package_infos": []}}),
    ("v0.6.0", "backends/qualcomm/serialization/qc_compiler_spec.fbs",
     "synthetic_compile_spec_legacy_v0_6_sm8550_optrace.bin",
     {"soc_info": {"soc_model": 43, "htp_info": {"htp_arch": 73, "vtcm_size_in_mb": 8}},
      "backend_options": {"backend_type": 2,
                          "htp_options": _legacy_htp(precision=1, use_weight_sharing=True)},
      "graph_name": "forward", "library_path": "", "log_level": 5, "online_prepare": False,
      "dump_intermediate_outputs": False, "profile_level": 3, "shared_buffer": True,
      "is_from_context_binary": False, "multiple_graphs": True}),
    ("v0.3.0", "backends/qualcomm/serialization/schema.fbs",
     "synthetic_compile_spec_legacy_v0_3_sm8450_detailed.bin",
     {"soc_info": {"soc_model": 36, "htp_info": {"htp_arch": 69, "vtcm_size_in_mb": 8}},
      "backend_options": {"backend_type": 2, "htp_options": _legacy_htp()},
      "graph_name": "forward", "library_path": "", "log_level": 1, "online_prepare": False,
      "tensor_dump_output_path": "", "profile_level": 2, "shared_buffer": False}),
]


def legacy_specs(git_dir: str) -> list[tuple[str, bytes, dict]]:
    out = []
    for tag, path, fname, obj in LEGACY:
        schema = subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{path}"],
                                check=True, capture_output=True).stdout
        data = _flatc_binary(obj, schema)
        out.append((fname, data, {
            "made_with": f"flatc --binary with {path} of executorch {tag} (git show) on the JSON "
                         f"that release's dataclasses serialise",
            "asked": obj, "schema": f"{tag}:{path}", "schema_sha256": hashlib.sha256(schema).hexdigest(),
            "flatc_json": _flatc_json(data, schema),
        }))
    return out


def future_spec() -> tuple[str, bytes, dict]:
    """A spec from a pretend newer ExecuTorch: the wheel's schema with fields appended to two
    tables and new enum values (what forward compatibility has to cope with)."""
    schema = _wheel_schema().decode()
    edits = [
        ("  SM8845 = 97,\n", "  SM8845 = 97,\n  SM9999 = 123,\n"),
        ("  V81 = 81,\n", "  V81 = 81,\n  V99 = 99,\n"),
        ("  kProfileOptrace,\n", "  kProfileOptrace,\n  kProfileFuture,\n"),
        ("  use_slc_allocator:bool;\n", "  use_slc_allocator:bool;\n  future_htp_knob:int;\n"),
        ("  use_mha2sha:bool;\n", "  use_mha2sha:bool;\n  future_flag:bool;\n  future_name:string;\n"),
    ]
    for old, new in edits:
        assert schema.count(old) == 1, old
        schema = schema.replace(old, new)
    obj = {"soc_info": {"soc_model": "SM9999", "htp_info": {"htp_arch": "V99", "vtcm_size_in_mb": 12}},
           "backend_options": {"backend_type": "kHtpBackend", "htp_options": {
               "performance_mode": "kHtpBurst", "use_conv_hmx": True, "use_fold_relu": True,
               "future_htp_knob": 7}},
           "library_path": "", "log_level": "kLogLevelError", "profile_level": "kProfileFuture",
           "saver_output_dir": "saver_output", "op_package_options": {"op_package_infos": []},
           "future_flag": True, "future_name": "from the future"}
    data = _flatc_binary(obj, schema.encode())
    return "synthetic_compile_spec_future_fields.bin", data, {
        "made_with": "flatc --binary with the wheel's qc_compiler_spec.fbs edited: "
                     + "; ".join(f"{o.strip()!r} -> {n.strip()!r}" for o, n in edits),
        "asked": obj, "schema": "edited qc_compiler_spec.fbs (see made_with)",
        "flatc_json": _flatc_json(data, schema.encode()),
    }


def make_pte(cnn_pte: Path, spec: bytes, spec_name: str = "synthetic_compile_spec_sm8650_detailed.bin"
             ) -> tuple[bytes, dict]:
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary
    from executorch.exir.schema import BackendDelegateInlineData, CompileSpec

    pte = deserialize_pte_binary(cnn_pte.read_bytes())
    prog = pte.program
    (plan,) = prog.execution_plan
    (delegate,) = plan.delegates
    old_id = delegate.id
    delegate.id = "QnnBackend"
    delegate.compile_specs = [CompileSpec(key="qnn_compile_spec", value=spec)]
    ref = delegate.processed
    prog.backend_delegate_data[ref.index] = BackendDelegateInlineData(data=PLACEHOLDER_BLOB)
    data = bytes(serialize_pte_binary(pte, extract_delegate_segments=True))
    return data, {
        "made_with": f"deserialize_pte_binary({cnn_pte.relative_to(ROOT)}); delegate 0: id "
                     f"{old_id} -> QnnBackend, compile_specs -> [qnn_compile_spec = "
                     f"{spec_name}], processed blob -> placeholder "
                     f"({len(PLACEHOLDER_BLOB)} bytes); serialize_pte_binary(extract_delegate_segments=True)",
        "placeholder_blob": PLACEHOLDER_BLOB.decode(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "qnn_pte"))
    ap.add_argument("--executorch-git", help="git dir of a pytorch/executorch clone with tags "
                                             "(for the legacy-layout specs)")
    args = ap.parse_args(argv)
    _quiet_imports()
    import executorch  # noqa: F401
    from importlib.metadata import version

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"executorch": version("executorch"), "flatc": subprocess.run(
        [_flatc(), "--version"], capture_output=True, text=True).stdout.strip(), "files": {}}
    specs = current_specs() + [future_spec()]
    if args.executorch_git:
        specs += legacy_specs(args.executorch_git)
    for fname, data, entry in specs:
        (out / fname).write_bytes(data)
        entry["bytes"] = len(data)
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        manifest["files"][fname] = entry
        print(f"{fname}: {len(data)} bytes")
    detailed = dict((f, d) for f, d, _ in specs)["synthetic_compile_spec_sm8650_detailed.bin"]
    pte, entry = make_pte(ROOT / "tests" / "fixtures" / "real" / "cnn.pte", detailed)
    (out / "synthetic_qnn_cnn.pte").write_bytes(pte)
    entry.update(bytes=len(pte), sha256=hashlib.sha256(pte).hexdigest())
    manifest["files"]["synthetic_qnn_cnn.pte"] = entry
    print(f"synthetic_qnn_cnn.pte: {len(pte)} bytes")
    # The same program compiled for another SoC and profile level (SM8750, optrace): a pair whose
    # only difference is the QNN compile spec (etscope diff's program axis, issue 37).
    name = "synthetic_compile_spec_sm8750_optrace.bin"
    pte, entry = make_pte(ROOT / "tests" / "fixtures" / "real" / "cnn.pte", dict((f, d) for f, d, _ in specs)[name], name)
    (out / "synthetic_qnn_cnn_sm8750.pte").write_bytes(pte)
    entry.update(bytes=len(pte), sha256=hashlib.sha256(pte).hexdigest())
    manifest["files"]["synthetic_qnn_cnn_sm8750.pte"] = entry
    print(f"synthetic_qnn_cnn_sm8750.pte: {len(pte)} bytes")
    (out / "synthetic_manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
