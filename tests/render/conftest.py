"""Fixtures for the view tests: the screenshot directory and the headless Chromium."""
import os
from pathlib import Path

import pytest

from views_helpers import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="session")
def artifact_dir() -> Path:
    """Where browser screenshots go: $ETSCOPE_TEST_ARTIFACTS or <repo>/test-artifacts/render."""
    base = os.environ.get("ETSCOPE_TEST_ARTIFACTS")
    d = Path(base) if base else Path(__file__).resolve().parents[2] / "test-artifacts"
    d = d / "render"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright (never downloads a browser)."""
    required = os.environ.get("ETSCOPE_REQUIRE_BROWSER") == "1"
    if not os.path.exists(CHROMIUM):
        if required:
            pytest.fail(f"ETSCOPE_REQUIRE_BROWSER=1 but Chromium is not at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM}: install it (apt-get install -y chromium) "
                    "or set ETSCOPE_CHROMIUM to run the browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if required:
            pytest.fail("ETSCOPE_REQUIRE_BROWSER=1 but the Python package 'playwright' is not installed")
        pytest.skip("the Python package 'playwright' is not installed (pip install playwright); "
                    "the browser tests use it with the system Chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
