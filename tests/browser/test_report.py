"""The HTML run report in headless Chromium on a network with nothing but loopback.

The file ``evalx run --html`` writes is opened from disk: it must draw whole (styles,
histogram, case table, each case) while requesting nothing but itself. The same report served
by ``GET /runs/{id}/report.html`` must pass its own content security policy (the stylesheet
is allowed by its hash). The test writes the README's screenshot of the report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.browser.conftest import BrowserPage, ServeOffline, screenshot_path

pytestmark = pytest.mark.slow
EVALX = str(Path(sys.executable).parent / "evalx")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT_MS = 20_000
HEADER_BACKGROUND = "rgb(22, 32, 44)"  # .top in ui.css: proof the inlined stylesheet applied


def written_report(tmp_path: Path) -> Path:
    """A report written by ``evalx run --embedded --html`` of a support-triage-like suite."""
    words = [f"w{letter}" for letter in "abcd"]
    cases = [
        {
            "id": f"ticket-{i}",
            "expected_outcome": " ".join(f"{w}{i}" for w in words),
            "input_messages": [
                {"role": "system", "content": "You triage support tickets in one line."},
                {"role": "user", "content": f"Ticket {i}: the export button fails."},
            ],
        }
        for i in range(10)
    ]
    kept = [4, 4, 3, 4, 2, 4, 4, 1, 4, 4]
    answers = {f"ticket-{i}": " ".join(f"{w}{i}" for w in words[:k]) for i, k in enumerate(kept)}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({"dataset": "triage", "evalcases": cases}))
    (tmp_path / "targets.yaml").write_text(
        yaml.safe_dump({"targets": [{"name": "default", "provider": "mock", "answers": answers}]})
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(tmp_path / "targets.yaml"),
    }
    subprocess.run(
        [EVALX, "run", "suite.yaml", "--embedded", "--min-pass-rate", "0", "--html", "report.html"],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    return tmp_path / "report.html"


def test_the_written_report_opens_offline(browser_page: BrowserPage, tmp_path: Path) -> None:
    report = written_report(tmp_path)
    page = browser_page.page
    page.goto(report.as_uri())
    page.wait_for_selector("#cases", timeout=TIMEOUT_MS)
    # Nothing but the file itself was requested, and nothing failed.
    assert browser_page.requests == [report.as_uri()]
    assert browser_page.failures == {}
    header = page.locator("header.top")
    assert header.evaluate("e => getComputedStyle(e).backgroundColor") == HEADER_BACKGROUND
    assert page.locator("#cases tbody tr").count() == 10
    assert page.locator("svg.histogram .bin").count() == 5
    assert page.locator("#pass-rate").inner_text() == "70%"
    # Cases that did not pass open by themselves; their graders and answers are there.
    failed = page.locator('section.case[data-status="failed"]')
    assert failed.count() == 2
    assert failed.first.locator("details").get_attribute("open") is not None
    assert failed.first.locator(".answer").is_visible()
    assert failed.first.locator(".grader").first.is_visible()
    passed = page.locator('section.case[data-status="passed"]').first
    assert not passed.locator(".answer").is_visible()
    # The case table links to each case's section.
    page.locator("#cases a", has_text="ticket-4").click()
    assert page.url.endswith("#case-4")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshot_path("report.png")), full_page=False)


def test_the_served_report_passes_its_own_csp(
    browser_page: BrowserPage, serve_offline: ServeOffline
) -> None:
    url = serve_offline()
    page = browser_page.page
    blocked: list[str] = []
    page.on("console", lambda message: blocked.append(message.text) if "Content Security Policy"
            in message.text else None)  # fmt: skip
    for _ in range(100):  # the sample run (two mock cases) finishes moments after start-up
        page.goto(f"{url}/runs/run_sample/report.html")
        if page.locator("#report").get_attribute("data-status") == "completed":
            break
        page.wait_for_timeout(100)
    assert page.locator("#report").get_attribute("data-status") == "completed"
    assert blocked == []
    header = page.locator("header.top")
    assert header.evaluate("e => getComputedStyle(e).backgroundColor") == HEADER_BACKGROUND
    assert page.locator("section.case").count() == 2
    assert page.locator("header.top a").get_attribute("href") == f"{url}/ui/runs/run_sample"
    assert all(request.startswith(url) for request in browser_page.requests)
