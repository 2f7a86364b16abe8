"""OpenAI's legacy function calling in a promptfoo provider's ``config``.

``functions`` (a list of ``{name, description, parameters}``, or a ``file://`` YAML/JSON
file holding one) and ``function_call`` (``auto``, ``none`` or ``{name}``) are what Chat
Completions took before ``tools``. promptfoo's OpenAI chat provider sends both as written
and, for a reply with a ``function_call``, outputs that object (``{name, arguments}``), which
its asserts read as ``output.name`` and ``JSON.parse(output.arguments)`` (measured on
0.123.1). Here they are the case's tools (so ``is-valid-openai-function-call`` checks the
call against them) marked ``legacy_functions``: an OpenAI Chat target gets them as
``functions``/``function_call``, and a target of another API (Responses, Anthropic, Gemini)
as its own function tools; whatever the target, a reply of calls answers with the first
call as ``{name, arguments}``, so the suite's asserts read the same output everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe

LEGACY_KEYS = frozenset({"functions", "function_call"})
READ_BY = frozenset({"chat", None})
"""promptfoo's provider families whose config sends legacy functions (its OpenAI chat)."""


def legacy_functions(family: str | None) -> frozenset[str]:
    """The legacy keys a provider of ``family`` reads (none but OpenAI Chat's)."""
    return LEGACY_KEYS if family in READ_BY else frozenset()


def as_tool_keys(
    config: Mapping[str, Any], where: DocumentPath, findings: Findings
) -> tuple[Mapping[str, Any], bool]:
    """``config`` with ``functions`` as ``tools`` and ``function_call`` as ``tool_choice``.

    Also whether it had legacy functions (an error in them is reported and leaves none).
    """
    if not any(key in config for key in LEGACY_KEYS):
        return config, False
    values = {key: value for key, value in config.items() if key not in LEGACY_KEYS}
    for legacy, modern in (("functions", "tools"), ("function_call", "tool_choice")):
        if legacy in config and modern in config:
            findings.error(
                (*where, legacy),
                f"give either {modern!r} or OpenAI's legacy {legacy!r}, not both",
            )
            return values, False
    choice = config.get("function_call")
    if choice is not None and not (
        choice in ("auto", "none") or (isinstance(choice, dict) and set(choice) == {"name"})
    ):
        findings.error(
            (*where, "function_call"),
            "must be 'auto', 'none' or {name: <function>}, not "
            + (repr(choice) if isinstance(choice, str) else describe(choice)),
        )
        return values, False
    if "functions" in config:
        values["tools"] = config["functions"]
    if choice is not None:
        values["tool_choice"] = choice
    return values, "functions" in config
