"""The durable runs API through the ASGI app: real SQLite file, mock and fake-LLM targets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import JUDGE_MARKER, FakeLLM, RecordedRequest, Reply, error
from tests.conftest import ClientFactory, wait_for_run

NDJSON = "application/x-ndjson"


def suite_with(count: int, **case_extra: Any) -> dict[str, Any]:
    return {
        "dataset": "runs-test",
        "evalcases": [
            {
                "id": f"c{index}",
                "expected_outcome": f"Answers {index}.",
                "input_messages": [{"role": "user", "content": f"Question {index}?"}],
                **case_extra,
            }
            for index in range(count)
        ],
    }


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # These tests count and list runs: no sample run (tests/services/test_sample_run.py).
    return Settings(data_dir=tmp_path / "data", sample_run=False)


def fake_settings(tmp_path: Path, fake: FakeLLM, **extra: Any) -> Settings:
    target = OpenAITarget(name="fake", provider="openai", base_url=f"{fake.url}/v1", model="m")
    return Settings(
        data_dir=tmp_path / "data",
        targets=[target],
        retry_max_attempts=1,
        sample_run=False,
        **extra,
    )


async def wait_for_done(client: httpx.AsyncClient, run_id: str, done: int) -> None:
    async with asyncio.timeout(20):
        while True:
            if (await client.get(f"/runs/{run_id}")).json()["progress"]["done"] >= done:
                return
            await asyncio.sleep(0.01)


def candidate_calls(fake: FakeLLM) -> list[RecordedRequest]:
    return [r for r in fake.requests if JUDGE_MARKER not in r.messages_text()]


def judge_calls(fake: FakeLLM) -> list[RecordedRequest]:
    return [r for r in fake.requests if JUDGE_MARKER in r.messages_text()]


def sse_events(text: str) -> list[dict[str, str]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name in {"id", "event", "data"}:
                fields[name] = value
        if "id" in fields:
            events.append(fields)
    return events


async def test_a_run_is_accepted_at_once_and_completes_in_the_background(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/runs", json={"suite": suite_with(3)})
    assert response.status_code == 202
    run = response.json()
    assert response.headers["location"] == f"/runs/{run['id']}"
    assert run["progress"] == {"done": 0, "total": 3}
    assert (run["target"], run["judge_target"]) == ("default", "default")
    finished = await wait_for_run(client, run["id"])
    assert finished["status"] == "completed"
    assert finished["progress"] == {"done": 3, "total": 3}
    assert finished["summary"]["total"] == 3
    assert finished["started_at"] is not None
    assert finished["finished_at"] is not None


async def test_a_yaml_suite_body_takes_the_other_fields_from_the_query(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/runs?case_ids=c1&cache=true",
        content=yaml.safe_dump(suite_with(3)),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 202
    assert response.json()["progress"]["total"] == 1


async def test_same_idempotency_key_and_body_return_the_same_run(
    client: httpx.AsyncClient,
) -> None:
    body = {"suite": suite_with(2)}
    headers = {"Idempotency-Key": "key-1"}
    first = await client.post("/runs", json=body, headers=headers)
    again = await client.post("/runs", json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    listed = (await client.get("/runs")).json()["runs"]
    assert [run["id"] for run in listed] == [first.json()["id"]]


async def test_same_idempotency_key_with_another_body_is_a_409_problem(
    client: httpx.AsyncClient,
) -> None:
    headers = {"Idempotency-Key": "key-2"}
    await client.post("/runs", json={"suite": suite_with(2)}, headers=headers)
    response = await client.post("/runs", json={"suite": suite_with(3)}, headers=headers)
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/idempotency-key-reused"


async def test_runs_are_listed_newest_first_page_by_page_and_by_status(
    client: httpx.AsyncClient,
) -> None:
    ids = []
    for _ in range(3):
        ids.append((await client.post("/runs", json={"suite": suite_with(1)})).json()["id"])
        await wait_for_run(client, ids[-1])
    first = (await client.get("/runs", params={"limit": 2})).json()
    second = (await client.get("/runs", params={"limit": 2, "cursor": first["next_cursor"]})).json()
    assert [run["id"] for run in first["runs"] + second["runs"]] == list(reversed(ids))
    assert second["next_cursor"] is None
    completed = (await client.get("/runs", params={"status": "completed"})).json()["runs"]
    assert len(completed) == 3
    assert (await client.get("/runs", params={"status": "queued"})).json()["runs"] == []
    assert (await client.get("/runs", params={"cursor": "bogus"})).status_code == 422
    assert (await client.get("/runs", params={"status": "bogus"})).status_code == 422


async def test_an_unknown_run_is_a_404_problem_everywhere(client: httpx.AsyncClient) -> None:
    for method, path in [
        ("GET", "/runs/run_nope"),
        ("GET", "/runs/run_nope/results"),
        ("GET", "/runs/run_nope/events"),
        ("POST", "/runs/run_nope/cancel"),
        ("POST", "/runs/run_nope/retry"),
        ("POST", "/runs/run_nope/regrade"),
        ("DELETE", "/runs/run_nope"),
    ]:
        response = await client.request(method, path)
        assert response.status_code == 404, path
        assert response.json()["type"] == "/problems/run-not-found"


async def test_results_page_in_case_order_filter_by_status_and_export_as_jsonl(
    client: httpx.AsyncClient,
) -> None:
    run_id = (await client.post("/runs", json={"suite": suite_with(5)})).json()["id"]
    await wait_for_run(client, run_id)
    first = (await client.get(f"/runs/{run_id}/results", params={"limit": 3})).json()
    rest = (
        await client.get(
            f"/runs/{run_id}/results", params={"limit": 3, "cursor": first["next_cursor"]}
        )
    ).json()
    ids = [record["eval_id"] for record in first["results"] + rest["results"]]
    assert ids == [f"c{index}" for index in range(5)]
    statuses = {record["status"] for record in first["results"] + rest["results"]}
    status = statuses.pop()
    only = (await client.get(f"/runs/{run_id}/results", params={"status": status})).json()
    assert all(record["status"] == status for record in only["results"])
    exported = await client.get(f"/runs/{run_id}/results", headers={"accept": NDJSON})
    assert exported.headers["content-type"].startswith(NDJSON)
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert [line["eval_id"] for line in lines] == ids
    assert lines == first["results"] + rest["results"]


async def test_sse_stream_sends_every_event_once_and_resumes_after_last_event_id(
    client: httpx.AsyncClient,
) -> None:
    run_id = (await client.post("/runs", json={"suite": suite_with(3)})).json()["id"]
    full = sse_events((await client.get(f"/runs/{run_id}/events")).text)
    assert [int(event["id"]) for event in full] == list(range(1, 8))
    assert [event["event"] for event in full] == ["case_completed", "progress"] * 3 + [
        "run_completed"
    ]
    assert json.loads(full[0]["data"])["eval_id"].startswith("c")
    assert json.loads(full[5]["data"])["done"] == 3
    assert json.loads(full[6]["data"])["status"] == "completed"
    resumed = sse_events(
        (await client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "4"})).text
    )
    assert resumed == full[4:]


async def test_a_run_over_the_case_limit_is_a_413_problem(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_cases_per_run=2)
    async with make_client(settings) as client:
        response = await client.post("/runs", json={"suite": suite_with(3)})
    assert response.status_code == 413
    assert "EVAL_MAX_CASES_PER_RUN" in response.json()["detail"]


async def test_an_invalid_suite_or_unknown_target_is_a_422(client: httpx.AsyncClient) -> None:
    assert (await client.post("/runs", json={"suite": {"evalcases": "x"}})).status_code == 422
    unknown = await client.post("/runs", json={"suite": suite_with(1), "target": "nope"})
    assert unknown.status_code == 422


async def test_cancel_stops_new_provider_calls_and_keeps_finished_results(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.latency = 0.1
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite_with(30), "target": "fake", "max_concurrency": 2}
        run_id = (await client.post("/runs", json=body)).json()["id"]
        await wait_for_done(client, run_id, 2)
        cancelled = await client.post(f"/runs/{run_id}/cancel")
        await asyncio.sleep(0.05)  # a request already on the wire may still be logged
        calls_at_cancel = len(fake_llm.requests)
        await asyncio.sleep(0.5)
        assert len(fake_llm.requests) == calls_at_cancel
        run = cancelled.json()
        assert run["status"] == "cancelled"
        assert 2 <= run["progress"]["done"] < 30
        results = (await client.get(f"/runs/{run_id}/results")).json()["results"]
        assert len(results) == run["progress"]["done"]
        again = await client.post(f"/runs/{run_id}/cancel")
        assert again.json()["status"] == "cancelled"


async def test_retry_reruns_only_error_cases(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    failing = {"on": True}

    def respond(recorded: RecordedRequest) -> Reply | None:
        text = recorded.messages_text()
        if failing["on"] and "Question 1?" in text and JUDGE_MARKER not in text:
            return error(500, "boom")
        return None

    fake_llm.responder = respond
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        run_id = (
            await client.post("/runs", json={"suite": suite_with(3), "target": "fake"})
        ).json()["id"]
        first = await wait_for_run(client, run_id)
        assert first["summary"]["counts"]["error"] == 1
        failing["on"] = False
        fake_llm.reset()
        retried = await client.post(f"/runs/{run_id}/retry")
        assert retried.status_code == 200
        finished = await wait_for_run(client, run_id)
        assert finished["summary"]["counts"]["error"] == 0
        assert finished["progress"] == {"done": 3, "total": 3}
        assert {"Question 1?" in r.messages_text() for r in candidate_calls(fake_llm)} == {True}
        assert len(candidate_calls(fake_llm)) == 1
        records = (await client.get(f"/runs/{run_id}/results")).json()["results"]
        assert [r["eval_id"] for r in records] == ["c0", "c1", "c2"]


async def test_retry_of_a_running_run_is_a_409(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.latency = 0.2
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite_with(4), "target": "fake", "max_concurrency": 1}
        run_id = (await client.post("/runs", json=body)).json()["id"]
        assert (await client.post(f"/runs/{run_id}/retry")).status_code == 409
        assert (await client.delete(f"/runs/{run_id}")).status_code == 409
        assert (await client.post(f"/runs/{run_id}/regrade")).status_code == 409
        await client.post(f"/runs/{run_id}/cancel")


async def test_regrade_grades_stored_answers_without_calling_the_candidate(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        run_id = (
            await client.post("/runs", json={"suite": suite_with(3), "target": "fake"})
        ).json()["id"]
        await wait_for_run(client, run_id)
        fake_llm.reset()
        evaluators = [{"name": "says_question", "type": "contains", "value": "Question"}]
        response = await client.post(f"/runs/{run_id}/regrade", json={"evaluators": evaluators})
        assert response.status_code == 202
        regrade = response.json()
        assert regrade["parent_run_id"] == run_id
        assert regrade["kind"] == "regrade"
        finished = await wait_for_run(client, regrade["id"])
        assert finished["summary"]["counts"]["passed"] == 3
        assert fake_llm.requests == []
        judged = (await client.post(f"/runs/{run_id}/regrade", json={})).json()
        await wait_for_run(client, judged["id"])
        assert candidate_calls(fake_llm) == []
        assert len(judge_calls(fake_llm)) == 3
        original = (await client.get(f"/runs/{run_id}/results")).json()["results"]
        regraded = (await client.get(f"/runs/{judged['id']}/results")).json()["results"]
        assert [r["candidate_answer"] for r in regraded] == [
            r["candidate_answer"] for r in original
        ]


async def test_a_regrade_body_with_a_lone_surrogate_is_refused_naming_field_and_value(
    client: httpx.AsyncClient,
) -> None:
    run_id = (await client.post("/runs", json={"suite": suite_with(2)})).json()["id"]
    await wait_for_run(client, run_id)
    body = '{"evaluators": [{"name": "bad\\ud800", "type": "contains", "value": "x"}]}'
    response = await client.post(
        f"/runs/{run_id}/regrade", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["errors"][0]["path"] == "evaluators[0].name"
    assert '"bad\\ud800" holds a lone surrogate' in problem["detail"]
    assert len((await client.get("/runs")).json()["runs"]) == 1


async def test_a_finished_run_can_be_deleted(client: httpx.AsyncClient) -> None:
    run_id = (await client.post("/runs", json={"suite": suite_with(2)})).json()["id"]
    await wait_for_run(client, run_id)
    assert (await client.delete(f"/runs/{run_id}")).status_code == 204
    assert (await client.get(f"/runs/{run_id}")).status_code == 404
    assert (await client.get("/runs")).json()["runs"] == []


async def test_cached_replies_are_reused_and_marked(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite_with(2), "target": "fake", "cache": True}
        first = (await client.post("/runs", json=body)).json()["id"]
        await wait_for_run(client, first)
        calls = len(fake_llm.requests)
        second = (await client.post("/runs", json=body)).json()["id"]
        await wait_for_run(client, second)
        assert len(fake_llm.requests) == calls
        records = (await client.get(f"/runs/{second}/results")).json()["results"]
        assert {json.dumps(r["cached"], sort_keys=True) for r in records} == {
            json.dumps({"candidate": True, "judge": True}, sort_keys=True)
        }


async def test_runs_belong_to_the_api_key_that_created_them(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=["key-a", "key-b"])
    key_a = {"Authorization": "Bearer key-a"}
    key_b = {"Authorization": "Bearer key-b"}
    async with make_client(settings) as client:
        run_id = (await client.post("/runs", json={"suite": suite_with(1)}, headers=key_a)).json()[
            "id"
        ]
        await wait_for_run_as(client, run_id, key_a)
        assert (await client.get(f"/runs/{run_id}", headers=key_b)).status_code == 404
        assert (await client.get(f"/runs/{run_id}/results", headers=key_b)).status_code == 404
        assert (await client.delete(f"/runs/{run_id}", headers=key_b)).status_code == 404
        assert (await client.get("/runs", headers=key_b)).json()["runs"] == []
        listed = (await client.get("/runs", headers=key_a)).json()["runs"]
        assert [run["id"] for run in listed] == [run_id]
        again = await client.post(
            "/runs", json={"suite": suite_with(2)}, headers={**key_b, "Idempotency-Key": "k"}
        )
        mine = await client.post(
            "/runs", json={"suite": suite_with(1)}, headers={**key_a, "Idempotency-Key": "k"}
        )
        assert again.status_code == mine.status_code == 202


async def test_runs_in_flight_per_key_are_limited(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.latency = 0.2
    settings = fake_settings(tmp_path, fake_llm, max_runs_in_flight_per_key=1)
    async with make_client(settings) as client:
        body = {"suite": suite_with(4), "target": "fake", "max_concurrency": 1}
        first = (await client.post("/runs", json=body)).json()["id"]
        refused = await client.post("/runs", json=body)
        assert refused.status_code == 429
        assert "retry-after" in refused.headers
        await client.post(f"/runs/{first}/cancel")
        assert (await client.post("/runs", json={"suite": suite_with(1)})).status_code == 202


async def wait_for_run_as(
    client: httpx.AsyncClient, run_id: str, headers: dict[str, str]
) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while True:
            run: dict[str, Any] = (await client.get(f"/runs/{run_id}", headers=headers)).json()
            if run["status"] in ("completed", "cancelled", "failed"):
                return run
            await asyncio.sleep(0.02)
