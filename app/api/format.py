"""``POST /format``: an eval case's messages -> question, guidelines and chatPrompt."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.api.body import body_openapi, read_document, validate_document
from app.api.dependencies import ServicesDep
from app.api.problems import Problem
from app.format_service import format_case
from app.schemas.format import FORMAT_EXAMPLES, FormatRequest, FormatResponse

router = APIRouter(tags=["format"])

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (400, 413, 415, 422)
}


@router.post(
    "/format",
    operation_id="format",
    summary="Format an eval case's input messages",
    response_model=FormatResponse,
    response_model_by_alias=True,
    response_model_exclude_none=True,
    responses=ERRORS,
    openapi_extra=body_openapi(FormatRequest, FORMAT_EXAMPLES),
)
async def format_messages(request: Request, services: ServicesDep) -> FormatResponse:
    """Turn ``input_messages`` into ``question``, ``guidelines`` and ``chatPrompt``.

    The body is JSON or YAML (same schema). Referenced files come from ``files`` (or the
    operator's workspace roots); guideline files are moved out of the turns.
    """
    body = validate_document(FormatRequest, await read_document(request))
    return await format_case(body, services)
