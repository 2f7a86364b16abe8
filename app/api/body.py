"""Request bodies as JSON or YAML documents: one typed FastAPI dependency per body model.

A ``DocumentBody`` reads the body by its ``Content-Type`` (JSON when none is given), parses
it with the bounded parsers of ``app.suites.documents.parsing`` and validates it into its model,
naming every bad field. For suite bodies (``yaml_field="suite"``) a YAML body is the eval
file itself and the request's other fields come from query parameters. Each dependency also
describes its body (and those parameters) for the OpenAPI document, once.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import anyio
from fastapi import Request
from pydantic import BaseModel, ValidationError

from app.api.problems import invalid_request
from app.errors import BadRequest, InvalidRequest, UnsupportedMediaType
from app.suites.documents.parsing import parse_json, parse_yaml

JSON_MEDIA_TYPES = frozenset({"application/json"})
YAML_MEDIA_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"})
LIST_QUERY_FIELDS = ("case_ids", "guideline_patterns")
# Bodies larger than this are parsed and validated in a worker thread: a 5 MB body takes
# about a second of CPU, which would hold every other request on the event loop.
LOOP_BODY_BYTES = 64 * 1024
ModelT = TypeVar("ModelT", bound=BaseModel)


def media_type(request: Request) -> str:
    """The request's media type, lower-cased, without parameters ('' when absent)."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def text_json_body(request: Request) -> None:
    r"""Refuse a JSON body FastAPI parses itself when it spells a lone surrogate (``"\ud800"``).

    FastAPI's parser takes the escape; the service's own reader refuses it, naming the field
    and the value (400), and so does this dependency for the routes that declare it.
    """
    raw = await request.body()
    if raw and media_type(request) in JSON_MEDIA_TYPES | {""}:
        parse_json(raw)


def validate_document(model: type[ModelT], document: Any) -> ModelT:
    """Validate a parsed document into ``model``, naming every bad field."""
    if not isinstance(document, dict):
        raise InvalidRequest("the body must be an object (a mapping of field names to values)")
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise invalid_request(exc, document=document) from exc


class DocumentBody(Generic[ModelT]):
    """A dependency that reads the body as a ``model``, from JSON or YAML.

    Args:
        model: The body's model.
        examples: Named OpenAPI examples of the JSON body.
        yaml_field: When set, a YAML body is this field's text (the eval file itself) and
            ``query_fields`` (plus the list fields) come from the query string.
        yaml_example: The example shown for the YAML body.
        query_fields: Scalar fields read from the query string with a YAML body.
        list_fields: List fields read from the query string with a YAML body (when there
            are ``query_fields``).
    """

    def __init__(
        self,
        model: type[ModelT],
        *,
        examples: dict[str, Any],
        yaml_field: str | None = None,
        yaml_example: str | None = None,
        query_fields: tuple[str, ...] = (),
        list_fields: tuple[str, ...] = LIST_QUERY_FIELDS,
    ) -> None:
        self.model = model
        self.yaml_field = yaml_field
        self.query_fields = query_fields
        self.list_fields = list_fields if query_fields else ()
        self.openapi = self._openapi(examples, yaml_example)

    async def __call__(self, request: Request) -> ModelT:
        """The body, parsed by its ``Content-Type`` and validated into the model."""
        kind = media_type(request)
        if kind and kind not in JSON_MEDIA_TYPES | YAML_MEDIA_TYPES and not kind.endswith("+json"):
            raise UnsupportedMediaType(
                f"Content-Type {kind!r} is not accepted; send application/json or application/yaml"
            )
        raw = await request.body()
        query = self._query(request) if kind in YAML_MEDIA_TYPES and self.yaml_field else {}
        if len(raw) <= LOOP_BODY_BYTES:
            return self._read(raw, kind, query)
        return await anyio.to_thread.run_sync(self._read, raw, kind, query)

    def _read(self, raw: bytes, kind: str, query: dict[str, Any]) -> ModelT:
        """Parse and validate the body (CPU only: may run in a worker thread)."""
        if kind not in YAML_MEDIA_TYPES:
            return validate_document(self.model, parse_json(raw))
        if self.yaml_field is None:
            return validate_document(self.model, parse_yaml(raw))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRequest("the body is not UTF-8 text") from exc
        return validate_document(self.model, {self.yaml_field: text, **query})

    def _query(self, request: Request) -> dict[str, Any]:
        query = request.query_params
        fields: dict[str, Any] = {name: query[name] for name in self.query_fields if name in query}
        for name in self.list_fields:
            values = [part.strip() for item in query.getlist(name) for part in item.split(",")]
            if values:
                fields[name] = [value for value in values if value]
        return fields

    def _openapi(self, examples: dict[str, Any], yaml_example: str | None) -> dict[str, Any]:
        ref = {"$ref": f"#/components/schemas/{self.model.__name__}"}
        yaml_body: dict[str, Any] = {"schema": ref}
        if self.yaml_field is not None:
            yaml_body["schema"] = {"type": "string", "description": "The eval file itself (YAML)."}
        if yaml_example is not None:
            yaml_body["example"] = yaml_example
        extra: dict[str, Any] = {
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": ref, "examples": examples},
                    "application/yaml": yaml_body,
                },
            }
        }
        if self.query_fields:
            properties = self.model.model_json_schema(mode="validation")["properties"]
            extra["parameters"] = [
                query_parameter(name, properties[name])
                for name in (*self.query_fields, *self.list_fields)
            ]
        return extra


def query_parameter(name: str, field_schema: dict[str, Any]) -> dict[str, Any]:
    """The query parameter standing for a body field with a YAML body, typed as the field.

    A query parameter is absent rather than null, so a nullable field's ``null`` branch is
    dropped; lists may be repeated or comma-separated.
    """
    schema = {key: value for key, value in field_schema.items() if key not in ("title", "default")}
    branches = [branch for branch in schema.pop("anyOf", []) if branch.get("type") != "null"]
    if len(branches) == 1:
        schema.update(branches[0])
    elif branches:
        schema["anyOf"] = branches
    description = schema.pop("description", "")
    listed = schema.get("type") == "array"
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": f"With a YAML body: the request's `{name}`. {description}"
        + (" Repeat it or separate values with commas." if listed else ""),
        "schema": schema,
    }
