"""Render every error once, as an RFC 9457 ``application/problem+json`` document."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope, Send

from app.api.openai_evals.errors import is_openai_path, openai_error_document, openai_status
from app.errors import (
    BadRequest,
    Conflict,
    FieldError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    ServiceUnavailable,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    validation_message,
)

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_BASE = "/problems/"
PROBLEM_SCHEMA_REF = "#/components/schemas/Problem"
# A typical refusal of each status, as the service words it (OpenAPI examples).
EXAMPLE_ERRORS: dict[int, ServiceError] = {
    400: BadRequest(
        "invalid JSON: Expecting value at line 1, column 7",
        errors=[FieldError(path="", message="invalid JSON: Expecting value", line=1, column=7)],
    ),
    401: Unauthorized("this route needs an API key: send 'Authorization: Bearer <key>'"),
    404: NotFound("no run has the id 'run_0f0c6d3e8a7b4f3c9e2d1a0b5c4d3e2f'"),
    409: Conflict("run 'run_sample' is running; cancel it or wait until it finishes"),
    413: PayloadTooLarge("the request body is larger than the limit of 5242880 bytes"),
    415: UnsupportedMediaType(
        "Content-Type 'text/plain' is not accepted; send application/json or application/yaml"
    ),
    422: InvalidRequest(
        "input_messages[0].role: Input should be 'system', 'user', 'assistant' or 'tool'",
        errors=[
            FieldError(
                path="input_messages[0].role",
                message="Input should be 'system', 'user', 'assistant' or 'tool'",
            )
        ],
    ),
    429: TooManyRequests(
        "more than 60 requests per minute; retry in 2 s", title="Request rate limit exceeded"
    ),
    503: ServiceUnavailable(
        "not ready: database unreachable",
        title="Service not ready",
        extra={"checks": {"database": "unreachable", "targets": "ok"}},
    ),
}
PROBLEM_DESCRIPTIONS: dict[int, str] = {
    400: "The body does not parse: not JSON or YAML, or not UTF-8 text.",
    401: "No API key, or one that is not valid (only when the operator configured keys).",
    404: "No run has this id (or it belongs to another API key).",
    409: "The run's state does not allow this.",
    413: "The body, a referenced file or the suite is over one of the operator's limits.",
    415: "The Content-Type is neither JSON nor YAML.",
    422: "A field is not valid: `errors` names each one and the offending value.",
    429: "Too many requests for this API key (or client address); `Retry-After` says when "
    "to try again. Only when the operator set a request rate.",
    503: "A dependency is not ready: `checks` names each one that failed.",
}
logger = logging.getLogger("app.problems")


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    type: str = Field(examples=["/problems/validation-error"])
    title: str = Field(examples=["Request is not valid"])
    status: int = Field(examples=[422])
    detail: str = Field(examples=["input_messages[0].role: Input should be 'system', ..."])
    instance: str | None = Field(None, examples=["/format"])
    errors: list[FieldError] = Field(default_factory=list)


def problem_responses(
    *codes: int,
    described: Mapping[int, str] | None = None,
    examples: Mapping[int, ServiceError] | None = None,
) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries: a problem document for each status, with an example.

    Args:
        codes: Statuses described by ``PROBLEM_DESCRIPTIONS``.
        described: Statuses with a description of their own (for this operation).
        examples: Errors whose documents are this operation's examples (default: the
            status's ``EXAMPLE_ERRORS`` entry). ``app.api.openapi_docs.openapi``
            sets each ``instance``.
    """
    descriptions = {code: PROBLEM_DESCRIPTIONS[code] for code in codes} | dict(described or {})
    errors = EXAMPLE_ERRORS | dict(examples or {})
    return {
        code: {
            "description": description,
            "content": {
                PROBLEM_MEDIA_TYPE: {
                    "schema": {"$ref": PROBLEM_SCHEMA_REF},
                    "example": error_document(errors[code], ""),
                }
            },
        }
        for code, description in sorted(descriptions.items())
    }


def format_location(loc: Sequence[int | str]) -> str:
    """Turn a pydantic location into a document path: ``input_messages[1].role``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


_MISSING = object()


def document_location(loc: Sequence[int | str], document: Any) -> tuple[int | str, ...]:
    """``loc`` without pydantic's own steps: the path of the field in the document sent.

    A union or a tagged union adds the member tried to the location (``content.str``,
    ``testing_criteria[0].string_check.operation``): a step that is not a key or index of
    the document there is dropped, but for the last one (a missing field).
    """
    kept: list[int | str] = []
    value: Any = document
    for index, part in enumerate(loc):
        child = _step(value, part)
        if child is not _MISSING:
            kept.append(part)
            value = child
        elif index == len(loc) - 1 and isinstance(value, dict) and isinstance(part, str):
            kept.append(part)  # a required field not given
    return tuple(kept)


def _step(value: Any, part: int | str) -> Any:
    """``value[part]`` when the document has it there, else ``_MISSING``."""
    if isinstance(value, dict) and part in value:
        return value[part]
    if isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value):
        return value[part]
    return _MISSING


def field_errors(
    exc: ValidationError | RequestValidationError, *, strip: int = 0, document: Any = _MISSING
) -> list[FieldError]:
    """Field errors of a pydantic failure, each named by its path.

    With the ``document`` validated, paths name its fields only (no union member tags).
    """
    errors = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))[strip:]
        if document is not _MISSING:
            loc = document_location(loc, document)
        part_index = (error.get("ctx") or {}).get("part_index")
        if isinstance(part_index, int):
            loc = (*loc, part_index)
        path = format_location(loc)
        errors.append(FieldError(path=path, message=validation_message(dict(error))))
    return errors


def invalid_request(
    exc: ValidationError, *, prefix: str = "", document: Any = _MISSING
) -> InvalidRequest:
    """An ``InvalidRequest`` listing every field error of ``exc`` (of ``document``, if given)."""
    errors = field_errors(exc, document=document)
    if prefix:
        errors = [
            FieldError(path=f"{prefix}.{e.path}" if e.path else prefix, message=e.message)
            for e in errors
        ]
    detail = "; ".join(f"{e.path}: {e.message}" if e.path else e.message for e in errors[:5])
    if len(errors) > 5:
        detail += f"; and {len(errors) - 5} more"
    return InvalidRequest(detail, errors=errors)


def problem_document(
    *,
    status: int,
    slug: str,
    title: str,
    detail: str,
    instance: str,
    errors: Sequence[FieldError] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one builder of every ``problem+json`` body the service sends."""
    body: dict[str, Any] = {
        "type": PROBLEM_BASE + slug,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
    }
    if errors:
        body["errors"] = [e.model_dump(exclude_none=True) for e in errors]
    body.update(extra or {})
    return body


def error_document(error: ServiceError, instance: str) -> dict[str, Any]:
    """The problem document of a service error."""
    return problem_document(
        status=error.status,
        slug=error.slug,
        title=error.title,
        detail=error.detail,
        instance=instance,
        errors=error.errors,
        extra=error.extra,
    )


def problem_response(
    request: Request,
    *,
    status: int,
    slug: str,
    title: str,
    detail: str,
    errors: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A ``problem+json`` response (OpenAI's error shape under ``/v1``)."""
    if is_openai_path(request.url.path):
        return JSONResponse(
            openai_error_document(status, detail, errors or ()),
            status_code=openai_status(status),
            headers=headers,
        )
    body = problem_document(
        status=status,
        slug=slug,
        title=title,
        detail=detail,
        instance=request.url.path,
        errors=errors or (),
    )
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_MEDIA_TYPE)


async def send_problem(scope: Scope, send: Send, error: ServiceError) -> None:
    """Answer with ``error`` as a problem document from ASGI middleware (outside handlers)."""
    path = scope.get("path", "")
    status, media_type = error.status, PROBLEM_MEDIA_TYPE
    document = error_document(error, path)
    if is_openai_path(path):
        document = openai_error_document(error.status, error.detail, error.errors, error.extra)
        status, media_type = openai_status(error.status), "application/json"
    payload = json.dumps(document).encode()
    headers = [
        (b"content-type", media_type.encode()),
        (b"content-length", str(len(payload)).encode()),
    ]
    headers += [(name.lower().encode(), value.encode()) for name, value in error.headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    if is_openai_path(request.url.path):
        return JSONResponse(
            openai_error_document(exc.status, exc.detail, exc.errors, exc.extra),
            status_code=openai_status(exc.status),
            headers=exc.headers,
        )
    return JSONResponse(
        error_document(exc, request.url.path),
        status_code=exc.status,
        headers=exc.headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = []
    for error in field_errors(exc, document={"body": exc.body}):
        path = error.path.removeprefix("body.").removeprefix("body")
        errors.append(FieldError(path=path, message=error.message))
    detail = "; ".join(f"{e.path}: {e.message}" if e.path else e.message for e in errors[:5])
    return problem_response(
        request,
        status=422,
        slug=InvalidRequest.slug,
        title=InvalidRequest.title,
        detail=detail,
        errors=errors,
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    slug = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
    return problem_response(
        request,
        status=exc.status_code,
        slug=slug,
        title=str(exc.detail),
        detail=f"{request.method} {request.url.path}: {exc.detail}",
        headers=dict(exc.headers or {}),
    )


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error", exc_info=exc)
    return problem_response(
        request,
        status=500,
        slug="internal-error",
        title="Internal error",
        detail="The service failed to handle this request; the error was logged.",
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Register the handlers that render errors as problem documents."""
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
