"""Classifier targets: Hugging Face's ``text-classification`` (``POST {base_url}/models/{model}``).

A ``huggingface`` target (task ``text-classification``) scores one text in classes: the text
is the request's ``question``, sent as ``{"inputs": text, "parameters": {}}``; the reply is a
list of ``{label, score}`` (or that list inside a one-item list, as the Inference API answers
a single input), read into the response's ``classification`` (label to score, the last of a
repeated label). An ``{"error": ...}`` body is the target's failure whatever its status. It
goes through the same runtime as every target (limits, retries, time limits); it answers no
case and judges none (``kind`` ``classifier``): the ``classifier`` grader calls it.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field, RootModel, field_validator

from app.providers.adapters.http import HttpAdapter, UpstreamError
from app.providers.base import ProviderKind, ProviderRequest, ProviderResponse
from app.providers.errors import redact
from app.settings.targets import HuggingFaceTarget


class _Label(BaseModel):
    label: str
    score: float

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("a score must be a finite number")
        return value


class ClassificationReply(RootModel[list[_Label]]):
    """A text-classification reply: one ``{label, score}`` per class, at least one."""

    root: list[_Label] = Field(min_length=1)


def classification_scores(payload: Any) -> dict[str, float]:
    """Each label's score in a text-classification reply (pure).

    A one-item list holding the list (the reply to one input) is read as that list.

    Raises:
        ValueError: The payload is not a non-empty list of ``{label, score}``.
    """
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], list):
        payload = payload[0]
    reply = ClassificationReply.model_validate(payload)
    return {item.label: item.score for item in reply.root}


def _error_message(payload: Any) -> str | None:
    if not isinstance(payload, dict) or "error" not in payload:
        return None
    error = payload["error"]
    return error if isinstance(error, str) else str(error)


class HuggingFaceClassifierAdapter(HttpAdapter[HuggingFaceTarget]):
    """``POST {base_url}/models/{model}`` with a bearer token (optional for local servers)."""

    kind: ProviderKind = "classifier"
    api = "the Hugging Face Inference API"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """``{inputs, parameters}``: the request's question is the text to classify."""
        return {"inputs": request.question, "parameters": {}}, []

    def url(self) -> str:
        """``{base_url}/models/{model}``."""
        return f"{self.target.base_url.rstrip('/')}/models/{self.target.model}"

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a token is configured."""
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def parse_reply(self, payload: Any, _request: ProviderRequest) -> ProviderResponse:
        """Each class's score; an ``{"error": ...}`` body is the target's failure."""
        message = _error_message(payload)
        if message is not None:
            raise self._invalid(f"answered an error: {redact(message, self._secrets)[:300]}")
        return ProviderResponse(
            text="", classification=classification_scores(payload), model=self.target.model
        )

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """``{"error": "..."}``, the Inference API's error body."""
        message = _error_message(payload)
        return None if message is None else UpstreamError(message=message)
