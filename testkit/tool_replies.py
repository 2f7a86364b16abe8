"""Scripted tool-calling candidates for the fake LLM server: a reply per step of a tool loop.

``ToolLoop(steps, final)`` is a ``responder``: it counts the tool-call steps a request already
carries (in its wire's own form) and answers with the next step's calls, or ``final`` once
every step was made. Judge calls (structured output, or the judge's marker) get the default
verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from testkit.fake_wire import JUDGE_MARKER, RecordedRequest, Reply, request_body, requested_schema


def steps_made(recorded: RecordedRequest) -> int:
    """How many tool-calling replies of the candidate the request sends back."""
    body = request_body(recorded)
    if recorded.wire == "gemini":
        return sum(
            any("functionCall" in part for part in content.get("parts", []))
            for content in body.get("contents", [])
            if content.get("role") == "model"
        )
    if recorded.wire == "anthropic":
        return sum(
            isinstance(m.get("content"), list)
            and any(block.get("type") == "tool_use" for block in m["content"])
            for m in body.get("messages", [])
            if m.get("role") == "assistant"
        )
    if recorded.wire == "responses":
        items = body.get("input")
        kinds = [item.get("type") for item in items] if isinstance(items, list) else []
        return sum(
            kind == "function_call" and (index == 0 or kinds[index - 1] != "function_call")
            for index, kind in enumerate(kinds)
        )
    return sum(bool(m.get("tool_calls")) for m in body.get("messages", []))


@dataclass
class ToolLoop:
    """Answer step ``n`` of a tool loop with ``steps[n]``'s calls, then with ``final``."""

    steps: list[list[dict[str, Any]]]
    final: str
    seen: list[int] = field(default_factory=list)

    def __call__(self, recorded: RecordedRequest) -> Reply | None:
        """The reply for this request (None: the default, for judge calls)."""
        if requested_schema(recorded) is not None or JUDGE_MARKER in recorded.messages_text():
            return None
        made = steps_made(recorded)
        self.seen.append(made)
        if made < len(self.steps):
            return Reply(tool_calls=self.steps[made])
        return Reply(text=self.final)
