"""Domain types of the formatting core: input messages, content parts and formatted prompts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from app.formatting.images import ImagePart, parse_image_part

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


ContentPart = TextPart | FilePart | ImagePart
Content = str | list[str | ContentPart] | dict[str, Any]

_CONTENT_SHAPE = (
    "content must be a string, a list of parts (strings, {type: text, value}, "
    "{type: file, value: path} or {type: image_url, image_url: {url}}) or an object"
)


def _parse_part(index: int, part: Any) -> str | ContentPart:
    if isinstance(part, str | TextPart | FilePart | ImagePart):
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
    if kind == "image_url":
        return parse_image_part(index, part)
    if kind not in ("text", "file"):
        raise PydanticCustomError(
            "content_part",
            "unsupported content part type '{kind}' (expected 'text', 'file' or 'image_url')",
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

    @model_validator(mode="after")
    def _images_in_user_turns(self) -> Message:
        """Every API takes images in user turns only (system, assistant, tool: text)."""
        if self.role != "user" and isinstance(self.content, list):
            for part in self.content:
                if isinstance(part, ImagePart):
                    raise PydanticCustomError(
                        "content_part",
                        "an image_url part belongs in a user turn, not a {role} turn (APIs "
                        "take images only from the user)",
                        {"role": self.role},
                    )
        return self


DEFAULT_SYSTEM_PROMPT = (
    "You are a careful assistant. Follow all provided instructions and do not fabricate results."
)
"""The system message of a case with no system turn (AgentV's wording; seed 001's default).

A target's or a suite's ``system_prompt`` replaces it; ``""`` sends none."""


class ChatText(BaseModel):
    """A text piece of a chatPrompt turn with images: ``{type: text, text}`` (OpenAI's form)."""

    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


ChatPart = ChatText | ImagePart


class ChatMessage(BaseModel):
    """One message of a ``chatPrompt``: a role and its rendered text.

    A user turn holding images also has ``parts``: its rendered pieces in order, text pieces
    as they are in ``content`` and each image as written (``content`` shows it as a
    ``<image: ...>`` marker). API targets send ``parts`` as native content parts.
    """

    model_config = ConfigDict(frozen=True)
    role: Role
    content: str
    parts: tuple[ChatPart, ...] = Field(
        (),
        exclude_if=lambda parts: not parts,
        description=(
            "Only in a turn with images: its text pieces and images, in order, as API "
            "targets receive them (`content` shows each image as an `<image: ...>` marker)."
        ),
    )

    @property
    def images(self) -> tuple[ImagePart, ...]:
        """The turn's images, in order."""
        return tuple(part for part in self.parts if isinstance(part, ImagePart))


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
