"""Open a run's ``samples.html`` in headless Chromium (Debian's ``chromium``, driven by
Playwright for Python) and report what a reader would see: the sample count under a URL hash,
the rendered sample ids, images that did not load, console errors and every request that
would leave the machine. ``browser_or_skip()`` skips a test with the reason when either is
missing, never silently; where ``ABDUCT_REQUIRE_BROWSER=1`` (``./dev test`` sets it once it has
installed Chromium) it fails instead, so CI cannot pass with its browser tests skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium_path() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def wait_for_install(ready: Path, timeout: float = 900.0) -> None:
    """Wait until ``ready`` exists: ``./dev test`` installs Chromium in the background and
    creates it then (``ABDUCT_BROWSER_READY``), so a session need not wait before it starts."""
    deadline = time.monotonic() + timeout
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(1.0)


def browser_or_skip() -> str:
    """Chromium's path, or ``pytest.skip`` naming what is missing (``pytest.fail`` under
    ``ABDUCT_REQUIRE_BROWSER=1``), once a background install (``ABDUCT_BROWSER_READY``) is over."""
    import pytest

    if os.environ.get("ABDUCT_BROWSER_READY"):
        wait_for_install(Path(os.environ["ABDUCT_BROWSER_READY"]))
    missing = pytest.fail if os.environ.get("ABDUCT_REQUIRE_BROWSER") == "1" else pytest.skip
    path = chromium_path()
    if path is None:
        missing("no chromium on PATH: the browser tests need it (apt-get install chromium; ./dev test does it as root)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing("playwright is not installed: the browser tests need it (pip install playwright)")
    assert path is not None
    return path


@dataclass
class PageState:
    count: int
    ids: list[str]
    broken_images: list[str]
    images: int
    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)


@dataclass
class Tab:
    """A headless Chromium page and what it has logged: console errors, refused outside requests."""

    page: Any
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def route(self, handle: Any) -> None:
        url = handle.request.url
        if url.startswith(("file:", "data:", "about:")):
            handle.continue_()
        else:  # refused, and recorded: a samples page must not reach the network
            self.outside.append(url)
            handle.abort()

    def console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(str(message.text))


@contextmanager
def samples_browser(executable: str) -> Iterator[Tab]:
    """A headless Chromium tab that records console errors and refuses non-local requests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            tab = Tab(browser.new_page())
            tab.page.on("console", tab.console)
            tab.page.on("pageerror", lambda exc: tab.errors.append(str(exc)))
            tab.page.route("**/*", tab.route)
            yield tab
        finally:
            browser.close()


def view(tab: Tab, html_file: Path, hash_: str = "") -> PageState:
    """Load ``html_file#hash_`` and read the page once every image has settled."""
    page = tab.page
    page.goto(Path(html_file).resolve().as_uri() + (f"#{hash_}" if hash_ else ""))
    page.wait_for_function("Array.from(document.images).every(i => i.complete)")
    state = page.evaluate("""() => ({
        count: Number(document.getElementById('sample-count').textContent),
        ids: Array.from(document.querySelectorAll('[data-sample-id]')).map(e => e.dataset.sampleId),
        images: document.images.length,
        broken: Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)})""")
    return PageState(state["count"], state["ids"], state["broken"], state["images"], list(tab.errors), list(tab.outside))


def page_views(run_dir: Path) -> list[dict[str, Any]]:
    """The sample views a finished run's ``samples.html`` holds (what its script renders)."""
    page = Path(run_dir) / "samples.html"
    assert page.is_file(), f"{run_dir} has no samples.html"
    found = re.search(r'<script type="application/json" id="samples-data">(.*?)</script>', page.read_text("utf-8"), re.S)
    assert found is not None, f"{page} holds no sample views"
    return list(json.loads(found.group(1).replace("<\\/", "</")))


def rendered_text(tab: Tab) -> str:
    """The text of the samples the page shows now (after ``view``)."""
    return str(tab.page.inner_text("#samples"))
