"""Embeddings targets: ``POST /embeddings`` over real HTTP, and the mock's hashed-word vectors."""

from __future__ import annotations

import logging
import math

import pytest

from app.providers.adapters.hashed_embeddings import hashed_embedding
from app.providers.base import CallRole
from app.providers.errors import ProviderError
from app.settings.targets import OpenAITarget, load_targets_file, parse_target
from testkit.fake_llm import error
from tests.providers.conftest import FAKE_KEY, SleepRecorder, openai_target, request_for


def cosine(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def embeddings_target(url: str) -> dict[str, object]:
    return openai_target(url, name="emb", model="text-embedding-3-small", api_format="embeddings")


async def test_embeds_a_text_over_http(fake_llm, make_registry):
    runtime = make_registry([embeddings_target(fake_llm.url)]).get("emb")
    assert runtime.kind == "embeddings"
    reply = await runtime.complete(request_for(question="The cat sat on the mat"))
    sent = fake_llm.requests[-1]
    assert sent.path == "/v1/embeddings"
    assert sent.json == {"model": "text-embedding-3-small", "input": "The cat sat on the mat"}
    assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert reply.embedding == tuple(hashed_embedding("The cat sat on the mat"))
    assert reply.usage.input_tokens == 6
    assert reply.model == "text-embedding-3-small"
    assert reply.raw["data"] == [{"object": "embedding", "index": 0}]  # no vector kept twice
    assert runtime.describe().kind == "embeddings"


async def test_similar_texts_are_close_and_the_mock_agrees(fake_llm, make_registry):
    mocked_target = {"name": "embeddings", "provider": "mock", "api_format": "embeddings"}
    registry = make_registry([embeddings_target(fake_llm.url), mocked_target])
    served, mock = registry.get("emb"), registry.get("embeddings")
    texts = ["the capital of France is Paris", "Paris is the capital of France", "I like cats"]
    vectors = [(await served.complete(request_for(question=t))).embedding for t in texts]
    assert all(vector is not None for vector in vectors)
    same, other = cosine(vectors[0], vectors[1]), cosine(vectors[0], vectors[2])
    assert same == pytest.approx(1.0)
    assert other < 0.5
    mocked = (await mock.complete(request_for(question=texts[2]))).embedding
    assert mocked == vectors[2]


async def test_retries_by_policy_and_never_shows_the_key(fake_llm, make_registry, caplog):
    caplog.set_level(logging.DEBUG)
    sleep = SleepRecorder()
    runtime = make_registry([embeddings_target(fake_llm.url)], sleep=sleep).get("emb")
    fake_llm.script(error(429, "slow down", retry_after="2"))
    reply = await runtime.complete(request_for(question="hello"))
    assert reply.embedding is not None
    assert sleep.delays == [2.0]
    assert [attempt.status for attempt in reply.attempts] == [429, 200]
    fake_llm.script(error(401, f"Incorrect API key provided: {FAKE_KEY}"))
    with pytest.raises(ProviderError) as caught:
        await runtime.complete(request_for(question="hello", role=CallRole.JUDGE))
    assert FAKE_KEY not in caught.value.detail
    assert FAKE_KEY not in caplog.text


async def test_a_reply_without_a_vector_is_invalid(fake_llm, make_registry):
    from testkit.fake_llm import Reply

    runtime = make_registry([embeddings_target(fake_llm.url)], retry_max_attempts=1).get("emb")
    fake_llm.script(Reply(body={"object": "list", "data": []}))
    with pytest.raises(ProviderError, match="does not match the wire format"):
        await runtime.complete(request_for(question="hello"))


def test_spellings_of_an_embeddings_target(tmp_path):
    by_provider = parse_target(
        {"name": "e", "provider": "openai-embeddings", "model": "m", "base_url": "http://x/v1"},
        {},
    )
    assert isinstance(by_provider, OpenAITarget)
    assert by_provider.api_format == "embeddings"
    listing = tmp_path / "providers.yaml"
    listing.write_text(
        "- id: openai:embedding:text-embedding-3-small\n"
        "  config: {apiBaseUrl: 'http://127.0.0.1:9/v1'}\n"
        "- id: openai:embeddings:text-embedding-3-large\n"
        "  label: large\n"
    )
    targets = load_targets_file(listing, {})
    assert [(t.name, getattr(t, "api_format", None), getattr(t, "model", None))
            for t in targets] == [
        ("openai:embedding:text-embedding-3-small", "embeddings", "text-embedding-3-small"),
        ("large", "embeddings", "text-embedding-3-large"),
    ]  # fmt: skip
