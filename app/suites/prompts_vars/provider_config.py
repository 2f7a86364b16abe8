"""A promptfoo provider's ``config``: the model settings its calls get here.

promptfoo gives a provider's ``config`` to that provider, which sends what its API takes.
Here the provider names a target, and its ``config`` is read in four parts:

- **settings** (``temperature``, ``max_tokens``, ``top_p``, ``seed``, ``stop``...; Gemini's
  ``generationConfig``): the arm's model options, over the target's own, sent in the
  target's API's form. A target whose API does not take one is refused when the run is
  planned, naming it;
- keys promptfoo's provider of that API does not send either (``max_output_tokens`` on Chat
  Completions, ``stop`` on Anthropic: measured): a warning says so;
- **API fields** promptfoo sends as written for its provider's API (``store``, ``metadata``,
  ``instructions`` of the Responses API, Anthropic's ``thinking``...) and ``passthrough``:
  sent as written in the body;
- **tools** (``tools``, ``tool_choice``, ``response_format``...): read by ``tool_use``;
  OpenAI Chat's legacy ``functions``/``function_call`` too (``legacy_functions``);
- **the connection and the model** (``apiKey``, ``apiHost``, ``headers``, ``model``...): the
  target's. A suite never chooses where, how, with which key or to which model the service
  connects: a warning says so.

Any other key is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.providers.base import ModelOptions
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.prompts_vars.legacy_functions import legacy_functions
from app.suites.reading import refuse
from app.suites.tool_callbacks import callback_keys
from app.suites.tool_use import TOOL_USE_KEYS

SETTINGS: dict[str, str] = {
    "temperature": "temperature",
    **dict.fromkeys(
        ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"),
        "max_output_tokens",
    ),
    "num_predict": "max_output_tokens",  # Ollama's
    "max_new_tokens": "max_output_tokens",  # Hugging Face's, Replicate's
    "top_p": "top_p",
    "topP": "top_p",
    "top_k": "top_k",
    "topK": "top_k",
    "seed": "seed",
    **dict.fromkeys(("stop", "stop_sequences", "stopSequences"), "stop"),
    "frequency_penalty": "frequency_penalty",
    "frequencyPenalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "presencePenalty": "presence_penalty",
    "reasoning_effort": "reasoning_effort",
}
"""promptfoo's spellings of the model settings, by the option each is here."""


def _as_written(*keys: str) -> dict[str, tuple[str, ...]]:
    return {key: (key,) for key in keys}


API_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "chat": _as_written("store", "metadata", "user", "service_tier", "verbosity"),
    "responses": _as_written("instructions", "store", "metadata", "user", "service_tier"),
    "anthropic": {
        **_as_written("thinking", "metadata", "cache_control"),
        "output_format": ("output_config", "format"),
    },
    "gemini": {**_as_written("safetySettings", "toolConfig"), "tool_config": ("toolConfig",)},
}
"""Body fields promptfoo sends for its provider's API, by key: where in the body it puts them.

Measured on 0.123.1 with an echoing fake, except ``verbosity`` (promptfoo sends it to
reasoning models only) and Gemini's two (fields of its API, unmeasured).
"""

UNSENT: dict[str, frozenset[str]] = {
    "chat": frozenset({"max_output_tokens", "maxOutputTokens", "top_k", "topK", "instructions"})
    | {"n", "logprobs", "stop_sequences", "stopSequences", "modalities", "extra_body"}
    | {"logit_bias"},
    "responses": frozenset({"seed", "stop", "stop_sequences", "stopSequences"}),
    "anthropic": frozenset({"stop", "seed", "max_completion_tokens"}),
    "gemini": frozenset({"stop", "seed"}),
}
"""Keys promptfoo 0.123.1's provider of that API reads but does not send (measured)."""

CONNECTION = frozenset(
    {
        *("apiKey", "apiKeyEnvar", "apiBaseUrl", "apiHost", "baseUrl", "url", "apiVersion"),
        *("organization", "headers", "region", "projectId", "deploymentName", "tls"),
        *("maxRetries", "timeoutMs", "websocketTimeout", "stream", "method", "body"),
        *("transformRequest", "transformResponse", "cost", "model", "model_id"),
        *("knowledgeBaseId", "apiEndpoint"),
    }
)
"""Keys of how, where and to which model promptfoo connects: here the target's business."""

RESERVED = frozenset({"model", "stream", "stream_options", "n", "best_of"})
"""Body fields a suite may not set: the model, the number of answers, how they arrive."""

_FAMILIES = (
    ("openai:responses:", "responses"),
    ("azure:responses:", "responses"),
    ("anthropic:", "anthropic"),
    ("google:", "gemini"),
    ("vertex:", "gemini"),
)


PROGRAMS = ("file://", "exec:", "python:", "golang:", "ruby:")
"""promptfoo's provider ids that name a program (a custom provider)."""


def api_family(provider_id: Any) -> str | None:
    """The API promptfoo's provider ``provider_id`` speaks (None: not a model API it knows).

    ``program`` for a custom provider (a program promptfoo runs).
    """
    if not isinstance(provider_id, str):
        return None
    if provider_id.startswith(PROGRAMS):
        return "program"
    if provider_id.startswith("bedrock:") and "anthropic" in provider_id:
        return "anthropic"
    for prefix, family in _FAMILIES:
        if provider_id.startswith(prefix):
            return family
    chat = ("openai:", "azure:", "groq:", "deepseek:", "xai:", "mistral:", "openrouter:")
    return "chat" if provider_id.startswith(chat) else None


def tool_keys(config: Mapping[str, Any], provider_id: Any) -> Mapping[str, Any]:
    """``config`` with Gemini's ``responseSchema`` as the ``response_format`` it means.

    promptfoo's Google provider asks for JSON following it (``tool_use`` reads the rest).
    """
    if api_family(provider_id) != "gemini" or "responseSchema" not in config:
        return config
    return {"response_format": config["responseSchema"], **config}


def read_model_settings(
    config: Mapping[str, Any], provider_id: Any, where: DocumentPath, findings: Findings
) -> ModelOptions | None:
    """The model options a provider's (or a grader's) ``config`` sets; None: it sets none.

    Tools are left to ``tool_use``; connection keys are warned about; other keys refused.
    """
    family = api_family(provider_id)
    options: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    # Gemini's generationConfig wins over the same settings outside it (measured).
    for key, value in sorted(config.items(), key=lambda item: item[0] == "generationConfig"):
        _read_key(key, value, family, (*where, key), options, extra, findings)
    for key in sorted(RESERVED & set(extra)):
        refuse(
            findings,
            (*where, "passthrough", key),
            f"body field {key!r}",
            "a suite never chooses the model, how many answers it gives or how they arrive",
        )
    if extra:
        options["extra_body"] = extra
    if not options:
        return None
    try:
        return ModelOptions.model_validate(options)
    except ValidationError as exc:
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            spelled = next((k for k in config if SETTINGS.get(k) == field), field)
            findings.error((*where, spelled), f"{error['msg']}: {config.get(spelled)!r}")
        return None


def _read_key(
    key: str,
    value: Any,
    family: str | None,
    path: DocumentPath,
    options: dict[str, Any],
    extra: dict[str, Any],
    findings: Findings,
) -> None:
    """One key of a config: into ``options`` or ``extra`` (body fields), warned, or refused."""
    unsent = _not_sent(key, value, family)
    if unsent is not None:
        if unsent:
            findings.warn(path, unsent)
    elif key in SETTINGS:
        options[SETTINGS[key]] = (
            [value] if SETTINGS[key] == "stop" and isinstance(value, str) else value
        )
    elif key == "generationConfig" and family == "gemini":
        _generation_config(value, path, options, extra, findings)
    elif key == "passthrough":
        if isinstance(value, dict):
            extra.update(value)
        else:
            findings.error(path, f"must be a mapping of body fields, not {describe(value)}")
    elif family is not None and key in API_FIELDS[family]:
        _put_api_field(API_FIELDS[family][key], value, extra)
    elif key not in TOOL_USE_KEYS | legacy_functions(family) | callback_keys(family) and not (
        family == "gemini" and key == "responseSchema"
    ):
        refuse(findings, path, f"config key {key!r}", _why_not(family))


def _not_sent(key: str, value: Any, family: str | None) -> str | None:
    """Why promptfoo's provider would send nothing of a key either ("": nothing to say).

    None: the key is read here (a setting, a body field, a tool) or refused.
    """
    if family == "program":
        return (
            "not read: a custom provider's config is its program's input; here the provider "
            "names a target, whose program (if any) is the operator's"
        )
    if (key, value) in (("showThinking", False), ("modalities", ["text"])):
        return ""  # what already holds here: an answer is text, never the model's thinking
    if key in UNSENT.get(family or "", ()):
        return f"not read: promptfoo's {family} provider does not send it either"
    if key in CONNECTION:
        return (
            "not read: the target's connection and model apply (the provider's label or id "
            "names the target; a suite never chooses where, how, with which key or to which "
            "model the service connects)"
        )
    return None


def _generation_config(
    value: Any,
    path: DocumentPath,
    options: dict[str, Any],
    extra: dict[str, Any],
    findings: Findings,
) -> None:
    """Gemini's ``generationConfig``: its settings as options, its other fields as written."""
    if not isinstance(value, dict):
        findings.error(path, f"must be a mapping, not {describe(value)}")
        return
    for key, item in value.items():
        if key in SETTINGS:
            options[SETTINGS[key]] = item
        else:
            extra.setdefault("generationConfig", {})[key] = item


def _put_api_field(where: tuple[str, ...], value: Any, extra: dict[str, Any]) -> None:
    """Put a body field at ``where`` in ``extra`` (Gemini's ``tool_config`` spelled as the API)."""
    *parents, last = where
    place = extra
    for parent in parents:
        place = place.setdefault(parent, {})
    place[last] = _gemini_tool_config(value) if last == "toolConfig" else value


def _gemini_tool_config(value: Any) -> Any:
    """``tool_config`` in the REST API's spelling, as promptfoo sends it (mode upper-cased)."""
    if not isinstance(value, dict):
        return value
    calling = value.get("function_calling_config", value.get("functionCallingConfig"))
    if not isinstance(calling, dict):
        return value
    spelled = {
        "allowedFunctionNames" if key == "allowed_function_names" else key: item
        for key, item in calling.items()
    }
    if isinstance(spelled.get("mode"), str):
        spelled["mode"] = spelled["mode"].upper()
    return {"functionCallingConfig": spelled}


def _why_not(family: str | None) -> str:
    fields = sorted(API_FIELDS.get(family or "", ()))
    sent = f", the API fields {', '.join(fields)}" if fields else ""
    return (
        "a provider's config gives its model settings (temperature, max_tokens, top_p, top_k, "
        f"seed, stop, penalties, reasoning_effort), its tools{sent} and 'passthrough' (body "
        "fields sent as written); this key is none of them"
    )


def grading_settings(provider: Any, path: DocumentPath, findings: Findings) -> dict[str, Any]:
    """The judge options of a grading ``provider`` (``{id, config}``): its config's settings.

    promptfoo gives a grading provider object's ``config`` to that provider (measured), so
    its settings are the judge calls' options (a grader's ``judge_options``); {} for none.
    """
    if not isinstance(provider, dict) or provider.get("config") is None:
        return {}
    config = provider["config"]
    if not isinstance(config, dict):
        findings.error((*path, "config"), f"must be a mapping, not {describe(config)}")
        return {}
    settings = read_model_settings(config, provider.get("id"), (*path, "config"), findings)
    return settings.model_dump(mode="json", exclude_none=True) if settings else {}
