"""``label_model`` and ``score_model``: a judge target asked with the grader's own messages.

The messages are rendered over ``item`` and ``sample`` (by the caller, in a CPU process
under the case's CPU budget: a template may take up to its time limit); the reply is asked
for as JSON (``{"label"}`` from the grader's labels, or ``{"result"}`` in its range) through
the target's structured-output negotiation, and parsed by the judge machinery's JSON reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from app.evaluation.openai_graders.checks import Graded
from app.evaluation.openai_graders.models import (
    GraderMessage,
    LabelModelGrader,
    SamplingParams,
    ScoreModelGrader,
)
from app.evaluation.openai_graders.scope import GraderProblem, render_text
from app.evaluators.base import JudgeClient
from app.evaluators.judges.judge_output import Unscored, parse_json_reply
from app.formatting.messages import ChatMessage
from app.providers.base import CallRole, ModelOptions, ProviderRequest, ProviderResponse
from app.providers.errors import ProviderError

ReplyT = TypeVar("ReplyT", bound=BaseModel)


class LabelReply(BaseModel):
    """A label model's reply."""

    label: str


class ScoreReply(BaseModel):
    """A score model's reply."""

    result: float


def render_messages(
    name: str, messages: Sequence[GraderMessage], scope: Mapping[str, Any]
) -> tuple[ChatMessage, ...]:
    """The grader's messages rendered; ``developer`` is sent as ``system``."""
    rendered = []
    for index, message in enumerate(messages):
        where = f"{name}.input[{index}]"
        text = "\n".join(render_text(t, scope, where) for t in message.texts())
        role = "system" if message.role == "developer" else message.role
        rendered.append(ChatMessage(role=role, content=text))
    return tuple(rendered)


async def _ask(
    judge: JudgeClient,
    chat: tuple[ChatMessage, ...],
    schema: dict[str, Any],
    params: SamplingParams | None,
    case_id: str,
    attempt: int,
) -> ProviderResponse:
    options = ModelOptions(
        json_schema=schema,
        json_schema_name="grade",
        temperature=params.temperature if params else None,
        max_output_tokens=params.max_completions_tokens if params else None,
    )
    request = ProviderRequest(
        question="\n\n".join(m.content for m in chat if m.role != "system"),
        chat_prompt=chat,
        role=CallRole.JUDGE,
        options=options,
        case_id=case_id,
        attempt=attempt,
    )
    try:
        return await judge.complete(request)
    except ProviderError as exc:
        raise GraderProblem(
            f"the grader's model {judge.name!r} failed: {exc.detail}", judge=True
        ) from None


def _sample(chat: tuple[ChatMessage, ...], reply: ProviderResponse | None) -> dict[str, Any]:
    usage = reply.usage if reply else None
    prompt = (usage.input_tokens or 0) if usage else 0
    completion = (usage.output_tokens or 0) if usage else 0
    return {
        "input": [m.model_dump() for m in chat],
        "output": [{"role": "assistant", "content": reply.text if reply else ""}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


async def _graded_reply(
    judge: JudgeClient,
    chat: tuple[ChatMessage, ...],
    schema: dict[str, Any],
    reply_model: type[ReplyT],
    params: SamplingParams | None,
    case_id: str,
    attempts: int,
) -> tuple[ReplyT, dict[str, Any]]:
    reply: ProviderResponse | None = None
    reason = "the model was not asked"
    for attempt in range(max(1, attempts)):
        reply = await _ask(judge, chat, schema, params, case_id, attempt)
        parsed = parse_json_reply(reply.text, reply_model)
        if not isinstance(parsed, Unscored):
            return parsed, _sample(chat, reply)
        reason = parsed.reason
    raise GraderProblem(f"the grader's model gave no usable reply: {reason}", judge=True)


async def label_model(
    grader: LabelModelGrader,
    chat: tuple[ChatMessage, ...],
    judge: JudgeClient,
    case_id: str,
    attempts: int,
) -> Graded:
    """1 when the model's label is a passing label, else 0 (``chat``: its messages rendered)."""
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": list(grader.labels)}},
        "required": ["label"],
        "additionalProperties": False,
    }
    reply, sample = await _graded_reply(judge, chat, schema, LabelReply, None, case_id, attempts)
    if reply.label not in grader.labels:
        raise GraderProblem(
            f"the model answered {reply.label!r}, not one of {grader.labels}", judge=True
        )
    passed = reply.label in grader.passing_labels
    return Graded(1.0 if passed else 0.0, passed, f"label: {reply.label}", sample)


async def score_model(
    grader: ScoreModelGrader,
    chat: tuple[ChatMessage, ...],
    judge: JudgeClient,
    case_id: str,
    attempts: int,
) -> Graded:
    """The model's score (held to the range); passes at the grader's threshold.

    ``chat`` is the grader's messages rendered (``render_messages``).
    """
    low, high = grader.range
    schema = {
        "type": "object",
        "properties": {"result": {"type": "number", "minimum": low, "maximum": high}},
        "required": ["result"],
        "additionalProperties": False,
    }
    params = grader.sampling_params
    reply, sample = await _graded_reply(judge, chat, schema, ScoreReply, params, case_id, attempts)
    score = min(max(reply.result, low), high)
    return Graded(score, score >= grader.threshold, f"score: {reply.result:g}", sample)
