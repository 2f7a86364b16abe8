"""A 5 MB ``/format`` request does its CPU work off the event loop: other requests go on."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from app.settings import Settings
from tests.conftest import ClientFactory


def big_body() -> bytes:
    """50,000 messages in just under the 5 MiB body limit."""
    messages = [
        {"role": "user" if index % 2 == 0 else "assistant", "content": "word " * 13}
        for index in range(50_000)
    ]
    return json.dumps({"input_messages": messages}).encode()


async def test_healthz_answers_while_a_large_format_request_runs(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    body = big_body()
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        gaps: list[float] = []
        health: list[int] = []

        async def watch() -> None:
            """Record how long the loop goes without running us, and ask for /healthz."""
            last = time.perf_counter()
            while True:
                health.append((await client.get("/healthz")).status_code)
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        watcher = asyncio.create_task(watch())
        started = time.perf_counter()
        response = await client.post(
            "/format", content=body, headers={"content-type": "application/json"}
        )
        took = time.perf_counter() - started
        watcher.cancel()

    assert response.status_code == 200, response.text[:300]
    assert len(response.json()["chatPrompt"]) == 50_001  # the default system prompt first
    # With the work on the loop, not one /healthz was answered before the request ended;
    # in worker threads the loop keeps turning (dozens answered on a quiet machine).
    assert len(health) >= 3, (health, max(gaps), took)
    assert set(health) == {200}
