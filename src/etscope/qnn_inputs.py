"""Read whichever QNN inputs were given and produce the QNN report (shared by CLI and API)."""
from __future__ import annotations

import os

from etscope.errors import FormatError


def read_qnn_profile(path: str):
    """A QNN profile written by qnn-profile-viewer (CSV, text or JSON) or ONNX Runtime (CSV)."""
    from etscope.formats import qnn_csv, qnn_json, qnn_text

    from etscope.paths import open_input

    try:
        with open_input(path, "QNN profile") as fh:
            head = fh.read(65536)
    except OSError as err:
        raise FormatError(f"cannot read: {err.strerror or err}", path) from None
    for mod, reader in ((qnn_csv, qnn_csv.read_qnn_csv), (qnn_json, qnn_json.read_qnn_json),
                        (qnn_text, qnn_text.read_qnn_text)):
        if mod.sniff(head):
            return reader(path)
    from etscope.formats.sniff import describe

    raise FormatError(f"not a QNN profile (CSV, viewer text or viewer JSON); this is {describe(head)}", path)


def load_qnn_inputs(etdump=None, etrecord=None, pte=None, method=None, qhas=None, optrace=None,
                    qnn_csv=None, runtrace=None) -> dict:
    from etscope.analysis.qnn import qnn_report

    profile = None
    if etdump is not None:
        from etscope.profile import load

        profile = load(etdump, etrecord=etrecord, pte=pte, method=method)
    q = None
    if qhas is not None:
        from etscope.formats.qhas import read_qhas

        q = read_qhas(qhas)
    ot = None
    if optrace is not None:
        from etscope.formats.optrace import read_optrace

        ot = read_optrace(optrace)
    qp = read_qnn_profile(qnn_csv) if qnn_csv is not None else None
    rt = None
    if runtrace is not None:
        from etscope.formats.runtrace import read_runtrace

        rt = read_runtrace(runtrace)
    soc = soc_from_pte(profile.pte if profile is not None else None, pte if profile is None else None)
    report = qnn_report(profile, qhas=q, optrace=ot, qnn_profile=qp, soc=soc, runtrace=rt)
    from etscope.paths import display

    report["inputs"] = {k: display(v) for k, v in (("etdump", etdump), ("etrecord", etrecord), ("pte", pte),
                                                     ("qhas", qhas), ("optrace", optrace), ("qnn_csv", qnn_csv),
                                                     ("runtrace", runtrace))
                        if v is not None}
    return report


def soc_from_pte(program=None, path=None) -> dict | None:
    """SoC model, HTP arch, VTCM size and profile level from the first QNN compile spec in the .pte."""
    try:
        from etscope.formats import qnn_compile_spec as qcs
    except ImportError:
        return None
    if program is None and path is not None:
        from etscope.formats.pte import read_pte

        program = read_pte(path)
    if program is None:
        return None
    for m in program.methods:
        for d in m.delegates:
            if d.backend_id == "QnnBackend":
                spec = qcs.find_qnn_compile_spec(d)
                if spec is not None:
                    return {"soc_model": spec.soc_model, "htp_arch": spec.htp_arch,
                            "vtcm_bytes": spec.vtcm_bytes, "profile_level": spec.profile_level}
    return None
