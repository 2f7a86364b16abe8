"""Sample values of a JSON Schema: valid for the schema, filled from the score and text given."""

from __future__ import annotations

from typing import Any

import jsonschema

from app.evaluators.judges.llm_judge import VERDICT_SCHEMA
from app.providers.structured_output.schema_instance import instance_from_schema

RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "enum": ["r1", "r2"]},
                    "satisfied": {"type": "boolean"},
                    "points": {"type": "integer", "minimum": 0, "maximum": 10},
                },
            },
        },
        "overall": {"$ref": "#/$defs/score"},
    },
    "$defs": {"score": {"type": "number", "minimum": 1, "maximum": 5}},
}


def test_a_verdict_takes_the_known_values_of_matching_types() -> None:
    known = {"score": 0.25, "hits": ["mentions 'refund'"], "misses": 3, "reasoning": "why"}
    value = instance_from_schema(VERDICT_SCHEMA, score=0.25, text="text", known=known)
    jsonschema.validate(value, VERDICT_SCHEMA)
    assert value["score"] == 0.25
    assert value["hits"] == ["mentions 'refund'"]
    assert value["reasoning"] == "why"
    assert value["misses"] == ["text"]  # 3 is not a list of strings: the sample stays


def test_rubric_arrays_list_every_id_and_scores_scale_into_ranges() -> None:
    value = instance_from_schema(RUBRIC_SCHEMA, score=0.5, text="t")
    assert [check["id"] for check in value["checks"]] == ["r1", "r2"]
    assert value["checks"][0]["points"] == 5
    assert value["overall"] == 3.0
    jsonschema.validate(value, RUBRIC_SCHEMA)


def test_each_call_builds_a_fresh_value() -> None:
    schema = {"type": "object", "properties": {"fixed": {"const": {"a": [1]}}}}
    first = instance_from_schema(schema)
    first["fixed"]["a"].append(2)
    assert instance_from_schema(schema) == {"fixed": {"a": [1]}}
