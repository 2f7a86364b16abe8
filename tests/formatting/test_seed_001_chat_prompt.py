"""Seed 001 (structured message delivery): chatPrompt construction and its edge cases."""

from __future__ import annotations

from app.formatting import ChatMessage
from tests.formatting.builders import file, fmt, msg, text

FILES = {"style.instructions.md": "Use 2 spaces.\n", "data.csv": "a,b\n1,2\n"}
GUIDELINE_BLOCK = (
    '[[ ## Guidelines ## ]]\n\n<file path="style.instructions.md">\nUse 2 spaces.\n</file>'
)


def chat(result) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in result.chat_prompt]


def test_system_message_orders_system_prompt_then_guidelines_then_system_turns() -> None:
    result = fmt(
        [
            msg("system", [text("You review code."), file("style.instructions.md")]),
            msg("user", "Go"),
        ],
        FILES,
        system_prompt="  Be careful.  ",
    )
    assert chat(result)[0] == ("system", f"Be careful.\n\n{GUIDELINE_BLOCK}\n\nYou review code.")


def test_multiple_system_messages_merge_into_one_at_the_start_wherever_they_stood() -> None:
    result = fmt(
        [
            msg("user", "Start task"),
            msg("system", "Tool failed with error 500"),
            msg("user", "Retry"),
        ]
    )
    assert chat(result) == [
        ("system", "Tool failed with error 500"),
        ("user", "Start task"),
        ("user", "Retry"),
    ]
    assert result.question == (
        "@[User]:\nStart task\n\n@[System]:\nTool failed with error 500\n\n@[User]:\nRetry"
    )


def test_guideline_reference_stays_as_attached_marker_in_user_turn() -> None:
    result = fmt([msg("user", [text("Review this code"), file("style.instructions.md")])], FILES)
    assert chat(result) == [
        ("system", GUIDELINE_BLOCK),
        ("user", "Review this code\n<Attached: style.instructions.md>"),
    ]


def test_non_guideline_files_stay_inline_in_their_turn() -> None:
    result = fmt([msg("user", [text("Sum it"), file("data.csv")]), msg("assistant", "3")], FILES)
    assert chat(result)[0] == ("user", 'Sum it\n<file path="data.csv">\na,b\n1,2\n</file>')


def test_empty_messages_are_skipped() -> None:
    result = fmt(
        [msg("system", "  "), msg("user", [file("style.instructions.md")]), msg("user", "Hi")],
        FILES,
    )
    assert chat(result) == [("system", GUIDELINE_BLOCK), ("user", "Hi")]


def test_no_guideline_patterns_embeds_every_file_inline() -> None:
    result = fmt(
        [msg("user", [file("style.instructions.md"), text("Go")])], FILES, guideline_patterns=()
    )
    assert result.guidelines == ""
    assert chat(result) == [
        ("user", '<file path="style.instructions.md">\nUse 2 spaces.\n</file>\nGo')
    ]


def test_assistant_and_tool_turns_keep_their_roles() -> None:
    result = fmt(
        [msg("user", "Weather?"), msg("assistant", "Calling tool"), msg("tool", {"temp": 21})]
    )
    assert chat(result) == [
        ("user", "Weather?"),
        ("assistant", "Calling tool"),
        ("tool", '{\n  "temp": 21\n}'),
    ]


def test_mixed_content_in_one_message_is_joined_with_newlines() -> None:
    result = fmt([msg("user", ["plain part", text("typed part"), file("data.csv")])], FILES)
    assert result.chat_prompt == (
        ChatMessage(
            role="user", content='plain part\ntyped part\n<file path="data.csv">\na,b\n1,2\n</file>'
        ),
    )


def test_chat_prompt_exists_for_single_turn_cases() -> None:
    result = fmt([msg("user", "What is 2+2?")])
    assert chat(result) == [("user", "What is 2+2?")]
    assert result.role_markers is False
