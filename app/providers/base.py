"""The provider seam: one request type, one response type, one protocol.

Providers know nothing of suites or evaluators. The judge is just another provider.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.formatting.messages import ChatMessage, FormattedPrompt
from app.providers.preview import ProviderPreview
from app.settings.hosted_tools import HostedTool
from app.settings.targets import ReasoningEffort, StructuredForm
from app.settings.tools import ToolChoice, ToolSpec


class CallRole(StrEnum):
    """Whom a call is for; candidate and judge calls are limited separately."""

    CANDIDATE = "candidate"
    JUDGE = "judge"


class ModelOptions(BaseModel):
    """Per-call model options; ``None`` means the target's (or the API's) default."""

    model_config = ConfigDict(frozen=True)
    temperature: float | None = None
    max_output_tokens: int | None = None
    top_p: float | None = Field(None, description="Nucleus sampling, where the API takes it.")
    seed: int | None = Field(None, description="Sampling seed, where the API takes it.")
    top_k: int | None = Field(None, description="Top-k sampling, where the API takes it.")
    stop: tuple[str, ...] | None = Field(
        None, description="Stop sequences, where the API takes them."
    )
    frequency_penalty: float | None = Field(
        None, description="Frequency penalty, where the API takes it."
    )
    presence_penalty: float | None = Field(
        None, description="Presence penalty, where the API takes it."
    )
    extra_body: dict[str, Any] | None = Field(
        None,
        description=(
            "Fields of the API's request body sent as written, over the adapter's own "
            "(a promptfoo provider's `passthrough`, say); a mapping merges into its field."
        ),
    )
    json_schema: dict[str, Any] | None = Field(
        None, description="JSON Schema the reply must follow (structured output), if supported."
    )
    json_schema_name: str = "verdict"
    reasoning_effort: ReasoningEffort | None = Field(
        None, description="How hard a reasoning model thinks (OpenAI), where the API takes it."
    )
    structured_output: StructuredForm | None = Field(
        None,
        description=(
            "How the schema is asked for (set by the target's runtime from its "
            "`structured_output` setting); None: the adapter's strongest form."
        ),
    )

    def over(self, base: ModelOptions) -> ModelOptions:
        """These options where set, else ``base``'s (a request's over a suite's, say)."""
        return base.model_copy(update=self.model_dump(exclude_unset=True, exclude_none=True))


class ToolCall(BaseModel):
    """One tool call a target made while answering, in one shape whatever the target.

    ``tool`` is the tool's name; ``input`` the arguments (parsed JSON) and ``output`` the
    result, as the target wrote them (agents, CLI programs) or as the suite's canned results
    gave it (API targets in a tool loop). An API model writes its arguments as text:
    ``arguments`` keeps that text, and a call whose text does not parse as a JSON object is
    kept with ``input`` None and ``arguments_error`` saying why.
    """

    model_config = ConfigDict(frozen=True)
    tool: str
    input: Any = None
    output: Any = None
    id: str | None = None
    arguments: str | None = Field(
        None, description="The arguments as the model wrote them (API targets)."
    )
    arguments_error: str | None = Field(
        None, description="Why `arguments` did not parse as a JSON object (the call is kept)."
    )
    step: int | None = Field(
        None, description="Which provider call of the case made it (from 1), for API targets."
    )


class ToolStep(BaseModel):
    """An earlier reply of the candidate in a tool loop: its text and its calls with results.

    Adapters send it back natively (an assistant turn with the calls, then each result).
    """

    model_config = ConfigDict(frozen=True)
    text: str = ""
    calls: tuple[ToolCall, ...]


class ProviderRequest(BaseModel):
    """What a provider is asked: the formatted case plus options.

    API providers send ``chat_prompt`` as native messages; agent providers use ``question``.
    """

    model_config = ConfigDict(frozen=True)
    question: str
    guidelines: str = ""
    chat_prompt: tuple[ChatMessage, ...]
    options: ModelOptions = ModelOptions()
    role: CallRole = CallRole.CANDIDATE
    case_id: str | None = None
    attempt: int = 0
    file_paths: tuple[str, ...] = ()
    attachments: tuple[tuple[str, str], ...] = ()
    workspace: str | None = Field(
        None, exclude=True, description="The case's workspace folder, where an agent works."
    )
    tools: tuple[ToolSpec, ...] = Field((), description="Function tools the model may call.")
    hosted_tools: tuple[HostedTool, ...] = Field(
        (), description="Tools the provider runs itself (web search, MCP...), sent as written."
    )
    tool_choice: ToolChoice | None = None
    legacy_functions: bool = Field(
        False,
        description="The tools are OpenAI's legacy functions: Chat Completions sends them as "
        "``functions``/``function_call``, and a reply of calls answers with the first call as "
        "``{name, arguments}``.",
    )
    tool_steps: tuple[ToolStep, ...] = Field(
        (), description="The candidate's earlier replies in a tool loop, with the results."
    )

    @classmethod
    def for_candidate(
        cls,
        prompt: FormattedPrompt,
        case_id: str | None = None,
        options: ModelOptions | None = None,
        workspace: str | None = None,
    ) -> ProviderRequest:
        """The request a candidate gets for a formatted case (with the run's ``options``)."""
        return cls(
            options=options or ModelOptions(),
            question=prompt.question,
            guidelines=prompt.guidelines,
            chat_prompt=prompt.chat_prompt,
            role=CallRole.CANDIDATE,
            case_id=case_id,
            file_paths=prompt.file_paths,
            attachments=prompt.attachments,
            workspace=workspace,
        )


class Usage(BaseModel):
    """Token usage of one call, when the provider reports it."""

    model_config = ConfigDict(frozen=True)
    input_tokens: int | None = None
    output_tokens: int | None = None


class CallAttempt(BaseModel):
    """One request actually sent for a call (a call makes one per try, retries included)."""

    model_config = ConfigDict(frozen=True)
    outcome: str = Field(description="`ok`, `cancelled`, or the error's type slug.")
    status: int | None = Field(None, description="The HTTP status answered, when there was one.")
    latency_ms: float
    error: str | None = Field(None, description="Why the try failed (no secrets).")


class ProviderResponse(BaseModel):
    """What a provider answered. ``raw`` is the reply body with secrets removed.

    ``tool_calls``, ``cost_usd``, ``llm_calls`` and ``duration_ms`` are what a target reports
    of its own work (the mock target's configuration, a CLI program's JSON output); graders of
    tool trajectories and execution metrics read them.

    ``attempts`` lists every request the call made, the failed tries before this reply
    included (empty when the reply did not come through a target's runtime). A reply served
    again from the response cache keeps them, with ``cached`` set: it sent nothing.
    """

    model_config = ConfigDict(frozen=True)
    text: str
    usage: Usage = Usage()
    latency_ms: float = 0.0
    model: str | None = None
    finish_reason: str | None = None
    raw: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False
    status: int | None = Field(None, description="The HTTP status of the reply (HTTP targets).")
    attempts: tuple[CallAttempt, ...] = ()
    tool_calls: tuple[ToolCall, ...] = Field(
        (), description="Tool calls the target reports having made, in order."
    )
    cost_usd: float | None = Field(None, description="What the call cost, when the target says.")
    llm_calls: int | None = Field(
        None, description="Model calls an agent target reports having made for this answer."
    )
    content: tuple[dict[str, Any], ...] = Field(
        (),
        description="The answer's parts when an agent gave them as blocks with files in them "
        "(text and file blocks, in order).",
    )
    duration_ms: float | None = Field(
        None, description="How long the target says it worked on the answer (agents)."
    )
    embedding: tuple[float, ...] | None = Field(
        None, description="The vector of the text, from an embeddings target."
    )
    flags: tuple[str, ...] | None = Field(
        None, description="The categories a moderation target flagged the text in."
    )
    classification: dict[str, float] | None = Field(
        None, description="Each class's score of the text, from a classifier target."
    )

    @property
    def cut_at_budget(self) -> bool:
        """Whether generation stopped at the output-token limit (OpenAI, Anthropic, Gemini)."""
        return (self.finish_reason or "").lower() in ("length", "max_tokens")


ProviderKind = Literal["api", "agent", "embeddings", "moderation", "classifier"]
"""``api``: a model API; ``agent``: a program; ``embeddings``: turns texts into vectors;
``moderation``: flags texts in categories; ``classifier``: scores texts in classes."""


class Provider(Protocol):
    """An adapter for one wire format or program; owns its own HTTP client."""

    kind: ProviderKind

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one call (one attempt; retries and limits live in the caller)."""
        ...

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """The exact body that would be sent for ``request``, and the rewrites made."""
        ...

    async def aclose(self) -> None:
        """Release the adapter's resources (its HTTP client)."""
        ...


class CallObserver(Protocol):
    """Receives one event per finished call, retry and 429 (the metrics layer implements it)."""

    def record_provider_call(self, target: str, role: str, outcome: str, seconds: float) -> None:
        """One call finished: ``outcome`` is ``ok`` or the error's kind."""
        ...

    def record_retry(self, target: str, role: str, reason: str) -> None:
        """One attempt failed and will be retried."""
        ...

    def record_rate_limited(self, target: str, role: str) -> None:
        """The provider answered 429."""
        ...


class NoObserver:
    """A ``CallObserver`` that records nothing."""

    def record_provider_call(self, target: str, role: str, outcome: str, seconds: float) -> None:
        """Record nothing."""

    def record_retry(self, target: str, role: str, reason: str) -> None:
        """Record nothing."""

    def record_rate_limited(self, target: str, role: str) -> None:
        """Record nothing."""
