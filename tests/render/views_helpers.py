"""Paths and builders shared by the view tests (imported as a plain module)."""
import os
import shutil
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
QNN_ETDUMP = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_etdump"
QNN_FILES = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"
CHROMIUM = os.environ.get("ETSCOPE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]

XSS = "<img src=x onerror=alert(1)>"


def qnn_fixture(name: str) -> Path:
    p = QNN_ETDUMP / f"{name}.etdump"
    if not p.exists():
        pytest.skip(f"QNN ETDump fixture not present: {p}")
    return p


def xss_etdump(tmp_path: Path) -> Path:
    """cnn.etdump with the XNNPACK op name 'Convolution (NHWC, F32) IGEMM #1' (32 bytes) replaced,
    byte for byte, by an HTML payload of the same length (flatbuffer strings keep their length)."""
    data = (REAL / "cnn.etdump").read_bytes()
    old = b"Convolution (NHWC, F32) IGEMM #1"
    new = (XSS + "#" * (len(old) - len(XSS))).encode()
    assert len(new) == len(old) and old in data
    out = tmp_path / "xss.etdump"
    out.write_bytes(data.replace(old, new))
    for ext in ("etrecord", "pte"):
        shutil.copy(REAL / f"cnn.{ext}", tmp_path / f"xss.{ext}")
    return out
