"""A tool-calling candidate's turns: its tools, and a tool loop over the case's canned results.

Without canned results the first reply is the answer (what AgentV and promptfoo grade). With
them, each call the candidate makes is answered with its canned result and the candidate is
asked again (the earlier steps sent back natively, ``ToolStep``), until it answers without
calling a tool or ``max_turns`` provider calls were made. Every step is one provider call,
counted in the case's ledger like any other (usage, latency, requests) and listed in the
record's ``candidate_steps``. A call no canned result answers gets an error result naming
the tool, so the candidate can go on, and the record shows it.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.evaluation.tool_callbacks import called_back
from app.evaluators.code.programs import ProgramRunner
from app.providers.base import ProviderRequest, ProviderResponse, ToolCall, ToolStep
from app.providers.errors import ProviderRejected
from app.providers.messages.tool_calls import answer_text, legacy_answer
from app.settings.hosted_tools import API_NAMES, HostedTool, unsupported
from app.suites.tool_use import ToolUse, canned_result


class CandidateStep(BaseModel):
    """One provider call of a candidate's tool loop."""

    model_config = ConfigDict(frozen=True)
    step: int = Field(description="From 1.")
    latency_ms: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    tool_calls: list[str] = Field(default_factory=list, description="The tools it called.")


class Completes(Protocol):
    """What the loop calls: a target used for the candidate role."""

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """One call."""
        ...


def with_tool_use(request: ProviderRequest, tool_use: ToolUse | None) -> ProviderRequest:
    """The candidate request with the case's tools, tool choice and structured output."""
    if tool_use is None:
        return request
    update: dict[str, object] = {
        "tools": tool_use.tools,
        "hosted_tools": tool_use.hosted,
        "tool_choice": tool_use.tool_choice,
        "legacy_functions": tool_use.legacy_functions,
    }
    if tool_use.response_format is not None:
        fmt = tool_use.response_format
        update["options"] = request.options.model_copy(
            update={"json_schema": fmt.schema_, "json_schema_name": fmt.name}
        )
    return request.model_copy(update=update)


def refuse_hosted_tools(target: str, hosted: tuple[HostedTool, ...], runtime: object) -> None:
    """Refuse a case whose hosted tool the target's API does not run, naming both.

    Raises:
        ProviderRejected: a hosted tool of another API (or any, on a target without any).
    """
    api = getattr(getattr(runtime, "adapter", None), "hosted_tools_api", None)
    tool = unsupported(hosted, api)
    if tool is not None:
        raise ProviderRejected(
            f"target {target!r} cannot run the hosted tool {tool.label!r}: it is a tool of "
            f"{API_NAMES[tool.api]}, which runs it itself; name a target of that API",
            target=target,
        )


def _answered(call: ToolCall, tool_use: ToolUse, step: int) -> ToolCall:
    entry = canned_result(tool_use.results or (), call.tool, call.input)
    output = (
        entry.result
        if entry is not None
        else {"error": f"no canned result for tool {call.tool!r} with these arguments"}
    )
    return call.model_copy(update={"output": output, "step": step})


def _step_record(step: int, response: ProviderResponse) -> CandidateStep:
    return CandidateStep(
        step=step,
        latency_ms=round(response.latency_ms, 3),
        input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens,
        finish_reason=response.finish_reason,
        tool_calls=[call.tool for call in response.tool_calls],
    )


def _call_answers(calls: tuple[ToolCall, ...]) -> tuple[str, ...]:
    """The answers a reply of only ``calls`` has (OpenAI's Chat form, or the legacy one)."""
    return (answer_text("", calls), legacy_answer(calls[0])) if calls else ("",)


def _legacy(request: ProviderRequest, response: ProviderResponse) -> ProviderResponse:
    """A reply of calls to legacy ``functions``: its answer is its first call's object.

    A reply of only calls has them as its answer in its API's form, a JSON list (OpenAI's
    Chat form; Gemini's parts): that is replaced, a reply's own text is kept.
    """
    calls, text = response.tool_calls, response.text
    if not request.legacy_functions or not calls:
        return response
    if text != answer_text("", calls) and not text.startswith("["):
        return response  # the model said something: that is its answer
    return response.model_copy(update={"text": legacy_answer(calls[0])})


async def run_tool_loop(
    target: Completes,
    request: ProviderRequest,
    tool_use: ToolUse | None,
    programs: ProgramRunner | None = None,
) -> tuple[ProviderResponse, list[CandidateStep]]:
    """The candidate's final reply (with every call it made, in order) and its steps.

    ``programs`` runs the file callbacks of tools (``app.evaluation.tool_callbacks``).
    """
    request = with_tool_use(request, tool_use)
    response = _legacy(request, await target.complete(request))
    steps = [_step_record(1, response)]
    if tool_use is None or tool_use.results is None:
        calls = tuple(c.model_copy(update={"step": 1}) for c in response.tool_calls)
        response = response.model_copy(update={"tool_calls": calls})
        if tool_use is not None and tool_use.callbacks:
            response = await called_back(response, tool_use.callbacks, programs)
        return response, steps
    made: list[ToolCall] = []
    sent: list[ToolStep] = []
    number = 1
    while response.tool_calls:
        answered = [_answered(call, tool_use, number) for call in response.tool_calls]
        made += answered
        if number >= tool_use.max_turns:
            break
        said = "" if response.text in _call_answers(response.tool_calls) else response.text
        sent.append(ToolStep(text=said, calls=tuple(answered)))
        number += 1
        following = request.model_copy(update={"tool_steps": tuple(sent)})
        response = _legacy(request, await target.complete(following))
        steps.append(_step_record(number, response))
    return response.model_copy(update={"tool_calls": tuple(made)}), steps
