"""The spec check itself: it finds what the description forbids and forgives only its list."""

from __future__ import annotations

from typing import Any

from testkit.openai_spec import SpecValidator

RUN_PATH = "/v1/evals/eval_1/runs/evalrun_1"


def run_object(**changes: Any) -> dict[str, Any]:
    run = {
        "object": "eval.run",
        "id": "evalrun_1",
        "eval_id": "eval_1",
        "status": "completed",
        "model": "gpt",
        "name": "r",
        "created_at": 1,
        "report_url": "http://127.0.0.1/runs/evalrun_1",
        "result_counts": {"total": 1, "errored": 0, "failed": 0, "passed": 1},
        "per_model_usage": [],
        "per_testing_criteria_results": [],
        "data_source": {
            "type": "jsonl",
            "source": {"type": "file_content", "content": [{"item": {}}]},
        },
        "metadata": {},
        "error": None,
    }
    return {**run, **changes}


def test_a_valid_run_passes_and_a_null_model_does_not(spec_validator: SpecValidator) -> None:
    assert spec_validator.errors("GET", RUN_PATH, 200, run_object()) == []
    (violation,) = spec_validator.errors("GET", RUN_PATH, 200, run_object(model=None))
    assert "$.model: None is not of type 'string'" in violation


def test_the_wrong_branch_of_a_data_source_is_named(spec_validator: SpecValidator) -> None:
    source = {"type": "completions", "source": {"type": "file_id"}}
    errors = spec_validator.errors("GET", RUN_PATH, 200, run_object(data_source=source))
    assert errors
    assert all("$.data_source" in error and "['jsonl']" not in error for error in errors)


def test_statuses_must_be_documented(spec_validator: SpecValidator) -> None:
    (wrong,) = spec_validator.errors("POST", "/v1/evals/eval_1/runs", 200, run_object())
    assert "status 200 is not documented" in wrong
    error = {
        "error": {"message": "m", "type": "invalid_request_error", "param": None, "code": None}
    }
    assert spec_validator.errors("POST", "/v1/evals/eval_1/runs", 400, error) == []
    assert spec_validator.errors("GET", "/v1/evals/eval_1", 404, error) == []
    assert spec_validator.errors("GET", "/v1/evals/eval_1", 404, {"message": "m"}) != []


def test_empty_page_ids_must_be_strings(spec_validator: SpecValidator) -> None:
    page: dict[str, Any] = {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }
    assert len(spec_validator.errors("GET", "/v1/evals", 200, page)) == 2
    page = {**page, "first_id": "", "last_id": ""}
    assert spec_validator.errors("GET", "/v1/evals", 200, page) == []
