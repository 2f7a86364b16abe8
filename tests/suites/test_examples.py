"""The suites in ``examples/`` validate, and format as DESIGN.md "Formatting rules" says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.formatting import DEFAULT_SYSTEM_PROMPT, ChatMessage, FormattedPrompt
from app.suites.files.resolve import FileSource
from app.suites.loader import SuiteReport, check_suite
from app.suites.model import EvalCase

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SUITES = ["code-review", "customer-support", "agent-transcript"]


def example_source() -> FileSource:
    return FileSource(roots=[EXAMPLES], max_file_bytes=1 << 20, max_request_file_bytes=20 << 20)


async def load_example(name: str) -> SuiteReport:
    report = await check_suite(f"{name}/{name}.yaml", file_source=example_source())
    assert report.valid, report.errors
    return report


def cases_of(report: SuiteReport) -> list[EvalCase]:
    return [formatted.case for formatted in report.cases]


def prompt_of(report: SuiteReport, case_id: str) -> FormattedPrompt:
    return next(case.prompt for case in report.cases if case.case.id == case_id)


def file_block(suite: str, path: str) -> str:
    text = (EXAMPLES / suite / path).read_text()
    return f'<file path="{path}">\n{text.strip()}\n</file>'


def raw_case(suite: str, index: int) -> dict[str, Any]:
    document = yaml.safe_load((EXAMPLES / suite / f"{suite}.yaml").read_text())
    cases: list[dict[str, Any]] = document.get("evalcases") or document.get("tests")
    return cases[index]


@pytest.mark.parametrize("name", SUITES)
async def test_example_suite_validates_without_errors_or_warnings(name: str) -> None:
    report = await check_suite(f"{name}/{name}.yaml", file_source=example_source())
    assert report.errors == []
    assert report.warnings == []
    assert report.valid
    assert len(report.cases) >= 2


@pytest.mark.parametrize("name", SUITES)
async def test_example_suite_validates_as_text_with_inline_files(name: str) -> None:
    folder = EXAMPLES / name
    files = {
        str(path.relative_to(folder)): path.read_text()
        for path in folder.rglob("*")
        if path.is_file() and path.suffix != ".yaml"
    }
    source = FileSource(inline=files, max_file_bytes=1 << 20, max_request_file_bytes=20 << 20)
    report = await check_suite((folder / f"{name}.yaml").read_text(), file_source=source)
    assert report.valid, report.errors


@pytest.mark.parametrize("name", SUITES)
async def test_example_guideline_files_are_exactly_the_instructions_files(name: str) -> None:
    loaded = await load_example(name)
    for case in cases_of(loaded):
        prompt = prompt_of(loaded, case.id)
        instructions = [path for path in prompt.file_paths if path.endswith(".instructions.md")]
        assert list(prompt.guideline_paths) == instructions
        for path in instructions:
            body = loaded.files[path].strip()
            assert body not in prompt.question
            assert f"<Attached: {path}>" in prompt.question


async def test_code_review_multi_turn_with_dot_folder_guideline() -> None:
    loaded = await load_example("code-review")
    prompt = prompt_of(loaded, "session-token-timing-leak")
    system_text = (
        "You are a senior Python reviewer. Lead with defects that matter; keep style "
        "remarks to one line each."
    )
    user_text = "Please review this change to our session handling before I merge it."
    guidelines = (
        file_block("code-review", ".github/copilot.instructions.md")
        + "\n\n"
        + file_block("code-review", "guidelines/security.instructions.md")
    )
    user_turn = f"{user_text}\n<Attached: guidelines/security.instructions.md>\n" + file_block(
        "code-review", "src/auth/session.py"
    )
    assert prompt.role_markers
    assert prompt.question == (
        f"@[System]:\n{system_text}\n<Attached: .github/copilot.instructions.md>\n\n"
        f"@[User]:\n{user_turn}"
    )
    assert prompt.guidelines == guidelines
    assert prompt.guideline_paths == (
        ".github/copilot.instructions.md",
        "guidelines/security.instructions.md",
    )
    assert list(prompt.chat_prompt) == [
        ChatMessage(
            role="system", content=f"[[ ## Guidelines ## ]]\n\n{guidelines}\n\n{system_text}"
        ),
        ChatMessage(role="user", content=user_turn),
    ]


async def test_code_review_single_message_is_flat() -> None:
    loaded = await load_example("code-review")
    prompt = prompt_of(loaded, "invoice-float-rounding")
    text = raw_case("code-review", 1)["input_messages"][0]["content"][1]["value"].strip()
    code = file_block("code-review", "src/billing/invoice.py")
    assert not prompt.role_markers
    assert prompt.question == f"<Attached: .github/copilot.instructions.md>\n\n{text}\n\n{code}"
    guidelines = file_block("code-review", ".github/copilot.instructions.md")
    system = f"{DEFAULT_SYSTEM_PROMPT}\n\n[[ ## Guidelines ## ]]\n\n{guidelines}"
    assert list(prompt.chat_prompt) == [
        ChatMessage(role="system", content=system),
        ChatMessage(
            role="user", content=f"<Attached: .github/copilot.instructions.md>\n{text}\n{code}"
        ),
    ]


async def test_customer_support_mid_conversation_note_joins_the_system_message() -> None:
    loaded = await load_example("customer-support")
    prompt = prompt_of(loaded, "refund-outside-window")
    messages = raw_case("customer-support", 0)["input_messages"]
    persona = messages[0]["content"][0]["value"].strip()
    policy = file_block("customer-support", "policies/refunds.md")
    user_1, assistant, note, user_2 = (m["content"].strip() for m in messages[1:])
    assert prompt.question == (
        f"@[System]:\n{persona}\n{policy}\n\n@[User]:\n{user_1}\n\n"
        f"@[Assistant]:\n{assistant}\n\n@[System]:\n{note}\n\n@[User]:\n{user_2}"
    )
    assert prompt.guidelines == ""
    assert list(prompt.chat_prompt) == [
        ChatMessage(role="system", content=f"{persona}\n{policy}\n\n{note}"),
        ChatMessage(role="user", content=user_1),
        ChatMessage(role="assistant", content=assistant),
        ChatMessage(role="user", content=user_2),
    ]


async def test_agent_transcript_tool_turn_is_pretty_json_and_keeps_its_role() -> None:
    loaded = await load_example("agent-transcript")
    prompt = prompt_of(loaded, "timezone-flaky-test")
    messages = raw_case("agent-transcript", 0)["input"]
    tool_json = json.dumps(messages[3]["content"], indent=2, ensure_ascii=False)
    log = file_block("agent-transcript", "logs/ci-run-4821.log")
    assert prompt.role_markers
    assert f"@[Tool]:\n{tool_json}\n\n@[User]:\n" in prompt.question
    assert f"Here is the log.\n{log}\n\n@[Assistant]:\n" in prompt.question
    roles = [message.role for message in prompt.chat_prompt]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert prompt.chat_prompt[3].content == tool_json


async def test_agent_transcript_reference_answer_from_object_is_pretty_json() -> None:
    loaded = await load_example("agent-transcript")
    case = next(case for case in cases_of(loaded) if case.id == "triage-summary-json")
    expected = raw_case("agent-transcript", 1)["expected_output"]
    assert json.loads(case.reference_answer) == expected
    assert case.reference_answer.startswith('{\n  "failing_test"')


async def test_code_review_judge_prompt_is_read_from_its_file() -> None:
    loaded = await load_example("code-review")
    judge = cases_of(loaded)[0].evaluators[1]
    assert judge.prompt_path == "prompts/review-judge.md"
    assert judge.prompt == (EXAMPLES / "code-review" / "prompts" / "review-judge.md").read_text()


def _is_formatted(prompt: FormattedPrompt) -> bool:
    return bool(prompt.question.strip()) and not prompt.missing_files


@pytest.mark.parametrize("name", SUITES)
async def test_every_example_case_formats_with_all_files_present(name: str) -> None:
    loaded = await load_example(name)
    assert all(_is_formatted(prompt_of(loaded, case.id)) for case in cases_of(loaded))


NEW_DIALECTS = {"support-triage": "agentv-2026", "release-notes": "prompts-providers-vars"}


@pytest.mark.parametrize(("name", "dialect"), NEW_DIALECTS.items())
async def test_new_dialect_examples_validate_cleanly(name: str, dialect: str) -> None:
    report = await check_suite(f"{name}/{name}.yaml", file_source=example_source())
    assert (report.errors, report.warnings, report.dialect) == ([], [], dialect)
    assert all(_is_formatted(case.prompt) for case in report.cases)


async def test_support_triage_reads_every_2026_construct() -> None:
    loaded = await load_example("support-triage")
    outage, invoice, locked = cases_of(loaded)
    assert loaded.suite is not None
    assert loaded.suite.guideline_patterns == ("**/*.policy.md", "**/*.instructions.md")
    assert prompt_of(loaded, "outage-is-p1").guideline_paths == ("policies/routing.policy.md",)
    assert outage.input_messages[1].content == (
        "Ada at Fabrikam here: nothing has loaded since 09:00, in every region, for all users."
    )
    assert [g.name for g in outage.evaluators] == ["contains", "regex", "rubrics", "valid_json"]
    assert invoice.evaluators[1].prompt is not None
    assert "{{ candidate_answer }}" in invoice.evaluators[1].prompt
    assert locked.expected_messages[0].content is None
    assert [child.weight for child in locked.evaluators[0].evaluators] == [2.0, 1.0]


async def test_release_notes_reads_prompts_vars_and_a_csv_of_tests() -> None:
    loaded = await load_example("release-notes")
    assert [case.id for case in cases_of(loaded)] == [
        "breaking-api-change",
        "security-fix",
        "small-fixes",
    ]
    security = cases_of(loaded)[1]
    assert security.input_messages[0].content == (
        "You write release announcements for administrators. Lead with anything readers must "
        "act on. Three sentences at most."
    )
    assert [g.name for g in security.evaluators] == ["not-contains", "contains"]  # defaults first
