"""``llm_judge``: a judge model grades the answer (score, hits, misses, reasoning).

System prompt: the JSON output contract. User prompt: the case's ``prompt`` if it has one,
else ``DEFAULT_EVALUATOR_TEMPLATE``, rendered by the formatting core (which inserts the
``question`` verbatim and neutralises section markers in every other value). Structured
output is requested through ``ModelOptions.json_schema`` (the target picks the form); a reply
that still does not follow the contract is asked for again, and after the last attempt the
evaluator reports ``judge_error`` with the raw reply kept, never a made-up score. Graded or
not, the result keeps the judge's raw reply and, under ``details``, every request sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, Evaluator, EvaluatorOutcome, JudgeClient
from app.evaluators.code.code_judge import program_prompt
from app.evaluators.code.preprocess import with_preprocessed_files
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.judge_output import JudgeVerdict, Unscored, parse_verdict
from app.evaluators.results import EvaluatorRawRequest, EvaluatorResult
from app.evaluators.verdicts import verdict_for
from app.formatting import (
    DEFAULT_EVALUATOR_TEMPLATE,
    FILE_CHANGES_SECTION,
    TOOL_CALLS_SECTION,
    render_evaluator_prompt,
)
from app.formatting.messages import ChatMessage
from app.providers.base import (
    CallAttempt,
    CallRole,
    ModelOptions,
    ProviderRequest,
    ProviderResponse,
    ToolCall,
)
from app.providers.errors import ProviderError

JUDGE_SYSTEM_PROMPT = """\
You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "hits": [<array of strings, max 4 items, brief specific achievements>],
  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],
  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"
}"""
"""The judge's system prompt: the output contract (no placeholders)."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "hits": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "misses": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "hits", "misses", "reasoning"],
    "additionalProperties": False,
}
"""JSON Schema of a verdict, sent as the structured-output schema."""

ParsedT = TypeVar("ParsedT")


def _messages_json(messages: Sequence[BaseModel]) -> str:
    # An expected message may hold only content or only tool calls: the absent one is left out.
    dumped = [
        {
            key: value
            for key, value in message.model_dump(mode="json").items()
            if not ((key == "content" and value is None) or (key == "tool_calls" and not value))
        }
        for message in messages
    ]
    return json.dumps(dumped, indent=2, ensure_ascii=False)


def prompt_variables(context: EvaluationContext, template: str) -> dict[str, str]:
    """The template variables of one case (``EVALUATOR_VARIABLES``).

    The message lists are serialised only when ``template`` mentions them.
    """
    variables = {
        "question": context.question,
        "expected_outcome": context.expected_outcome,
        "reference_answer": context.reference_answer,
        "candidate_answer": context.candidate_answer,
    }
    if "input_messages" in template:
        variables["input_messages"] = _messages_json(context.case.input_messages)
    if "expected_messages" in template:
        variables["expected_messages"] = _messages_json(context.case.expected_messages)
    if "tool_calls" in template:
        variables["tool_calls"] = tool_calls_text(context.candidate.tool_calls)
    if "metadata" in template:
        metadata = context.case.metadata.get("metadata")
        variables["metadata"] = json.dumps(metadata or {}, indent=2, ensure_ascii=False)
    if "file_changes" in template:
        variables["file_changes"] = context.file_changes or ""
    if "workspace_path" in template:
        variables["workspace_path"] = context.workspace_path or ""
    return variables


def tool_calls_text(calls: Sequence[ToolCall]) -> str:
    """The candidate's tool calls for a judge: one line each, ``name: input as JSON``.

    Arguments that did not parse are shown as the model wrote them, marked.
    """
    lines = []
    for call in calls:
        given = "" if call.input is None else json.dumps(call.input, ensure_ascii=False)
        if call.arguments_error is not None:
            given = f"{call.arguments} (arguments do not parse: {call.arguments_error})"
        lines.append(f"{call.tool}: {given}" if given else call.tool)
    return "\n".join(lines)


def render_user_prompt(config: EvaluatorConfig, context: EvaluationContext) -> str:
    """The judge's user prompt: the case's ``prompt`` or the default template, filled in.

    A ``prompt`` without any ``{{ name }}`` placeholder is what to grade against: the
    default template is filled with it as the expected outcome (as AgentV reads it).

    The default template gains a ``[[ ## tool_calls ## ]]`` section when the candidate
    reported tool calls, and a ``[[ ## file_changes ## ]]`` one when it changed files in its
    workspace; a custom one names ``{{ tool_calls }}`` or ``{{ file_changes }}`` where it
    wants them.
    """
    custom = config.prompt if config.prompt and config.prompt.strip() else None
    criteria = None
    if custom is not None and "{{" not in custom:  # no placeholder: it is the criteria (AgentV)
        custom, criteria = None, config.prompt
    template = custom or DEFAULT_EVALUATOR_TEMPLATE
    if custom is None and context.candidate.tool_calls:
        template += TOOL_CALLS_SECTION
    if custom is None and context.file_changes:
        template += FILE_CHANGES_SECTION
    variables = prompt_variables(context, template)
    if criteria is not None:
        variables["expected_outcome"] = criteria
    return render_evaluator_prompt(template, variables)


async def judge_user_prompt(config: EvaluatorConfig, context: EvaluationContext) -> str:
    """The judge's user prompt: what the ``prompt_program`` prints, else ``render_user_prompt``."""
    if config.prompt_program is not None:
        return await program_prompt(config, context)
    return render_user_prompt(config, context)


@dataclass
class JudgeExchange(Generic[ParsedT]):
    """The outcome of asking a judge until its reply parses (or attempts run out).

    Attributes:
        parsed: The accepted reply, or why there is none.
        outputs: Every reply text received, in order.
        tries: Every request sent to the judge, in order: outcome, HTTP status, latency, and
            for a try that gave no grade its reason (and its reply, when it had one).
    """

    parsed: ParsedT | Unscored
    outputs: list[str] = field(default_factory=list)
    tries: list[dict[str, Any]] = field(default_factory=list)

    def failed_call(self, error: ProviderError) -> None:
        """Log a judge call that failed at the provider (after its own retries)."""
        self.tries.extend(_try_entry(attempt) for attempt in error.attempts)
        self.parsed = Unscored(f"the judge call failed: {error.detail}")

    def replied(self, response: ProviderResponse, parsed: ParsedT | Unscored) -> None:
        """Log a judge call that got ``response``, which parsed as ``parsed``."""
        self.outputs.append(response.text)
        self.parsed = parsed
        last: dict[str, Any] = {"outcome": "ok", "status": None}
        if response.cached:
            last["cached"] = True
        elif response.attempts:
            self.tries.extend(_try_entry(attempt) for attempt in response.attempts[:-1])
            last = _try_entry(response.attempts[-1])
        else:
            last["latency_ms"] = response.latency_ms
        if isinstance(parsed, Unscored):
            last.update(outcome="unparseable", error=parsed.reason, output=response.text)
        self.tries.append(last)

    def details(self) -> dict[str, Any]:
        """The evaluator result's ``details``: requests sent and every try."""
        return {"attempts": sum(not t.get("cached") for t in self.tries), "tries": self.tries}


def _try_entry(attempt: CallAttempt) -> dict[str, Any]:
    entry: dict[str, Any] = attempt.model_dump(exclude_none=True)
    entry.setdefault("status", None)
    return entry


async def ask_judge(
    judge: JudgeClient,
    *,
    system_prompt: str,
    user_prompt: str,
    schema: dict[str, Any],
    parse: Callable[[str], ParsedT | Unscored],
    attempts: int,
    case_id: str,
    options: ModelOptions | None = None,
) -> JudgeExchange[ParsedT]:
    """Call the judge until ``parse`` accepts its reply, at most ``attempts`` times.

    A provider failure (after the provider's own retries) ends the exchange at once, and so
    does a reply cut at the output-token budget: asking again would cost as much.
    """
    exchange: JudgeExchange[ParsedT] = JudgeExchange(Unscored("the judge was not asked"))
    chat = (
        ChatMessage(role="system", content=system_prompt),
        ChatMessage(role="user", content=user_prompt),
    )
    for attempt in range(max(1, attempts)):
        request = ProviderRequest(
            question=user_prompt,
            chat_prompt=chat,
            role=CallRole.JUDGE,
            options=(options or ModelOptions()).model_copy(update={"json_schema": schema}),
            case_id=case_id,
            attempt=attempt,
        )
        try:
            response = await judge.complete(request)
        except ProviderError as exc:
            exchange.failed_call(exc)
            return exchange
        parsed = parse(response.text)
        cut = isinstance(parsed, Unscored) and response.cut_at_budget
        if isinstance(parsed, Unscored) and cut:
            parsed = Unscored(
                f"{parsed.reason}; the reply stopped at the output-token budget "
                f"(finish reason {response.finish_reason!r}): raise judge_max_output_tokens"
            )
        exchange.replied(response, parsed)
        if cut or not isinstance(parsed, Unscored):
            return exchange
    return exchange


def judge_options(config: EvaluatorConfig) -> ModelOptions:
    """The options of the grader's judge calls: its ``judge_options`` and ``temperature``.

    Unset ones are the judge target's own.
    """
    extra = config.model_extra or {}
    value = extra.get("temperature")
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2
    ):
        raise EvaluatorConfigError(f"evaluator {config.name!r}: 'temperature' is 0 to 2")
    try:
        options = ModelOptions.model_validate(extra.get("judge_options") or {})
    except ValidationError as exc:
        raise EvaluatorConfigError(
            f"evaluator {config.name!r}: 'judge_options' {exc.errors()[0]['msg']}"
        ) from exc
    if value is None:
        return options
    return options.model_copy(update={"temperature": float(value)})


def unscored_result(
    config: EvaluatorConfig, exchange: JudgeExchange[Any], reason: str
) -> EvaluatorResult:
    """The ``judge_error`` result of an exchange that gave no grade; raw replies kept."""
    return EvaluatorResult(
        name=config.name,
        type=config.type,
        score=None,
        verdict=None,
        reasoning=reason,
        weight=config.weight,
        status="judge_error",
        raw_output=exchange.outputs[-1] if exchange.outputs else None,
        details=exchange.details(),
    )


class LlmJudgeEvaluator:
    """Grades with a judge model; delegates to rubric checks when the config has rubrics."""

    def __init__(self, rubric_evaluator: Evaluator | None = None) -> None:
        self._rubrics = rubric_evaluator

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Ask the judge for a verdict on the candidate answer."""
        context = await with_preprocessed_files(config, context)
        if config.rubrics and self._rubrics is not None:
            return await self._rubrics.evaluate(config, context)
        judge = context.judge_for(config)
        user_prompt = await judge_user_prompt(config, context)
        raw_request = EvaluatorRawRequest(
            user_prompt=user_prompt, system_prompt=JUDGE_SYSTEM_PROMPT, target=judge.name
        )
        exchange = await ask_judge(
            judge,
            system_prompt=JUDGE_SYSTEM_PROMPT,
            user_prompt=user_prompt,
            schema=VERDICT_SCHEMA,
            parse=parse_verdict,
            attempts=context.judge_attempts,
            case_id=context.case.id,
            options=judge_options(config),
        )
        if isinstance(exchange.parsed, Unscored):
            result = unscored_result(config, exchange, exchange.parsed.reason)
            return EvaluatorOutcome(result=result, raw_request=raw_request)
        result = _graded_result(config, exchange.parsed, context, exchange)
        return EvaluatorOutcome(result=result, raw_request=raw_request)


def _graded_result(
    config: EvaluatorConfig,
    verdict: JudgeVerdict,
    context: EvaluationContext,
    exchange: JudgeExchange[JudgeVerdict],
) -> EvaluatorResult:
    return EvaluatorResult(
        name=config.name,
        type=config.type,
        score=verdict.score,
        verdict=verdict_for(verdict.score, context.thresholds),
        hits=list(verdict.hits),
        misses=list(verdict.misses),
        reasoning=verdict.reasoning or None,
        weight=config.weight,
        raw_output=exchange.outputs[-1],
        details=exchange.details(),
    )
