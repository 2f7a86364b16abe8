"""Each dialect read into the one suite model: AgentV 2025, AgentV 2026, prompts/providers/vars."""

from __future__ import annotations

from typing import Any

import pytest

from app.evaluators.config import DEFAULT_EVALUATOR
from app.evaluators.expected import ExpectedMessage
from app.formatting.messages import FilePart, Message, TextPart
from app.suites.dialects import as_suite, detect_dialect
from tests.suites.helpers import CLASSIC, check, errors_by_path


@pytest.mark.parametrize(
    ("document", "dialect"),
    [
        ({"evalcases": []}, "agentv-2025"),
        ({"eval_cases": []}, "agentv-2025"),
        ({"tests": [{"id": "a", "criteria": "x", "input": "Hi"}]}, "agentv-2026"),
        ({"tests": "cases.jsonl", "target": "llm"}, "agentv-2026"),
        ({"prompts": ["{{ input }}"], "tests": []}, "prompts-providers-vars"),
        ({"providers": ["llm"], "tests": []}, "prompts-providers-vars"),
        ({"defaultTest": {}, "tests": []}, "prompts-providers-vars"),
        ({"tests": [{"vars": {"input": "Hi"}, "assert": ["ok"]}]}, "prompts-providers-vars"),
        ({"tests": [{"vars": {"q": "Hi"}, "input": "{{ q }}", "criteria": "x"}]}, "agentv-2026"),
        ({"skill_name": "x", "evals": []}, "agentv-2026"),
        ("just text", "unknown"),
    ],
)
def test_the_dialect_is_told_by_the_keys(document: Any, dialect: str) -> None:
    assert detect_dialect(as_suite(document)) == dialect


async def test_a_2025_file_and_its_2026_spelling_give_the_same_cases() -> None:
    later = """\
    name: arithmetic
    tests:
      - id: add
        criteria: Says 4
        input: What is 2+2?
        expected_output: "4"
    """
    classic, newer = await check(CLASSIC), await check(later)
    assert (classic.dialect, newer.dialect) == ("agentv-2025", "agentv-2026")
    assert classic.suite is not None
    assert newer.suite is not None
    assert newer.suite.cases == classic.suite.cases
    assert newer.suite.dataset == "arithmetic"


async def test_2026_descriptive_keys_are_kept_as_metadata() -> None:
    report = await check(
        """\
        name: triage
        version: "1.0"
        tags: [support]
        governance: {owner: team-a}
        tests:
          - id: a
            criteria: Works
            input: Hi
            tags: [smoke]
            metadata: {area: login}
        """
    )
    assert report.valid, report.errors
    assert report.warnings == []
    assert report.suite is not None
    assert report.suite.metadata == {
        "name": "triage",
        "version": "1.0",
        "tags": ["support"],
        "governance": {"owner": "team-a"},
    }
    assert report.suite.cases[0].metadata == {"tags": ["smoke"], "metadata": {"area": "login"}}


async def test_suite_assertions_are_appended_unless_a_case_skips_defaults() -> None:
    report = await check(
        """\
        assertions:
          - Polite tone
        tests:
          - id: own
            criteria: Greets
            input: Hi
            assertions:
              - {type: contains, value: Hello}
          - id: defaults-only
            criteria: Greets
            input: Hi
          - id: skips
            criteria: Greets
            input: Hi
            execution: {skip_defaults: true}
        """
    )
    assert report.valid, report.errors
    assert report.suite is not None
    own, defaults_only, skips = report.suite.cases
    assert [(g.name, g.type) for g in own.evaluators] == [
        ("contains", "contains"),
        ("rubrics", "llm_judge"),
    ]
    assert [g.name for g in defaults_only.evaluators] == ["rubrics"]
    assert skips.evaluators == (DEFAULT_EVALUATOR,)


async def test_criteria_is_optional_when_the_case_has_graders() -> None:
    graded = await check(
        {"tests": [{"id": "a", "input": "Hi", "assertions": [{"type": "contains", "value": "x"}]}]}
    )
    assert graded.valid, graded.errors
    assert graded.suite is not None
    assert graded.suite.cases[0].expected_outcome == ""
    ungraded = await check({"tests": [{"id": "a", "input": "Hi"}]})
    assert "is required" in errors_by_path(ungraded)["tests[0].expected_outcome"]


async def test_suite_input_and_input_files_are_prepended_to_every_case() -> None:
    report = await check(
        """\
        input: Use the attached context.
        input_files: [context.md]
        tests:
          - id: a
            criteria: Answers
            input: When?
          - id: b
            criteria: Answers
            input: Where?
            input_files: [extra.md]
          - id: c
            criteria: Answers
            input: Why?
            execution: {skip_defaults: true}
        """,
        files={"context.md": "Context", "extra.md": "Extra"},
    )
    assert report.valid, report.errors
    assert report.suite is not None
    a, b, c = report.suite.cases
    context, extra = FilePart(value="context.md"), FilePart(value="extra.md")
    assert a.input_messages == (
        Message(role="user", content="Use the attached context."),
        Message(role="user", content=[context, TextPart(value="When?")]),
    )
    assert b.input_messages[1] == Message(  # a test's own input_files replace the suite's
        role="user", content=[extra, TextPart(value="Where?")]
    )
    assert c.input_messages == (Message(role="user", content="Why?"),)


async def test_input_files_need_a_string_input() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "criteria": "x",
                    "input": [{"role": "user", "content": "Hi"}],
                    "input_files": ["a.md"],
                },
            ]
        },
        files={"a.md": "A"},
    )
    errors = errors_by_path(report)
    assert errors["tests[0].input_files"] == "is only supported with a string 'input'"


async def test_a_prompt_md_in_input_files_is_the_prompt_of_a_test_without_input() -> None:
    report = await check(
        {
            "input_files": ["shared.csv"],
            "tests": [{"id": "a", "criteria": "x", "input_files": ["PROMPT.md", "data.csv"]}],
        },
        files={"PROMPT.md": "Summarise\r\nthe data.", "data.csv": "a,b", "shared.csv": "c"},
    )
    assert report.suite is not None, report.errors
    assert report.suite.cases[0].input_messages == (
        Message(
            role="user",
            content=[FilePart(value="data.csv"), TextPart(value="Summarise\nthe data.")],
        ),
    )


async def test_a_suite_prompt_md_is_the_prompt_only_of_tests_without_input() -> None:
    report = await check(
        {
            "input_files": ["PROMPT.md", "data.csv"],
            "tests": [
                {"id": "bare", "criteria": "x"},
                {"id": "asks", "criteria": "x", "input": "Why?"},
            ],
        },
        files={"PROMPT.md": "Task", "data.csv": "a,b"},
    )
    assert report.suite is not None, report.errors
    bare, asks = report.suite.cases
    data, prompt = FilePart(value="data.csv"), FilePart(value="PROMPT.md")
    assert bare.input_messages == (Message(role="user", content=[data, TextPart(value="Task")]),)
    assert asks.input_messages == (
        Message(role="user", content=[prompt, data, TextPart(value="Why?")]),
    )


async def test_a_prompt_md_beside_the_suite_is_the_fallback_prompt() -> None:
    suite = {"tests": [{"id": "a", "criteria": "x"}]}
    found = await check(suite, files={"PROMPT.md": "Do the task."})
    missing = await check(suite)
    assert found.suite is not None, found.errors
    assert found.suite.cases[0].input_messages == (Message(role="user", content="Do the task."),)
    assert "PROMPT.md" in errors_by_path(missing)["tests[0].input_messages"]


async def test_an_expected_message_may_carry_only_tool_calls() -> None:
    report = await check(
        """\
        tests:
          - id: a
            criteria: Looks up the order
            input: Where is order 7?
            expected_output:
              - role: assistant
                tool_calls:
                  - {tool: lookup_order, input: {order: 7}}
        """
    )
    assert report.valid, report.errors
    assert report.suite is not None
    case = report.suite.cases[0]
    call = {"tool": "lookup_order", "input": {"order": 7}}
    assert case.expected_messages == (ExpectedMessage(role="assistant", tool_calls=(call,)),)
    assert (
        case.reference_answer
        == '[\n  {\n    "tool": "lookup_order",\n    "input": {\n      "order": 7\n    }\n  }\n]'
    )


async def test_an_expected_message_needs_content_or_tool_calls() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "criteria": "x",
                    "input": "Hi",
                    "expected_output": [{"role": "assistant"}],
                }
            ]
        }
    )
    assert errors_by_path(report) == {
        "tests[0].expected_output[0].content": "is required (or 'tool_calls')"
    }


@pytest.mark.parametrize(
    ("suite", "path", "construct"),
    [
        ({"docker": {"image": "x"}}, "docker", "Docker workspace"),
        ({"environment": {"image": "x"}}, "environment.type", "environment type 'docker'"),
        ({"target": {"provider": "openai"}}, "target", "an inline target definition"),
    ],
)
async def test_2026_constructs_that_cannot_run_here_are_refused_by_name(
    suite: dict[str, Any], path: str, construct: str
) -> None:
    report = await check({**suite, "tests": [{"id": "a", "criteria": "x", "input": "Hi"}]})
    assert not report.valid
    assert construct in errors_by_path(report)[path]


async def test_workspace_constructs_are_refused_with_one_error_each_naming_them() -> None:
    report = await check(
        {
            "workspace": {"template": "ws/", "docker": {"image": "node"}, "hooks": {}},
            "docker": {"image": "node"},
            "tests": [
                {"id": "a", "criteria": "x", "input": "Hi", "workspace": {"repos": []}},
            ],
        }
    )
    errors = errors_by_path(report)
    assert set(errors) == {"workspace.docker", "docker", "tests[0].workspace"}
    assert all(f"'{path.split('.')[-1]}' is not supported" in errors[path] for path in errors)
    assert [error.path for error in report.errors].count("workspace.docker") == 1


async def test_repeat_is_read_into_trials_for_the_suite_and_a_case() -> None:
    report = await check(
        {
            "repeat": {"count": 3, "strategy": "pass_all", "early_exit": True},
            "tests": [
                {"id": "a", "criteria": "x", "input": "Hi"},
                {"id": "b", "criteria": "x", "input": "Hi", "repeat": 5},
            ],
        }
    )
    assert report.suite is not None, report.errors
    assert report.suite.trials.model_dump() == {
        "count": 3,
        "strategy": "pass_all",
        "early_exit": True,
    }
    first, second = report.suite.cases
    assert first.trials is None
    assert second.trials is not None
    assert second.trials.count == 5
    bad = await check(
        {"repeat": {"count": 0}, "tests": [{"id": "a", "criteria": "x", "input": "H"}]}
    )
    assert "repeat.count" in errors_by_path(bad)


async def test_an_environment_reference_the_request_does_not_give_is_an_error_naming_it() -> None:
    report = await check({"tests": [{"id": "a", "criteria": "x", "input": "${{ SECRET_TOKEN }}"}]})
    [error] = report.errors
    assert error.path == "tests[0].input"
    assert "'${{ SECRET_TOKEN }}'" in error.message
    assert "never reads the service's environment" in error.message


async def test_a_per_case_target_other_than_the_suites_is_an_error() -> None:
    case = {"id": "a", "criteria": "x", "input": "Hi"}
    same = await check({"target": "llm", "tests": [{**case, "execution": {"target": "llm"}}]})
    assert same.valid, same.errors
    other = await check({"target": "llm", "tests": [{**case, "execution": {"target": "gpt"}}]})
    assert "per-case target" in errors_by_path(other)["tests[0].execution.target"]


async def test_2025_evaluator_kind_other_than_llm_judge_is_refused_not_replaced() -> None:
    report = await check(
        {"evalcases": [{"id": "a", "outcome": "x", "input": "Hi", "evaluator": "code_judge"}]}
    )
    assert "not supported yet" in errors_by_path(report)["evalcases[0].evaluator"]


async def test_whole_file_jsonl_dataset_is_a_suite_of_its_lines() -> None:
    text = (
        '{"id": "a", "criteria": "Says hi", "input": "Hi"}\n'
        '{"id": "b", "criteria": "Says bye", "input": "Bye"}\n'
    )
    report = await check(text)
    assert report.valid, report.errors
    assert report.dialect == "agentv-2026"
    assert report.suite is not None
    assert [case.id for case in report.suite.cases] == ["a", "b"]


async def test_prompts_vars_suite_renders_prompts_from_default_and_test_vars() -> None:
    report = await check(
        """\
        description: Capitals
        providers: [llm]
        prompts:
          - id: terse
            raw: "Answer for {{ audience }}: {{ question }}"
        defaultTest:
          vars: {audience: users}
          assert:
            - {type: not-contains, value: TODO}
          threshold: 0.7
          metadata: {suite: capitals}
        tests:
          - id: france
            description: The capital of France
            vars:
              question: What is the capital of France?
              audience: pupils
              expected_output: Paris
            assert:
              - {type: contains, value: Paris}
              - Names {{ vars.question | lower }} right
            metadata: {level: easy}
        """
    )
    assert report.valid, report.errors
    assert report.dialect == "prompts-providers-vars"
    assert report.suite is not None
    assert report.suite.target == "llm"
    case = report.suite.cases[0]
    assert case.input_messages == (
        Message(role="user", content="Answer for pupils: What is the capital of France?"),
    )
    assert (case.note, case.reference_answer, case.expected_outcome) == (
        "The capital of France",
        "Paris",
        "",
    )
    assert [(g.name, g.type, g.negate) for g in case.evaluators] == [
        ("not-contains", "contains", True),  # promptfoo's order: defaultTest's first
        ("contains", "contains", False),
        ("rubrics", "llm_judge", False),
    ]
    assert case.evaluators[2].rubrics[0].description == (
        "Names what is the capital of france? right"
    )
    assert case.thresholds is not None
    assert case.thresholds.pass_ == 0.7
    assert case.metadata == {"metadata": {"suite": "capitals", "level": "easy"}}


async def test_input_placeholder_with_a_message_list_stands_for_the_messages() -> None:
    report = await check(
        """\
        prompts: ["{{ input }}"]
        tests:
          - id: chat
            vars:
              product: AgentV
              input:
                - {role: system, content: Be precise.}
                - {role: user, content: "What does {{ vars.product }} evaluate?"}
            assert: [Explains it]
          - id: text
            vars: {input: Hello}
            assert: [Greets]
        """
    )
    assert report.valid, report.errors
    assert report.suite is not None
    chat, text = report.suite.cases
    assert chat.input_messages == (
        Message(role="system", content="Be precise."),
        Message(role="user", content="What does AgentV evaluate?"),
    )
    assert text.input_messages == (Message(role="user", content="Hello"),)


async def test_several_prompts_make_one_case_with_an_input_per_prompt_arm() -> None:
    report = await check(
        {
            "prompts": [{"id": "short", "raw": "{{ q }}"}, "Please answer: {{ q }}"],
            "tests": [{"id": "t", "vars": {"q": "2+2?"}, "assert": ["Says 4"]}],
        }
    )
    assert report.valid, report.errors
    assert report.suite is not None
    [case] = report.suite.cases
    assert report.suite.prompts == ("short", "prompt-2")
    assert [(prompt, messages[0].content) for prompt, messages in case.prompt_inputs] == [
        ("short", "2+2?"),
        ("prompt-2", "Please answer: 2+2?"),
    ]
    assert case.input_messages == case.prompt_inputs[0][1]


async def test_chat_prompt_file_is_rendered_per_test() -> None:
    report = await check(
        {
            "prompts": [{"id": "chat", "file": "./prompts/chat.json"}],
            "default_test": {"vars": {"audience": "users"}},
            "tests": [{"id": "q", "vars": {"question": "Why?"}, "assert": ["Answers"]}],
        },
        files={
            "prompts/chat.json": (
                '[{"role": "system", "content": "Answer {{ audience }}."},'
                ' {"role": "user", "content": "{{ question }}"}]'
            )
        },
    )
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.cases[0].input_messages == (
        Message(role="system", content="Answer users."),
        Message(role="user", content="Why?"),
    )


@pytest.mark.parametrize(
    ("suite", "path", "text"),
    [
        ({"providers": [{"config": {"tools": []}}]}, "providers[0]", "inline provider"),
        ({"evaluateOptions": {"repeat": 2}}, "evaluateOptions.repeat", "only maxConcurrency"),
    ],
)
async def test_prompts_vars_constructs_not_run_here_are_refused(
    suite: dict[str, Any], path: str, text: str
) -> None:
    report = await check(
        {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "x"}, "assert": ["y"]}], **suite}
    )
    assert text in errors_by_path(report)[path]


async def test_several_providers_are_the_arms_of_one_run() -> None:
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "providers": ["a", {"id": "openai:chat:x", "label": "b"}, {"id": "c"}],
            "tests": [{"vars": {"q": "x"}, "assert": ["y"]}],
        }
    )
    assert report.suite is not None, report.errors
    assert (report.suite.target, report.suite.targets) == (None, ("a", "b", "c"))
    assert report.suite.target_tools == {}
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "providers": ["a", {"id": "b", "config": {"tools": [tool]}}],
            "tests": [{"vars": {"q": "x"}, "assert": ["y"]}],
        }
    )
    assert report.suite is not None, report.errors
    assert [spec.name for spec in report.suite.target_tools["b"].tools] == ["f"]
    assert report.suite.cases[0].tool_use is None  # the arm on b gets them, not a


async def test_a_test_without_graders_runs_ungraded_and_an_unread_option_is_refused() -> None:
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "tests": [
                {"id": "bare", "vars": {"q": "x"}},
                {"id": "opts", "vars": {"q": "x"}, "assert": ["y"], "options": {"repeat": 1}},
            ],
        }
    )
    errors = errors_by_path(report)
    assert "tests[0].assert" not in errors
    assert "'repeat' in options" in errors["tests[1].options.repeat"]
    bare = await check({"prompts": ["{{ q }}"], "tests": [{"id": "bare", "vars": {"q": "x"}}]})
    assert bare.suite is not None
    [case] = bare.suite.cases
    assert (case.graded, case.evaluators) == (False, ())


async def test_an_undefined_variable_renders_empty_with_a_warning_naming_it_and_where() -> None:
    # promptfoo renders it empty in a prompt, and keeps a variable using one as written
    # (measured: tests/conformance/promptfoo/undefined.yaml)
    report = await check(
        {
            "prompts": ["Hello {{ name }}!"],
            "tests": [{"id": "a", "vars": {"x": "{{ nope }}"}, "assert": ["ok"]}],
        }
    )
    assert report.suite is not None, report.errors
    assert report.suite.cases[0].input_messages[-1].content == "Hello !"
    warnings = "\n".join(report.warnings)
    assert "tests[0].vars: prompt 'prompt-1': undefined variable 'name'" in warnings
    assert "tests[0].vars.x: undefined variable 'nope'" in warnings
    assert "kept as written" in warnings


async def test_keys_of_the_other_dialect_are_refused_not_ignored() -> None:
    agentv = await check(
        {"providers": ["llm"], "evalcases": [{"id": "a", "outcome": "x", "input": "Hi"}]}
    )
    assert agentv.dialect == "agentv-2025"
    assert "prompts/providers/vars layout" in errors_by_path(agentv)["providers"]
    layout = await check(
        {
            "prompts": ["{{ q }}"],
            "assertions": ["Polite"],
            "tests": [{"vars": {"q": "Hi"}, "assertions": ["Greets"]}],
        }
    )
    errors = errors_by_path(layout)
    assert "use defaultTest.assert" in errors["assertions"]
    assert "use assert" in errors["tests[0].assertions"]


async def test_an_empty_providers_list_names_no_target() -> None:
    report = await check(
        {"providers": [], "prompts": ["{{ q }}"], "tests": [{"vars": {"q": "x"}, "assert": ["y"]}]}
    )
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.target is None


async def test_a_prompt_object_whose_id_is_a_file_reads_that_file() -> None:
    report = await check(
        {"prompts": [{"id": "file://prompt.txt", "label": "terse"}],
         "tests": [{"vars": {"q": "Hi"}, "assert": [{"type": "contains", "value": "Hi"}]}]},
        files={"prompt.txt": "Answer {{ q }}"},
    )  # fmt: skip
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert case.input_messages[-1].content == "Answer Hi"


async def test_a_tests_provider_output_is_its_answer_and_only_text_is_read() -> None:
    # promptfoo grades a non-empty providerOutput instead of calling the provider
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "tests": [
                {"id": "given", "vars": {"q": "x"}, "providerOutput": "kill", "assert": ["k"]},
                {"id": "empty", "vars": {"q": "x"}, "providerOutput": "", "assert": ["k"]},
            ],
        }
    )
    assert report.suite is not None, report.errors
    assert [case.given_output for case in report.suite.cases] == ["kill", None]
    assert not any("providerOutput" in warning for warning in report.warnings)
    mapping = await check(
        {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "x"}, "providerOutput": {"a": 1}}]}
    )
    assert "only a text output" in errors_by_path(mapping)["tests[0].providerOutput"]
