"""JSON Schema helpers for structured output: references resolved, per-API dialects.

OpenAI strict mode wants every object closed (``additionalProperties: false``) with every
property listed in ``required`` (optional ones become nullable). Gemini's ``responseSchema`` is
an OpenAPI 3.0 subset: one ``type`` per node (``nullable`` instead of ``null`` in a type list),
no ``additionalProperties``, ``$ref`` or ``const``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import orjson

JsonSchema = dict[str, Any]
T = TypeVar("T")

_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "propertyOrdering",
        "title",
    }
)


def resolve_refs(schema: JsonSchema) -> JsonSchema:
    """Inline local ``#/$defs/...`` (and ``#/definitions/...``) references."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def walk(node: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [walk(item, depth) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and depth < 32:
            name = ref.rsplit("/", 1)[-1]
            if name in definitions:
                return walk(definitions[name], depth + 1)
        return {
            key: walk(value, depth)
            for key, value in node.items()
            if key not in ("$defs", "definitions", "$schema")
        }

    resolved: JsonSchema = walk(schema, 0)
    return resolved


def memoised(convert: Callable[[JsonSchema], T]) -> Callable[[JsonSchema], T]:
    """Convert each distinct schema once: a run sends the same judge schema on every call.

    The result is shared between calls: its users read it and never change it.
    """
    cache: dict[bytes, T] = {}

    @wraps(convert)
    def converted(schema: JsonSchema) -> T:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
        result = cache.get(key)
        if result is None:
            if len(cache) >= 256:
                cache.clear()
            result = cache[key] = convert(schema)
        return result

    return converted


resolved_schema = memoised(resolve_refs)
"""``resolve_refs``, once per distinct schema (the result is shared: read it, never change it)."""


@memoised
def openai_strict_schema(schema: JsonSchema) -> JsonSchema:
    """The schema rewritten to follow OpenAI's strict structured-output rules."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        if out.get("type") == "object" or "properties" in out:
            properties: dict[str, Any] = out.get("properties", {})
            required = set(out.get("required", []))
            for name, sub in properties.items():
                if name not in required and isinstance(sub, dict):
                    properties[name] = _nullable(sub)
            out["required"] = list(properties)
            out["additionalProperties"] = False
        return out

    strict: JsonSchema = walk(copy.deepcopy(schema))
    return strict


def _nullable(node: JsonSchema) -> JsonSchema:
    kind = node.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**node, "type": [kind, "null"]}
    if isinstance(kind, list) and "null" not in kind:
        return {**node, "type": [*kind, "null"]}
    return node


@memoised
def gemini_schema(schema: JsonSchema) -> JsonSchema:
    """The schema in Gemini's ``responseSchema`` dialect (an OpenAPI 3.0 subset)."""
    converted: JsonSchema = _gemini_node(resolve_refs(schema))
    return converted


def _gemini_node(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = _gemini_type(node)
    for key, value in node.items():
        if key not in _GEMINI_KEYS or key == "type":
            continue
        if key == "properties":
            out[key] = {name: _gemini_node(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = _gemini_node(value)
        elif key == "anyOf":
            out[key] = [_gemini_node(sub) for sub in value]
        else:
            out[key] = value
    return out


def _gemini_type(node: JsonSchema) -> dict[str, Any]:
    """One ``type`` per node; ``null`` in a type list becomes ``nullable``."""
    out: dict[str, Any] = {}
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        out["type"] = kinds[0] if kinds else "string"
        if "null" in kind:
            out["nullable"] = True
    elif kind is not None:
        out["type"] = kind
    if "const" in node:
        out["enum"] = [node["const"]]
    return out
