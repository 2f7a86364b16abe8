"""AgentV's July-2026 files run with AgentV's semantics, through ``/evaluate`` on the fake LLM.

``default_test.options.rubric_prompt`` (AgentV's README quickstart) is the judge prompt of
every rubric judge of the file: AgentV's names in it (``{{ input }}`` the question,
``{{ rubrics }}`` the rubric, ``{{ output }}`` the answer) are filled when the case runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from tests.conftest import ClientFactory

RUBRIC_PROMPT = """\
You are an expert grader. Award credit only when the answer supports the criterion.

[[ ## question ## ]]
{{ input }}

[[ ## rubric ## ]]
{{ rubrics }}

[[ ## answer ## ]]
{{ output }}
"""


def settings_for(tmp_path: Path, fake: FakeLLM) -> Settings:
    entry = {"name": "local-openai", "provider": "openai", "model": "m",
             "api_key": "sk-july-0123456789", "base_url": f"{fake.url}/v1"}  # fmt: skip
    return Settings.model_validate({"data_dir": tmp_path / "data", "targets": [entry]})


async def evaluate(
    make_client: ClientFactory, settings: Settings, suite: dict[str, Any]
) -> list[dict[str, Any]]:
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite})
    assert response.status_code == 200, response.text
    records: list[dict[str, Any]] = response.json()["results"]
    return records


def judged(request: RecordedRequest) -> bool:
    return "Award credit only when" in request.messages_text()


async def test_the_rubric_prompt_of_default_test_is_every_rubric_judges_prompt(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    suite = {
        "providers": ["local-openai"],
        "prompts": ["{{ input }}"],
        "default_test": {"threshold": 0.8, "options": {"rubric_prompt": RUBRIC_PROMPT}},
        "tests": [
            {
                "id": "fizzbuzz",
                "vars": {"input": "Write FizzBuzz in Python."},
                "assert": [
                    {"type": "contains", "value": "FizzBuzz"},
                    "Implements correct FizzBuzz logic",
                ],
            }
        ],
    }
    check = {"id": "rubric-1", "satisfied": True, "reasoning": "It does."}
    verdict = Reply(text=json.dumps({"checks": [check], "reasoning": "Yes."}))
    fake_llm.responder = lambda request: verdict if judged(request) else None
    [record] = await evaluate(make_client, settings_for(tmp_path, fake_llm), suite)
    assert record["status"] == "passed", record["error"]
    [judge] = [request for request in fake_llm.requests if judged(request)]
    text = judge.json["messages"][-1]["content"]
    for part in (
        "[[ ## question ## ]]\nWrite FizzBuzz in Python.",
        "[[ ## rubric ## ]]\nImplements correct FizzBuzz logic",
        "[[ ## answer ## ]]\nWrite FizzBuzz in Python.",  # the fake candidate echoes
    ):
        assert part in text, text


async def test_env_in_templates_reads_the_requests_env_and_never_the_services(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # AgentV's env-interpolation sample: `{{ env.CUSTOM_SYSTEM_PROMPT }}`, and a default
    monkeypatch.setenv("EVAL_ASSERTION", "the service's own value")
    suite = {
        "providers": ["local-openai"],
        "prompts": ["{{ input }}"],
        "tests": [
            {
                "id": "persona",
                "assert": [{"type": "contains", "value": "Hi"}],
                "vars": {
                    "input": [
                        {"role": "system", "content": "{{ env.CUSTOM_SYSTEM_PROMPT }}"},
                        {"role": "user", "content": "Hi {{ env.EVAL_ASSERTION | default('x') }}"},
                    ]
                },
            }
        ],
    }
    env = {"CUSTOM_SYSTEM_PROMPT": "You are a pirate."}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        checked = (await client.post("/validate", json={"suite": suite})).json()
        response = await client.post("/evaluate", json={"suite": suite, "env": env})
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["status"] == "passed"
    [asked] = fake_llm.requests
    assert asked.json["messages"] == [
        {"role": "system", "content": "You are a pirate."},
        {"role": "user", "content": "Hi x"},
    ]
    expected = "'{{ env.CUSTOM_SYSTEM_PROMPT }}' is not given: send it in the request's `env`"
    assert any(expected in warning for warning in checked["warnings"]), checked["warnings"]
