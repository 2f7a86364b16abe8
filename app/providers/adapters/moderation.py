"""Moderation targets: ``POST {base_url}/moderations`` (OpenAI-compatible).

A target with ``api_format: moderation`` flags one text: the text is the request's
``question``, the reply's ``flags`` the categories a flagged result marked true (OpenAI's names,
``violence``, ``self-harm``..., or a server's own codes, ``S10``). It goes through the same
runtime as every target (limits, retries, time limits); it answers no case and judges none
(``kind`` ``moderation``): the ``moderation`` grader calls it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.providers.adapters.http import HttpAdapter, UpstreamError
from app.providers.adapters.openai import parse_openai_error
from app.providers.base import ProviderKind, ProviderRequest, ProviderResponse
from app.settings.targets import OpenAITarget


class _Result(BaseModel):
    flagged: bool = False
    categories: dict[str, bool | None] = Field(default_factory=dict)


class ModerationReply(BaseModel):
    """The parts of a ``/moderations`` reply the service reads."""

    model: str | None = None
    results: list[_Result] = Field(min_length=1)


def flagged_categories(reply: ModerationReply) -> tuple[str, ...]:
    """The categories a flagged result marked true, once each, in order (pure).

    A result with ``flagged: false`` counts for nothing, whatever its categories (promptfoo).
    """
    found: dict[str, None] = {}
    for result in reply.results:
        if result.flagged:
            found.update((name, None) for name, on in result.categories.items() if on)
    return tuple(found)


class ModerationAdapter(HttpAdapter[OpenAITarget]):
    """``POST {base_url}/moderations`` with a bearer key (optional for local servers)."""

    kind: ProviderKind = "moderation"
    api = "the moderations API"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """``{model, input}``: the request's question is the text to moderate."""
        return {"model": self.target.model, "input": request.question}, []

    def url(self) -> str:
        """``{base_url}/moderations``."""
        return self.target.base_url.rstrip("/") + "/moderations"

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is configured."""
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def parse_reply(self, payload: Any, _request: ProviderRequest) -> ProviderResponse:
        """The flagged categories and the model."""
        reply = ModerationReply.model_validate(payload)
        return ProviderResponse(text="", flags=flagged_categories(reply), model=reply.model)

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """See ``parse_openai_error``."""
        return parse_openai_error(payload)
