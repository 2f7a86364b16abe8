"""JSON Schemas from requests: nothing fetched, checked when declared, validation timed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.evaluators.checks.json_schemas import (
    MAX_SCHEMA_NODES,
    SchemaTimeout,
    schema_problem,
    validation_error,
)

LOOP = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"$ref": "http://127.0.0.1:9/schema.json"}, "'http://127.0.0.1:9/schema.json' that"),
        ({"$ref": "file:///etc/hostname"}, "'file:///etc/hostname' that does not resolve"),
        ({"properties": {"x": {"$ref": "other.json#/a"}}}, "'other.json#/a'"),
        ({"$ref": "#/$defs/missing"}, "'#/$defs/missing' that does not resolve"),
        ({"$ref": "#"}, "$ref loop"),
        ({**LOOP, "$ref": "#/$defs/a"}, "$ref loop"),
        ({"allOf": [{"not": {"$ref": "#"}}]}, "$ref loop"),
        ({"type": "nope"}, "not a valid JSON Schema at type"),
        ({"minLength": -1}, "not a valid JSON Schema"),
        ({"patternProperties": {"([": {}}}, "'([' is not a 'regex'"),
        ({"anyOf": [{"type": "string"}] * (MAX_SCHEMA_NODES + 1)}, "subschemas"),
    ],
)
def test_unusable_schemas_are_refused_by_name(schema: dict[str, Any], message: str) -> None:
    problem = schema_problem(schema)
    assert problem is not None
    assert message in problem


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"$ref": "#"}}},  # recursion reads the item
        {"allOf": [{"properties": {"next": {"$ref": "#"}}}]},
        {"$id": "https://example.test/root", "$defs": {"s": {"$id": "s", "type": "string"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/a"}
        | {"definitions": {"a": {"type": "string"}}},
        {"$ref": "https://json-schema.org/draft/2020-12/schema"},  # a meta-schema: built in
        {"type": "string", "pattern": "^[a-z]+$"},
        True,
    ],
)
def test_ordinary_schemas_are_accepted(schema: Any) -> None:
    assert schema_problem(schema) is None


def test_validation_names_the_place_and_reads_recursive_schemas() -> None:
    schema = {"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}}}
    assert validation_error(schema, {"next": {"next": {"n": 1}}}) is None
    error = validation_error(schema, {"next": {"n": "x"}})
    assert error is not None
    assert error.path == ("next", "n")


def test_a_backtracking_pattern_stops_at_its_time_limit() -> None:
    schema = {"type": "string", "pattern": "(a|aa)+$"}
    started = time.monotonic()
    with pytest.raises(SchemaTimeout):
        validation_error(schema, "a" * 40 + "!", seconds=0.2)
    assert time.monotonic() - started < 3  # stall bound: the timeout is CPU time


def test_a_huge_any_of_stops_at_its_deadline() -> None:
    leaf: dict[str, Any] = {"type": "string", "minLength": 99}
    schema: dict[str, Any] = leaf
    for _ in range(18):
        schema = {"anyOf": [schema, schema]}
    with pytest.raises(SchemaTimeout):
        validation_error(schema, "x", seconds=0.05)
