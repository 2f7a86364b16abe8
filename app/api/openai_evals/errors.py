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
