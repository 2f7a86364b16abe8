"""Browser fixtures: Debian's Chromium driven by Playwright, on a network with only loopback.

- ``offline_network`` (package): a network namespace whose only interface is loopback.
- ``browser`` (package): headless Chromium started inside it (Playwright drives it over
  pipes, so the driver itself needs no network); nothing but 127.0.0.1 is reachable.
  Package-scoped because Playwright's sync API holds the thread's event loop while it is
  open, which async tests elsewhere need.
- ``serve_offline`` (per test): ``url = serve_offline(env)`` starts the service (a real
  uvicorn process) inside the same namespace, on a fresh data folder, and returns its URL.
- ``browser_page`` (per test): a fresh page, with every URL it requested in ``requests``
  and why each failed request failed in ``failures`` (``"csp"``: blocked by the page's
  content security policy, before any network).

Chromium is ``EVAL_TEST_CHROMIUM`` or ``/usr/bin/chromium`` (``scripts/ci_browser.sh``
installs it); without it the browser tests are skipped.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from testkit.offline import LoopbackNetwork, loopback_network
from testkit.server import running_service

CHROMIUM_VARIABLE = "EVAL_TEST_CHROMIUM"
DEBIAN_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ServeOffline = Callable[..., str]


@dataclass
class BrowserPage:
    """A page, every URL it has requested so far, and why those that failed failed."""

    page: Page
    requests: list[str] = field(default_factory=list)
    failures: dict[str, str | None] = field(default_factory=dict)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium (skips the test when it is not installed)."""
    path = os.environ.get(CHROMIUM_VARIABLE) or DEBIAN_CHROMIUM  # noqa: TID251
    if not Path(path).is_file():
        pytest.skip(f"browser tests need Chromium at {path} (see scripts/ci_browser.sh)")
    return path


@pytest.fixture(scope="package")
def offline_network() -> Iterator[LoopbackNetwork]:
    """A network namespace with nothing but loopback, for the service and the browser."""
    with loopback_network() as network:
        yield network


@pytest.fixture(scope="package")
def browser(
    chromium_path: str, offline_network: LoopbackNetwork, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Browser]:
    """Headless Chromium inside ``offline_network``."""
    wrapper = tmp_path_factory.mktemp("chromium") / "chromium"
    command = shlex.join(offline_network.command([chromium_path]))
    wrapper.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(wrapper), headless=True, args=CHROMIUM_FLAGS
        )
        yield launched
        launched.close()


@pytest.fixture
def serve_offline(offline_network: LoopbackNetwork, tmp_path: Path) -> Iterator[ServeOffline]:
    """Start the service inside ``offline_network``: ``url = serve_offline({"EVAL_...": ...})``."""
    with ExitStack() as stack:

        def serve(env: Mapping[str, str] | None = None) -> str:
            full = {"PATH": os.defpath, "EVAL_DATA_DIR": str(tmp_path / "data"), **(env or {})}
            service = running_service(
                full, prefix=offline_network.command(), wait=offline_network.wait_until_healthy
            )
            url, _ = stack.enter_context(service)
            return url

        yield serve


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[BrowserPage]:
    """A page of a fresh browser context (1280 px wide), recording what it requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = BrowserPage(context.new_page())
    page.page.on("request", lambda request: page.requests.append(request.url))
    page.page.on(
        "requestfailed", lambda request: page.failures.update({request.url: request.failure})
    )
    yield page
    context.close()
