"""Two replicas on one database, even under one ``EVAL_INSTANCE_ID``, never run a case twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx

from app.main import create_app
from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import JUDGE_MARKER, FakeLLM
from tests.conftest import started, wait_for_run

CASES = 16


def candidate_calls(fake: FakeLLM) -> Counter[str]:
    calls: Counter[str] = Counter()
    for recorded in fake.requests:
        text = recorded.messages_text()
        if JUDGE_MARKER not in text:
            calls.update(f"c{i}" for i in range(CASES) if f"Question {i}?" in text)
    return calls


async def test_replicas_sharing_an_instance_id_never_send_a_case_twice(
    tmp_path: Path, fake_llm: FakeLLM, database_url: str
) -> None:
    fake_llm.latency = 0.1
    target = OpenAITarget(name="fake", provider="openai", base_url=f"{fake_llm.url}/v1", model="m")
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        targets=[target],
        instance_id="same-name",
        sample_run=False,
    )
    suite = {
        "evalcases": [
            {"id": f"c{i}", "expected_outcome": "ok",
             "input_messages": [{"role": "user", "content": f"Question {i}?"}]}
            for i in range(CASES)
        ]
    }  # fmt: skip
    first, second = create_app(settings), create_app(settings)
    async with started(first), started(second):
        transport = httpx.ASGITransport(app=first)
        async with httpx.AsyncClient(transport=transport, base_url="http://first") as client:
            body = {"suite": suite, "target": "fake", "max_concurrency": 2}
            run_id = (await client.post("/runs", json=body)).json()["id"]
            run = await wait_for_run(client, run_id)

    assert run["status"] == "completed"
    calls = candidate_calls(fake_llm)
    assert set(calls) == {f"c{i}" for i in range(CASES)}
    assert [case for case, count in calls.items() if count > 1] == []
