"""After files are read: judge prompts from their files, reference answers with file parts.

Judge prompt files of AgentV 2026 and prompts/providers/vars suites are templates, rendered
for each case with its variables (the judge's own names kept for the run); AgentV 2025
prompt files are used as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.evaluators.config import AggregatorConfig, EvaluatorConfig
from app.formatting.messages import Message, TextPart
from app.suites.case_fields import reference_answer
from app.suites.documents.findings import Findings
from app.suites.graders.context import judge_prompt_renderer
from app.suites.graders.kinds import BLIND_JUDGE_WARNING, shows_candidate_answer
from app.suites.model import Conversation, EvalCase, EvalSuite
from app.suites.reading import CaseOrigin, Renderer

_ROLE_MARKER = re.compile(r"@\[(system|user|assistant|tool)\]:", re.IGNORECASE)


class _PromptFiller:
    """Fills one case's judge prompts from the files read, rendering them if they are templates."""

    def __init__(
        self, origin: CaseOrigin, files: Mapping[str, str], findings: Findings, templates: bool
    ) -> None:
        self._origin = origin
        self._files = files
        self._findings = findings
        self._render: Renderer = judge_prompt_renderer(
            origin.variables, findings, templates=templates
        )
        self._templates = templates

    def prompt(self, path: str | None, current: str | None, judge: bool) -> str | None:
        if path is None or current is not None:
            return current
        text = self._files.get(path)
        places = self._origin.prompts.get(path, [self._origin.path])
        if text is None:
            return None
        rendered = self._render.text(text, places[0])
        if judge and not shows_candidate_answer(rendered):
            for where in places:
                self._findings.warn(where, BLIND_JUDGE_WARNING)
        return rendered

    def grader(self, grader: EvaluatorConfig) -> EvaluatorConfig:
        updates: dict[str, Any] = {}
        prompt = self.prompt(grader.prompt_path, grader.prompt, grader.type == "llm_judge")
        if prompt != grader.prompt:
            updates["prompt"] = prompt
        if grader.evaluators:
            updates["evaluators"] = tuple(self.grader(child) for child in grader.evaluators)
        if grader.aggregator is not None:
            updates["aggregator"] = self.aggregator(grader.aggregator)
        return grader.model_copy(update=updates) if updates else grader

    def aggregator(self, aggregator: AggregatorConfig) -> AggregatorConfig:
        prompt = self.prompt(aggregator.prompt_path, aggregator.prompt, judge=False)
        return (
            aggregator
            if prompt == aggregator.prompt
            else aggregator.model_copy(update={"prompt": prompt})
        )


def fill_from_files(
    suite: EvalSuite,
    cases: Sequence[EvalCase],
    origins: Mapping[str, CaseOrigin],
    files: Mapping[str, str],
    findings: Findings,
    *,
    templates: bool,
) -> EvalSuite:
    """The suite with only ``cases``, filled in from the files read.

    Judge prompts are read from their files; reference answers show the files their
    expected messages attach.
    """
    filled: list[EvalCase] = []
    for case in cases:
        filler = _PromptFiller(origins[case.id], files, findings, templates)
        case = case.with_graders(filler.grader)
        if case.expected_messages:
            answer = reference_answer(case.expected_messages, files)
            if answer != case.reference_answer:
                case = case.model_copy(update={"reference_answer": answer})
        if case.conversation is not None:
            case = _fill_turn_answers(case, case.conversation, files)
        filled.append(case)
    return suite.model_copy(update={"cases": tuple(filled)})


def _fill_turn_answers(
    case: EvalCase, conversation: Conversation, files: Mapping[str, str]
) -> EvalCase:
    """The case with its turns' reference answers showing the files they attach."""
    turns = tuple(
        turn.model_copy(update={"reference_answer": answer})
        if turn.expected_messages
        and (answer := reference_answer(turn.expected_messages, files)) != turn.reference_answer
        else turn
        for turn in conversation.turns
    )
    if all(a is b for a, b in zip(turns, conversation.turns, strict=True)):
        return case
    update = {"conversation": conversation.model_copy(update={"turns": turns})}
    return case.model_copy(update=update)


def role_marker_warnings(messages: Sequence[Message]) -> list[str]:
    """Warnings for text that looks like a role marker (it could fake a turn)."""
    warnings: list[str] = []
    for index, message in enumerate(messages):
        texts: list[str] = []
        if isinstance(message.content, str):
            texts.append(message.content)
        elif isinstance(message.content, list):
            texts.extend(
                part if isinstance(part, str) else part.value
                for part in message.content
                if isinstance(part, str | TextPart)
            )
        for text in texts:
            found = _ROLE_MARKER.search(text)
            if found:
                warnings.append(
                    f"message {index} contains the role marker {found.group(0)!r}, which may "
                    "be read as a turn of its own"
                )
                break
    return warnings
