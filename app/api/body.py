"""Read a request body as a JSON or YAML document, and validate it into a model."""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from app.api.problems import invalid_request
from app.documents import parse_json, parse_yaml
from app.errors import InvalidRequest, UnsupportedMediaType

JSON_MEDIA_TYPES = frozenset({"application/json"})
YAML_MEDIA_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"})
ModelT = TypeVar("ModelT", bound=BaseModel)


def media_type(request: Request) -> str:
    """The request's media type, lower-cased, without parameters ('' when absent)."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def is_yaml(request: Request) -> bool:
    """Whether the body is declared as YAML."""
    return media_type(request) in YAML_MEDIA_TYPES


async def read_document(request: Request) -> Any:
    """The body parsed as JSON or YAML (by ``Content-Type``; JSON when none is given)."""
    kind = media_type(request)
    if kind and kind not in JSON_MEDIA_TYPES | YAML_MEDIA_TYPES and not kind.endswith("+json"):
        raise UnsupportedMediaType(
            f"Content-Type {kind!r} is not accepted; send application/json or application/yaml"
        )
    raw = await request.body()
    if kind in YAML_MEDIA_TYPES:
        return parse_yaml(raw)
    return parse_json(raw)


def validate_document(model: type[ModelT], document: Any) -> ModelT:
    """Validate a parsed document into ``model``, naming every bad field."""
    if not isinstance(document, dict):
        raise InvalidRequest(
            "the body must be an object (a mapping of field names to values)",
        )
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise invalid_request(exc) from exc


def body_openapi(model: type[BaseModel], examples: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` describing a JSON-or-YAML body of ``model`` with named examples."""
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": ref, "examples": examples},
                "application/yaml": {"schema": ref},
            },
        }
    }
