"""Property tests over random conversations (hypothesis)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.formatting import (
    DEFAULT_EVALUATOR_TEMPLATE,
    FormatOptions,
    Message,
    format_prompt,
    render_evaluator_prompt,
)

ROLES = ("system", "user", "assistant", "tool")
WORDS = st.text(alphabet="abcdefghij XYZ\n[]#@:", min_size=0, max_size=12)


@st.composite
def conversations(draw):
    """Messages whose every text and file carries a unique token, plus the file texts."""
    count = draw(st.integers(1, 6))
    messages, files, guideline_files, tokens = [], {}, set(), []
    serial = 0
    for _ in range(count):
        role = draw(st.sampled_from(ROLES))
        parts = []
        for _ in range(draw(st.integers(0, 3))):
            serial += 1
            kind = draw(st.sampled_from(("text", "file", "guideline", "blank")))
            token = f"TOKEN{serial:03d}Q"
            if kind == "text":
                parts.append({"type": "text", "value": f"{draw(WORDS)} {token} {draw(WORDS)}"})
                tokens.append(token)
            elif kind == "blank":
                parts.append({"type": "text", "value": draw(st.sampled_from(("", " ", "\n")))})
            else:
                suffix = ".instructions.md" if kind == "guideline" else ".txt"
                path = draw(st.sampled_from(("", "docs/", ".github/"))) + f"f{serial}{suffix}"
                files[path] = f"{draw(WORDS)} {token}\n"
                parts.append({"type": "file", "value": path})
                if kind == "guideline":
                    guideline_files.add(token)
                else:
                    tokens.append(token)
        messages.append(Message.model_validate({"role": role, "content": parts or draw(WORDS)}))
    mode = draw(st.sampled_from(("lm", "agent")))
    return messages, files, guideline_files, tokens, mode


def visible_count(messages, files, mode) -> int:
    count = 0
    for message in messages:
        content = message.content
        items = [content] if isinstance(content, str) else content
        shown = False
        for item in items:
            if isinstance(item, str):
                shown |= bool(item.strip())
            elif item.type == "text":
                shown |= bool(item.value.strip())
            elif not item.value.endswith(".instructions.md"):
                shown |= mode == "agent" or bool(files[item.value].strip())
        count += shown
    return count


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_turn_order_is_preserved(case) -> None:
    messages, files, _, tokens, mode = case
    question = format_prompt(messages, files, FormatOptions(mode=mode)).question
    if mode == "agent":
        tokens = [t for t in tokens if t in question]
    positions = [question.index(token) for token in tokens]
    assert positions == sorted(positions)


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_markers_appear_iff_the_decision_rule_says_so(case) -> None:
    messages, files, _, _, mode = case
    result = format_prompt(messages, files, FormatOptions(mode=mode))
    expected = any(m.role in ("assistant", "tool") for m in messages) or (
        visible_count(messages, files, mode) > 1
    )
    assert result.role_markers is expected
    has_marker_line = bool(
        re.search(r"^@\[(System|User|Assistant|Tool)\]:$", result.question, re.M)
    )
    assert has_marker_line is (expected and bool(result.question))


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_guideline_content_never_appears_in_question(case) -> None:
    messages, files, guideline_tokens, _, mode = case
    result = format_prompt(messages, files, FormatOptions(mode=mode))
    for token in guideline_tokens:
        assert token not in result.question
        assert token in result.guidelines


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_every_file_content_appears_exactly_once_in_chat_prompt(case) -> None:
    messages, files, _, _, _ = case
    result = format_prompt(messages, files, FormatOptions(mode="lm"))
    everything = "\n".join(m.content for m in result.chat_prompt)
    for text in files.values():
        token = text.split()[-1]
        assert everything.count(token) == 1


@settings(max_examples=300, deadline=None)
@given(conversations(), st.text(max_size=200))
def test_evaluator_question_section_equals_question_byte_for_byte(case, answer) -> None:
    messages, files, _, _, mode = case
    question = format_prompt(messages, files, FormatOptions(mode=mode)).question
    prompt = render_evaluator_prompt(
        DEFAULT_EVALUATOR_TEMPLATE,
        {
            "question": question,
            "expected_outcome": "E",
            "reference_answer": "",
            "candidate_answer": answer,
        },
    )
    head = "[[ ## question ## ]]\n"
    start = prompt.index(head) + len(head)
    end = prompt.index("\n\n[[ ## reference_answer ## ]]", start)
    assert prompt[start:end] == question
