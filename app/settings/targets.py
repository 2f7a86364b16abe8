"""Targets: named provider configurations (typed settings), and the targets file they come from.

The file is AgentV's targets file: ``targets:`` is a list of
``{name, provider, judge_target?, workers?, ...provider keys}``; a value written
``${{ VAR }}`` is read from the environment when the file is loaded (``load_settings``, at
start-up). Keys accept AgentV's snake_case and camelCase spellings. AgentV's July 2026
``providers.yaml`` (a list of ``{id, label, ...}`` with ``{{ env.VAR }}`` values) loads too.
A target on a provider this service does not run (AgentV's agent providers: ``claude``,
``copilot-cli``, ``codex``...) is skipped with a warning that ``GET /targets`` shows; it
does not stop start-up. When no target is called ``default`` (and none was skipped), a mock
``default`` target exists, so the service runs with no configuration.
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from app.errors import TargetsFileError
from app.settings.response_format import ResponseFormat, read_response_format
from app.settings.tools import ToolChoice, ToolSpec, read_tool_choice, read_tools

logger = logging.getLogger("app.settings")

DEFAULT_TARGET = "default"
TERSE_MOCK_TARGET = "terse"
SLOW_MOCK_TARGET = "slow"
EMBEDDINGS_MOCK_TARGET = "embeddings"
PROVIDER_ALIASES: dict[str, str] = {
    "azure-openai": "azure",
    "google": "gemini",
    "google-gemini": "gemini",
    "openai-compatible": "openai",
    "openai-embeddings": "openai",
    "openai-responses": "openai",
    "openrouter": "openai",
}
PROVIDER_BASE_URLS = {"openrouter": "https://openrouter.ai/api/v1"}
PROVIDER_API_FORMATS = {"openai-responses": "responses", "openai-embeddings": "embeddings"}
"""Provider names that pick a wire of their provider (``api_format``)."""
# AgentV's agent providers (``claude`` is Claude Code, not the Anthropic API): not run here.
UNSUPPORTED_AGENTV_PROVIDERS = frozenset(
    {"codex", "codex-cli", "codex-sdk", "vscode", "vscode-insiders", "claude", "claude-cli"}
    | {"claude-code", "claude-sdk", "cc-mirror", "copilot", "copilot-cli", "copilot-sdk"}
    | {"copilot-log", "pi-cli", "pi-coding-agent", "gemini-cli", "opencode"}
)
SUPPORTED_PROVIDERS = frozenset(
    {"mock", "openai", "azure", "anthropic", "gemini", "huggingface", "cli"}
)
_SECRET_KEY = re.compile(r"key|token|secret|passw|auth|command|env", re.IGNORECASE)
ENV_VARIABLE = re.compile(
    r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}"
)
"""``${{ VAR }}`` (AgentV targets files) or ``{{ env.VAR }}`` (AgentV's providers.yaml)."""
StructuredForm = Literal["json_schema", "json_object", "tool", "none"]
"""How a call asks for JSON that follows a schema (docs/providers.md, "Structured output")."""
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
"""How hard a reasoning model thinks (OpenAI's ``reasoning_effort``, Responses ``reasoning``)."""
StructuredOutput = Literal["auto", "json_schema", "json_object", "tool", "none"]
"""A target's ``structured_output`` setting: a form, or ``auto`` (negotiated per target)."""


def _choices(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Pricing(BaseModel):
    """What a target's tokens cost, in US dollars per million tokens.

    A call whose target reports no cost of its own costs its input tokens at
    ``input_per_million`` and its output tokens at ``output_per_million``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    input_per_million: float = Field(
        ge=0, validation_alias=_choices("input_per_million", "inputPerMillion")
    )
    output_per_million: float = Field(
        ge=0, validation_alias=_choices("output_per_million", "outputPerMillion")
    )

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """US dollars for these tokens."""
        spent = input_tokens * self.input_per_million + output_tokens * self.output_per_million
        return spent / 1_000_000


class TargetBase(BaseModel):
    """Keys every target accepts."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)
    name: str = Field(min_length=1)
    judge_target: str | None = Field(
        None,
        validation_alias=_choices("judge_target", "judgeTarget", "grader_target", "graderTarget"),
    )
    max_concurrency: int | None = Field(
        None, ge=1, validation_alias=_choices("max_concurrency", "maxConcurrency", "workers")
    )
    system_prompt: str | None = Field(
        None,
        validation_alias=_choices("system_prompt", "systemPrompt"),
        description=(
            "The system message of a case with no system turn (default: AgentV's wording, "
            "'You are a careful assistant...'); a suite's own wins; \"\" sends none."
        ),
    )
    temperature: float | None = None
    max_output_tokens: int | None = Field(
        None, ge=1, validation_alias=_choices("max_output_tokens", "maxOutputTokens", "maxTokens")
    )
    max_retries: int | None = Field(
        None, ge=0, validation_alias=_choices("max_retries", "maxRetries")
    )
    retry_initial_delay_ms: float | None = Field(
        None, ge=0, validation_alias=_choices("retry_initial_delay_ms", "retryInitialDelayMs")
    )
    retry_max_delay_ms: float | None = Field(
        None, ge=0, validation_alias=_choices("retry_max_delay_ms", "retryMaxDelayMs")
    )
    retry_budget_seconds: float | None = Field(
        None, ge=0, validation_alias=_choices("retry_budget_seconds", "retryBudgetSeconds")
    )
    judge_max_output_tokens: int | None = Field(
        None, ge=1, validation_alias=_choices("judge_max_output_tokens", "judgeMaxOutputTokens")
    )
    judge_timeout_seconds: float | None = Field(
        None, gt=0, validation_alias=_choices("judge_timeout_seconds", "judgeTimeoutSeconds")
    )
    pricing: Pricing | None = Field(
        None,
        description=(
            "US dollars per million input and output tokens: the cost of a call whose target "
            "reports none of its own."
        ),
    )
    _secret_values: tuple[str, ...] = PrivateAttr(default=())

    def endpoint_url(self) -> str | None:
        """The base URL calls go to (``None`` for targets that call no URL)."""
        return None

    def secret_values(self) -> tuple[str, ...]:
        """Every value read from the environment or marked secret: scrubbed from all output."""
        keys = [
            value.get_secret_value()
            for value in (getattr(self, "api_key", None),)
            if isinstance(value, SecretStr)
        ]
        return tuple(v for v in (*keys, *self._secret_values) if v)


class MockToolCall(BaseModel):
    """A tool call the mock target reports with its answer: ``{tool, input?, output?, id?}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    tool: str = Field(min_length=1)
    input: Any = None
    output: Any = None
    id: str | None = None


class MockTarget(TargetBase):
    """The offline, deterministic provider: echo, a fixed text, or per-case answers.

    ``tool_calls`` (by case id, ``"*"`` for every case) and ``cost_usd`` are reported with
    each candidate answer, as an agent reports its own work.
    """

    provider: Literal["mock"] = "mock"
    response: str | None = None
    answers: dict[str, str] = Field(default_factory=dict)
    latency_ms: float = Field(0.0, ge=0, validation_alias=_choices("latency_ms", "latencyMs"))
    tool_calls: dict[str, list[MockToolCall]] = Field(
        default_factory=dict, validation_alias=_choices("tool_calls", "toolCalls")
    )
    cost_usd: float | None = Field(None, ge=0, validation_alias=_choices("cost_usd", "costUsd"))
    api_format: Literal["chat", "embeddings"] = Field(
        "chat",
        validation_alias=_choices("api_format", "apiFormat"),
        description="`chat` (answers cases) or `embeddings` (hashed-word vectors, for `similar`).",
    )


class ApiTarget(TargetBase):
    """Keys of targets that call a model API: the tools candidate calls may use.

    ``tools`` (any API's spelling, read into OpenAI's function-tool form), ``tool_choice``
    and ``response_format`` (structured output) go with every candidate call of the target,
    never with judge calls; a case's own win (tools by name).
    """

    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = Field(
        None, validation_alias=_choices("tool_choice", "toolChoice")
    )
    response_format: ResponseFormat | None = Field(
        None,
        validation_alias=_choices("response_format", "responseFormat"),
        description=(
            "Structured output of every candidate call: OpenAI's `{type: json_schema, "
            "json_schema: {name, schema}}`, `{type: json_object}` or a bare JSON Schema; sent "
            "natively by each API (a case's own wins)."
        ),
    )

    @field_validator("response_format", mode="before")
    @classmethod
    def _read_response_format(cls, value: Any) -> Any:
        return read_response_format(value) if value is not None else None

    @field_validator("tools", mode="before")
    @classmethod
    def _read_tools(cls, value: Any) -> Any:
        return read_tools(value) if not isinstance(value, tuple) else value

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _read_tool_choice(cls, value: Any) -> Any:
        return value if isinstance(value, ToolChoice) else read_tool_choice(value)


class OpenAITarget(ApiTarget):
    """Chat Completions on OpenAI or any OpenAI-compatible server."""

    provider: Literal["openai"]
    base_url: str = Field(
        "https://api.openai.com/v1",
        validation_alias=_choices("base_url", "baseUrl", "baseURL", "endpoint"),
    )
    api_key: SecretStr | None = Field(None, validation_alias=_choices("api_key", "apiKey"))
    model: str
    structured_output: StructuredOutput = Field(
        "auto", validation_alias=_choices("structured_output", "structuredOutput")
    )
    api_format: Literal["chat", "responses", "embeddings", "moderation"] = Field(
        "chat",
        validation_alias=_choices("api_format", "apiFormat", "wire_api", "wireApi"),
        description=(
            "`chat` (Chat Completions), `responses` (the Responses API), `embeddings` "
            "(`POST /embeddings`: an embeddings target, for `similar` and `cosine` graders) "
            "or `moderation` (`POST /moderations`: a moderation target, for `moderation`)."
        ),
    )
    reasoning_effort: ReasoningEffort | None = Field(
        None, validation_alias=_choices("reasoning_effort", "reasoningEffort")
    )

    def endpoint_url(self) -> str:
        """The base URL calls go to."""
        return self.base_url


class AzureTarget(ApiTarget):
    """An Azure OpenAI deployment."""

    provider: Literal["azure"]
    endpoint: str = Field(
        validation_alias=_choices("endpoint", "resource", "resourceName", "resource_name")
    )
    api_key: SecretStr = Field(validation_alias=_choices("api_key", "apiKey"))
    deployment: str = Field(
        validation_alias=_choices("deployment", "deploymentName", "deployment_name", "model")
    )
    version: str = Field(
        "2024-10-01-preview", validation_alias=_choices("version", "api_version", "apiVersion")
    )
    structured_output: StructuredOutput = Field(
        "auto", validation_alias=_choices("structured_output", "structuredOutput")
    )

    @field_validator("version")
    @classmethod
    def _strip_prefix(cls, value: str) -> str:
        """AgentV accepts ``api-version=2024-...``; keep only the date."""
        return value.removeprefix("api-version=")

    def endpoint_url(self) -> str:
        """``https://<resource>.openai.azure.com/openai`` or ``<endpoint>/openai``."""
        if self.endpoint.startswith(("http://", "https://")):
            root = self.endpoint.rstrip("/")
            return root if root.endswith("/openai") else root + "/openai"
        return f"https://{self.endpoint}.openai.azure.com/openai"


class AnthropicTarget(ApiTarget):
    """The Anthropic Messages API."""

    provider: Literal["anthropic"]
    api_key: SecretStr = Field(validation_alias=_choices("api_key", "apiKey"))
    model: str = Field(validation_alias=_choices("model", "deployment", "variant"))
    base_url: str = Field(
        "https://api.anthropic.com", validation_alias=_choices("base_url", "baseUrl", "baseURL")
    )
    structured_output: Literal["auto", "tool", "none"] = Field(
        "auto", validation_alias=_choices("structured_output", "structuredOutput")
    )

    def endpoint_url(self) -> str:
        """The base URL calls go to."""
        return self.base_url


class GeminiTarget(ApiTarget):
    """Google Gemini ``generateContent``."""

    provider: Literal["gemini"]
    api_key: SecretStr = Field(validation_alias=_choices("api_key", "apiKey"))
    model: str = "gemini-2.5-flash"
    base_url: str = Field(
        "https://generativelanguage.googleapis.com",
        validation_alias=_choices("base_url", "baseUrl", "baseURL"),
    )
    structured_output: Literal["auto", "json_schema", "json_object", "none"] = Field(
        "auto", validation_alias=_choices("structured_output", "structuredOutput")
    )

    def endpoint_url(self) -> str:
        """The base URL calls go to."""
        return self.base_url


class HuggingFaceTarget(TargetBase):
    """A Hugging Face Inference API model: ``POST {base_url}/models/{model}``.

    Only ``text-classification`` is run (a classifier target, for ``classifier`` graders);
    promptfoo's ``huggingface:text-classification:<model>`` in a providers list.
    """

    provider: Literal["huggingface"]
    task: Literal["text-classification"] = Field(
        "text-classification",
        description=(
            "The model's task: `text-classification` (`{inputs}` in, a list of "
            "`{label, score}` out: a classifier target, for `classifier` graders)."
        ),
    )
    model: str = Field(min_length=1)
    base_url: str = Field(
        "https://router.huggingface.co/hf-inference",
        validation_alias=_choices("base_url", "baseUrl", "baseURL"),
    )
    api_key: SecretStr | None = Field(None, validation_alias=_choices("api_key", "apiKey"))

    def endpoint_url(self) -> str:
        """The base URL calls go to."""
        return self.base_url


class CliTarget(TargetBase):
    """A program run per call; its command comes from the targets file only.

    ``command`` (AgentV 2026) or ``command_template``: a string split like a shell would (no
    shell runs it) or a list of arguments. ``files_format`` formats each attached file for
    ``{FILES}`` (default ``{path}``).
    """

    provider: Literal["cli"]
    command_template: str = Field(
        validation_alias=_choices("command_template", "commandTemplate", "command")
    )
    files_format: str = Field(
        "{path}", min_length=1, validation_alias=_choices("files_format", "filesFormat")
    )
    cwd: Path | None = None
    timeout_seconds: float = Field(
        300.0, gt=0, validation_alias=_choices("timeout_seconds", "timeoutSeconds")
    )
    env: dict[str, str] = Field(default_factory=dict)

    def argv(self) -> list[str]:
        """The command split into argv items (no shell), placeholders still in place."""
        return shlex.split(self.command_template)

    @field_validator("command_template", mode="before")
    @classmethod
    def _joined(cls, value: Any) -> Any:
        """A list of arguments (AgentV's ``command: [...]``) is kept as one quoted string."""
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return shlex.join(value)
        return value

    @field_validator("command_template")
    @classmethod
    def _splits(cls, value: str) -> str:
        if not shlex.split(value):
            raise ValueError("command_template is empty")
        return value


TargetConfig = Annotated[
    MockTarget
    | OpenAITarget
    | AzureTarget
    | AnthropicTarget
    | GeminiTarget
    | HuggingFaceTarget
    | CliTarget,
    Field(discriminator="provider"),
]
TARGET_ADAPTER: TypeAdapter[TargetConfig] = TypeAdapter(TargetConfig)


def default_mock_target() -> MockTarget:
    """The built-in ``default`` target."""
    return MockTarget(name=DEFAULT_TARGET)


def comparison_mock_targets() -> list[MockTarget]:
    """More mock targets of the embedded defaults: a fresh server can run arms and `similar`.

    Beside ``default`` (it echoes the last user turn): ``terse`` always answers ``Answers: 4``
    (right on the quick suite's first case, wrong on its second: it scores lower), ``slow``
    echoes as ``default`` does 300 ms later (same scores, higher latency); ``embeddings`` is
    an embeddings target (hashed-word vectors) for ``similar`` graders. Served only when
    the operator configures no target (no targets file, no ``EVAL_TARGETS``).
    """
    return [
        MockTarget(name=TERSE_MOCK_TARGET, response="Answers: 4"),
        MockTarget(name=SLOW_MOCK_TARGET, latency_ms=300),
        MockTarget(name=EMBEDDINGS_MOCK_TARGET, api_format="embeddings"),
    ]


def interpolate(
    value: Any,
    environ: Mapping[str, str],
    target: str,
    secrets: list[str] | None = None,
    key: str = "",
) -> Any:
    """Replace ``${{ VAR }}`` in every string of ``value`` with the environment's value.

    Values read for secret-looking keys (key, token, secret, password, the CLI command and
    environment) are appended to ``secrets``: they are scrubbed from all output.
    """
    secrets = [] if secrets is None else secrets
    if isinstance(value, dict):
        return {
            name: interpolate(item, environ, target, secrets, key or str(name))
            for name, item in value.items()
        }
    if isinstance(value, list):
        return [interpolate(item, environ, target, secrets, key) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        variable = match.group(1) or match.group(2)
        if variable not in environ:
            raise TargetsFileError(
                f"target {target!r}: environment variable {variable!r} is not set"
            )
        if _SECRET_KEY.search(key):
            secrets.append(environ[variable])
        return environ[variable]

    return ENV_VARIABLE.sub(substitute, value)


def canonical_provider(value: Any) -> str:
    """A provider name in lower case, AgentV's aliases mapped to this service's names."""
    provider = str(value or "").strip().lower()
    return PROVIDER_ALIASES.get(provider, provider)


def describe_problems(exc: ValidationError) -> str:
    """``key: problem; key2: problem`` for a target that does not validate (no values)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'][1:]) or 'provider'}: {e['msg']}"
        for e in exc.errors(include_input=False)
    )


def parse_target(
    raw: Mapping[str, Any],
    environ: Mapping[str, str],
    warnings: list[str] | None = None,
    *,
    base_dir: Path | None = None,
) -> TargetConfig | None:
    """One target entry, validated; ``None`` for a target skipped with a warning.

    A provider this service does not run (AgentV's agent providers, or a name it does not
    know) and a CLI target asking for batching are skipped: the reason goes to ``warnings``
    and the log. A relative CLI ``cwd`` is read from ``base_dir`` (the targets file's folder).
    """
    name = str(raw.get("name", "")) or "(unnamed)"
    declared = str(raw.get("provider") or "").strip().lower()
    provider = canonical_provider(declared)
    reason = _skip_reason(provider, raw)
    if reason is not None:
        message = f"target {name!r} skipped: {reason}"
        logger.warning(message)
        if warnings is not None:
            warnings.append(message)
        return None
    used: list[str] = []
    values = interpolate(dict(raw), environ, name, used)
    values["provider"] = provider
    if declared in PROVIDER_BASE_URLS:
        values.setdefault("base_url", PROVIDER_BASE_URLS[declared])
    if declared in PROVIDER_API_FORMATS:
        values.setdefault("api_format", PROVIDER_API_FORMATS[declared])
    if provider == "cli" and base_dir is not None and isinstance(values.get("cwd"), str):
        values["cwd"] = str((base_dir / values["cwd"]).resolve())
    try:
        target = TARGET_ADAPTER.validate_python(values)
    except ValidationError as exc:
        problems = describe_problems(exc)
        raise TargetsFileError(f"target {name!r} (provider {provider!r}): {problems}") from None
    target._secret_values = tuple(used)
    unused = _unused_keys(type(target), values)
    if unused:
        message = f"target {name!r}: keys not used by this service: {', '.join(unused)}"
        logger.warning(message)
        if warnings is not None:
            warnings.append(message)
    return target


def _unused_keys(model: type[BaseModel], values: Mapping[str, Any]) -> list[str]:
    """The keys of ``values`` that no field of ``model`` reads (by name or alias)."""
    known: set[str] = set()
    for field_name, info in model.model_fields.items():
        known.add(field_name)
        alias = info.validation_alias
        if isinstance(alias, str):
            known.add(alias)
        elif isinstance(alias, AliasChoices):
            known.update(choice for choice in alias.choices if isinstance(choice, str))
    return sorted(key for key in values if key not in known and key != "use_target")


def _skip_reason(provider: str, raw: Mapping[str, Any]) -> str | None:
    if provider in UNSUPPORTED_AGENTV_PROVIDERS:
        return f"provider {provider!r} is an agent this service does not run"
    if provider not in SUPPORTED_PROVIDERS:
        return (
            f"unsupported provider {provider!r} "
            f"(supported: {', '.join(sorted(SUPPORTED_PROVIDERS))})"
        )
    if provider == "cli" and raw.get("provider_batching") is True:
        return "a batching CLI provider (one run for every case) is not supported"
    return None


def _from_providers_list(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An entry of AgentV's providers.yaml (``{id, label}``) as a targets-file entry.

    ``id`` is the provider, promptfoo style: ``openai``, or ``openai:gpt-4o`` (provider and
    model); ``label`` is the target's name.
    """
    config = entry.get("config")
    values = {key: value for key, value in entry.items() if key not in ("id", "label", "config")}
    if isinstance(config, dict):  # promptfoo's options live under ``config``
        values = {**config, **values}
    elif config is not None:
        values["config"] = config
    provider_id = str(entry.get("id", ""))
    provider, _, model = provider_id.partition(":")
    if provider == "openai" and model.startswith("responses:"):
        values.setdefault("api_format", "responses")
    if provider == "openai" and model.startswith(("embedding:", "embeddings:")):
        values.setdefault("api_format", "embeddings")
        model = model.partition(":")[2]
    if provider == "openai" and model.startswith("moderation:"):
        values.setdefault("api_format", "moderation")
        model = model.partition(":")[2]
    if provider == "huggingface" and ":" in model:  # huggingface:<task>:<model>
        task, _, model = model.partition(":")
        values.setdefault("task", task)
    model = model.removeprefix("chat:").removeprefix("messages:").removeprefix("responses:")
    if provider == "agentv" or model in UNSUPPORTED_AGENTV_PROVIDERS:
        provider = model or provider
    elif model:
        values.setdefault("model", model)
    values["provider"] = provider
    values["name"] = entry.get("label") or provider_id
    return values


def _resolve_aliases(
    entries: Sequence[Mapping[str, Any]], environ: Mapping[str, str], warnings: list[str]
) -> list[dict[str, Any]]:
    """``use_target`` entries become copies of the target they name (its keys, their name)."""
    by_name = {str(entry.get("name")): entry for entry in entries if "use_target" not in entry}
    resolved: list[dict[str, Any]] = []
    for entry in entries:
        if "use_target" not in entry:
            resolved.append(dict(entry))
            continue
        name = str(entry.get("name", "(unnamed)"))
        target_name = interpolate(entry["use_target"], environ, name)
        used = by_name.get(str(target_name))
        if used is None:
            message = f"target {name!r} skipped: use_target names no target ({target_name!r})"
            logger.warning(message)
            warnings.append(message)
            continue
        own = {key: value for key, value in entry.items() if key != "use_target"}
        resolved.append({**used, **own})
    return resolved


def load_targets_file(
    path: Path, environ: Mapping[str, str], warnings: list[str] | None = None
) -> list[TargetConfig]:
    """Read the targets file into validated targets (``${{ VAR }}`` read from ``environ``).

    Targets skipped (a provider not run here, a ``use_target`` naming no target) are left
    out, each with a message in ``warnings``.

    Raises:
        TargetsFileError: The file cannot be read, or a target is not valid.
    """
    warnings = [] if warnings is None else warnings
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TargetsFileError(f"targets file {str(path)!r} cannot be read: {exc}") from None
    if isinstance(document, list):  # AgentV's providers.yaml: [{id, label, ...}]
        entries: Any = [
            _from_providers_list(entry) if isinstance(entry, dict) else entry for entry in document
        ]
    else:
        entries = document.get("targets") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise TargetsFileError(f"targets file {str(path)!r} needs a 'targets:' list")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise TargetsFileError(f"targets[{index}] in {str(path)!r} is not a mapping")
    targets: list[TargetConfig] = []
    for entry in _resolve_aliases(entries, environ, warnings):
        target = parse_target(entry, environ, warnings, base_dir=path.parent)
        if target is not None:
            targets.append(target)
    return targets


def with_default_target(
    targets: Sequence[TargetConfig], skipped: Sequence[str] = ()
) -> list[TargetConfig]:
    """The targets, each name once, plus the mock ``default`` when none is called so.

    ``skipped``: warnings of targets skipped at load; a skipped ``default`` is not replaced
    by the mock (runs naming it fail, saying it is unknown, rather than silently mocking).

    Raises:
        TargetsFileError: Two targets share a name.
    """
    names = [target.name for target in targets]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise TargetsFileError(f"targets defined more than once: {', '.join(duplicates)}")
    if DEFAULT_TARGET in names or any(
        warning.startswith(f"target {DEFAULT_TARGET!r} skipped") for warning in skipped
    ):
        return list(targets)
    return [*targets, default_mock_target()]
