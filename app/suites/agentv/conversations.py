"""A live conversation of an AgentV 2026 case: ``mode: conversation`` and its ``turns``.

Each turn gives what the user says (``input``: a string, a message or a list of messages),
the turn's graders (``assertions``/``assert``: strings are rubrics, as on a case) and
optionally its expected answer (``expected_output``/``expected_messages``). The case's own
graders then grade the conversation as a whole. ``aggregation`` (``mean``, ``min``,
``max``) and ``on_turn_failure`` (``continue``, ``stop``) say how the turns make one result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from app.evaluators.config import DEFAULT_EVALUATOR, EvaluatorConfig
from app.suites.case_fields import picked_expected, read_messages, reference_answer
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick, warn_unknown_keys
from app.suites.graders.context import grader_context
from app.suites.graders.lists import read_grader_list
from app.suites.model import Conversation, ConversationTurn, OnTurnFailure, TurnAggregation
from app.suites.reading import CaseOrigin, Renderer, add_reference

CONVERSATION_KEYS = ("mode", "turns", "aggregation", "on_turn_failure")
TURN_INPUT_KEYS = ("input", "input_messages")
TURN_EXPECTED_KEYS = ("expected_output", "expected_messages")
TURN_GRADER_KEYS = ("assertions", "assert")
TURN_KEYS = frozenset({*TURN_INPUT_KEYS, *TURN_EXPECTED_KEYS, *TURN_GRADER_KEYS})


def is_conversation(raw: Mapping[str, Any]) -> bool:
    """Whether a case declares a live conversation (any of its keys)."""
    return any(key in raw for key in CONVERSATION_KEYS)


def read_conversation(
    raw: Mapping[str, Any],
    path: DocumentPath,
    origin: CaseOrigin,
    render: Renderer,
    findings: Findings,
    *,
    templates: bool,
    has_criteria: bool,
) -> Conversation | None:
    """The case's conversation; None when it has errors (every one recorded).

    Args:
        raw: The case as written (it declares one of ``CONVERSATION_KEYS``).
        path: Where the case is.
        origin: The case's variables and the files and prompt files it references.
        render: Renders the case's templates.
        findings: Where errors and warnings go.
        templates: A 2026 file: grader strings are rubrics and judge prompts templates.
        has_criteria: The case gives criteria (a turn without graders is judged by them).
    """
    before = len(findings.errors)
    mode = raw.get("mode")
    if mode != "conversation":
        findings.error(
            (*path, "mode"),
            f"must be 'conversation' (the one mode there is), not {mode!r}"
            if "mode" in raw
            else "is required: 'mode: conversation' declares a live conversation",
        )
    aggregation = _choice(raw, "aggregation", get_args(TurnAggregation), path, findings)
    on_failure = _choice(raw, "on_turn_failure", get_args(OnTurnFailure), path, findings)
    turns_raw = raw.get("turns")
    if not isinstance(turns_raw, list) or not turns_raw:
        findings.error(
            (*path, "turns"),
            f"must be a non-empty list of turns, not {describe(turns_raw)}"
            if "turns" in raw
            else "is required: the user turns of the conversation",
        )
        return None
    turns = [
        _turn(item, (*path, "turns", index), origin, render, findings, templates, has_criteria)
        for index, item in enumerate(turns_raw)
    ]
    if len(findings.errors) > before:
        return None
    return Conversation(
        turns=tuple(turn for turn in turns if turn is not None),
        aggregation=aggregation or "mean",
        on_turn_failure=on_failure or "continue",
    )


def _choice(
    raw: Mapping[str, Any],
    key: str,
    allowed: tuple[str, ...],
    path: DocumentPath,
    findings: Findings,
) -> Any:
    value = raw.get(key)
    if key in raw and value not in allowed:
        names = ", ".join(repr(name) for name in allowed)
        findings.error((*path, key), f"must be one of {names}, not {value!r}")
        return None
    return value


def _turn(
    raw: Any,
    path: DocumentPath,
    origin: CaseOrigin,
    render: Renderer,
    findings: Findings,
    templates: bool,
    has_criteria: bool,
) -> ConversationTurn | None:
    if isinstance(raw, str):
        raw = {"input": raw}
    if not isinstance(raw, dict):
        findings.error(path, f"a turn must be a mapping with 'input', not {describe(raw)}")
        return None
    warn_unknown_keys(raw, TURN_KEYS, path, findings)
    key, value = pick(raw, TURN_INPUT_KEYS, path, findings)
    if isinstance(value, dict) and "role" in value:
        value = [value]
    if value is MISSING or value is None:
        findings.error((*path, key), "is required: what the user says on this turn")
        return None
    messages = read_messages(value, (*path, key), findings, origin.files, render)
    if not messages:
        findings.error((*path, key), "must give at least one message")
        return None
    expected = picked_expected(raw, TURN_EXPECTED_KEYS, path, findings, origin.files, render)
    grader_key, graders_raw = pick(raw, TURN_GRADER_KEYS, path, findings)
    graders: tuple[EvaluatorConfig, ...] = (DEFAULT_EVALUATOR,)
    if graders_raw is not MISSING and graders_raw is not None:
        context = grader_context(findings, origin.variables, templates=templates)
        graders = read_grader_list(graders_raw, (*path, grader_key), context) or graders
        for file_path, places in context.prompts.items():
            for place in places:
                add_reference(origin.prompts, file_path, place)
    elif not has_criteria:
        findings.error(
            (*path, grader_key),
            "is required: the case gives no 'criteria' to judge this turn by",
        )
        return None
    return ConversationTurn(
        input_messages=messages,
        expected_messages=expected,
        reference_answer=reference_answer(expected, {}),
        evaluators=graders,
    )
