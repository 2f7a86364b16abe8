"""Evaluator lists: checks, resolution order, unknown types, judge prompts."""

from __future__ import annotations

from tests.suites.helpers import check, errors_by_path


async def test_declared_grader_that_does_not_run_yet_is_an_error_never_skipped() -> None:
    report = await check(
        """\
        evalcases:
          - id: a
            outcome: Works
            input: Hi
            evaluators:
              - {name: kw, type: webhook, value: "http://127.0.0.1:9/grade"}
              - {name: has_hi, type: contains, value: Hi}
        """
    )
    assert errors_by_path(report) == {
        "evalcases[0].evaluators[0].type": (
            "grader type 'webhook' is not supported yet (an HTTP endpoint decides "
            "(promptfoo)): this service does not run it"
        )
    }
    assert report.suite is None


async def test_invalid_evaluator_settings_are_errors() -> None:
    report = await check(
        {
            "execution": {"evaluators": [{"type": "regex", "value": "("}]},
            "evalcases": [
                {
                    "id": "a",
                    "outcome": "x",
                    "input": "Hi",
                    "evaluators": [
                        {"type": "contains"},
                        {"type": "is_json", "schema": {"type": "not-a-type"}},
                        {"type": "composite", "evaluators": []},
                        {"name": "w", "type": "equals", "value": "x", "weight": -1},
                    ],
                }
            ],
        }
    )
    errors = errors_by_path(report)
    assert "not a valid JavaScript regular expression" in errors["execution.evaluators[0].value"]
    assert "is required" in errors["evalcases[0].evaluators[0].value"]
    assert "not a valid JSON Schema" in errors["evalcases[0].evaluators[1].schema"]
    assert "at least one grader" in errors["evalcases[0].evaluators[2].evaluators"]
    assert "greater than or equal to 0" in errors["evalcases[0].evaluators[3].weight"]


async def test_evaluators_resolve_case_then_suite_then_default() -> None:
    report = await check(
        """\
        execution:
          evaluators:
            - {name: suite_check, type: contains, value: "4"}
        evalcases:
          - id: own-list
            outcome: x
            input: Hi
            evaluators: [{name: own, type: equals, value: "4"}]
          - id: own-execution-list
            outcome: x
            input: Hi
            execution:
              evaluators: [{name: exec, type: is_json}]
          - id: suite-list
            outcome: x
            input: Hi
        """
    )
    assert report.suite is not None
    names = {case.id: [e.name for e in case.evaluators] for case in report.suite.cases}
    assert names == {
        "own-list": ["own"],
        "own-execution-list": ["exec"],
        "suite-list": ["suite_check"],
    }


async def test_composite_and_rubrics_are_kept_in_the_model() -> None:
    report = await check(
        """\
        evalcases:
          - id: a
            outcome: x
            input: Hi
            rubrics:
              - Greets the user
            evaluators:
              - name: both
                type: composite
                evaluators:
                  - name: judge
                    type: llm_judge
                    weight: 2
                    rubrics: [{id: r1, description: Polite}]
                  - {name: hi, type: contains, value: Hi}
        """
    )
    assert report.valid, report.errors
    assert report.suite is not None
    rubric_judge, composite = report.suite.cases[0].evaluators
    assert rubric_judge.rubrics[0].description == "Greets the user"
    assert rubric_judge.rubrics[0].required
    assert [child.name for child in composite.evaluators] == ["judge", "hi"]
    assert composite.evaluators[0].rubrics[0].id == "r1"


async def test_judge_prompt_file_is_read_and_its_path_kept() -> None:
    report = await check(
        {
            "execution": {"evaluators": [{"type": "llm_judge", "prompt": "prompts/judge.md"}]},
            "evalcases": [{"id": "a", "outcome": "x", "input": "Hi"}],
        },
        files={"prompts/judge.md": "Grade {{candidate_answer}}"},
    )
    assert report.suite is not None
    judge = report.suite.cases[0].evaluators[0]
    assert (judge.prompt, judge.prompt_path) == ("Grade {{candidate_answer}}", "prompts/judge.md")


async def test_inline_judge_prompt_is_kept_as_text() -> None:
    prompt = "Grade the answer strictly: {{candidate_answer}}"
    report = await check(
        {
            "evalcases": [
                {
                    "id": "a",
                    "outcome": "x",
                    "input": "Hi",
                    "evaluators": [{"type": "llm_judge", "prompt": prompt}],
                }
            ]
        }
    )
    assert report.suite is not None
    judge = report.suite.cases[0].evaluators[0]
    assert (judge.prompt, judge.prompt_path) == (prompt, None)


async def test_missing_judge_prompt_file_is_an_error_at_the_prompt() -> None:
    report = await check(
        """\
        evalcases:
          - id: a
            outcome: x
            input: Hi
            evaluators: [{type: llm_judge, prompt: prompts/judge.md}]
        """
    )
    [error] = report.errors
    assert error.path == "evalcases[0].evaluators[0].prompt"
    assert "file not found: prompts/judge.md" in error.message


async def test_judge_prompt_without_candidate_answer_is_a_warning() -> None:
    report = await check(
        {
            "execution": {"evaluators": [{"type": "llm_judge", "prompt": "prompts/judge.md"}]},
            "tests": [
                {
                    "id": "a",
                    "outcome": "x",
                    "input": "Hi",
                    "evaluators": [
                        {"type": "llm_judge", "prompt": "Be strict about {{ question }}"}
                    ],
                },
                {"id": "b", "outcome": "x", "input": "Hi"},
            ],
        },
        files={"prompts/judge.md": "Grade it."},
    )
    assert report.valid
    blind = [warning for warning in report.warnings if "never shows the answer" in warning]
    assert [warning.split(":")[0] for warning in blind] == [
        "tests[0].evaluators[0].prompt",
        "execution.evaluators[0].prompt",
    ]
