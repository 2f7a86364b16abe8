"""The service's error tree; every failure a caller can see is one of these.

ServiceError (status, type slug, title)
 +-- BadRequest (400)           body does not parse
 +-- Unauthorized (401)
 +-- NotFound (404)
 +-- Conflict (409)
 +-- PayloadTooLarge (413)
 +-- UnsupportedMediaType (415)
 +-- InvalidRequest (422)       schema violations, missing or unsafe files, unknown targets
 +-- TooManyRequests (429)
 +-- ServiceUnavailable (503)
 +-- ProviderError (502)        a provider call failed (see app.providers.errors)

Routes never catch these: ``app.api.problems`` renders each one once as an RFC 9457
``application/problem+json`` document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel


class FieldError(BaseModel):
    """One problem with one field or file, located by its path in the document."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None


class ServiceError(Exception):
    """Base of every error the service reports to a caller."""

    status: ClassVar[int] = 500
    slug: ClassVar[str] = "internal-error"
    title: ClassVar[str] = "Internal error"

    def __init__(
        self,
        detail: str,
        *,
        errors: list[FieldError] | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        if title is not None:
            self.title = title  # type: ignore[misc]


class BadRequest(ServiceError):
    """The body could not be parsed."""

    status = 400
    slug = "malformed-body"
    title = "Request body could not be parsed"


class Unauthorized(ServiceError):
    """A missing or wrong API key."""

    status = 401
    slug = "unauthorized"
    title = "Missing or invalid API key"


class NotFound(ServiceError):
    """The addressed resource does not exist (or is not the caller's)."""

    status = 404
    slug = "not-found"
    title = "Resource not found"


class Conflict(ServiceError):
    """The request conflicts with the state of a resource."""

    status = 409
    slug = "conflict"
    title = "Conflict"


class PayloadTooLarge(ServiceError):
    """The body, a file or a suite is over a configured limit."""

    status = 413
    slug = "payload-too-large"
    title = "Payload too large"


class UnsupportedMediaType(ServiceError):
    """The body's media type is not one the route takes."""

    status = 415
    slug = "unsupported-media-type"
    title = "Unsupported media type"


class InvalidRequest(ServiceError):
    """The request parsed but is not valid: schema violations, files, targets."""

    status = 422
    slug = "validation-error"
    title = "Request is not valid"


class TooManyRequests(ServiceError):
    """A per-key limit refused the request; ``Retry-After`` says when to come back."""

    status = 429
    slug = "too-many-requests"
    title = "Too many requests"


class ServiceUnavailable(ServiceError):
    """A dependency of the service (database, targets) is not ready."""

    status = 503
    slug = "service-unavailable"
    title = "Service unavailable"
