"""Domain types of the formatting core: input messages, content parts and formatted prompts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")
Mode = Literal["lm", "agent"]
MarkerStyle = Literal["at", "bracket"]
DEFAULT_GUIDELINE_PATTERNS: tuple[str, ...] = ("**/*.instructions.md",)


class TextPart(BaseModel):
    """A text part of a message's content: ``{type: text, value: "..."}``."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    type: Literal["text"] = "text"
    value: str


class FilePart(BaseModel):
    """A file attachment: ``{type: file, value: path}``, the path as the case wrote it."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    type: Literal["file"] = "file"
    value: str = Field(min_length=1)


ContentPart = TextPart | FilePart
Content = str | list[str | ContentPart] | dict[str, Any]

_CONTENT_SHAPE = (
    "content must be a string, a list of parts (strings, {type: text, value} or "
    "{type: file, value: path}) or an object"
)


def _parse_part(index: int, part: Any) -> str | ContentPart:
    if isinstance(part, str | TextPart | FilePart):
        return part
    if not isinstance(part, dict):
        raise PydanticCustomError(
            "content_part",
            "a content part must be a string or an object with 'type'",
            {"part_index": index},
        )
    kind = part.get("type")
    value = part.get("value")
    if kind == "text" and value is None:  # OpenAI's (and promptfoo's) {type: text, text}
        value = part.get("text")
    if kind not in ("text", "file"):
        raise PydanticCustomError(
            "content_part",
            "unsupported content part type '{kind}' (expected 'text' or 'file')",
            {"part_index": index, "kind": str(kind)},
        )
    if not isinstance(value, str) or (kind == "file" and not value.strip()):
        raise PydanticCustomError(
            "content_part",
            "a {kind} part needs a string 'value'" + (" naming the file" if kind == "file" else ""),
            {"part_index": index, "kind": kind},
        )
    return TextPart(value=value) if kind == "text" else FilePart(value=value)


class Message(BaseModel):
    """One input message: a role and its content (string, list of parts, or object)."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    role: Role
    content: Content

    @field_validator("content", mode="before")
    @classmethod
    def _check_content(cls, value: Any) -> Any:
        """Give one clear message per bad part instead of pydantic's union noise."""
        if isinstance(value, str | dict):
            return value
        if isinstance(value, list | tuple):
            return [_parse_part(index, part) for index, part in enumerate(value)]
        raise PydanticCustomError("content_type", _CONTENT_SHAPE)


DEFAULT_SYSTEM_PROMPT = (
    "You are a careful assistant. Follow all provided instructions and do not fabricate results."
)
"""The system message of a case with no system turn (AgentV's wording; seed 001's default).

A target's or a suite's ``system_prompt`` replaces it; ``""`` sends none."""


class ChatMessage(BaseModel):
    """One message of a ``chatPrompt``: a role and its rendered text."""

    model_config = ConfigDict(frozen=True)
    role: Role
    content: str


class FormatOptions(BaseModel):
    """How to format: mode, marker style, guideline patterns and the system prompt."""

    model_config = ConfigDict(frozen=True)
    mode: Mode = "lm"
    marker_style: MarkerStyle = "at"
    guideline_patterns: tuple[str, ...] = DEFAULT_GUIDELINE_PATTERNS
    system_prompt: str | None = None
    default_system_prompt: str = ""


class FormattedPrompt(BaseModel):
    """The result of formatting one case: what the candidate and the judge are given."""

    model_config = ConfigDict(frozen=True)
    question: str
    guidelines: str
    guideline_paths: tuple[str, ...]
    chat_prompt: tuple[ChatMessage, ...]
    role_markers: bool
    file_paths: tuple[str, ...] = ()
    missing_files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    attachments: tuple[tuple[str, str], ...] = Field(
        (),
        description=(
            "Agent mode: (path as written, text) of every referenced file supplied, in order, "
            "for agents that read files rather than prompts (a CLI target's {FILES})."
        ),
    )
