"""OpenAI's error shape for ``/v1``: the one builder, used by every error handler.

The rest of the service answers RFC 9457 problems; under ``/v1`` the same errors are
``{"error": {"message", "type", "param", "code"}}`` with the status the OpenAI API would
use (its validation errors are 400, not 422), so the SDK raises ``BadRequestError``,
``NotFoundError``, ``AuthenticationError``, ``RateLimitError``... as it does upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from app.errors import FieldError

OPENAI_PREFIX = "/v1/"
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}
_CODES = {
    401: "invalid_api_key",
    404: "not_found",
    413: "payload_too_large",
    429: "rate_limit_exceeded",
}


class OpenAIErrorBody(BaseModel):
    """The ``error`` member of an OpenAI error document."""

    message: str
    type: str = Field(examples=["invalid_request_error"])
    param: str | None = Field(None, examples=["data_source.model"])
    code: str | None = Field(None, examples=["model_not_found"])


class OpenAIError(BaseModel):
    """An error of the ``/v1`` surface, in OpenAI's shape."""

    error: OpenAIErrorBody


OPENAI_ERROR_REF = "#/components/schemas/OpenAIError"
# What each refusal of ``/v1`` means, and a typical one (OpenAPI responses).
_DOCUMENTED: dict[int, tuple[str, str, str | None]] = {
    400: (
        "Not valid: `error.param` names the field (the SDK's `BadRequestError`).",
        "data_source.model: model 'gpt-5' is not configured here",
        "data_source.model",
    ),
    401: (
        "No API key, or one that is not valid (only when the operator configured keys).",
        "this route needs an API key: send 'Authorization: Bearer <key>'",
        None,
    ),
    404: (
        "No such eval, run, item or file (or another API key's): `NotFoundError`.",
        "no eval has the id 'eval_0f0c6d3e8a7b4f3c9e2d1a0b5c4d3e2f'",
        None,
    ),
    409: (
        "This `Idempotency-Key` was used before with another body (`ConflictError`).",
        "this Idempotency-Key was already used with a different request body",
        None,
    ),
    413: (
        "The body is over the operator's limit.",
        "the request body is larger than the limit of 5242880 bytes",
        None,
    ),
    429: (
        "Too many requests for this API key; `Retry-After` says when to try again.",
        "more than 60 requests per minute; retry in 2 s",
        None,
    ),
}


def openai_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries: an OpenAI error object per status, with an example."""
    responses: dict[int | str, dict[str, Any]] = {}
    for code in sorted(codes):
        description, message, param = _DOCUMENTED[code]
        errors = [FieldError(path=param, message=message)] if param else []
        extra = {"code": "model_not_found"} if param == "data_source.model" else None
        example = openai_error_document(code, message, errors, extra)
        responses[code] = {
            "description": description,
            "content": {
                "application/json": {"schema": {"$ref": OPENAI_ERROR_REF}, "example": example}
            },
        }
    return responses


def is_openai_path(path: str) -> bool:
    """Whether ``path`` belongs to the OpenAI surface."""
    return path.startswith(OPENAI_PREFIX) or path == OPENAI_PREFIX.rstrip("/")


def openai_status(status: int) -> int:
    """The status OpenAI answers for ours (validation errors are 400 there)."""
    return 400 if status == 422 else status


def openai_error_document(
    status: int,
    message: str,
    errors: Sequence[FieldError] = (),
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The one builder of every ``/v1`` error body."""
    status = openai_status(status)
    code = (extra or {}).get("code") or _CODES.get(status)
    body = OpenAIErrorBody(
        message=message,
        type=_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error"),
        param=errors[0].path if errors else None,
        code=code if isinstance(code, str) else None,
    )
    return {"error": body.model_dump()}
