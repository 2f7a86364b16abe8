"""Embeddings targets: ``POST {base_url}/embeddings`` (OpenAI-compatible), and the mock's.

A target with ``api_format: embeddings`` turns one text into one vector: the text is the
request's ``question``, the vector the reply's ``embedding``. It goes through the same
runtime as every target (limits, retries, time limits, secrets removed from what it
answers); it answers no case and judges none (``kind`` ``embeddings``). The vectors are left
out of the reply's ``raw`` (kept: model, usage): the reply carries each vector once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from app.providers.adapters.hashed_embeddings import MODEL, hashed_embedding, word_count
from app.providers.adapters.http import HttpAdapter, UpstreamError
from app.providers.adapters.openai import parse_openai_error
from app.providers.base import ProviderKind, ProviderRequest, ProviderResponse, Usage
from app.providers.preview import ProviderPreview
from app.settings.targets import MockTarget, OpenAITarget


class _Embedding(BaseModel):
    embedding: list[float] = Field(min_length=1)


class _Usage(BaseModel):
    prompt_tokens: int | None = None


class EmbeddingsReply(BaseModel):
    """The parts of an ``/embeddings`` reply the service reads."""

    model: str | None = None
    data: list[_Embedding] = Field(min_length=1)
    usage: _Usage | None = None


def embeddings_body(model: str, text: str) -> dict[str, Any]:
    """The ``/embeddings`` body of one text (pure)."""
    return {"model": model, "input": text}


def without_vectors(payload: Any) -> Any:
    """An embeddings reply without its vectors (each item keeps its other keys)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        return payload
    data = [
        {key: value for key, value in item.items() if key != "embedding"}
        if isinstance(item, dict)
        else item
        for item in payload["data"]
    ]
    return {**payload, "data": data}


class EmbeddingsAdapter(HttpAdapter[OpenAITarget]):
    """``POST {base_url}/embeddings`` with a bearer key (optional for local servers)."""

    kind: ProviderKind = "embeddings"
    api = "the embeddings API"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """``{model, input}``: the request's question is the text to embed."""
        return embeddings_body(self.target.model, request.question), []

    def url(self) -> str:
        """``{base_url}/embeddings``."""
        return self.target.base_url.rstrip("/") + "/embeddings"

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is configured."""
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def parse_reply(self, payload: Any, _request: ProviderRequest) -> ProviderResponse:
        """The first item's vector, the model and the input tokens."""
        reply = EmbeddingsReply.model_validate(payload)
        usage = reply.usage or _Usage()
        return ProviderResponse(
            text="",
            embedding=tuple(reply.data[0].embedding),
            usage=Usage(input_tokens=usage.prompt_tokens),
            model=reply.model,
        )

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """See ``parse_openai_error``."""
        return parse_openai_error(payload)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """One call; the reply's ``raw`` without the vectors."""
        reply = await super().complete(request)
        return reply.model_copy(update={"raw": without_vectors(reply.raw)})


class MockEmbeddingsAdapter:
    """The offline embeddings target: hashed-word vectors (``hashed_embeddings``)."""

    kind: ProviderKind = "embeddings"

    def __init__(self, target: MockTarget) -> None:
        self.target = target

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """The vector of the request's question, after the target's ``latency_ms``."""
        if self.target.latency_ms:
            await asyncio.sleep(self.target.latency_ms / 1000)
        return ProviderResponse(
            text="",
            embedding=tuple(hashed_embedding(request.question)),
            usage=Usage(input_tokens=word_count(request.question)),
            latency_ms=self.target.latency_ms,
            model=MODEL,
            raw={"model": MODEL},
        )

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """The body an OpenAI-compatible server would get."""
        return ProviderPreview(body=embeddings_body(MODEL, request.question), rewrites=[])

    async def aclose(self) -> None:
        """Nothing to release."""
