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
from app.settings.targets import Pricing
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from tests.api.test_arms import arms_settings
from tests.conftest import ClientFactory, wait_for_run

JUDGE_REPLY = {"text": "After comparing them, 1 is funniest (0 is dull)."}


def answers(recorded: RecordedRequest) -> Reply:
    """Each model its own answer; the judge (asked with ``<Text index=``) replies as set."""
    content = recorded.json["messages"][-1]["content"]
    text = JUDGE_REPLY["text"] if "<Text index=" in content else recorded.json["model"]
    return Reply(body={"choices": [{"message": {"role": "assistant", "content": text}}]})


def with_usage(recorded: RecordedRequest) -> Reply:
    """As ``answers``, each reply reporting its tokens: the judge's 100 in and 7 out."""
    reply = answers(recorded)
    assert isinstance(reply.body, dict)
    judged = "<Text index=" in recorded.json["messages"][-1]["content"]
    tokens = (100, 7) if judged else (10, 1)
    usage = {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}
    return Reply(body={**reply.body, "usage": usage})


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
        fake_llm.responder = with_usage
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
    # The comparisons' tokens are in the stored records (shared among the arms) and the run's.
    assert sum(record["usage"]["judge"]["input_tokens"] for record in results) == 300
    assert run["summary"]["usage"]["judge"] == {"input_tokens": 300, "output_tokens": 21}


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


async def test_the_comparisons_tokens_and_cost_are_shared_among_the_arms_it_compared(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    plain = arms_settings(tmp_path, fake_llm)
    pricing = Pricing(input_per_million=2.5, output_per_million=10)
    targets = [target.model_copy(update={"pricing": pricing}) for target in plain.targets]
    settings = plain.model_copy(update={"targets": targets})
    async with make_client(settings) as client:
        fake_llm.responder = with_usage
        response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document(1))})
    assert response.status_code == 200, response.text
    body = response.json()
    records = body["results"]
    judge = [record["usage"]["judge"] for record in records]
    # 100 and 7 tokens in three shares as even as they go, the earlier arms taking the rest.
    assert judge == [
        {"input_tokens": 34, "output_tokens": 3},
        {"input_tokens": 33, "output_tokens": 2},
        {"input_tokens": 33, "output_tokens": 2},
    ]
    assert [record["attempts"]["judge"] for record in records] == [1, 0, 0]
    judge_cost = (100 * 2.5 + 7 * 10) / 1_000_000
    for record in records:
        assert record["usage"]["candidate"] == {"input_tokens": 10, "output_tokens": 1}
        assert record["cost_usd"]["judge"] == pytest.approx(judge_cost / 3)
        assert record["cost_usd"]["candidate"] == pytest.approx((10 * 2.5 + 10) / 1_000_000)
    for name in ("a", "b", "c"):  # every request sent counted once, in some arm's record
        sent = [r for r in fake_llm.requests if r.json["model"] == f"m{name}"]
        counted = [r["usage_by_target"].get(name, {}).get("requests", 0) for r in records]
        assert sum(counted) == len(sent)
    assert body["summary"]["usage"]["judge"] == {"input_tokens": 100, "output_tokens": 7}
