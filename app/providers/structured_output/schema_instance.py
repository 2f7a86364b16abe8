"""Sample values of a JSON Schema: what the mock target answers a judge asking for one.

A schema is compiled once into a builder (the mock answers every judge call of a run with
the same schema), and each call only fills in its score and text.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.providers.structured_output.json_schema import JsonSchema, memoised, resolved_schema

Builder = Callable[[float, str], Any]
"""Builds a value of one schema node from a score in [0, 1] and a text."""
Check = Callable[[Any], bool]
"""Whether a given value has a property's JSON type."""


@dataclass(frozen=True)
class _Compiled:
    build: Builder
    accepts: Mapping[str, Check]


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
    compiled = _compiled(schema)
    value = compiled.build(score, text)
    if isinstance(value, dict) and known:
        for name, given in known.items():
            check = compiled.accepts.get(name)
            if name in value and check is not None and check(given):
                value[name] = given
    return value


@memoised
def _compiled(schema: JsonSchema) -> _Compiled:
    resolved = resolved_schema(schema)
    properties = resolved.get("properties", {})
    accepts = {name: _type_check(node) for name, node in properties.items()}
    return _Compiled(build=_builder(resolved), accepts=accepts)


def _type_check(node: Any) -> Check:
    """Whether a value is a string, a list of strings, a number or a boolean as ``node`` says."""
    kind = node.get("type") if isinstance(node, dict) else None
    kinds = set(kind) if isinstance(kind, list) else {kind}
    items = node.get("items") if isinstance(node, dict) else None
    string_items = isinstance(items, dict) and items.get("type") == "string"

    def check(value: Any) -> bool:
        if isinstance(value, bool):
            return "boolean" in kinds
        if isinstance(value, int | float):
            return "number" in kinds
        if isinstance(value, str):
            return "string" in kinds
        if isinstance(value, list):
            return "array" in kinds and string_items and all(isinstance(v, str) for v in value)
        return False

    return check


def _fixed(value: Any) -> Builder:
    if isinstance(value, dict | list):
        return lambda _score, _text: copy.deepcopy(value)
    return lambda _score, _text: value


def _builder(node: Any) -> Builder:  # noqa: C901 - one branch per type
    if not isinstance(node, dict):
        return _fixed(None)
    if "const" in node:
        return _fixed(node["const"])
    if node.get("enum"):
        return _fixed(node["enum"][0])
    for union in ("anyOf", "oneOf"):
        if node.get(union):
            options = [o for o in node[union] if isinstance(o, dict) and o.get("type") != "null"]
            return _builder(options[0] if options else node[union][0])
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in node):
        fields = [(name, _builder(sub)) for name, sub in node.get("properties", {}).items()]
        return lambda score, text: {name: build(score, text) for name, build in fields}
    if kind == "array":
        return _array_builder(node)
    if kind in ("number", "integer"):
        return _score_builder(node, integer=kind == "integer")
    if kind == "boolean":
        return _fixed(True)
    if kind == "null":
        return _fixed(None)
    return lambda _score, text: text


def _array_builder(node: JsonSchema) -> Builder:
    items = node.get("items", {})
    if not isinstance(items, dict):
        return _fixed([])
    item = _builder(items)
    id_enum = items.get("properties", {}).get("id", {}).get("enum")
    if items.get("type") == "object" and id_enum:
        ids = list(id_enum)
        return lambda score, text: [{**item(score, text), "id": value} for value in ids]
    return lambda score, text: [item(score, text)]


def _score_builder(node: JsonSchema, *, integer: bool) -> Builder:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    numbers = int | float

    def scaled(score: float) -> float | int:
        if isinstance(low, numbers) and isinstance(high, numbers):
            return low + score * (high - low)
        if isinstance(high, numbers):
            return min(score, high)
        if isinstance(low, numbers):
            return max(score, low)
        return score

    if integer:
        return lambda score, _text: round(scaled(score))
    return lambda score, _text: round(scaled(score), 4)
