"""promptfoo's ``select-best``: one judge call per test over every arm's answer, both paths.

Measured against promptfoo 0.123.1 (last session): after every output of a test exists, one
grader call lists them as ``<Text index=i>``; the first whole number of the reply wins (that
output scores 1 and passes, the others 0); a reply with no number fails them all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import create_async_engine

from app.runs.tables import ResultRow, RunRow
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from tests.api.test_arms import arms_settings
from tests.conftest import ClientFactory, wait_for_run

JUDGE_REPLY = {"text": "After comparing them, 1 is funniest (0 is dull)."}


def answers(recorded: RecordedRequest) -> Reply:
    """Each model its own answer; the judge (asked with ``<Text index=``) replies as set."""
    content = recorded.json["messages"][-1]["content"]
    text = JUDGE_REPLY["text"] if "<Text index=" in content else recorded.json["model"]
    return Reply(body={"choices": [{"message": {"role": "assistant", "content": text}}]})


def document(tests: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "prompts": ["Write a tweet about {{ topic }}"],
        "providers": ["a", "b", "c"],
        "tests": [
            {
                "vars": {"topic": f"topic {index}"},
                "assert": [
                    {"type": "select-best", "value": "choose the funniest tweet"},
                    {"type": "contains", "value": "m"},
                ],
            }
            for index in range(tests)
        ],
        **extra,
    }


def verdicts(results: list[dict[str, Any]]) -> list[tuple[str, str, float | None]]:
    return [(r["arm"]["target"], r["status"], r["evaluator_results"][0]["score"]) for r in results]


async def test_the_judge_picks_one_answer_of_each_test_across_the_arms(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = arms_settings(tmp_path, fake_llm)
    async with make_client(settings) as client:
        fake_llm.responder = answers
        response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document())})
    assert response.status_code == 200, response.text
    body = response.json()
    assert verdicts(body["results"]) == [
        ("a", "failed", 0.0), ("b", "passed", 1.0), ("c", "failed", 0.0),
    ] * 2  # fmt: skip
    judged = [r for r in fake_llm.requests if "<Text index=" in r.json["messages"][-1]["content"]]
    assert len(judged) == 2  # one call per test, not per arm
    question = judged[0].json["messages"][-1]["content"]
    assert "choose the funniest tweet" in question
    for index, model in enumerate(("ma", "mb", "mc")):
        assert f"<Text index={index}>\n{model}\n</Text>" in question
    settled = body["results"][1]["evaluator_results"][0]
    assert settled["passed"] is True
    assert settled["details"]["chosen"] == 1
    assert body["summary"]["counts"]["passed"] == 2


@pytest.mark.parametrize("reply", ["None of them is funny.", "7"])
async def test_a_reply_naming_no_answer_fails_every_arm(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, reply: str
) -> None:
    settings = arms_settings(tmp_path, fake_llm)
    JUDGE_REPLY["text"] = reply
    try:
        async with make_client(settings) as client:
            fake_llm.responder = answers
            response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document(1))})
    finally:
        JUDGE_REPLY["text"] = "After comparing them, 1 is funniest (0 is dull)."
    assert response.status_code == 200, response.text
    assert verdicts(response.json()["results"]) == [
        ("a", "failed", 0.0), ("b", "failed", 0.0), ("c", "failed", 0.0),
    ]  # fmt: skip


async def test_streamed_records_of_a_compared_test_come_once_settled(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = arms_settings(tmp_path, fake_llm)
    async with make_client(settings) as client:
        fake_llm.responder = answers
        response = await client.post(
            "/evaluate",
            json={"suite": yaml.safe_dump(document(1))},
            headers={"accept": "application/x-ndjson"},
        )
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines()]
    records = [line for line in lines if "eval_id" in line]
    assert sorted(verdicts(records)) == [
        ("a", "failed", 0.0), ("b", "passed", 1.0), ("c", "failed", 0.0),
    ]  # fmt: skip
    assert lines[-1]["summary"]["counts"]["passed"] == 1


async def test_select_best_on_a_run_with_one_arm_is_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": yaml.safe_dump(document(1, providers=["a"]))}
        )
    assert response.status_code == 422
    assert "select-best" in response.json()["detail"]
    assert fake_llm.requests == []


async def test_a_durable_run_settles_select_best_once_every_arm_has_answered(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    settings = arms_settings(tmp_path, fake_llm, database_url)
    async with make_client(settings) as client:
        fake_llm.responder = answers
        created = await client.post(
            "/runs", json={"suite": yaml.safe_dump(document(3)), "max_concurrency": 2}
        )
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
        results = (await client.get(f"/runs/{run['id']}/results?limit=100")).json()["results"]
    assert run["status"] == "completed"
    assert sorted(verdicts(results)) == sorted(
        [("a", "failed", 0.0), ("b", "passed", 1.0), ("c", "failed", 0.0)] * 3
    )
    passed = {
        arm["arm"]["target"]: arm["summary"]["counts"]["passed"] for arm in run["summary"]["arms"]
    }
    assert passed == {"a": 0, "b": 3, "c": 0}
    judged = [r for r in fake_llm.requests if "<Text index=" in r.json["messages"][-1]["content"]]
    assert len(judged) == 3


async def test_a_run_killed_while_settling_settles_the_rest_when_it_resumes(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    """As after kill -9 between two tests' comparisons: one test settled, one still pending,
    the run still running. The restarted service asks the judge about the pending test
    only and finishes the run; settling again asks nothing."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'runs.db'}"
    settings = arms_settings(tmp_path, fake_llm, url)
    fake_llm.responder = answers
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": yaml.safe_dump(document(2))})
        run_id = created.json()["id"]
        settled = await wait_for_run(client, run_id)
    engine = create_async_engine(url)
    async with engine.begin() as connection:
        rows = (
            await connection.execute(
                select(ResultRow.case_seq, ResultRow.record).where(ResultRow.eval_id == "test-2")
            )
        ).all()
        for seq, text in rows:  # the second test back to before its comparison
            record = json.loads(text)
            record["evaluator_results"][0]["details"] = {"select_best": "pending"}
            record["status"] = "passed"
            await connection.execute(
                update(ResultRow)
                .where(ResultRow.run_id == run_id, ResultRow.case_seq == seq)
                .values(record=json.dumps(record), status="passed")
            )
        await connection.execute(
            update(RunRow).where(RunRow.id == run_id).values(status="running", finished_at=None)
        )
    await engine.dispose()
    fake_llm.reset()
    async with make_client(settings) as client:
        resumed = await wait_for_run(client, run_id)
        results = (await client.get(f"/runs/{run_id}/results?limit=100")).json()["results"]
    judged = [r for r in fake_llm.requests if "<Text index=" in r.json["messages"][-1]["content"]]
    assert len(judged) == 1  # the pending test only
    assert [r.json["model"] for r in fake_llm.requests] == [judged[0].json["model"]]
    assert resumed["status"] == "completed"
    assert resumed["summary"]["counts"] == settled["summary"]["counts"]
    assert sorted(verdicts(results)) == sorted(
        [("a", "failed", 0.0), ("b", "passed", 1.0), ("c", "failed", 0.0)] * 2
    )
