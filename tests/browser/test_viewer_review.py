"""The viewer points of issue 41 (and run tags) in real headless Chromium, offline.

Runs are named by their suite and tagged; a case that did not pass says why at the top;
counts say which cases are shown; a comparison of runs sharing no case says so; latencies
of a mock keep a decimal; a regrade calling no judge shows none; ``/docs`` leads to ``/ui``;
and a person works through the review queue with ``n``/``p``, exports the reviewed cases
as a suite and runs it again, all from the pages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import BrowserPage, ServeOffline
from tests.browser.test_viewer import CASES, TIMEOUT_MS, call, finish, service_env, start_run

pytestmark = pytest.mark.slow
EMOJI = r"/\p{Extended_Pictographic}/u.test(document.body.innerText)"


def run_of(page: Page, suite: dict[str, Any], target: str = "base", **extra: Any) -> str:
    body = {"suite": suite, "target": target, "judge_target": "base", **extra}
    run_id: str = finish(page, call(page, "POST", "/runs", body)["id"])["id"]
    return run_id


def visible_rows(page: Page) -> list[str]:
    rows = page.locator("#runs-table tbody tr")
    return [row.get_attribute("data-text") or "" for row in rows.all() if row.is_visible()]


def test_runs_are_named_by_suite_tagged_and_found_by_name_or_tag(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline(service_env())
    page = browser_page.page
    page.goto(f"{url}/ui")
    tagged = finish(page, start_run(page, "base", tags=["main", "sha:1a2b"]))["id"]
    other = run_of(page, {"name": "refund-policy", "tests": [{"id": "a", "input": "hi",
                                                           "criteria": "greets"}]})  # fmt: skip

    page.goto(f"{url}/ui")
    page.locator("#runs-table tbody tr").nth(1).wait_for(timeout=TIMEOUT_MS)
    names = [a.inner_text() for a in page.locator("#runs-table tbody tr td:nth-child(2) a").all()]
    chips = page.locator(f'tr:has(input[value="{tagged}"]) .run-tag').all_inner_texts()
    page.fill("[data-filter=text]", "refund")
    by_name = visible_rows(page)
    page.fill("[data-filter=text]", "sha:1a2b")
    by_tag = visible_rows(page)

    page.goto(f"{url}/ui/runs/{tagged}")
    form = page.locator("form#tags-form")
    form.wait_for(timeout=TIMEOUT_MS)
    heading = page.locator("#content h1").inner_text()
    form.locator("input[name=tags]").fill("main, release-2.1")
    form.get_by_role("button", name="Save tags").click()
    page.locator("#run-tags", has_text="release-2.1").wait_for(timeout=TIMEOUT_MS)
    stored = call(page, "GET", f"/runs/{tagged}")["tags"]

    assert names == ["refund-policy", "viewer"]
    assert chips == ["main", "sha:1a2b"]
    assert [text.split()[1] for text in by_name] == [other]
    assert [text.split()[1] for text in by_tag] == [tagged]
    assert heading.startswith(f"viewer {tagged}")
    assert stored == ["main", "release-2.1"]
    assert browser_page.failures == {}


def test_a_case_says_why_it_failed_and_pages_show_no_emoji_and_fine_latencies(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline(service_env())
    page = browser_page.page
    page.goto(f"{url}/ui")
    attached = finish(page, start_run(page, "base"))["id"]
    asserts = [
        {"type": "contains", "value": "Answer"},
        {"type": "contains", "value": "w0a"},
        {"type": "contains", "value": "goodbye", "required": True},
    ]
    case = {"id": "needs-goodbye", "input": "Question 0?", "criteria": "c", "assertions": asserts}
    failing = run_of(page, {"name": "required", "tests": [case]})

    page.goto(f"{url}/ui/runs/{failing}/cases/0")
    why = page.locator("#why")
    why.wait_for(timeout=TIMEOUT_MS)
    reason = why.inner_text()
    status = page.locator("h1 .status").inner_text()
    why_top = why.bounding_box()
    turns_top = page.locator("#turns").bounding_box()

    page.goto(f"{url}/ui/runs/{attached}/cases/0")
    page.locator("#turns").wait_for(timeout=TIMEOUT_MS)
    marks = page.locator("#turns .file-mark").all_text_contents()
    emoji_on_case = page.evaluate(EMOJI)
    page.goto(f"{url}/ui/runs/{attached}")
    page.locator("#latency").wait_for(timeout=TIMEOUT_MS)
    latencies = page.locator("#latency tr:nth-child(2) td").all_inner_texts()
    cost_note = page.locator("#tokens + p").inner_text()
    emoji_on_run = page.evaluate(EMOJI)

    assert status == "failed"
    assert "goodbye" in reason
    assert why_top is not None
    assert turns_top is not None
    assert why_top["y"] < turns_top["y"]
    assert marks == ["file"]  # notes.md (the guidelines file is shown apart)
    assert emoji_on_case is False
    assert emoji_on_run is False
    # A mock answers in well under 10 ms (a busy machine may make the slowest slower).
    assert float(latencies[0]) < 10
    short = [cell for cell in latencies if float(cell) < 10]
    assert all(re.fullmatch(r"\d\.\d", cell) for cell in short), latencies
    assert "pricing" in cost_note


def test_runs_sharing_no_case_and_a_regrade_without_judge_say_so(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline(service_env())
    page = browser_page.page
    page.goto(f"{url}/ui")

    def tiny(case_id: str) -> dict[str, Any]:
        return {"tests": [{"id": case_id, "input": "hi", "criteria": "greets"}]}

    base, head = run_of(page, tiny("a")), run_of(page, tiny("b"))
    graded = run_of(page, tiny("a"))
    says_hi = {"name": "says_hi", "type": "contains", "value": "hi"}
    regrade = call(page, "POST", f"/runs/{graded}/regrade", {"evaluators": [says_hi]})
    finish(page, regrade["id"])

    page.goto(f"{url}/ui/compare?base={base}&head={head}")
    page.locator("#difference").wait_for(timeout=TIMEOUT_MS)
    compared = page.locator("#difference").inner_text()
    page.goto(f"{url}/ui/runs/{regrade['id']}")
    page.locator("#run").wait_for(timeout=TIMEOUT_MS)
    judge = page.locator("dt:text-is('Judge') + dd").inner_text()
    page.goto(f"{url}/docs")
    link = page.locator(".info a", has_text="/ui").first
    link.wait_for(timeout=TIMEOUT_MS)
    viewer = link.evaluate("a => a.href")
    page.goto(viewer)
    page.locator("#runs-table").wait_for(timeout=TIMEOUT_MS)

    assert "Nothing to compare" in compared
    assert "significant" not in compared.lower()
    assert viewer == f"{url}/ui"
    assert regrade["judge_target"] == "base"  # planned, never called
    assert judge == "–"


def test_a_long_run_says_which_cases_it_lists(
    serve_offline: ServeOffline, browser_page: BrowserPage
) -> None:
    url = serve_offline(service_env())
    page = browser_page.page
    page.goto(f"{url}/ui")
    asked = [{"role": "user", "content": "Q?"}]
    cases = [{"id": f"s{i}", "expected_outcome": "w", "input_messages": asked} for i in range(600)]
    run_id = run_of(page, {"dataset": "long", "evalcases": cases}, target="steady",
                    max_concurrency=50)  # fmt: skip

    page.goto(f"{url}/ui/runs/{run_id}")
    page.locator("#cases tbody tr").first.wait_for(timeout=TIMEOUT_MS)
    first = page.locator("#shown").inner_text()
    first_rows = page.locator("#cases tbody tr").count()
    page.click("#page-next")
    page.locator("#shown", has_text="501–600").wait_for(timeout=TIMEOUT_MS)
    second = page.locator("#shown").inner_text()

    assert first == "1–500 of 600 shown · page 1 of 2"
    assert first_rows == 500
    assert second == "501–600 of 600 shown · page 2 of 2"
    assert page.locator("#cases tbody tr").count() == 100


def test_a_reviewer_steps_through_the_queue_with_n_and_p_exports_and_reruns(
    serve_offline: ServeOffline, browser_page: BrowserPage, tmp_path: Path
) -> None:
    url = serve_offline(service_env())
    page = browser_page.page
    page.goto(f"{url}/ui")
    run_id = finish(page, start_run(page, "base"))["id"]
    queue = "review=to_review"

    page.goto(f"{url}/ui/runs/{run_id}?{queue}")
    page.locator("#cases tbody tr").first.wait_for(timeout=TIMEOUT_MS)
    listed = [int(r.get_attribute("data-seq") or -1) for r in page.locator("#cases tbody tr").all()]
    page.locator("#cases tbody tr a").first.click()
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/0?{queue}")
    page.locator("#queue").wait_for(timeout=TIMEOUT_MS)
    where_first = page.locator("#queue").inner_text()
    page.keyboard.press("n")
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/2?{queue}")
    form = page.locator("form#review")
    form.wait_for(timeout=TIMEOUT_MS)
    form.locator("select[name=verdict]").select_option("fail")
    form.locator("input[name=comment]").fill("Leaves out the last word.")
    form.get_by_role("button", name="Save and next").click()
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/4?{queue}")
    page.locator("#queue", has_text="2 of 5").wait_for(timeout=TIMEOUT_MS)
    page.keyboard.press("p")  # case 2 left the queue once reviewed: back to case 0
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/0?{queue}")
    page.locator("#queue").wait_for(timeout=TIMEOUT_MS)
    page.goto(f"{url}/ui/runs/{run_id}/cases/2?{queue}")
    page.locator("#queue").wait_for(timeout=TIMEOUT_MS)
    left = page.locator("#queue").inner_text()
    page.goto(f"{url}/ui/runs/{run_id}")  # a queue chosen by hand: tick two cases
    page.locator("#cases tbody tr").first.wait_for(timeout=TIMEOUT_MS)
    page.check("input.pick-case[value='9']")
    page.check("input.pick-case[value='5']")
    page.click("#review-picked")
    page.wait_for_url(f"{url}/ui/runs/{run_id}?cases=5%2C9")
    page.locator("#picked-queue").wait_for(timeout=TIMEOUT_MS)
    picked = [r.get_attribute("data-seq") for r in page.locator("#cases tbody tr").all()]
    page.locator("#cases tbody tr a").first.click()
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/5?cases=5%2C9")
    page.locator("#queue").wait_for(timeout=TIMEOUT_MS)
    page.keyboard.press("n")
    page.wait_for_url(f"{url}/ui/runs/{run_id}/cases/9?cases=5%2C9")
    page.locator("#queue", has_text="2 of 2").wait_for(timeout=TIMEOUT_MS)
    last_has_next = page.locator("#next").count()
    page.goto(f"{url}/ui/runs/{run_id}/cases/1")  # not from a list: by case number
    page.locator("#next").wait_for(timeout=TIMEOUT_MS)
    plain_next = page.locator("#next").get_attribute("href")

    page.goto(f"{url}/ui/runs/{run_id}")
    page.locator("#export-reviewed").wait_for(timeout=TIMEOUT_MS)
    with page.expect_download() as download:
        page.click("#export-reviewed")
    saved = tmp_path / "reviewed.json"
    download.value.save_as(saved)
    exported = json.loads(saved.read_text())
    page.click("#run-reviewed")
    page.wait_for_url(re.compile(rf"{url}/ui/runs/run_(?!{run_id[4:]})\w+$"))
    page.locator("#run[data-status=completed]").wait_for(timeout=TIMEOUT_MS)
    rerun_heading = page.locator("#content h1").inner_text()
    rerun_cases = page.locator("#cases tbody tr td:nth-child(3)").all_inner_texts()

    assert listed == list(range(0, CASES, 2))  # the borderline cases, none reviewed yet
    assert "1 of 6" in where_first
    assert "no longer in it (5 left)" in left
    assert picked == ["5", "9"]
    assert last_has_next == 0
    assert plain_next == f"/ui/runs/{run_id}/cases/2"
    cases = exported["suite"]["evalcases"]
    assert [c["id"] for c in cases] == ["c2"]
    assert "Leaves out the last word." in cases[0]["expected_outcome"]
    assert rerun_heading.startswith("viewer (reviewed)")
    assert rerun_cases == ["c2"]
    # Only requests cut short by leaving a page (an event stream, a body left unread).
    assert set(browser_page.failures.values()) <= {"net::ERR_ABORTED"}
