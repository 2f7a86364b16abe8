"""Pure translation of a chatPrompt into turns an API accepts, with every rewrite named.

OpenAI takes the chatPrompt nearly as is (a ``tool`` turn without a tool-call id goes as
``user`` with an ``@[Tool]:`` first line). Anthropic and Gemini take the system text in their
own field and strictly alternating user/assistant turns that start with the user: consecutive
same-role turns are merged with a blank line between them. Order and content are always kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.formatting.messages import ChatMessage

TOOL_MARKER = "@[Tool]:"
ASSISTANT_MARKER = "@[Assistant]:"


@dataclass
class Turn:
    """One outgoing turn: ``user`` or ``assistant``, its text and the chatPrompt turns in it."""

    role: str
    text: str
    sources: list[int] = field(default_factory=list)


@dataclass
class Conversation:
    """A system text (or ``None``), the outgoing turns, and what was rewritten to get them."""

    system: str | None
    turns: list[Turn]
    rewrites: list[str]


def tool_as_user(message: ChatMessage) -> str:
    """A tool turn's content under an ``@[Tool]:`` first line."""
    return f"{TOOL_MARKER}\n{message.content}"


def openai_messages(
    chat_prompt: Sequence[ChatMessage],
) -> tuple[list[dict[str, str]], list[str]]:
    """Chat Completions messages for a chatPrompt, and the rewrites applied."""
    messages: list[dict[str, str]] = []
    rewrites: list[str] = []
    for number, message in enumerate(chat_prompt, start=1):
        if message.role == "tool":
            messages.append({"role": "user", "content": tool_as_user(message)})
            rewrites.append(f"tool turn {number} sent as user with {TOOL_MARKER} marker")
        else:
            messages.append({"role": message.role, "content": message.content})
    return messages, rewrites


def alternating_conversation(
    chat_prompt: Sequence[ChatMessage], *, question: str, api: str
) -> Conversation:
    """System text plus alternating user/assistant turns starting with the user.

    Args:
        chat_prompt: the provider-neutral chatPrompt (at most one system message, first).
        question: sent as the only user turn when the chatPrompt has no other turn.
        api: the API's name, used in rewrite notes.
    """
    system_parts: list[str] = []
    turns: list[Turn] = []
    rewrites: list[str] = []
    for number, message in enumerate(chat_prompt, start=1):
        if message.role == "system":
            system_parts.append(message.content)
            continue
        role, text = (
            ("assistant", message.content)
            if message.role == "assistant"
            else ("user", message.content)
        )
        if message.role == "tool":
            text = tool_as_user(message)
            rewrites.append(f"tool turn {number} sent as user with {TOOL_MARKER} marker")
        if not turns and role == "assistant":
            role, text = "user", f"{ASSISTANT_MARKER}\n{message.content}"
            rewrites.append(
                f"assistant turn {number} sent as user with {ASSISTANT_MARKER} marker: "
                f"{api} conversations start with a user turn"
            )
        if turns and turns[-1].role == role:
            previous = turns[-1]
            rewrites.append(f"turns {previous.sources[-1]} and {number} merged: consecutive {role}")
            previous.text = f"{previous.text}\n\n{text}"
            previous.sources.append(number)
        else:
            turns.append(Turn(role=role, text=text, sources=[number]))
    if not turns:
        turns.append(Turn(role="user", text=question, sources=[]))
        rewrites.append(f"no user turn in chatPrompt: the question sent as the user turn ({api})")
    system = "\n\n".join(system_parts) if system_parts else None
    return Conversation(system=system, turns=turns, rewrites=rewrites)
