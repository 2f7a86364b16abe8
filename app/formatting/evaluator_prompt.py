"""The evaluator (judge) prompt: a ``{{ variable }}`` template filled with one case's values."""

from __future__ import annotations

import re
from collections.abc import Mapping

DEFAULT_EVALUATOR_TEMPLATE = """\
You are an impartial grader. Decide how well the candidate_answer achieves the \
expected_outcome of the task described in the question.

If a reference_answer is given, use it as an example of a strong answer: the \
candidate_answer need not match it word for word, but should cover its key points in the \
same spirit.

Judge only what the candidate_answer says. Keep your feedback short and specific.

[[ ## expected_outcome ## ]]
{{expected_outcome}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## candidate_answer ## ]]
{{candidate_answer}}
"""
"""The default judge user prompt. Placeholders: ``expected_outcome``, ``question``,
``reference_answer``, ``candidate_answer`` (``input_messages``, ``expected_messages``,
``tool_calls``, ``metadata``, ``file_changes`` and ``workspace_path`` are available to custom
templates)."""

TOOL_CALLS_SECTION = "\n[[ ## tool_calls ## ]]\n{{tool_calls}}\n"
"""Added to the default prompt when the candidate reported tool calls."""

FILE_CHANGES_SECTION = "\n[[ ## file_changes ## ]]\n{{file_changes}}\n"
"""Added to the default prompt when the candidate changed files in its workspace."""

EVALUATOR_VARIABLES: tuple[str, ...] = (
    "question",
    "expected_outcome",
    "reference_answer",
    "candidate_answer",
    "input_messages",
    "expected_messages",
    "tool_calls",
    "metadata",
    "file_changes",
    "workspace_path",
)

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION_MARKER = re.compile(r"\[\[(\s*##[^\n]*?##\s*)\]\]")


def neutralise_section_markers(value: str) -> str:
    """Break ``[[ ## name ## ]]`` markers inside a value so it cannot open a prompt section."""
    return _SECTION_MARKER.sub(r"[ [\1] ]", value)


def render_evaluator_prompt(template: str, variables: Mapping[str, str]) -> str:
    """Fill ``{{ name }}`` placeholders in one pass; unknown names are left as written.

    ``question`` is inserted verbatim: the judge must see exactly what the candidate saw.
    Every other value is trimmed and has its section markers neutralised, so that (for
    example) a candidate answer cannot forge an ``[[ ## expected_outcome ## ]]`` section.
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        value = variables.get(name)
        if value is None:
            return match.group(0)
        if name == "question":
            return value
        return neutralise_section_markers(value.strip())

    return _PLACEHOLDER.sub(substitute, template)
