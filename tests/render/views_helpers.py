"""Paths and builders shared by the view tests (imported as a plain module)."""
import os
import re
import shutil
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
QNN_ETDUMP = Path(__file__).resolve().parents[1] / "fixtures" / "qnn_etdump"
QNN_FILES = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"
DIFF_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "diff"
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


def _companions(etdump: Path) -> dict:
    """NAME[_NN].etdump -> {etrecord, pte} of NAME when those files exist."""
    stem = re.sub(r"_\d+$", "", etdump.stem)
    out = {}
    for kind in ("etrecord", "pte"):
        for cand in (etdump.with_suffix("." + kind), etdump.parent / f"{stem}.{kind}"):
            if cand.exists():
                out[kind] = cand
                break
    return out


def diff_pairs() -> dict:
    """Pairs (base etdump, base kwargs, new etdump, new kwargs) for the diff views: the real CPU
    fixtures, a QNN pair, and every tests/fixtures/diff variant against the first diff_same
    session when those fixtures are present."""
    pairs = {
        "gen_cnn_vs_b": (REAL / "gen_cnn.etdump", dict(etrecord=REAL / "gen_cnn.etrecord", pte=REAL / "gen_cnn.pte"),
                         REAL / "gen_cnn_b.etdump", dict(etrecord=REAL / "gen_cnn.etrecord", pte=REAL / "gen_cnn.pte")),
        "llama_nodebug_vs_gen_llama": (REAL / "llama_nodebug.etdump", dict(pte=REAL / "llama.pte"),
                                       REAL / "gen_llama.etdump", dict(pte=REAL / "gen_llama.pte")),
    }
    q = QNN_ETDUMP
    if (q / "synthetic_qnn_cnn.etdump").exists() and (q / "synthetic_qnn_vit_2part.etdump").exists():
        pairs["qnn_cnn_vs_vit_2part"] = (q / "synthetic_qnn_cnn.etdump", dict(etrecord=q / "synthetic_qnn_cnn.etrecord"),
                                         q / "synthetic_qnn_vit_2part.etdump",
                                         dict(etrecord=q / "synthetic_qnn_vit_2part.etrecord"))
    sessions = sorted(DIFF_FIXTURES.glob("diff_same_*.etdump")) if DIFF_FIXTURES.is_dir() else []
    if sessions:
        base = sessions[0]
        news = sessions[1:2] + sorted(p for p in DIFF_FIXTURES.glob("diff_*.etdump") if not p.name.startswith("diff_same"))
        for new in news:
            pairs[f"{base.stem}_vs_{new.stem}"] = (base, _companions(base), new, _companions(new))
    return pairs


def open_report(browser, path, messages, dialogs):
    """A page on ``path`` once its script has drawn everything; console messages, page errors and
    any network request go to ``messages``, dialogs (dismissed) to ``dialogs``."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.on("console", lambda m: messages.append((m.type, m.text)))
    page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: messages.append(("request", r.url)) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]", timeout=15000)
    return page


def open_page(browser, path, messages: list):
    """A page of ``path`` in the browser, rendered, its console messages and page errors in ``messages``."""
    return open_report(browser, path, messages, [])
