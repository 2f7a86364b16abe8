"""Text holding NUL (``\\u0000``) in case ids, contents and answers: kept on SQLite and PostgreSQL.

PostgreSQL text cannot hold NUL; one case's text must never stop the others, nor ``/retry``.
"""

from __future__ import annotations

from pathlib import Path

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply, error
from tests.conftest import ClientFactory, wait_for_run

NUL_ID = "case\u0000one"
NUL_QUESTION = "What is \u0000 here?"
SUITE = {
    "evalcases": [
        {"id": "before", "expected_outcome": "ok", "input_messages": [
            {"role": "user", "content": "First?"}]},
        {"id": NUL_ID, "expected_outcome": "ok\u0000", "input_messages": [
            {"role": "user", "content": NUL_QUESTION}]},
        {"id": "after", "expected_outcome": "ok", "input_messages": [
            {"role": "user", "content": "Last?"}]},
    ]
}  # fmt: skip


def settings_for(tmp_path: Path, fake: FakeLLM, database_url: str) -> Settings:
    target = OpenAITarget(name="fake", provider="openai", base_url=f"{fake.url}/v1", model="m")
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        targets=[target],
        retry_max_attempts=1,
        sample_run=False,
    )


async def test_nul_in_ids_contents_and_answers_is_stored_and_read_back(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm, database_url)) as client:
        created = await client.post("/runs", json={"suite": SUITE, "target": "fake"})
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
        results = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
        regraded = await client.post(f"/runs/{run['id']}/regrade")
        assert regraded.status_code == 202, regraded.text
        await wait_for_run(client, regraded.json()["id"])
        again = (await client.get(f"/runs/{regraded.json()['id']}/results")).json()["results"]

    assert run["status"] == "completed", run
    assert [r["eval_id"] for r in results] == ["before", NUL_ID, "after"]
    assert all(r["status"] != "error" for r in results), results
    assert results[1]["candidate_answer"] == NUL_QUESTION
    assert [r["candidate_answer"] for r in again] == [r["candidate_answer"] for r in results]


async def test_retry_runs_a_failed_case_holding_nul(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    failing = {"on": True}

    def fail_nul_once(recorded: RecordedRequest) -> Reply | None:
        if failing["on"] and "\\u0000" in recorded.messages_text():
            return error(400, "no thanks \u0000")
        return None

    fake_llm.responder = fail_nul_once
    async with make_client(settings_for(tmp_path, fake_llm, database_url)) as client:
        created = await client.post("/runs", json={"suite": SUITE, "target": "fake"})
        first = await wait_for_run(client, created.json()["id"])
        failing["on"] = False
        retried = await client.post(f"/runs/{first['id']}/retry")
        assert retried.status_code in (200, 202), retried.text
        second = await wait_for_run(client, first["id"])
        results = (await client.get(f"/runs/{first['id']}/results")).json()["results"]

    assert first["summary"]["counts"]["error"] == 1, first
    assert second["status"] == "completed"
    assert second["summary"]["counts"]["error"] == 0, second
    assert [r["candidate_answer"] for r in results][1] == NUL_QUESTION
