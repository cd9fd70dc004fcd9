"""Which QNN profile reader a file needs: qnn-profile-viewer CSV / text / JSON, or ONNX Runtime CSV,
told apart by their first bytes."""
from __future__ import annotations

from etscope.errors import FormatError
from etscope.formats import qnn_csv, qnn_json, qnn_text
from etscope.formats.sniff import describe
from etscope.paths import open_input


def read_qnn_profile(path: str):
    """A QNN profile written by qnn-profile-viewer (CSV, text or JSON) or ONNX Runtime (CSV)."""
    try:
        with open_input(path, "QNN profile") as fh:
            head = fh.read(65536)
    except OSError as err:
        raise FormatError(f"cannot read: {err.strerror or err}", path) from None
    for mod, reader in ((qnn_csv, qnn_csv.read_qnn_csv), (qnn_json, qnn_json.read_qnn_json),
                        (qnn_text, qnn_text.read_qnn_text)):
        if mod.sniff(head):
            return reader(path)
    raise FormatError(f"not a QNN profile (CSV, viewer text or viewer JSON); this is {describe(head, 'qnn_profile')}",
                      path)
