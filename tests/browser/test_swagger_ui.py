"""Swagger UI in real headless Chromium, offline: every operation executes as prefilled.

The service and the browser share a network with nothing but loopback, so a page that
needed a CDN would stay blank. The test also writes the README's screenshot of ``/docs``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import FilePayload, Locator, Page, Response

from tests.browser.conftest import BrowserPage, ServeOffline, screenshot_path
from tests.contract.prefilled import FRESH_SERVER_REFUSALS, fill_path, operations

OPERATION_TIMEOUT_MS = 20_000

pytestmark = pytest.mark.slow


def elsewhere(requests: list[str], url: str) -> list[str]:
    """The requested URLs that are not the service's own (its blobs included)."""
    return [r for r in requests if not r.removeprefix("blob:").startswith(f"{url}/")]


def choose_files(block: Locator, operation: dict[str, Any], document: dict[str, Any]) -> None:
    """Pick a multipart body's file as a user would: the file field's example is its content."""
    content = operation.get("requestBody", {}).get("content", {})
    if "multipart/form-data" not in content:
        return
    name = content["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[-1]
    for field, schema in document["components"]["schemas"][name]["properties"].items():
        if "contentMediaType" in schema:
            upload = FilePayload(
                name=f"{field}.jsonl", mimeType="text/plain", buffer=schema["examples"][0].encode()
            )
            block.locator(f'[data-property-name="{field}"] input[type=file]').set_input_files(
                files=[upload]
            )


def execute(
    page: Page, path: str, method: str, operation: dict[str, Any], document: dict[str, Any]
) -> int:
    """Open the operation, press Execute as prefilled, and return the status Swagger UI shows."""
    block = page.locator(f"#operations-{operation['tags'][0]}-{operation['operationId']}")
    block.locator(".opblock-summary").first.click()
    expected = fill_path(path, operation)
    choose_files(block, operation, document)

    def is_the_call(response: Response) -> bool:
        sent = urlsplit(response.url)
        return response.request.method == method.upper() and sent.path == expected

    with page.expect_response(is_the_call, timeout=OPERATION_TIMEOUT_MS) as answer:
        block.locator("button.execute").click()
    status = answer.value.status
    shown = block.locator(".live-responses-table tbody .response-col_status").first
    shown.wait_for(timeout=OPERATION_TIMEOUT_MS)
    assert shown.inner_text().strip() == str(status), operation["operationId"]
    block.locator(".opblock-summary").first.click()
    return status


def test_every_operation_executes_as_prefilled_offline(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline()
    page = browser_page.page
    page.goto(f"{url}/docs")
    page.locator(".opblock").first.wait_for()
    page.screenshot(path=str(screenshot_path("swagger.png")), full_page=True)
    document: dict[str, Any] = page.evaluate("fetch('/openapi.json').then(r => r.json())")

    statuses = {
        operation["operationId"]: execute(page, path, method, operation, document)
        for path, method, operation in operations(document)
    }

    refused = {name: status for name, status in statuses.items() if status >= 400}
    assert refused == FRESH_SERVER_REFUSALS
    assert len(statuses) == sum(len(item) for item in document["paths"].values())
    assert elsewhere(browser_page.requests, url) == []


def test_redoc_renders_offline_and_its_logo_never_leaves_the_browser(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline()
    page = browser_page.page
    page.goto(f"{url}/redoc")
    page.locator("h1", has_text="eval-execution").first.wait_for()
    page.locator("h2", has_text="Format an eval case's input messages").first.wait_for()

    # ReDoc's bundle always asks for its logo on a CDN; the page's policy blocks it.
    blocked = {
        address: browser_page.failures.get(address)
        for address in elsewhere(browser_page.requests, url)
    }
    assert set(blocked.values()) <= {"csp"}, blocked
