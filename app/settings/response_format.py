"""Structured output as targets files and suites declare it, read into one form (pure).

``response_format`` is OpenAI's ``{type: json_schema, json_schema: {name, schema}}``,
``{type: json_object}`` (any JSON object) or a bare JSON Schema; ``{type: text}`` is no
structured output. Each adapter sends the schema natively (docs/providers.md, "Structured
output"): a target's applies to its candidate calls, a case's wins over it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_NAME = "response"


class ResponseFormatError(ValueError):
    """A ``response_format`` none of the accepted forms writes (the message says which)."""


class ResponseFormat(BaseModel):
    """The JSON Schema the candidate's reply must follow, and its name."""

    model_config = ConfigDict(frozen=True)
    name: str = DEFAULT_NAME
    schema_: dict[str, Any] = Field(alias="schema")


def read_response_format(raw: Any) -> ResponseFormat | None:
    """``raw`` in any accepted form; None for ``{type: text}``.

    Raises:
        ResponseFormatError: not a mapping, or a mapping none of the forms writes.
    """
    if isinstance(raw, ResponseFormat):
        return raw
    if not isinstance(raw, dict):
        shown = "a list" if isinstance(raw, list) else type(raw).__name__
        raise ResponseFormatError(f"must be a JSON Schema or OpenAI's response_format, not {shown}")
    kind = raw.get("type")
    if kind == "json_schema" and isinstance(raw.get("json_schema"), dict):
        inner = raw["json_schema"]
        schema = inner.get("schema")
        if isinstance(schema, dict):
            return ResponseFormat(name=str(inner.get("name") or DEFAULT_NAME), schema=schema)
    elif kind == "json_object":
        return ResponseFormat(schema={"type": "object"})
    elif kind == "text":
        return None
    elif kind is not None or "properties" in raw or "$schema" in raw:
        return ResponseFormat(schema=raw)
    raise ResponseFormatError(
        "must be {type: json_schema, json_schema: {name, schema}} or a schema"
    )
