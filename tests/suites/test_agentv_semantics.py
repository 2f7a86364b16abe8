"""How AgentV's files read (issue 35), each as AgentV 4.42.4 runs them (measured by
``scripts/conformance/agentv``): expected output alone, input_files, missing files, the July
2026 layout's suite ``assert``, ``skip_defaults``, ``evaluate_options`` and ``targets``.
"""

from __future__ import annotations

from typing import Any

from app.formatting.messages import FilePart
from tests.suites.helpers import check, errors_by_path


async def test_a_test_with_only_an_expected_output_is_graded_by_the_default_judge() -> None:
    report = await check({"tests": [{"id": "q", "input": "2+2?", "expected_output": "4"}]})
    assert report.valid, report.errors
    assert report.suite is not None
    [case] = report.suite.cases
    assert [grader.type for grader in case.all_graders()] == ["llm_judge"]
    assert case.reference_answer == "4"


async def test_a_tests_own_input_files_replace_the_suites() -> None:
    suite = {
        "input_files": ["policy.md"],
        "tests": [
            {"id": "suite-files", "criteria": "x", "input": "Hi"},
            {"id": "own-files", "criteria": "x", "input": "Hi", "input_files": ["order.md"]},
        ],
    }
    report = await check(suite, files={"policy.md": "P", "order.md": "O"})
    assert report.suite is not None, report.errors

    def files_of(index: int) -> list[str]:
        content = report.suite.cases[index].input_messages[0].content  # type: ignore[union-attr]
        assert isinstance(content, list)
        return [part.value for part in content if isinstance(part, FilePart)]

    assert files_of(0) == ["policy.md"]
    assert files_of(1) == ["order.md"]


async def test_a_missing_input_file_marks_only_the_cases_that_use_it() -> None:
    gone = {"role": "user", "content": [{"type": "file", "value": "gone.md"}, "Sum up"]}
    suite = {
        "tests": [
            {"id": "uses", "criteria": "x", "input": [gone]},
            {"id": "plain", "criteria": "x", "input": "Hi"},
        ]
    }
    report = await check(suite)
    assert report.valid, report.errors
    assert report.suite is not None
    assert [case.missing_files for case in report.suite.cases] == [("gone.md",), ()]
    assert any("gone.md" in warning for warning in report.warnings)


LAYOUT: dict[str, Any] = {
    "providers": ["default"],
    "prompts": ["{{ input }}"],
    "assert": [{"name": "polite", "type": "not-contains", "value": "stupid"}],
    "tests": [
        {"id": "inherits", "vars": {"input": "Hi"}, "assert": [{"type": "contains", "value": "H"}]},
        {"id": "only-suite", "vars": {"input": "Hi"}},
        {
            "id": "skips",
            "vars": {"input": "Hi"},
            "execution": {"skip_defaults": True},
            "assert": [{"type": "contains", "value": "H"}],
        },
    ],
}


async def test_a_suite_level_assert_grades_every_test_unless_it_skips_defaults() -> None:
    report = await check(LAYOUT)
    assert report.valid, report.errors
    assert report.suite is not None
    names = [[grader.name for grader in case.evaluators] for case in report.suite.cases]
    assert "polite" in names[0]
    assert len(names[0]) == 2
    assert names[1] == ["polite"]
    assert "polite" not in names[2]
    assert len(names[2]) == 1


async def test_evaluate_options_set_trials_budget_and_concurrency() -> None:
    options = {"repeat": 3, "budget_usd": 2, "max_concurrency": 4}
    report = await check({**LAYOUT, "evaluate_options": options})
    assert report.suite is not None, report.errors
    assert (report.suite.trials.count, report.suite.budget_usd) == (3, 2.0)
    assert report.suite.max_concurrency == 4


async def test_unknown_evaluate_options_are_refused_and_a_targets_list_makes_arms() -> None:
    report = await check({**LAYOUT, "evaluate_options": {"delay": 5}, "targets": ["a", "b"]})
    errors = errors_by_path(report)
    assert "evaluate_options.delay" in errors
    assert "once" in errors["targets"]  # both `providers` and `targets`
    without_providers = {key: value for key, value in LAYOUT.items() if key != "providers"}
    report = await check({**without_providers, "targets": ["a", "b"]})
    assert report.suite is not None, report.errors
    assert report.suite.targets == ("a", "b")
    execution = {**LAYOUT["tests"][2], "execution": {"skip_defaults": True, "target": "x"}}
    report = await check({**LAYOUT, "tests": [execution]})
    assert "tests[0].execution.target" in errors_by_path(report)
    case = {"id": "q", "criteria": "x", "input": "Hi"}
    report = await check({"targets": ["a", {"name": "b"}], "tests": [case]})
    assert report.suite is not None, report.errors
    assert report.suite.targets == ("a", "b")
    report = await check({"targets": [{"name": "b", "provider": "openai"}], "tests": [case]})
    assert "targets[0]" in errors_by_path(report)


async def test_a_suite_sets_its_system_prompt_and_an_empty_one_turns_it_off() -> None:
    case = {"id": "q", "criteria": "x", "input": "Hi"}
    report = await check({"system_prompt": "", "tests": [case]})
    assert report.suite is not None, report.errors
    assert report.suite.system_prompt == ""
    assert [m.role for m in report.cases[0].prompt.chat_prompt] == ["user"]
    report = await check({"tests": [case]})
    assert [m.role for m in report.cases[0].prompt.chat_prompt] == ["system", "user"]


async def test_a_judges_provider_names_its_target() -> None:
    def suite(judge: dict[str, Any]) -> dict[str, Any]:
        graders = [{"type": "llm-rubric", "value": "Polite", **judge}]
        return {"prompts": ["{{q}}"], "tests": [{"vars": {"q": "Hi"}, "assert": graders}]}

    for judge in ({"provider": "grader-a"}, {"provider": {"id": "grader-a"}}):
        report = await check(suite(judge))
        assert report.suite is not None, report.errors
        [grader] = report.suite.cases[0].all_graders()
        assert grader.target == "grader-a"
    clash = errors_by_path(await check(suite({"provider": "a", "target": "b"})))
    assert "'target' names 'b'" in clash["tests[0].assert[0].provider"]
    mid = {"tests": [{"id": "t", "input": "Hi", "assertions": [
        {"type": "llm-grader", "prompt": "Polite?", "provider": "grader-a"}]}]}  # fmt: skip
    report = await check(mid)
    assert report.suite is not None, report.errors
    assert report.suite.cases[0].evaluators[0].target == "grader-a"


async def test_a_live_conversation_reads_in_the_july_layout() -> None:
    test = {
        "id": "tutor",
        "mode": "conversation",
        "aggregation": "min",
        "assert": ["Stays on topic"],
        "turns": [
            {"input": "What is 15% of 200?", "assert": ["Says 30"]},
            {"input": "Double it.", "assert": [{"type": "contains", "value": "60"}]},
        ],
        "vars": {"input": [{"role": "system", "content": "You are a tutor."}]},
    }
    report = await check({"providers": ["default"], "prompts": ["{{ input }}"], "tests": [test]})
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert case.conversation is not None
    assert case.conversation.aggregation == "min"
    assert [turn.evaluators[0].type for turn in case.conversation.turns] == [
        "llm_judge",
        "contains",
    ]
    assert [message.role for message in case.input_messages] == ["system"]


async def test_suite_preprocessors_of_the_july_layout_are_refused_by_name() -> None:
    suite = {"providers": ["default"], "prompts": ["{{ q }}"], "tests": [{"vars": {"q": "Hi"}}]}
    report = await check({**suite, "preprocessors": [{"type": "xlsx", "command": ["x"]}]})
    assert "'preprocessors' is not supported" in errors_by_path(report)["preprocessors"]
