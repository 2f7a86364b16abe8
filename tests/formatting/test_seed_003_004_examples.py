"""Seeds 003/004: the formatting examples, and the decision to keep markers for evaluators."""

from __future__ import annotations

from app.formatting import DEFAULT_EVALUATOR_TEMPLATE, render_evaluator_prompt
from tests.formatting.builders import file, fmt, msg

MULTI_TURN = [
    msg("system", "You are a debugging expert."),
    msg("user", "I have a bug in my code."),
    msg("assistant", "Can you share the code?"),
    msg("user", "Here it is: [code snippet]"),
]


def test_single_turn_example_is_marked_per_design_superseding_flat_example() -> None:
    """Seeds 003/004 show this flat; DESIGN.md follows seed 000 and marks both turns."""
    result = fmt([msg("system", "You are a helpful assistant."), msg("user", "What is 2+2?")])
    assert result.question == "@[System]:\nYou are a helpful assistant.\n\n@[User]:\nWhat is 2+2?"


def test_system_file_attachment_example_moves_file_to_guidelines() -> None:
    """Guidelines use DESIGN.md's `<file path>` blocks (the seeds' `=== path ===` is older)."""
    result = fmt(
        [
            msg("system", [file("coding-guidelines.instructions.md")]),
            msg("user", "Please review this code."),
        ],
        {"coding-guidelines.instructions.md": "[file content]"},
    )
    assert result.question == (
        "<Attached: coding-guidelines.instructions.md>\n\nPlease review this code."
    )
    assert result.guidelines == (
        '<file path="coding-guidelines.instructions.md">\n[file content]\n</file>'
    )


def test_multi_turn_example_matches_seed_text_in_bracket_style() -> None:
    result = fmt(MULTI_TURN, marker_style="bracket")
    assert result.question == (
        "[System]:\nYou are a debugging expert.\n\n"
        "[User]:\nI have a bug in my code.\n\n"
        "[Assistant]:\nCan you share the code?\n\n"
        "[User]:\nHere it is: [code snippet]"
    )


def test_multi_turn_example_uses_at_markers_by_default() -> None:
    result = fmt(MULTI_TURN)
    assert result.question.startswith("@[System]:\nYou are a debugging expert.\n\n@[User]:")


def test_evaluator_prompt_preserves_role_markers_of_candidate_question() -> None:
    result = fmt(MULTI_TURN)
    prompt = render_evaluator_prompt(
        DEFAULT_EVALUATOR_TEMPLATE,
        {"question": result.question, "expected_outcome": "Finds the bug", "candidate_answer": "x"},
    )
    assert f"[[ ## question ## ]]\n{result.question}\n\n[[ ## reference_answer ## ]]" in prompt
