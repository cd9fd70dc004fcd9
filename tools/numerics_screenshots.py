"""Screenshot of the report's drift heatmap for README (docs/screenshots/numerics_drift.png): the
report of the real drift pair (tests/fixtures/numerics/drift_llm_q8 against drift_llm_cpu: a
2-layer KV-cache transformer, quantized XNNPACK vs fp32 CPU, separate sessions), built with
``etscope report --debug-buffer ... --reference ...``, opened in headless Chromium, cut to the
heatmap.

    PYTHONPATH=src python tools/numerics_screenshots.py [--chromium /usr/bin/chromium]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUM = ROOT / "tests" / "fixtures" / "numerics"


def report_args(out: Path) -> list[str]:
    c, r = NUM / "drift_llm_q8", NUM / "drift_llm_cpu"
    return ["report", f"{c}.etdump", "--etrecord", f"{c}.etrecord", "--pte", f"{c}.pte", "--debug-buffer",
            f"{c}.debugbuf", "--reference", f"{r}.etdump", "--reference-buffer", f"{r}.debugbuf",
            "--reference-etrecord", f"{r}.etrecord", "-o", str(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    a = ap.parse_args()
    from click.testing import CliRunner
    from playwright.sync_api import sync_playwright

    from etscope.cli import main as cli

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        html = Path(tmp) / "report.html"
        r = CliRunner().invoke(cli, report_args(html))
        if r.exit_code != 0:
            raise SystemExit(r.output)
        b = p.chromium.launch(executable_path=a.chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1060, "height": 800})
        page.goto(html.as_uri())
        page.wait_for_selector("body[data-rendered=true]", timeout=15000)
        shot = out / "numerics_drift.png"
        page.locator("#numerics-drift-box").screenshot(path=str(shot))
        print(shot)
        b.close()


if __name__ == "__main__":
    main()
