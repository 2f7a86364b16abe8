"""The service's error tree; every failure a caller can see is one of these.

ServiceError (status, type slug, title)
 +-- BadRequest (400)               body does not parse
 |    +-- DocumentError             a JSON/YAML document that does not parse, or is too big
 +-- Unauthorized (401)
 +-- NotFound (404)
 |    +-- RunNotFound               no run has this id (or it is another caller's)
 +-- Conflict (409)
 |    +-- RunStateConflict          the run's state does not allow the operation
 |    +-- IdempotencyConflict       an Idempotency-Key reused with another body
 +-- PayloadTooLarge (413)
 +-- UnsupportedMediaType (415)
 +-- InvalidRequest (422)           schema violations, missing or unsafe files, unknown targets
 |    +-- FileRefused               a referenced file that may not be read (path, size, binary)
 |    +-- EvaluatorConfigError      an evaluator configuration that cannot run
 +-- TooManyRequests (429)
 +-- ClientDisconnected (499)       the client went away; its work was cancelled
 +-- ServiceUnavailable (503)
 |    +-- ApiKeysFileError          the API keys file cannot be read
 |    +-- TargetsFileError          the targets file cannot be loaded (start-up)
 |    +-- SchemaNotCurrent          the database schema is not at the latest migration
 +-- ProviderError (502)            a provider call failed: the second tree, in
                                    ``app.providers.errors`` (with UnknownTarget and
                                    InlineTargetRefused, both InvalidRequest)

Every error class of the service is in one of these two trees. Routes never catch them:
``app.api.problems`` renders each one once as an RFC 9457 ``application/problem+json``
document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel


def _shown(value: Any) -> str | None:
    """A short, escaped rendering of a scalar value given (``None`` for other values)."""
    if isinstance(value, str):
        shown = json.dumps(value[:60])
        return shown + "..." if len(value) > 60 else shown
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def validation_message(error: Mapping[str, Any]) -> str:
    """A pydantic error's message naming the value given: ``...; got "robot"``.

    A scalar is shown short and escaped; a list or object is named only when its type is
    the problem ("Input should be a valid string; got a list").
    """
    message = str(error.get("msg", "is not valid"))
    kind = str(error.get("type", ""))
    if kind == "missing" or "input" not in error:
        return message
    value = error["input"]
    shown = _shown(value)
    if shown is None and kind.endswith("_type"):
        shown = "an object" if isinstance(value, Mapping) else "a list"
    return f"{message}; got {shown}" if shown is not None and shown not in message else message


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


class DocumentError(BadRequest):
    """A document that does not parse, or parses into something too large or deep."""


class RunNotFound(NotFound):
    """No run has this id."""

    slug = "run-not-found"
    title = "Run not found"


class RunStateConflict(Conflict):
    """The run is not in a state that allows the operation (e.g. deleting a running run)."""

    slug = "run-state-conflict"
    title = "Run state does not allow this"


class IdempotencyConflict(Conflict):
    """An ``Idempotency-Key`` was reused with a different body."""

    slug = "idempotency-key-reused"
    title = "Idempotency-Key reused with another body"


class FileRefused(InvalidRequest):
    """A referenced file that may not be read: absolute, outside the root, too big, binary."""

    slug = "file-refused"
    title = "File refused"


class EvaluatorConfigError(InvalidRequest):
    """An evaluator configuration that cannot run (bad regex, bad JSON Schema...)."""

    slug = "evaluator-config"
    title = "Evaluator configuration not valid"


class ClientDisconnected(ServiceError):
    """The client went away before the reply was ready; its work was cancelled."""

    status = 499
    slug = "client-closed-request"
    title = "Client closed the request"


class ApiKeysFileError(ServiceUnavailable):
    """The API keys file cannot be read or holds a line that is not a SHA-256 digest."""

    slug = "api-keys-file"
    title = "API keys file is not valid"


class TargetsFileError(ServiceUnavailable):
    """The targets file cannot be loaded; raised at start-up, naming target and key."""

    slug = "targets-file-invalid"
    title = "Targets file not valid"


class SchemaNotCurrent(ServiceUnavailable):
    """The database schema is not at the latest migration."""

    slug = "schema-not-current"
    title = "Database schema not current"
