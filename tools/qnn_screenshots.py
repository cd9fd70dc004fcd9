"""Screenshots of the QNN report for README (docs/screenshots/qnn_*.png): the report built from the
real SM8650 chain8 profile as an ETDump (tests/fixtures/qnn_etdump/synthetic_qnn_chain8_device.etdump)
with its QHAS, optrace and runtrace, opened in headless Chromium; the findings, one partition's
nesting picture, the HMX/HVX/DMA timeline and "Inside the HTP" (with --dram-gbps 76.8, the SM8650
figure of analysis/qnn/limits.py: the chain8 files come without their .pte), each cut to its element; and the first screen (1400×900) as the page opens.

    PYTHONPATH=src python tools/qnn_screenshots.py [--chromium /usr/bin/chromium]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
SHOTS = {"qnn_findings.png": "#findings", "qnn_nesting.png": "#qnn-nesting-p0", "qnn_timeline.png": "#qnn-timeline",
         "qnn_htp.png": "#qnn-htp"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from etscope import load
    from etscope.api import results
    from etscope.render.html import write_report

    q = FIX / "qnn"
    r = results(load(FIX / "qnn_etdump" / "synthetic_qnn_chain8_device.etdump"), qhas=q / "chain8_sm8650.qhas.json",
                optrace=q / "chain8_sm8650.optrace.json", runtrace=q / "chain8_sm8650.runtrace.json")
    r.dram_gbps = 76.8
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        html = Path(tmp) / "report.html"
        write_report(str(html), r.view)
        b = p.chromium.launch(executable_path=a.chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1060, "height": 800})
        page.goto(html.as_uri())
        page.wait_for_selector("body[data-rendered=true]", timeout=15000)
        for name, sel in SHOTS.items():
            page.locator(sel).screenshot(path=str(out / name))
            print(out / name)
        first = b.new_page(viewport={"width": 1400, "height": 900})      # what a user sees on opening it
        first.goto(html.as_uri())
        first.wait_for_selector("body[data-rendered=true]", timeout=15000)
        first.screenshot(path=str(out / "qnn_first_screen.png"))
        print(out / "qnn_first_screen.png")
        b.close()


if __name__ == "__main__":
    main()
