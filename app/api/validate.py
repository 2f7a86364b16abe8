"""``POST /validate``: check a suite and its files as ``/evaluate`` would, without running it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from app.api.body import body_openapi, is_yaml, read_document, validate_document
from app.api.dependencies import SettingsDep
from app.api.problems import Problem
from app.errors import BadRequest
from app.schemas.suite_examples import CUSTOMER_SUPPORT_SUITE, validate_examples
from app.schemas.suites import ValidateRequest, ValidateResponse
from app.suites.service import validate_suite_request

router = APIRouter(tags=["suites"])

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (400, 413, 415, 422)
}


def _openapi() -> dict[str, Any]:
    extra = body_openapi(ValidateRequest, validate_examples())
    content = extra["requestBody"]["content"]
    content["application/yaml"] = {
        "schema": {"type": "string", "description": "The eval file itself (YAML)."},
        "example": CUSTOMER_SUPPORT_SUITE,
    }
    return extra


async def read_validate_request(request: Request) -> ValidateRequest:
    """The body as a ``ValidateRequest``: JSON ``{suite, files?}``, or the eval file as YAML."""
    if is_yaml(request):
        try:
            text = (await request.body()).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRequest("the body is not UTF-8 text") from exc
        return ValidateRequest(suite=text)
    return validate_document(ValidateRequest, await read_document(request))


@router.post(
    "/validate",
    operation_id="validate_suite",
    summary="Check a suite and the files it references",
    response_model=ValidateResponse,
    response_model_exclude_none=True,
    response_model_by_alias=True,
    responses=ERRORS,
    openapi_extra=_openapi(),
)
async def validate_suite(
    request: Request,
    settings: SettingsDep,
    prompts: Annotated[
        bool, Query(description="Also return each case's question, guidelines and chatPrompt.")
    ] = False,
) -> ValidateResponse:
    """Report every problem of a suite (200 with `valid: false`), as `/evaluate` checks it.

    The body is JSON `{suite, files?}` (the suite as an object, as YAML text, or as a path
    under a workspace root) or the eval file itself as `application/yaml`. Every case is
    formatted and every referenced file resolved; no provider is called. YAML syntax errors
    are reported with their line and column. Only a body that is not a suite request at all
    gets a problem document.
    """
    body = await read_validate_request(request)
    return await validate_suite_request(body, settings, prompts=prompts)
