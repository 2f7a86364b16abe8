"""promptfoo's ``options`` (``defaultTest.options`` and a test's): the grading provider is the
judge target of model graders (measured against promptfoo 0.123.1:
tests/conformance/promptfoo/grading_provider.yaml); other options are refused by name."""

from __future__ import annotations

from typing import Any

from tests.suites.helpers import check, errors_by_path

RUBRIC = {"type": "llm-rubric", "value": "Is polite"}


def suite(**extra: Any) -> dict[str, Any]:
    return {
        "prompts": ["{{ q }}"],
        "providers": ["t"],
        "defaultTest": {"options": {"provider": "judge-a"}},
        "tests": [
            {"vars": {"q": "x"}, "assert": [RUBRIC, {"type": "contains", "value": "x"}]},
            {"vars": {"q": "y"}, "options": {"provider": {"id": "judge-b"}}, "assert": [RUBRIC]},
            {"vars": {"q": "z"}, "assert": [{**RUBRIC, "provider": {"text": {"id": "judge-c"}}}]},
        ],
        **extra,
    }


async def test_the_grading_provider_is_the_judge_of_model_graders_without_their_own() -> None:
    report = await check(suite())
    assert report.suite is not None, report.errors
    targets = [[grader.target for grader in case.evaluators] for case in report.suite.cases]
    assert targets == [["judge-a", None], ["judge-b"], ["judge-c"]]


async def test_other_options_are_refused_by_name() -> None:
    document = suite()
    document["defaultTest"]["options"]["transform"] = "output.trim()"
    document["tests"][0]["options"] = {"rubricPrompt": "Grade {{ output }}", "provider": "j"}
    errors = errors_by_path(await check(document))
    assert "transforming the output" in errors["defaultTest.options.transform"]
    assert "'rubricPrompt' in options" in errors["tests[0].options.rubricPrompt"]


async def test_a_provider_that_names_no_target_is_an_error_at_it() -> None:
    document = suite()
    document["tests"][0]["options"] = {"provider": 42}
    errors = errors_by_path(await check(document))
    assert "must name a judge target" in errors["tests[0].options.provider"]
