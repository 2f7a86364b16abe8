"""``/v1/imports``: what the migration command writes, its refusals, and imported runs read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from app.schemas.openai_examples import SAMPLE_EVAL_ID, SAMPLE_EVAL_RUN_ID
from app.settings import Settings
from testkit.openai_spec import SpecValidator
from tests.conftest import ClientFactory, wait_for_run

EVAL: dict[str, Any] = {
    "object": "eval",
    "id": "eval_67abd54d9b0081909a86353f6fb9317a",
    "name": "External Data Eval",
    "created_at": 1739314509,
    "metadata": {"test": "synthetics"},
    "data_source_config": {
        "type": "custom",
        "schema": {
            "type": "object",
            "properties": {"item": {"type": "object"}, "sample": {"type": "object"}},
            "required": ["item", "sample"],
        },
    },
    "testing_criteria": [
        {
            "name": "String check",
            "id": "String check-2eaf2d8d-d649-4335-8148-9535a7ca73c2",
            "type": "string_check",
            "input": "{{item.input}}",
            "reference": "{{item.ground_truth}}",
            "operation": "eq",
        }
    ],
}
RUN: dict[str, Any] = {
    "object": "eval.run",
    "id": "evalrun_67abd54d60ec8190832b46859da808f7",
    "eval_id": EVAL["id"],
    "status": "completed",
    "model": "gpt-4o-mini",
    "name": "gpt-4o-mini",
    "created_at": 1743092069,
    "result_counts": {"total": 1, "errored": 0, "failed": 0, "passed": 1},
    "per_model_usage": None,
    "per_testing_criteria_results": None,
    "data_source": {"type": "jsonl", "source": {"type": "file_id", "id": "file-abc"}},
    "error": None,
    "metadata": {},
}
ITEM: dict[str, Any] = {
    "object": "eval.run.output_item",
    "id": "outputitem_67e5796c28e081909917bf79f6e6214d",
    "created_at": 1743092076,
    "run_id": RUN["id"],
    "eval_id": EVAL["id"],
    "status": "pass",
    "datasource_item_id": 5,
    "datasource_item": {"input": "Stock Markets Rally", "ground_truth": "Markets"},
    "results": [{"name": "String check-a2486074", "sample": None, "passed": True, "score": 1.0}],
    "sample": {
        "input": [{"role": "user", "content": "Stock Markets Rally", "tool_calls": None}],
        "output": [{"role": "assistant", "content": "Markets"}],
        "finish_reason": "stop",
        "model": "gpt-4o-mini-2024-07-18",
        "usage": {"total_tokens": 325, "completion_tokens": 2, "prompt_tokens": 323},
        "error": None,
        "temperature": 1.0,
        "max_completion_tokens": 2048,
        "top_p": 1.0,
        "seed": None,
    },
}
RUN_PATH = f"/v1/imports/evals/{EVAL['id']}/runs/{RUN['id']}"


@pytest.fixture
async def http(tmp_path: Path, make_client: ClientFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        yield client


async def test_an_openai_export_is_imported_once_and_read_as_openai_served_it(
    http: httpx.AsyncClient, spec_validator: SpecValidator
) -> None:
    first = (await http.put(f"/v1/imports/evals/{EVAL['id']}", json=EVAL)).json()
    again = (await http.put(f"/v1/imports/evals/{EVAL['id']}", json=EVAL)).json()
    run = (await http.put(RUN_PATH, json=RUN)).json()
    stored = (await http.post(f"{RUN_PATH}/output_items", json={"start": 0, "data": [ITEM]})).json()
    repeated = (
        await http.post(f"{RUN_PATH}/output_items", json={"start": 0, "data": [ITEM]})
    ).json()
    http.event_hooks["response"].append(spec_validator.async_hook)
    sdk = AsyncOpenAI(base_url="http://testserver/v1", api_key="k", http_client=http)  # type: ignore[arg-type]
    listed = (await sdk.evals.runs.output_items.list(RUN["id"], eval_id=EVAL["id"])).data
    cancelled = await sdk.evals.runs.cancel(RUN["id"], eval_id=EVAL["id"])
    regrade = await http.post(f"/runs/{RUN['id']}/regrade", json={})

    assert (first["created"], again["created"], run["created"]) == (True, False, True)
    assert first["eval"]["testing_criteria"] == EVAL["testing_criteria"]
    assert (stored["items_stored"], repeated["items_stored"], repeated["created"]) == (1, 1, False)
    (item,) = listed
    assert (item.id, item.status, item.sample.seed, item.sample.max_completion_tokens) == (
        ITEM["id"],
        "pass",
        42,
        2048,
    )
    assert cancelled.status == "completed"
    assert cancelled.result_counts.passed == 1
    assert regrade.status_code < 500


@pytest.mark.parametrize(
    ("path", "body", "param", "named"),
    [
        (
            f"/v1/imports/evals/{EVAL['id']}",
            {**EVAL, "data_source_config": {"type": "logs"}},
            "data_source_config.type",
            "'logs'",
        ),
        (RUN_PATH, {**RUN, "status": "in_progress"}, "status", "'in_progress'"),
    ],
)
async def test_what_cannot_be_carried_is_refused_by_name(
    http: httpx.AsyncClient, path: str, body: dict[str, Any], param: str, named: str
) -> None:
    if path == RUN_PATH:
        await http.put(f"/v1/imports/evals/{EVAL['id']}", json=EVAL)
    answer = await http.put(path, json=body)

    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == param
    assert named in answer.json()["error"]["message"]


@pytest.mark.usefixtures("sample_runs")
async def test_a_run_of_this_service_is_left_alone(http: httpx.AsyncClient) -> None:
    await wait_for_run(http, SAMPLE_EVAL_RUN_ID)
    path = f"/v1/imports/evals/{SAMPLE_EVAL_ID}/runs/{SAMPLE_EVAL_RUN_ID}"
    same = (await http.put(path, json={**RUN, "status": "failed"})).json()
    items = await http.post(f"{path}/output_items", json={"start": 0, "data": [ITEM]})

    assert (same["created"], same["run"]["status"]) == (False, "completed")
    assert items.status_code == 400
    assert "was not imported" in items.json()["error"]["message"]
