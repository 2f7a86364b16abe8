"""promptfoo's model-graded family, each a judge question with promptfoo's meaning.

The prompts are this service's own; what each grader measures, and how its score passes,
follow promptfoo 0.123.1 (measured on one fake LLM, ``tests/conformance/promptfoo/
model_graded.yaml``):

- ``model-graded-closedqa``: does the answer meet the criterion (``value``)? 1 or 0.
- ``factuality``: does the answer agree with the reference (``value``): a subset, a superset,
  the same facts, or differing only where it does not matter? A contradiction fails. 1 or 0.
- ``g-eval``: how fully the answer meets the criterion, 0 to 1; passes from 0.7.
- ``context-faithfulness``: the share of the answer's claims the context supports.
- ``context-recall``: the share of the reference's (``value``) facts the context supports.
- ``context-relevance``: the share of the context needed to answer the query.
- ``answer-relevance``: how relevant the answer is to the query (promptfoo measures it with
  embeddings of questions a judge writes; here the judge says it directly).
- ``conversation-relevance``: the share of the assistant's turns (``vars._conversation``,
  then the answer) relevant to what came before them.

The scored ones pass from their ``threshold``, else 0.5 (0.7 for ``g-eval``); their ``not-``
form passes below it, as promptfoo's does (``not-llm-rubric`` is the judge's, negated). The
``not-`` forms of ``model-graded-closedqa`` and ``factuality`` are refused: promptfoo grades
them as the plain forms. ``context`` is ``vars.context`` (or what the grader's
``contextTransform``, inline JavaScript over ``output`` and ``context``, makes of the
answer), ``query`` is ``vars.query``, else the prompt; ``config.windowSize`` of
``conversation-relevance`` bounds the turns each one is judged against. The checked ones
are a checklist item for the judge, the scored ones a question its score answers; both go
to the grader's judge target (``provider``, ``options.provider``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, Evaluator, EvaluatorOutcome
from app.evaluators.code.javascript import call_source, script_context
from app.evaluators.code.js_engine import JsError, run_in_thread, run_script
from app.evaluators.config import EvaluatorConfig, RubricItem

NEGATION_IGNORED = frozenset({"model_graded_closedqa", "factuality"})
"""Kinds whose ``not-`` form promptfoo grades as the plain one (measured): refused here."""
SCORED_MARKS = {"g_eval": 0.7}
"""promptfoo's pass marks of the scored graders that are not 0.5 (measured)."""
DEFAULT_MARK = 0.5

Question = Callable[["Inputs"], str]


@dataclass(frozen=True)
class Inputs:
    """What a question may name: the grader's value, the query, the context, the answer."""

    value: str
    query: str
    context: str | None
    conversation: str
    window: int | None = None


def _safe(text: str) -> str:
    """User text in a judge criterion (never a placeholder of the judge's template)."""
    return text.replace("{{", "{ {").replace("}}", "} }")


def _needs_context(inputs: Inputs, kind: str) -> str:
    if inputs.context is None:
        raise EvaluatorConfigError(
            f"{kind} needs the retrieved context: give vars.context or a contextTransform"
        )
    return _safe(inputs.context)


def _closedqa(inputs: Inputs) -> str:
    return _safe(inputs.value)


def _factuality(inputs: Inputs) -> str:
    return (
        "The answer agrees in its facts with this expert answer: it may give fewer or more "
        "facts, the same ones, or differ only in details that do not matter for the facts, "
        f"but it contradicts none of them. Expert answer: {_safe(inputs.value)}"
    )


def _g_eval(inputs: Inputs) -> str:
    return (
        "Score from 0 to 1 how fully and clearly the answer meets this criterion (1: fully "
        f"and clearly, 0: not at all): {_safe(inputs.value)}"
    )


def _faithfulness(inputs: Inputs) -> str:
    context = _needs_context(inputs, "context-faithfulness")
    return (
        "Split the answer into its factual claims; the score is the share of them (0 to 1) "
        f"that this context supports. Query: {_safe(inputs.query)}\nContext: {context}"
    )


def _recall(inputs: Inputs) -> str:
    context = _needs_context(inputs, "context-recall")
    return (
        "Grade the context, not the answer: the score is the share (0 to 1) of the sentences "
        f"of this reference that the context supports. Reference: {_safe(inputs.value)}\n"
        f"Context: {context}"
    )


def _relevance(inputs: Inputs) -> str:
    context = _needs_context(inputs, "context-relevance")
    return (
        "Grade the context, not the answer: the score is the share (0 to 1) of the context's "
        f"sentences needed to answer the query. Query: {_safe(inputs.query)}\n"
        f"Context: {context}"
    )


def _answer_relevance(inputs: Inputs) -> str:
    return (
        "Score from 0 to 1 how relevant the answer is to the query: 1 when it answers what "
        "is asked, lower for vague, evasive or off-topic content, 0 when it is unrelated. "
        f"Query: {_safe(inputs.query)}"
    )


def _conversation(inputs: Inputs) -> str:
    return (
        "Grade the conversation below, whose last assistant turn is the answer: the score is "
        "the share (0 to 1) of the assistant's turns that are relevant to what the user said "
        "before them (a vague reply to a vague message, such as a greeting, is relevant). "
        + (
            f"Judge each assistant turn against at most the {inputs.window} turns before it. "
            if inputs.window
            else ""
        )
        + f"Conversation: {_safe(inputs.conversation)}"
    )


@dataclass(frozen=True)
class Kind:
    """One grader of the family: its question, and whether the judge scores it."""

    question: Question
    scored: bool


KINDS: Mapping[str, Kind] = {
    "model_graded_closedqa": Kind(_closedqa, scored=False),
    "factuality": Kind(_factuality, scored=False),
    "g_eval": Kind(_g_eval, scored=True),
    "context_faithfulness": Kind(_faithfulness, scored=True),
    "context_recall": Kind(_recall, scored=True),
    "context_relevance": Kind(_relevance, scored=True),
    "answer_relevance": Kind(_answer_relevance, scored=True),
    "conversation_relevance": Kind(_conversation, scored=True),
}


SCORED = frozenset(name for name, kind in KINDS.items() if kind.scored)


def pass_mark(kind: str) -> float | None:
    """A scored kind's pass mark when the grader gives no ``threshold`` (None: checked)."""
    return SCORED_MARKS.get(kind, DEFAULT_MARK) if KINDS[kind].scored else None


class ModelGradedEvaluator:
    """Asks the judge (``judge``, the ``llm_judge`` evaluator) the kind's question."""

    def __init__(self, judge: Evaluator) -> None:
        self.judge = judge

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The judge's verdict, reported under the grader's own name and type."""
        kind = KINDS[config.type]
        inputs = await _inputs(config, context)
        question = kind.question(inputs)
        if kind.scored:
            asked = config.model_copy(update={"type": "llm_judge", "prompt": question})
        else:
            item = RubricItem(id=config.type, description=question, required=True)
            asked = config.model_copy(update={"type": "llm_judge", "rubrics": (item,)})
        outcome = await self.judge.evaluate(asked, context)
        return replace(outcome, result=outcome.result.model_copy(update={"type": config.type}))


async def _inputs(config: EvaluatorConfig, context: EvaluationContext) -> Inputs:
    extra = config.model_extra or {}
    variables: Mapping[str, Any] = extra.get("test_vars") or {}
    query = variables.get("query")
    found = variables.get("context")
    transform = extra.get("contextTransform")
    if isinstance(transform, str) and transform.strip():
        found = await _context_of(transform, config, context)
    conversation = [
        {"user": turn.get("input"), "assistant": turn.get("output")}
        for turn in variables.get("_conversation") or []
        if isinstance(turn, dict)
    ]
    conversation.append({"user": context.question, "assistant": context.candidate_answer})
    return Inputs(
        window=_window(extra.get("config")),
        value=config.value if isinstance(config.value, str) else _text(config.value),
        query=_text(query) if query is not None else context.question,
        context=None if found is None else _text(found),
        conversation=json.dumps(conversation, ensure_ascii=False, indent=1),
    )


def _window(config: Any) -> int | None:
    """``config.windowSize`` of ``conversation-relevance`` (its only configuration)."""
    if config is None:
        return None
    size = config.get("windowSize") if isinstance(config, dict) else None
    if not isinstance(config, dict) or set(config) != {"windowSize"}:
        raise EvaluatorConfigError(f"config: only windowSize is read, not {config!r}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise EvaluatorConfigError(f"config.windowSize must be a whole number from 1, not {size!r}")
    return size


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


async def _context_of(transform: str, config: EvaluatorConfig, context: EvaluationContext) -> Any:
    """What a ``contextTransform`` makes of the answer (``context.metadata`` is empty here)."""
    variables = {**script_context(config, context), "metadata": {}}
    source = call_source(transform, {"output": context.candidate_answer, "context": variables})
    try:
        result = await run_in_thread(run_script, source)
    except JsError as exc:
        raise EvaluatorConfigError(f"the contextTransform failed: {exc}") from None
    return result.get("value") if isinstance(result, dict) else None
