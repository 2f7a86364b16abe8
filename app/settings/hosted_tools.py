"""Tools a provider runs itself (web search, web fetch, MCP, code execution), read (pure).

A function tool is called by the model and answered by the suite (``app.settings.tools``).
A hosted tool is run by the provider, on its side, within the one API call: Anthropic's
versioned server tools (``{type: web_search_20250305, name, max_uses}``), the Responses API's
built-in tools (``{type: web_search_preview}``, ``{type: mcp, server_label, server_url}``) and
Gemini's (``{googleSearch: {}}``, ``{codeExecution: {}}``). This service never runs or fetches
anything for them: the declaration is sent as written to a target of the API that defines it,
and a target of any other API refuses the case naming the tool. Suites may declare them only
when the operator allows it (``EVAL_HOSTED_TOOLS``, docs/design.md).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

HostedApi = Literal["anthropic", "responses", "gemini"]

_ANTHROPIC = re.compile(
    r"^(web_search|web_fetch|code_execution|bash|text_editor|computer|memory|tool_search_tool_\w+)"
    r"_\d{8}$"
)
_RESPONSES = frozenset(
    {"web_search", "web_search_preview", "web_search_preview_2025_03_11", "web_search_2025_08_26"}
    | {"mcp", "file_search", "code_interpreter", "image_generation", "computer_use_preview"}
    | {"local_shell", "shell", "apply_patch"}
)
_GEMINI = frozenset(
    {"googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval"}
    | {"codeExecution", "code_execution", "urlContext", "url_context", "googleMaps"}
    | {"google_maps", "retrieval", "enterpriseWebSearch", "enterprise_web_search"}
)
API_NAMES: dict[HostedApi, str] = {
    "anthropic": "Anthropic's Messages API",
    "responses": "OpenAI's Responses API",
    "gemini": "Gemini's API",
}


class HostedTool(BaseModel):
    """One tool the provider runs itself, sent as the suite wrote it."""

    model_config = ConfigDict(frozen=True)
    api: HostedApi = Field(description="The API that defines (and runs) the tool.")
    kind: str = Field(description="Its type (Anthropic, Responses) or key (Gemini).")
    spec: dict[str, Any] = Field(description="The declaration, as written.")

    @property
    def label(self) -> str:
        """``web_search_20250305`` (Anthropic's and Responses' type, Gemini's key)."""
        return self.kind


def hosted_tool(raw: Any) -> HostedTool | None:
    """The hosted tool ``raw`` declares; None when it is not one (a function tool, or unknown)."""
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if isinstance(kind, str):
        if _ANTHROPIC.match(kind):
            return HostedTool(api="anthropic", kind=kind, spec=dict(raw))
        if kind in _RESPONSES:
            return HostedTool(api="responses", kind=kind, spec=dict(raw))
        return None
    if len(raw) == 1:
        (key, value), *_ = raw.items()
        if key in _GEMINI and isinstance(value, dict):
            return HostedTool(api="gemini", kind=key, spec=dict(raw))
    return None


def merged_hosted(*groups: tuple[HostedTool, ...]) -> tuple[HostedTool, ...]:
    """Hosted tools of several places; a later group's replaces an earlier one of its kind."""
    by_kind: dict[str, HostedTool] = {}
    for group in groups:
        for tool in group:
            by_kind[tool.kind] = tool
    return tuple(by_kind.values())


def unsupported(tools: tuple[HostedTool, ...], api: HostedApi | None) -> HostedTool | None:
    """The first of ``tools`` a target of ``api`` (None: an API with none) cannot run."""
    return next((tool for tool in tools if tool.api != api), None)
