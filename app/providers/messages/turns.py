"""Pure translation of a chatPrompt into turns an API accepts, with every rewrite named.

OpenAI takes the chatPrompt nearly as is (a ``tool`` turn without a tool-call id goes as
``user`` with an ``@[Tool]:`` first line). Anthropic and Gemini take the system text in their
own field and strictly alternating user/assistant turns that start with the user: consecutive
same-role turns are merged with a blank line between them. Order and content are always kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.formatting.messages import ChatMessage, ChatPart, ChatText

TOOL_MARKER = "@[Tool]:"
ASSISTANT_MARKER = "@[Assistant]:"


@dataclass
class Turn:
    """One outgoing turn: ``user`` or ``assistant``, its text and the chatPrompt turns in it.

    ``parts`` is set when the turn holds images: its text pieces and images in order (each
    adapter sends them as its own blocks); ``text`` then shows the images as markers.
    """

    role: str
    text: str
    sources: list[int] = field(default_factory=list)
    parts: list[ChatPart] = field(default_factory=list)


@dataclass
class Conversation:
    """A system text (or ``None``), the outgoing turns, and what was rewritten to get them."""

    system: str | None
    turns: list[Turn]
    rewrites: list[str]


def tool_as_user(message: ChatMessage) -> str:
    """A tool turn's content under an ``@[Tool]:`` first line."""
    return f"{TOOL_MARKER}\n{message.content}"


def openai_content_parts(parts: Sequence[ChatPart]) -> list[dict[str, Any]]:
    """A turn's pieces as Chat Completions content parts (``text``, ``image_url`` as written)."""
    return [part.model_dump(exclude_none=True) for part in parts]


def openai_messages(
    chat_prompt: Sequence[ChatMessage],
) -> tuple[list[dict[str, Any]], list[str]]:
    """Chat Completions messages for a chatPrompt, and the rewrites applied.

    A turn with images has a list of content parts (its text pieces and images in order).
    """
    messages: list[dict[str, Any]] = []
    rewrites: list[str] = []
    for number, message in enumerate(chat_prompt, start=1):
        if message.role == "tool":
            messages.append({"role": "user", "content": tool_as_user(message)})
            rewrites.append(f"tool turn {number} sent as user with {TOOL_MARKER} marker")
        elif message.parts:
            messages.append({"role": message.role, "content": openai_content_parts(message.parts)})
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
        parts = list(message.parts)
        if turns and turns[-1].role == role:
            previous = turns[-1]
            rewrites.append(f"turns {previous.sources[-1]} and {number} merged: consecutive {role}")
            if previous.parts or parts:  # blocks of both turns, in order
                previous.parts = [
                    *(previous.parts or [ChatText(text=previous.text)]),
                    *(parts or [ChatText(text=text)]),
                ]
            previous.text = f"{previous.text}\n\n{text}"
            previous.sources.append(number)
        else:
            turns.append(Turn(role=role, text=text, sources=[number], parts=parts))
    if not turns:
        turns.append(Turn(role="user", text=question, sources=[]))
        rewrites.append(f"no user turn in chatPrompt: the question sent as the user turn ({api})")
    system = "\n\n".join(system_parts) if system_parts else None
    return Conversation(system=system, turns=turns, rewrites=rewrites)
