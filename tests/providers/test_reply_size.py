"""Provider replies are read as a stream and given up past ``provider_max_reply_bytes``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.providers.errors import ProviderReplyTooLarge
from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM, Reply
from tests.conftest import ClientFactory
from tests.providers.conftest import RegistryFactory, openai_target, request_for

LIMIT = 64 * 1024


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
async def test_a_reply_past_the_limit_fails_once_and_is_not_retried(
    fake_llm: FakeLLM, make_registry: RegistryFactory, compressed: bool
) -> None:
    # 8 MiB of text; gzip sends it as a few KiB that inflate past the limit.
    fake_llm.responder = lambda _: Reply(text="a" * (8 * 1024 * 1024), gzip=compressed)
    registry = make_registry(
        [openai_target(fake_llm.url)], provider_max_reply_bytes=LIMIT, retry_max_attempts=3
    )
    with pytest.raises(ProviderReplyTooLarge) as caught:
        await registry.get("gpt").complete(request_for())
    assert f"larger than {LIMIT} bytes" in caught.value.detail
    assert "EVAL_PROVIDER_MAX_REPLY_BYTES" in caught.value.detail
    assert len(fake_llm.requests) == 1


async def test_a_compressed_reply_under_the_limit_is_read(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = lambda _: Reply(text="b" * 1000, gzip=True)
    registry = make_registry([openai_target(fake_llm.url)], provider_max_reply_bytes=LIMIT)
    response = await registry.get("gpt").complete(request_for())
    assert response.text == "b" * 1000


async def test_evaluate_reports_the_oversized_reply_as_the_case_error(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = lambda _: Reply(text="c" * (2 * LIMIT), gzip=True)
    target = OpenAITarget(name="fake", provider="openai", base_url=f"{fake_llm.url}/v1", model="m")
    settings = Settings(
        data_dir=tmp_path / "data", targets=[target], provider_max_reply_bytes=LIMIT
    )
    suite = {"evalcases": [{"id": "big", "expected_outcome": "x",
                            "input_messages": [{"role": "user", "content": "hi"}]}]}  # fmt: skip
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": "fake"})
    record = response.json()["results"][0]
    assert record["status"] == "error"
    assert "larger than" in record["error"]
    assert len(response.content) < LIMIT
