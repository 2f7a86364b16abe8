"""The reports ``evalx`` writes: JUnit (against the committed XSD), Markdown, compare's gate."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from markdown_it import MarkdownIt

from app.cli.junit import junit_xml
from app.cli.problems import EXIT_GATE_FAILED, EXIT_PASSED
from tests.cli.conftest import Evalx, SuiteFile

XSD = Path(__file__).parent / "schemas" / "junit.xsd"


def junit_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def validated(document: bytes) -> etree._Element:
    root = etree.fromstring(document)
    schema = junit_schema()
    assert schema.validate(root), schema.error_log
    return root


def github_html(markdown: str) -> str:
    """Markdown rendered as GitHub does for comments: CommonMark plus GFM tables."""
    html: str = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return html


def record(eval_id: str, status: str, **fields: Any) -> dict[str, Any]:
    return {"eval_id": eval_id, "status": status, "dataset": "unit", "target": "default",
            "latency_ms": {"candidate": 12.5, "judge": 30.0}, **fields}  # fmt: skip


def test_junit_of_every_status_is_valid_and_says_why() -> None:
    records = [
        record("ok", "passed", score=1.0, verdict="pass", candidate_answer="fine"),
        record("meh", "borderline", score=0.7, verdict="borderline", misses=["no date"]),
        record("bad", "failed", score=0.2, verdict="fail", misses=["no total", "no date"],
               reasoning="the answer skips the total", candidate_answer="Hi\x1b[0m\x00 there",
               evaluator_results=[{"name": "judge", "type": "llm_judge", "verdict": "fail",
                                   "score": 0.2, "reasoning": "misses the total"}]),
        record("down", "error", score=None, error="candidate: HTTP 503 after 3 attempts"),
        record("garbled", "judge_error", score=None, error="judge reply is not JSON"),
    ]  # fmt: skip
    run = {"id": "run_1", "status": "completed", "target": "default", "created_at": "2026-11-27"}
    root = validated(junit_xml(run, records, "unit"))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "2")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["ok", "meh", "bad", "down", "garbled"]
    assert cases["ok"].find("failure") is None
    assert cases["ok"].get("time") == "0.043"
    failure = cases["bad"].find("failure")
    assert failure is not None
    assert failure.get("message") == "score 0.200 (fail): no total"
    assert "misses: no date" in (failure.text or "")
    assert "reasoning: the answer skips the total" in (failure.text or "")
    assert "judge (llm_judge): fail, score 0.200" in (failure.text or "")
    # Control characters XML cannot hold are dropped, the rest of the answer kept.
    assert cases["bad"].findtext("system-out") == "Hi[0m there"
    error = cases["down"].find("error")
    assert error is not None
    assert error.get("type") == "error"
    assert error.get("message") == "candidate: HTTP 503 after 3 attempts"
    assert cases["garbled"].find("error") is not None


def test_junit_groups_by_arm() -> None:
    records = [record("a", "passed", arm="gpt"), record("a", "failed", arm="claude")]
    root = validated(junit_xml({"id": "run_2", "status": "completed"}, records, "unit"))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["unit [gpt]", "unit [claude]"]
    assert [c.get("classname") for c in root.iter("testcase")] == ["unit.gpt", "unit.claude"]


def test_the_xsd_rejects_what_ci_systems_reject() -> None:
    schema = junit_schema()
    no_name = etree.fromstring(b'<testsuites><testsuite tests="1" failures="0" errors="0">'
                               b'<testcase name="x"/></testsuite></testsuites>')  # fmt: skip
    bad_time = etree.fromstring(b'<testsuites><testsuite name="s" tests="1" failures="0" '
                                b'errors="0" time="1s"/></testsuites>')  # fmt: skip
    assert not schema.validate(no_name)
    assert not schema.validate(bad_time)


@pytest.mark.slow
def test_junit_of_a_real_run(service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path):
    path = str(suite_file(cases=9))
    result = evalx("run", path, "--server", service, "--target", "mixed", "--junit", "junit.xml")
    assert result.returncode == EXIT_GATE_FAILED, result.stderr
    root = validated((tmp_path / "junit.xml").read_bytes())
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == [f"c{i}" for i in range(9)]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["c0", "c3", "c6"]
    assert root.get("tests") == "9"
    assert root.get("failures") == "3"
    assert root.find("testsuite").get("name") == "cli [mixed]"


def test_junit_names_a_matrix_run_s_arms_as_people_read_them() -> None:
    records = [
        record("a", "passed", target="gpt", arm={"index": 0, "target": "gpt", "prompt": None}),
        record("a", "failed", target="gpt", arm={"index": 1, "target": "gpt", "prompt": "terse"}),
    ]
    root = validated(junit_xml({"id": "run_3", "status": "completed"}, records, "unit"))
    assert [s.get("name") for s in root.findall("testsuite")] == [
        "unit [gpt]",
        "unit [gpt / terse]",
    ]


@pytest.mark.slow
def test_junit_of_a_run_on_two_targets(
    service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path
):
    path = str(suite_file(cases=6))
    result = evalx(
        "run", path, "--server", service, "--target", "good", "--target", "mixed",
        "--junit", "junit.xml",
    )  # fmt: skip
    assert result.returncode == EXIT_GATE_FAILED, result.stderr
    root = validated((tmp_path / "junit.xml").read_bytes())
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"cli [good]", "cli [mixed]"}
    assert suites["cli [good]"].get("failures") == "0"
    assert suites["cli [mixed]"].get("failures") == "2"
    assert root.get("tests") == "12"


@pytest.mark.slow
def test_compare_gate_and_markdown_regressions_first(
    service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path
) -> None:
    path = str(suite_file(cases=12))
    base = evalx("run", path, "--server", service, "--target", "base", "--min-pass-rate", "0",
                 "--json", "base.json")  # fmt: skip
    assert base.returncode == EXIT_PASSED, base.stderr
    base_id = json.loads((tmp_path / "base.json").read_text())["run"]["id"]
    head = evalx("run", path, "--server", service, "--target", "regressed", "--min-pass-rate",
                 "0", "--base-from", "base.json", "--fail-on", "regression",
                 "--markdown", "head.md", "--json", "head.json")  # fmt: skip
    assert head.returncode == EXIT_GATE_FAILED, head.stderr
    assert f"is significantly worse than {base_id}" in head.stdout
    head_id = json.loads((tmp_path / "head.json").read_text())["run"]["id"]

    gate = evalx("compare", base_id, head_id, "--server", service, "--fail-on", "regression",
                 "--markdown", "compare.md")  # fmt: skip
    report_only = evalx("compare", head_id, "--base-from", "base.json", "--server", service)
    same = evalx("compare", base_id, base_id, "--server", service, "--fail-on", "regression")
    assert gate.returncode == EXIT_GATE_FAILED, gate.stderr
    assert report_only.returncode == EXIT_PASSED, report_only.stderr
    assert same.returncode == EXIT_PASSED, same.stderr

    for name in ("head.md", "compare.md"):
        html = github_html((tmp_path / name).read_text())
        headings = re.findall(r"<h[23]>(.*?)</h[23]>", html)
        regressions = next(i for i, h in enumerate(headings) if h.startswith("Regressions"))
        # Only the headline comes before the regressions.
        assert regressions == 1, headings
        assert f"Regressions against <code>{base_id}</code>: 10" in headings[1]
        # The regressions table: the worst (c3, every word lost) first.
        table = html[html.index("<table>") : html.index("</table>")]
        rows = re.findall(r"<tr>\s*<td>(c\d+)</td>", table)
        assert rows[0] == "c3"
        assert len(rows) == 10
        assert "<strong>significant</strong>" in html
        assert f'href="{service}/ui/compare?base={base_id}&amp;head={head_id}"' in html
    head_html = github_html((tmp_path / "head.md").read_text())
    assert f'<a href="{service}/ui/runs/{head_id}">Open the run in the viewer</a>' in head_html
    assert head_html.index("Regressions") < head_html.index("Summary")
    assert head_html.index("Summary") < head_html.index("Cases that did not pass")


def test_markdown_cells_cannot_break_the_table() -> None:
    from app.cli.markdown import run_markdown

    nasty = "a | b\n<img src=x onerror=alert(1)> **bold**"
    records = [record("x|y", "failed", score=0.1, error=None, misses=[nasty])]
    text = run_markdown({"id": "run_3", "status": "completed"}, records, passed_gate=False)
    html = github_html(text)
    assert "<img" not in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.DOTALL)
    # Header and one row in the failing-cases table; the row has its four cells.
    failing = rows[-1]
    assert failing.count("<td>") == 4
    assert "x|y" in failing
