"""``POST /evaluate`` through the ASGI app; providers over real HTTP to the fake LLM server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from app.schemas.evaluate import evaluate_examples
from app.settings import Settings
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply, error
from tests.conftest import ClientFactory

QUESTION_SECTION = "[[ ## question ## ]]\n"
AFTER_QUESTION = "\n\n[[ ## reference_answer ## ]]"

SUITE: dict[str, Any] = {
    "dataset": "e2e",
    "evalcases": [
        {
            "id": "single",
            "expected_outcome": "Answers 4.",
            "input_messages": [{"role": "user", "content": "What is 2 + 2?"}],
        },
        {
            "id": "multi",
            "expected_outcome": "Suggests where to log.",
            "input_messages": [
                {"role": "system", "content": "You are a senior engineer."},
                {"role": "user", "content": "Please add logging"},
                {"role": "assistant", "content": "Where?"},
                {"role": "user", "content": "In the payment service.\n\nKeep it short."},
            ],
        },
        {
            "id": "files",
            "expected_outcome": "Reviews the code against the rules.",
            "input_messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "value": ".github/review.instructions.md"},
                        {"type": "text", "value": "Review this file:"},
                        {"type": "file", "value": "src/app.py"},
                    ],
                }
            ],
        },
    ],
}
FILES = {
    ".github/review.instructions.md": "# Rules\nPrefer small functions.\n",
    "src/app.py": "def main():\n    print('hi')\n",
}

Client = Callable[..., Any]


FAKE_TARGET: dict[str, object] = {"name": "fake", "provider": "openai", "model": "gpt-fake"}
FAKE_TARGET |= {"api_key": "sk-test-key-0123456789", "max_retries": 0}


def fake_settings(tmp_path: Path, fake: FakeLLM, **settings: Any) -> Settings:
    target = FAKE_TARGET | {"base_url": f"{fake.url}/v1"}
    return Settings.model_validate({"data_dir": tmp_path / "data", "targets": [target], **settings})


def is_judge(request: RecordedRequest) -> bool:
    return "response_format" in request.json


def judge_user_prompt(request: RecordedRequest) -> str:
    messages = request.json["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    return str(messages[1]["content"])


def question_section(user_prompt: str) -> str:
    return user_prompt.split(QUESTION_SECTION, 1)[1].split(AFTER_QUESTION, 1)[0]


async def test_judge_sees_the_candidates_question_byte_for_byte(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "files": FILES, "target": "fake"}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    results = {record["eval_id"]: record for record in body["results"]}
    assert list(results) == ["single", "multi", "files"]
    judge_prompts = [judge_user_prompt(r) for r in fake_llm.requests if is_judge(r)]
    assert len(judge_prompts) == 3
    for case_id, record in results.items():
        assert record["status"] == "passed", record
        question = record["raw_request"]["question"]
        assert record["evaluator_raw_request"]["userPrompt"] in judge_prompts, case_id
        assert question_section(record["evaluator_raw_request"]["userPrompt"]) == question
    assert results["multi"]["raw_request"]["question"].startswith("@[System]:\n")
    assert '<file path="src/app.py">' in results["files"]["raw_request"]["question"]
    assert (
        "<Attached: .github/review.instructions.md>" in results["files"]["raw_request"]["question"]
    )
    assert body["summary"]["counts"]["passed"] == 3
    assert body["summary"]["usage"]["judge"]["input_tokens"] > 0


async def test_candidate_receives_native_multi_turn_messages(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate",
            json={"suite": SUITE, "files": FILES, "target": "fake", "case_ids": ["multi"]},
        )
    record = response.json()["results"][0]
    candidate_calls = [r for r in fake_llm.requests if not is_judge(r)]
    assert len(candidate_calls) == 1
    sent = candidate_calls[0].json["messages"]
    assert sent == record["raw_request"]["chatPrompt"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[-1]["content"] == "In the payment service.\n\nKeep it short."
    assert record["candidate_answer"] == "In the payment service.\n\nKeep it short."


async def test_judge_reply_retried_then_judge_error_with_raw_output(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    def judge_babbles(request: RecordedRequest) -> Reply | None:
        return Reply(text="I would rate this highly.") if is_judge(request) else None

    fake_llm.responder = judge_babbles
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "target": "fake", "case_ids": ["single"]}
        )
    record = response.json()["results"][0]
    assert record["status"] == "judge_error"
    assert record["score"] is None
    assert record["evaluator_results"][0]["raw_output"] == "I would rate this highly."
    assert sum(1 for r in fake_llm.requests if is_judge(r)) == 3
    assert response.json()["summary"]["counts"]["judge_error"] == 1


async def test_candidate_provider_error_is_isolated_to_its_case(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    def reject_multi(request: RecordedRequest) -> Reply | None:
        if not is_judge(request) and "Please add logging" in request.messages_text():
            return error(400, "context length exceeded")
        return None

    fake_llm.responder = reject_multi
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "files": FILES, "target": "fake"}
        )
    statuses = {r["eval_id"]: r["status"] for r in response.json()["results"]}
    assert statuses == {"single": "passed", "multi": "error", "files": "passed"}
    failed = response.json()["results"][1]
    assert "context length exceeded" in failed["error"]
    assert "sk-test-key" not in response.text


async def test_max_concurrency_caps_calls_in_flight(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.latency = 0.02
    cases = [
        {
            "id": f"c{i}",
            "expected_outcome": "x",
            "input_messages": [{"role": "user", "content": f"q{i}"}],
        }
        for i in range(8)
    ]
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate",
            json={"suite": {"evalcases": cases}, "target": "fake", "max_concurrency": 2},
        )
    assert response.status_code == 200
    assert fake_llm.peak_in_flight == 2


async def test_ndjson_streams_records_then_the_summary(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate",
            json={"suite": SUITE, "files": FILES, "target": "fake"},
            headers={"accept": "application/x-ndjson"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert sorted(line["eval_id"] for line in lines[:-1]) == ["files", "multi", "single"]
    assert "chatPrompt" in lines[0]["raw_request"]
    assert lines[-1]["summary"]["total"] == 3


async def test_yaml_body_with_query_parameters(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate?target=fake&case_ids=single,multi&max_concurrency=1",
            content=yaml.safe_dump(SUITE),
            headers={"content-type": "application/yaml"},
        )
    assert response.status_code == 200, response.text
    assert [r["eval_id"] for r in response.json()["results"]] == ["single", "multi"]
    assert response.json()["results"][0]["target"] == "fake"


async def test_too_many_cases_points_to_runs(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm, evaluate_max_cases=2)) as client:
        response = await client.post("/evaluate", json={"suite": SUITE, "files": FILES})
    assert response.status_code == 413
    problem = response.json()
    assert problem["type"] == "/problems/payload-too-large"
    assert problem["runs"] == "/runs"
    assert "/runs" in problem["detail"]
    assert not fake_llm.requests


async def test_trials_count_toward_the_case_cap(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    # The probe: 200 cases x repeat 100 ran 20,000 evaluations inline (cap 200).
    suite = {**SUITE, "repeat": 100}
    settings = fake_settings(tmp_path, fake_llm, evaluate_max_cases=200)
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite, "files": FILES})
    assert response.status_code == 413, response.text
    problem = response.json()
    assert "3 cases x 100 trials = 300 evaluations" in problem["detail"]
    assert "EVAL_EVALUATE_MAX_CASES" in problem["detail"]
    assert problem["cases"] == 300
    assert not fake_llm.requests


async def test_durable_runs_count_trials_too(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    suite = {**SUITE, "evalcases": [{**SUITE["evalcases"][0], "repeat": 50}]}
    settings = fake_settings(tmp_path, fake_llm, max_cases_per_run=49)
    async with make_client(settings) as client:
        response = await client.post("/runs", json={"suite": suite, "files": FILES})
    assert response.status_code == 413, response.text
    assert "1 cases x 50 trials = 50 evaluations" in response.json()["detail"]
    assert "EVAL_MAX_CASES_PER_RUN" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"suite": SUITE, "files": FILES, "target": "nope"}, "nope"),
        ({"suite": SUITE, "files": FILES, "judge_target": "nope"}, "nope"),
        ({"suite": SUITE, "files": FILES, "case_ids": ["zz"]}, "zz"),
        ({"suite": {"evalcases": [{"id": "x"}]}}, "evalcases[0]"),
        ({"suite": SUITE, "max_concurrency": 0}, "max_concurrency"),
        ({"suite": SUITE, "unknown": 1}, "unknown"),
    ],
    ids=["target", "judge-target", "case-id", "bad-case", "concurrency", "extra"],
)
async def test_invalid_requests_are_422_problems(
    tmp_path: Path,
    fake_llm: FakeLLM,
    body: dict[str, Any],
    fragment: str,
    make_client: ClientFactory,
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert fragment in response.text
    assert not fake_llm.requests


async def test_docs_examples_run_on_a_fresh_start(client: httpx.AsyncClient) -> None:
    for name, example in evaluate_examples().items():
        response = await client.post("/evaluate", json=example["value"])
        assert response.status_code == 200, (name, response.text)
        body = response.json()
        assert body["summary"]["total"] == len(body["results"]) > 0
        assert all(r["status"] != "error" for r in body["results"]), name
    schema = (await client.get("/openapi.json")).json()
    operation = schema["paths"]["/evaluate"]["post"]
    assert operation["operationId"] == "evaluate"
    assert "mock_quickstart" in operation["requestBody"]["content"]["application/json"]["examples"]
    assert "EvaluateRequest" in schema["components"]["schemas"]


@pytest.mark.slow
async def test_disconnecting_client_cancels_the_work(tmp_path: Path, fake_llm: FakeLLM) -> None:
    import asyncio
    import os

    from testkit.server import running_service

    fake_llm.responder = lambda request: Reply(hang=True)
    cases = [
        {
            "id": f"c{i}",
            "expected_outcome": "x",
            "input_messages": [{"role": "user", "content": "q"}],
        }
        for i in range(3)
    ]
    env = {
        "PATH": os.defpath,
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS": json.dumps([FAKE_TARGET | {"base_url": f"{fake_llm.url}/v1"}]),
    }
    with running_service(env) as (url, _):
        for accept in ("application/json", "application/x-ndjson"):
            fake_llm.reset()
            timeout = httpx.Timeout(10, read=0.5)
            async with httpx.AsyncClient(base_url=url, timeout=timeout) as client:
                with pytest.raises(httpx.ReadTimeout):
                    await client.post(
                        "/evaluate",
                        json={"suite": {"evalcases": cases}, "target": "fake"},
                        headers={"accept": accept},
                    )
            async with asyncio.timeout(10):
                while fake_llm.disconnects < 3:  # noqa: ASYNC110 - the server runs in a thread
                    await asyncio.sleep(0.02)
            assert len(fake_llm.requests) == 3, accept
            assert fake_llm.in_flight == 0, accept


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


EXAMPLE_GRADERS = {
    "support-triage": {
        "outage-is-p1": ["contains", "regex", "rubrics", "valid_json"],
        "invoice-question": ["not-contains", "routing_judge", "valid_json"],
        "locked-out-admin": ["routing", "valid_json"],
    },
    "release-notes": {  # promptfoo's order: defaultTest's asserts first
        "breaking-api-change": ["not-contains", "contains", "llm-rubric", "rubrics"],
        "security-fix": ["not-contains", "contains"],
        "small-fixes": ["not-contains-2", "not-contains"],
    },
}


@pytest.mark.parametrize("name", EXAMPLE_GRADERS)
async def test_new_dialect_examples_run_on_the_mock_target_with_every_grader(
    name: str, make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, workspace_roots=[EXAMPLES])
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": f"{name}/{name}.yaml"})
    assert response.status_code == 200, response.text
    records = response.json()["results"]
    graders = {
        record["eval_id"]: [result["name"] for result in record["evaluator_results"]]
        for record in records
    }
    assert graders == EXAMPLE_GRADERS[name]
    assert all(record["target"] == "default" and record["error"] is None for record in records)
    if name == "release-notes":  # a scored rubric criterion: points from the mock judge
        results = {result["name"]: result for result in records[0]["evaluator_results"]}
        assert [entry["id"] for entry in results["llm-rubric"]["details"]["scores"]] == ["clarity"]
        assert any(
            hit.startswith("clarity (")
            for hit in results["llm-rubric"]["hits"] + results["llm-rubric"]["misses"]
        )
