"""``${{ NAME }}`` references filled from the request's ``env``, never the service's own."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.suites.documents.environment import interpolate
from app.suites.documents.findings import Findings
from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import CLASSIC, check, source

SUITE = """\
description: ${{ TEAM }} greetings
tests: ./cases.jsonl
"""
CASES = [
    {"id": "full", "criteria": "Greets", "input": "Hello!", "expected_output": "${{ GREETING }}"},
    {"id": "partial", "criteria": "Uses the persona",
     "input": [{"role": "system", "content": "You are ${{PERSONA}}, always."},
               {"role": "user", "content": "Hi there!"}]},
]  # fmt: skip
ENV = {"TEAM": "Support", "GREETING": "Hello, friend!", "PERSONA": "a warm host"}


async def read(env: dict[str, str]) -> SuiteReport:
    files = {"cases.jsonl": "\n".join(json.dumps(case) for case in CASES)}
    return await check_suite(SUITE, file_source=source(files), env=env)


async def test_references_in_the_suite_and_in_its_case_files_take_the_requests_values() -> None:
    report = await read(ENV)
    assert report.valid, report.errors
    suite = report.suite
    assert suite is not None
    assert suite.description == "Support greetings"
    full, partial = suite.cases
    assert full.reference_answer == "Hello, friend!"
    assert partial.input_messages[0].content == "You are a warm host, always."


async def test_each_reference_not_given_is_an_error_where_it_is() -> None:
    report = await read({"TEAM": "Support"})
    errors = {error.path: error.message for error in report.errors}
    assert set(errors) == {
        "tests@./cases.jsonl[0].expected_output",
        "tests@./cases.jsonl[1].input[0].content",
    }
    assert any("'${{ GREETING }}' is not given" in message for message in errors.values())
    assert all("never reads the service's environment" in m for m in errors.values())


async def test_an_agentv_2025_file_keeps_the_text_as_written() -> None:
    text = CLASSIC.replace("What is 2+2?", "What is ${{ X }}?")
    report = await check(text)
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.cases[0].input_messages[0].content == "What is ${{ X }}?"


@given(
    values=st.dictionaries(
        st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True), st.text(max_size=20), max_size=4
    )
)
def test_values_go_in_verbatim_and_are_never_filled_again(values: dict[str, str]) -> None:
    document = {"a": [f"<${{{{ {name} }}}}>" for name in values], "b": {"c": 7}}
    filled = interpolate(document, values, Findings())
    assert filled == {"a": [f"<{value}>" for value in values.values()], "b": {"c": 7}}
