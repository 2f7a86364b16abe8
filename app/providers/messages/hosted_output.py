"""What a hosted tool did, as a line of the answer: the Responses API's tool output items.

A Responses reply lists, besides its message and function calls, the items of the tools the
provider ran itself (web search, code interpreter, MCP). promptfoo writes each as a line of
the output, between the message texts, joined by newlines, and its graders read those lines
(``is-valid-openai-tools-call`` passes on an ``MCP Tool Result``); the lines here say the same
(measured wording of promptfoo 0.123.1's Responses provider), so the answer reads alike.
"""

from __future__ import annotations

import json
from typing import Any


def _web_search(item: dict[str, Any]) -> str:
    action = item.get("action")
    if isinstance(action, dict):
        kind = action.get("type")
        line = {
            "search": f'Web Search: "{action.get("query")}"',
            "open_page": f"Opening page: {action.get('url')}",
            "find_in_page": f'Finding in page: "{action.get("query")}"',
        }.get(str(kind), f"Web action: {kind}")
    else:
        line = f"Web Search Call (status: {item.get('status') or 'unknown'})"
    if item.get("status") == "failed" and item.get("error"):
        line += f" (Error: {item['error']})"
    return line


def _code_interpreter(item: dict[str, Any]) -> str:
    line = f"Code Interpreter: {item.get('code') or 'Running code...'}"
    if item.get("status") == "failed" and item.get("error"):
        line += f" (Error: {item['error']})"
    return line


def _mcp_call(item: dict[str, Any]) -> str:
    if item.get("error"):
        return f"MCP Tool Error ({item.get('name')}): {item['error']}"
    return f"MCP Tool Result ({item.get('name')}): {item.get('output')}"


def _mcp_tools(item: dict[str, Any]) -> str:
    return f"MCP Tools from {item.get('server_label')}: {json.dumps(item.get('tools'), indent=2)}"


def _mcp_approval(item: dict[str, Any]) -> str:
    return (
        f"MCP Approval Required for {item.get('server_label')}.{item.get('name')}: "
        f"{item.get('arguments')}"
    )


_LINES = {
    "web_search_call": _web_search,
    "code_interpreter_call": _code_interpreter,
    "mcp_call": _mcp_call,
    "mcp_list_tools": _mcp_tools,
    "mcp_approval_request": _mcp_approval,
}


def hosted_line(item: Any) -> str | None:
    """The line of a hosted tool's output item; None for any other item."""
    if not isinstance(item, dict):
        return None
    line = _LINES.get(str(item.get("type")))
    return line(item) if line else None
