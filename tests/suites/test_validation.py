"""Suite documents: AgentV files old and new, every problem at once, located in the document."""

from __future__ import annotations

import json

import pytest
import yaml

from app.evaluators.config import EvaluatorConfig
from tests.suites.helpers import CLASSIC, check, errors_by_path


async def test_classic_agentv_file_loads() -> None:
    report = await check(CLASSIC)
    assert report.valid, report.errors
    assert report.suite is not None
    case = report.suite.cases[0]
    assert (case.id, case.expected_outcome, case.reference_answer) == ("add", "Says 4", "4")
    assert report.suite.dataset == "default"
    assert case.evaluators == (EvaluatorConfig(name="llm_judge", type="llm_judge"),)


async def test_later_spellings_give_the_same_suite_as_the_classic_ones() -> None:
    newer = """\
    tests:
      - id: add
        criteria: Says 4
        input: What is 2+2?
        expected_output: "4"
    """
    classic, later = await check(CLASSIC), await check(newer)
    assert classic.suite is not None
    assert later.suite is not None
    assert later.suite.cases == classic.suite.cases


@pytest.mark.parametrize("cases_key", ["evalcases", "eval_cases", "tests"])
@pytest.mark.parametrize("outcome_key", ["outcome", "expected_outcome", "criteria"])
async def test_every_spelling_of_cases_and_outcome_is_accepted(
    cases_key: str, outcome_key: str
) -> None:
    suite = {cases_key: [{"id": "a", outcome_key: "Works", "input": "Hi"}]}
    report = await check(suite)
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.cases[0].expected_outcome == "Works"


async def test_yaml_and_json_give_the_same_suite() -> None:
    as_json = json.dumps(yaml.safe_load(CLASSIC))
    from_yaml, from_json = await check(CLASSIC), await check(as_json)
    assert from_yaml.suite == from_json.suite


async def test_wrong_types_are_each_reported_with_path_and_line() -> None:
    report = await check(
        """\
        dataset: 7
        guideline_patterns: "*.md"
        evalcases:
          - id: a
            outcome: Works
            note: [not, text]
            input_messages:
              role: user
          - just a string
        """
    )
    assert errors_by_path(report) == {
        "dataset": "must be a non-empty string, not a number",
        "guideline_patterns": "must be a list of glob patterns (strings)",
        "evalcases[0].note": "must be a non-empty string, not a list",
        "evalcases[0].input_messages": "must be a list of {role, content} messages, not a mapping",
        "evalcases[1]": "an eval case must be a mapping, not a string",
    }
    lines = {error.path: error.line for error in report.errors}
    assert lines["evalcases[0].input_messages"] == 8
    assert lines["evalcases[1]"] == 9


async def test_missing_id_and_missing_expected_outcome_are_errors() -> None:
    report = await check(
        """\
        evalcases:
          - outcome: Works
            input_messages: [{role: user, content: Hi}]
          - id: b
            input_messages: [{role: user, content: Hi}]
        """
    )
    errors = errors_by_path(report)
    assert "is required" in errors["evalcases[0].id"]
    assert "is required" in errors["evalcases[1].expected_outcome"]
    positions = {error.path: (error.line, error.column) for error in report.errors}
    assert positions["evalcases[1].expected_outcome"] == (4, 5)


async def test_missing_input_messages_and_missing_case_list_are_errors() -> None:
    no_input = await check({"evalcases": [{"id": "a", "outcome": "x"}]})
    assert "is required" in errors_by_path(no_input)["evalcases[0].input_messages"]
    no_cases = await check({"description": "empty"})
    assert "is required" in errors_by_path(no_cases)["evalcases"]


async def test_duplicate_case_ids_are_errors_naming_the_first_use() -> None:
    report = await check(
        """\
        evalcases:
          - {id: a, outcome: x, input: Hi}
          - {id: b, outcome: x, input: Hi}
          - {id: a, outcome: x, input: Hello}
        """
    )
    assert errors_by_path(report) == {
        "evalcases[2].id": "duplicate case id 'a' (first used at evalcases[0])"
    }
    assert report.errors[0].line == 4


async def test_a_case_id_longer_than_the_database_stores_is_an_error_at_the_id() -> None:
    long_id = "x" * 501
    report = await check(
        {"evalcases": [{"id": "ok", "outcome": "x", "input": "Hi"},
                       {"id": long_id, "outcome": "x", "input": "Hi"}]}
    )  # fmt: skip
    errors = errors_by_path(report)
    assert list(errors) == ["evalcases[1].id"]
    assert errors["evalcases[1].id"].startswith(f"case id {'x' * 40!r}... is 501 characters")
    assert (await check({"evalcases": [{"id": "y" * 500, "outcome": "x", "input": "Hi"}]})).valid


async def test_unknown_role_is_an_error_at_the_role() -> None:
    report = await check(
        """\
        evalcases:
          - id: a
            outcome: Works
            input_messages:
              - {role: user, content: Hi}
              - role: developer
                content: Dev note
        """
    )
    [error] = report.errors
    assert error.path == "evalcases[0].input_messages[1].role"
    assert "'system', 'user', 'assistant' or 'tool'" in error.message
    assert (error.line, error.column) == (6, 15)


async def test_bad_content_part_is_located_at_the_part() -> None:
    report = await check(
        {
            "evalcases": [
                {
                    "id": "a",
                    "outcome": "x",
                    "input_messages": [
                        {
                            "role": "user",
                            "content": [{"type": "text", "value": "Hi"}, {"type": "image"}],
                        }
                    ],
                }
            ]
        }
    )
    [error] = report.errors
    assert error.path == "evalcases[0].input_messages[0].content[1]"
    assert "unsupported content part type 'image'" in error.message


async def test_schema_marker_other_than_v2_is_a_warning() -> None:
    report = await check(CLASSIC.replace("agentv-eval-v2", "agentv-eval-v1"))
    assert report.valid
    assert any("expected 'agentv-eval-v2'" in warning for warning in report.warnings)


async def test_unknown_keys_are_warnings() -> None:
    report = await check(
        {"evalcase": [], "tests": [{"id": "a", "outcom": "x", "outcome": "y", "input": "Hi"}]}
    )
    assert report.valid
    assert "evalcase: unknown key, ignored" in report.warnings
    assert "tests[0].outcom: unknown key, ignored" in report.warnings


async def test_thresholds_are_read_and_checked() -> None:
    good = await check(
        {
            "thresholds": {"pass": 0.9, "borderline": 0.5},
            "tests": [{"id": "a", "outcome": "x", "input": "Hi"}],
        }
    )
    assert good.suite is not None
    assert (good.suite.thresholds.pass_, good.suite.thresholds.borderline) == (0.9, 0.5)
    bad = await check(
        {
            "thresholds": {"pass": 0.5, "borderline": 0.7},
            "tests": [{"id": "a", "outcome": "x", "input": "Hi"}],
        }
    )
    assert "must not be above the pass threshold" in errors_by_path(bad)["thresholds.borderline"]


async def test_reference_answer_is_the_last_expected_message_string_or_pretty_json() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "text",
                    "outcome": "x",
                    "input": "Hi",
                    "expected_messages": [
                        {"role": "assistant", "content": "First"},
                        {"role": "assistant", "content": "Second"},
                    ],
                },
                {
                    "id": "parts",
                    "outcome": "x",
                    "input": "Hi",
                    "expected_messages": [
                        {"role": "assistant", "content": [{"type": "text", "value": "Café"}]},
                    ],
                },
                {"id": "object", "outcome": "x", "input": "Hi", "expected_output": {"answer": 4}},
            ]
        }
    )
    assert report.suite is not None
    references = {case.id: case.reference_answer for case in report.suite.cases}
    assert references == {
        "text": "Second",
        "parts": '[\n  {\n    "type": "text",\n    "value": "Café"\n  }\n]',
        "object": '{\n  "answer": 4\n}',
    }
