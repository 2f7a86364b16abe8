"""``sampling_params`` of ``completions`` runs reach the candidate's provider request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.schemas.openai_examples import EVAL_EXAMPLE, SAMPLE_ITEMS
from app.settings import Settings
from app.settings.targets import AnthropicTarget, OpenAITarget
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory, wait_for_run

# Validation errors name the data source's branch, as pydantic locates them.


def completions_run(model: str, sampling_params: dict[str, Any]) -> dict[str, Any]:
    return {
        "data_source": {
            "type": "completions",
            "model": model,
            "input_messages": {
                "type": "template",
                "template": [{"role": "user", "content": "{{ item.question }}"}],
            },
            "sampling_params": sampling_params,
            "source": {"type": "file_content", "content": SAMPLE_ITEMS[:1]},
        }
    }


def settings_for(tmp_path: Path, fake_llm: FakeLLM) -> Settings:
    url = fake_llm.url
    return Settings(
        data_dir=tmp_path / "data",
        sample_run=False,
        targets=[
            OpenAITarget(name="gpt", provider="openai", base_url=f"{url}/v1", model="m"),
            AnthropicTarget.model_validate(
                {
                    "name": "claude",
                    "provider": "anthropic",
                    "base_url": url,
                    "api_key": "k" * 20,
                    "model": "c",
                }
            ),
        ],
    )


async def start(client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    eval_id = (await client.post("/v1/evals", json=EVAL_EXAMPLE)).json()["id"]
    return await client.post(f"/v1/evals/{eval_id}/runs", json=body)


async def test_the_provider_request_carries_the_runs_sampling_params(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    params = {"temperature": 0.3, "top_p": 0.9, "seed": 7, "max_completions_tokens": 50}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        answer = await start(client, completions_run("gpt", params))
        await wait_for_run(client, answer.json()["id"], "completed")

    (request,) = fake_llm.requests
    body = request.json
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (
        0.3,
        0.9,
        7,
        50,
    )


@pytest.mark.parametrize(
    ("model", "params", "param", "named"),
    [
        ("claude", {"seed": 7, "top_p": 0.5}, "data_source.sampling_params.seed", "seed"),
        (
            "claude",
            {"reasoning_effort": "low"},
            "data_source.sampling_params.reasoning_effort",
            "reasoning_effort",
        ),
        (
            "gpt",
            {"tools": [{"type": "file_search"}]},
            "data_source.sampling_params.tools",
            "file_search",
        ),
        ("gpt", {"user": "x"}, "data_source.sampling_params.user", ""),
        ("gpt", {"max_tokens": 5, "max_completion_tokens": 6}, "data_source.sampling_params", "5"),
    ],
)
async def test_a_sampling_param_not_applied_is_a_400_naming_it(
    tmp_path: Path,
    make_client: ClientFactory,
    fake_llm: FakeLLM,
    model: str,
    params: dict[str, Any],
    param: str,
    named: str,
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        answer = await start(client, completions_run(model, params))

    error = answer.json()["error"]
    assert answer.status_code == 400
    assert error["param"] == param
    assert named in error["message"]
    assert fake_llm.requests == []


CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": CITY}}


async def test_tools_structured_output_and_reasoning_effort_reach_the_candidate(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    params = {
        "reasoning_effort": "low",
        "tools": [WEATHER],
        "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}},
    }
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        answer = await start(client, completions_run("gpt", params))
        assert answer.status_code == 201, answer.text
        await wait_for_run(client, answer.json()["id"], "completed")
    (request,) = fake_llm.requests
    assert fake_llm.shape_errors == []
    assert request.json["reasoning_effort"] == "low"
    assert request.json["tools"] == [WEATHER]
    assert request.json["response_format"]["json_schema"]["name"] == "a"


async def test_a_responses_data_source_runs_on_a_responses_target_with_its_text_format(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    settings = settings_for(tmp_path, fake_llm)
    responses = OpenAITarget.model_validate({"name": "resp", "provider": "openai", "model": "m",
        "base_url": f"{fake_llm.url}/v1", "api_format": "responses"})  # fmt: skip
    settings = settings.model_copy(update={"targets": [*settings.targets, responses]})
    run = completions_run("resp", {"tools": [WEATHER], "text": {"format": {
        "type": "json_schema", "name": "a", "schema": {"type": "object"}}}})  # fmt: skip
    run["data_source"]["type"] = "responses"
    async with make_client(settings) as client:
        answer = await start(client, run)
        assert answer.status_code == 201, answer.text
        await wait_for_run(client, answer.json()["id"], "completed")
    (request,) = fake_llm.requests
    assert fake_llm.shape_errors == []
    assert request.path == "/v1/responses"
    assert request.json["text"]["format"]["name"] == "a"
    assert [t["name"] for t in request.json["tools"]] == ["get_weather"]
