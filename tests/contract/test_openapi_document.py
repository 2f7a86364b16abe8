"""The OpenAPI document tells the truth: problem responses, event stream, parameter types."""

from __future__ import annotations

from typing import Any

import pytest

from app.main import create_app
from app.schemas.openai_examples import SAMPLE_EVAL_ID, SAMPLE_EVAL_RUN_ID, SAMPLE_FILE_ID
from app.schemas.runs import SAMPLE_ARMS_RUN_ID, SAMPLE_RUN_ID
from app.settings import Settings
from tests.contract.prefilled import operations

PROBLEM = "application/problem+json"
ERROR_MEMBERS = {"message", "type", "param", "code"}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("openapi") / "data"
    return create_app(Settings(data_dir=data)).openapi()


def test_every_refusal_is_a_documented_problem_document(document: dict[str, Any]) -> None:
    for path, method, operation in operations(document):
        responses = operation["responses"]
        refusals = {s: r for s, r in responses.items() if int(s) >= 400}
        check = check_openai_error if path.startswith("/v1/") else check_problem
        for status, response in refusals.items():
            assert response["description"], (method, path, status)
            check(response, int(status), path)
        if "security" in operation:
            assert {"401", "429"} <= set(responses), (method, path)
        if "requestBody" in operation:
            assert "413" in responses, (method, path)
    assert "HTTPValidationError" not in document["components"]["schemas"]


def check_problem(response: dict[str, Any], status: int, path: str) -> None:
    (media_type,) = response["content"]
    problem = response["content"][PROBLEM]
    example = problem["example"]
    assert media_type == PROBLEM, (path, status)
    assert problem["schema"] == {"$ref": "#/components/schemas/Problem"}
    assert (example["status"], example["instance"]) == (status, path)
    assert example["type"].startswith("/problems/"), (path, status)


def check_openai_error(response: dict[str, Any], status: int, path: str) -> None:
    """``/v1`` refuses as OpenAI does: ``{"error": {message, type, param, code}}``, 400 not 422."""
    (media_type,) = response["content"]
    error = response["content"]["application/json"]
    assert media_type == "application/json", (path, status)
    assert error["schema"] == {"$ref": "#/components/schemas/OpenAIError"}
    # The document drops null members; the body always has all four.
    assert {"message", "type"} <= set(error["example"]["error"]) <= ERROR_MEMBERS, path
    assert error["example"]["error"]["type"].endswith("_error"), (path, status)
    assert status != 422, path


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
        sample = SAMPLE_EVAL_RUN_ID if path.startswith("/v1/") else SAMPLE_RUN_ID
        if path == "/runs/{run_id}/compare":  # the run with three arms, so it shows pairs
            sample = SAMPLE_ARMS_RUN_ID
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "run_id":
                values = [e["value"] for e in parameter["examples"].values()]
                assert values == [sample], path


def test_v1_path_parameters_name_the_sample_eval_and_file(document: dict[str, Any]) -> None:
    samples = {"eval_id": SAMPLE_EVAL_ID, "file_id": SAMPLE_FILE_ID}
    for path, _, operation in operations(document):
        for parameter in operation.get("parameters", []):
            if parameter["name"] in samples:
                values = [e["value"] for e in parameter["examples"].values()]
                assert values == [samples[parameter["name"]]], path


def test_every_yaml_body_has_an_example(document: dict[str, Any]) -> None:
    for path, _, operation in operations(document):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/yaml" in content:
            assert content["application/yaml"]["example"].strip(), path
