"""promptfoo's ``options`` (``defaultTest.options`` and a test's): the grading provider is the
judge target of model graders (measured against promptfoo 0.123.1:
tests/conformance/promptfoo/grading_provider.yaml); other options are refused by name."""

from __future__ import annotations

from typing import Any

import pytest

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
    document["tests"][0]["options"] = {"disableConversationVar": True, "provider": "j"}
    errors = errors_by_path(await check(document))
    assert (
        "'disableConversationVar' in options" in errors["tests[0].options.disableConversationVar"]
    )


async def test_a_provider_that_names_no_target_is_an_error_at_it() -> None:
    document = suite()
    document["tests"][0]["options"] = {"provider": 42}
    errors = errors_by_path(await check(document))
    assert "must name a judge target" in errors["tests[0].options.provider"]


async def test_a_rubric_prompt_is_the_judge_prompt_of_llm_rubric_graders() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/rubric_prompt.yaml
    document = suite()
    document["defaultTest"]["options"]["rubricPrompt"] = [
        {"role": "system", "content": "Topic {{ q }}, rubric: {{ rubric }}"},
        {"role": "user", "content": "Output: {{ output }}"},
    ]
    report = await check(document)
    assert report.suite is not None, report.errors
    judge = report.suite.cases[0].evaluators[0]
    assert judge.prompt == "Topic x, rubric: Is polite\n\nOutput: {{ candidate_answer }}"
    assert report.suite.cases[0].evaluators[1].prompt is None  # contains: no judge
    document["tests"][0]["assert"] = [{"type": "factuality", "value": "x"}]
    errors = errors_by_path(await check(document))
    assert "in place of that grader's own prompt" in errors["defaultTest.options.rubricPrompt"]


async def test_options_providers_is_warned_about_as_promptfoo_does_not_read_it_either() -> None:
    # promptfoo 0.123.1 accepts `options.providers` (its google-aistudio-tools example) and
    # never reads it: the grading defaults apply there too
    document = suite()
    document["defaultTest"]["options"]["providers"] = {"text": "judge-z", "embedding": "e"}
    report = await check(document)
    assert report.suite is not None, report.errors
    targets = [[grader.target for grader in case.evaluators] for case in report.suite.cases]
    assert targets == [["judge-a", None], ["judge-b"], ["judge-c"]]
    assert any(
        "defaultTest.options.providers" in warning and "does not read it either" in warning
        for warning in report.warnings
    ), report.warnings


async def test_a_delay_option_is_warned_about_as_promptfoo_does_not_wait_for_it() -> None:
    # measured: promptfoo 0.123.1 runs tests with options.delay 3000 at once, in 1 s
    document = suite()
    document["defaultTest"]["options"]["delay"] = 3000
    report = await check(document)
    assert report.suite is not None, report.errors
    assert any("does not wait for a test's options.delay" in w for w in report.warnings)


async def test_an_asserts_own_rubric_prompt_and_config_and_env_values() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/assert_rubric_prompt.yaml
    document = suite(env={"TONE": "polite"})
    document["defaultTest"]["options"]["rubricPrompt"] = "Shared: {{ rubric }}"
    document["tests"][0]["assert"] = [
        {**RUBRIC, "rubricPrompt": "file://judge.yaml", "config": {"temperature": 0}},
        {**RUBRIC, "rubricPrompt": "Inline {{ env.TONE }}: {{ rubric }}"},
        RUBRIC,
    ]
    files = {"judge.yaml": "- role: system\n  content: 'File {{ q }}: {{ rubric }}'\n"}
    report = await check(document, files=files)
    assert report.suite is not None, report.errors
    prompts = [grader.prompt for grader in report.suite.cases[0].evaluators]
    assert prompts == ["File x: Is polite", "Inline polite: Is polite", "Shared: Is polite"]
    unread = "does not give it to the grading provider either"
    assert any("config" in w and unread in w for w in report.warnings)
    assert any("TONE: read as {{ env.NAME }} in templates only" in w for w in report.warnings)


async def test_env_must_map_names_to_values() -> None:
    errors = errors_by_path(await check(suite(env=["A"])))
    assert "must map names to text or numbers" in errors["env"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"method": "max"}, "method must be one of avg, sum"),
        ({"weights": {"nope": 1}}, "weights name no grader type: nope"),
        ({"weights": {"contains": -1}}, "weights must map grader types to numbers"),
        ({"limit": 1}, "unknown option(s) limit"),
    ],
)
async def test_max_score_options_are_checked(value: Any, message: str) -> None:
    document = suite()
    document["tests"][0]["assert"] = [{"type": "max-score", "value": value}]
    errors = errors_by_path(await check(document))
    assert message in errors["tests[0].assert[0].value"]
