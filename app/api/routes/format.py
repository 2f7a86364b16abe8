"""``POST /format``: an eval case's messages -> question, guidelines and chatPrompt."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from app.api.body import DocumentBody
from app.api.dependencies import ServicesDep
from app.api.problems import problem_responses
from app.api.responses import json_reply
from app.schemas.format import FORMAT_EXAMPLES, FORMAT_YAML, FormatRequest, FormatResponse
from app.services.format import format_case

router = APIRouter(tags=["format"])

FORMAT_BODY = DocumentBody(FormatRequest, examples=FORMAT_EXAMPLES, yaml_example=FORMAT_YAML)
ERRORS = problem_responses(400, 413, 415, 422)


@router.post(
    "/format",
    operation_id="format",
    summary="Format an eval case's input messages",
    response_model=FormatResponse,
    response_model_by_alias=True,
    response_model_exclude_none=True,
    responses=ERRORS,
    openapi_extra=FORMAT_BODY.openapi,
)
async def format_messages(
    body: Annotated[FormatRequest, Depends(FORMAT_BODY)], services: ServicesDep
) -> FormatResponse | Response:
    """Turn ``input_messages`` into ``question``, ``guidelines`` and ``chatPrompt``.

    The body is JSON or YAML (same schema). Referenced files come from ``files`` (or the
    operator's workspace roots); guideline files are moved out of the turns.
    """
    formatted = await format_case(body, services.settings, services.providers)
    return await json_reply(formatted, len(formatted.question))
