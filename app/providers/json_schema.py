"""JSON Schema helpers for structured output: per-API dialects and sample instances.

OpenAI strict mode wants every object closed (``additionalProperties: false``) with every
property listed in ``required`` (optional ones become nullable). Gemini's ``responseSchema`` is
an OpenAPI 3.0 subset: one ``type`` per node (``nullable`` instead of ``null`` in a type list),
no ``additionalProperties``, ``$ref`` or ``const``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any

import orjson

JsonSchema = dict[str, Any]

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


def _memoised(convert: Callable[[JsonSchema], JsonSchema]) -> Callable[[JsonSchema], JsonSchema]:
    """Convert each distinct schema once: a run sends the same judge schema on every call.

    The converted schema is shared between calls; request bodies only read it.
    """
    cache: dict[bytes, JsonSchema] = {}

    @wraps(convert)
    def converted(schema: JsonSchema) -> JsonSchema:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
        result = cache.get(key)
        if result is None:
            if len(cache) >= 256:
                cache.clear()
            result = cache[key] = convert(schema)
        return result

    return converted


resolved_schema = _memoised(resolve_refs)
"""``resolve_refs``, once per distinct schema (the result is shared: read it, never change it)."""


@_memoised
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


@_memoised
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


def instance_from_schema(
    schema: JsonSchema,
    *,
    score: float = 1.0,
    text: str = "ok",
    known: Mapping[str, Any] | None = None,
) -> Any:
    """A value valid for ``schema``, with numbers set from ``score`` and strings from ``text``.

    Arrays of strings get one item; arrays of objects whose ``id`` property has an ``enum`` get
    one item per enum value (a rubric verdict lists every rubric). Top-level properties named
    in ``known`` take its value when that value has the property's JSON type.
    """
    resolved = resolved_schema(schema)
    value = _instance(resolved, score, text)
    if isinstance(value, dict) and known:
        properties = resolved.get("properties", {})
        for name, given in known.items():
            if name in value and _has_type(given, properties.get(name, {})):
                value[name] = given
    return value


def _has_type(value: Any, node: Any) -> bool:
    kind = node.get("type") if isinstance(node, dict) else None
    kinds = kind if isinstance(kind, list) else [kind]
    items = node.get("items") if isinstance(node, dict) else None
    string_items = isinstance(items, dict) and items.get("type") == "string"
    checks = {
        "string": isinstance(value, str),
        "array": string_items
        and isinstance(value, list)
        and all(isinstance(v, str) for v in value),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
    }
    return any(checks.get(str(k), False) for k in kinds)


def _instance(node: Any, score: float, text: str) -> Any:  # noqa: C901 - one branch per type
    if not isinstance(node, dict):
        return None
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for union in ("anyOf", "oneOf"):
        if node.get(union):
            options = [o for o in node[union] if isinstance(o, dict) and o.get("type") != "null"]
            return _instance(options[0] if options else node[union][0], score, text)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in node):
        return {
            name: _instance(sub, score, text) for name, sub in node.get("properties", {}).items()
        }
    if kind == "array":
        return _array_instance(node, score, text)
    if kind in ("number", "integer"):
        return _scaled_score(node, score, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return text


def _array_instance(node: JsonSchema, score: float, text: str) -> list[Any]:
    items = node.get("items", {})
    if not isinstance(items, dict):
        return []
    id_enum = items.get("properties", {}).get("id", {}).get("enum")
    if items.get("type") == "object" and id_enum:
        result = []
        for value in id_enum:
            item = _instance(items, score, text)
            item["id"] = value
            result.append(item)
        return result
    return [_instance(items, score, text)]


def _scaled_score(node: JsonSchema, score: float, *, integer: bool) -> float | int:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    value = score
    if isinstance(low, int | float) and isinstance(high, int | float):
        value = low + score * (high - low)
    elif isinstance(high, int | float):
        value = min(score, high)
    elif isinstance(low, int | float):
        value = max(score, low)
    return round(value) if integer else round(value, 4)
