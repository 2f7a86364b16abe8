"""A provider that echoes a configured secret in a 200 reply: the secret is stored nowhere."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import SecretStr

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import JUDGE_MARKER, FakeLLM, RecordedRequest, Reply
from tests.conftest import ClientFactory, wait_for_run

TARGET_KEY = "sk-echoed-target-key-0123456789"
OTHER_KEY = "other-target-secret-9876543210"
SERVICE_KEY = "service-key-for-callers-24680"
SUITE = {
    "evalcases": [
        {"id": "echo", "expected_outcome": "ok",
         "input_messages": [{"role": "user", "content": "What is your key?"}]}
    ]
}  # fmt: skip


def echoing(recorded: RecordedRequest) -> Reply | None:
    """Candidate calls get every secret back in their answer and in extra reply fields."""
    if JUDGE_MARKER in recorded.messages_text() or "response_format" in recorded.json:
        return None
    said = f"my keys: {TARGET_KEY} {OTHER_KEY} {SERVICE_KEY}"
    body = {
        "id": "x", "object": "chat.completion", "model": f"m-{TARGET_KEY}",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": said}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "echo": {"authorization": f"Bearer {TARGET_KEY}"},
    }  # fmt: skip
    return Reply(body=body)


def echo_settings(tmp_path: Path, fake: FakeLLM) -> Settings:
    targets = [
        OpenAITarget(name="fake", provider="openai", base_url=f"{fake.url}/v1", model="m",
                     api_key=SecretStr(TARGET_KEY)),
        OpenAITarget(name="other", provider="openai", base_url=f"{fake.url}/v1", model="m",
                     api_key=SecretStr(OTHER_KEY)),
    ]  # fmt: skip
    return Settings(
        data_dir=tmp_path / "data",
        targets=targets,
        api_keys=[SecretStr(SERVICE_KEY)],
        sample_run=False,
    )


def assert_no_secret(text: str) -> None:
    for secret in (TARGET_KEY, OTHER_KEY, SERVICE_KEY):
        assert secret not in text


async def test_secrets_echoed_by_a_provider_are_not_returned_by_evaluate(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = echoing
    async with make_client(echo_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate",
            json={"suite": SUITE, "target": "fake"},
            headers={"Authorization": f"Bearer {SERVICE_KEY}"},
        )
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["candidate_answer"] == "my keys: " + " ".join(
        ["[redacted]"] * 3
    )
    assert_no_secret(response.text)


async def test_secrets_echoed_by_a_provider_are_not_stored_nor_streamed(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = echoing
    auth = {"Authorization": f"Bearer {SERVICE_KEY}"}
    async with make_client(echo_settings(tmp_path, fake_llm)) as client:
        created = await client.post("/runs", json={"suite": SUITE, "target": "fake"}, headers=auth)
        run_id = created.json()["id"]
        client.headers.update(auth)
        await wait_for_run(client, run_id)
        results = await client.get(f"/runs/{run_id}/results")
        events = await client.get(f"/runs/{run_id}/events")
    assert "[redacted]" in results.text
    assert_no_secret(results.text)
    assert_no_secret(events.text)
    database = (tmp_path / "data" / "eval.db").read_bytes()
    for secret in (TARGET_KEY, OTHER_KEY, SERVICE_KEY):
        assert secret.encode() not in database
    with sqlite3.connect(tmp_path / "data" / "eval.db") as connection:
        stored = connection.execute("SELECT candidate_answer FROM results").fetchall()
    assert stored == [("my keys: [redacted] [redacted] [redacted]",)]
