"""The OpenAPI document tells the truth: problem responses, event stream, parameter types."""

from __future__ import annotations

from typing import Any

import pytest

from app.main import create_app
from app.settings import Settings
from tests.contract.prefilled import operations

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("openapi") / "data"
    return create_app(Settings(data_dir=data)).openapi()


def test_every_refusal_is_a_documented_problem_document(document: dict[str, Any]) -> None:
    for path, method, operation in operations(document):
        responses = operation["responses"]
        for status, response in responses.items():
            if int(status) >= 400:
                (media_type,) = response["content"]
                problem = response["content"][PROBLEM]
                example = problem["example"]
                assert media_type == PROBLEM, (method, path, status)
                assert problem["schema"] == {"$ref": "#/components/schemas/Problem"}
                assert response["description"], (method, path, status)
                assert (example["status"], example["instance"]) == (int(status), path)
                assert example["type"].startswith("/problems/"), (method, path, status)
        if "security" in operation:
            assert {"401", "429"} <= set(responses), (method, path)
        if "requestBody" in operation:
            assert "413" in responses, (method, path)
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_only_operations_whose_parameters_can_fail_document_a_422(
    document: dict[str, Any],
) -> None:
    run = document["paths"]["/runs/{run_id}"]
    assert "422" not in run["get"]["responses"]
    assert "422" not in run["delete"]["responses"]
    assert "422" in document["paths"]["/runs"]["get"]["responses"]
    assert "422" in document["paths"]["/runs/{run_id}/results"]["get"]["responses"]


def test_the_event_stream_is_typed_and_its_events_described(document: dict[str, Any]) -> None:
    response = document["paths"]["/runs/{run_id}/events"]["get"]["responses"]["200"]
    (media_type,) = response["content"]
    stream = response["content"]["text/event-stream"]
    events = stream["x-events"]
    schemas = document["components"]["schemas"]

    assert media_type == "text/event-stream"
    assert set(events) == {"case_completed", "progress", "run_completed"}
    for ref in events.values():
        assert ref["$ref"].removeprefix("#/components/schemas/") in schemas
    assert set(schemas["RunCompletedEvent"]["properties"]) >= {"status", "summary"}
    assert "event: run_completed" in stream["example"]


def test_yaml_query_parameters_carry_the_body_fields_types(document: dict[str, Any]) -> None:
    parameters = {p["name"]: p["schema"] for p in document["paths"]["/runs"]["post"]["parameters"]}

    assert parameters["max_concurrency"] == {"type": "integer", "minimum": 1, "maximum": 1000}
    assert parameters["allow_missing_files"] == {"type": "boolean"}
    assert parameters["cache"] == {"type": "boolean"}
    assert parameters["target"] == {"type": "string"}
    assert parameters["case_ids"] == {"type": "array", "items": {"type": "string"}}


def test_run_id_parameters_name_the_sample_run(document: dict[str, Any]) -> None:
    for path, _, operation in operations(document):
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "run_id":
                values = [e["value"] for e in parameter["examples"].values()]
                assert values == ["run_sample"], path


def test_every_yaml_body_has_an_example(document: dict[str, Any]) -> None:
    for path, _, operation in operations(document):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/yaml" in content:
            assert content["application/yaml"]["example"].strip(), path
