"""``POST /validate``: check a suite and its files as a run would, without running it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.body import DocumentBody
from app.api.dependencies import OptionalServicesDep, SettingsDep
from app.api.problems import problem_responses
from app.evaluation.plan import classifier_targets, embedding_targets, moderation_targets
from app.schemas.suite_examples import QUICK_SUITE_YAML, validate_examples
from app.schemas.suites import ValidateRequest, ValidateResponse
from app.services.validate import validate_suite

router = APIRouter(tags=["suites"])

VALIDATE_BODY = DocumentBody(
    ValidateRequest,
    examples=validate_examples(),
    yaml_field="suite",
    yaml_example=QUICK_SUITE_YAML,
)
ERRORS = problem_responses(400, 413, 415, 422)


@router.post(
    "/validate",
    operation_id="validate_suite",
    summary="Check a suite and the files it references",
    response_model=ValidateResponse,
    response_model_exclude_none=True,
    response_model_by_alias=True,
    responses=ERRORS,
    openapi_extra=VALIDATE_BODY.openapi,
)
async def validate_suite_route(
    body: Annotated[ValidateRequest, Depends(VALIDATE_BODY)],
    settings: SettingsDep,
    services: OptionalServicesDep,
    prompts: Annotated[
        bool, Query(description="Also return each case's question, guidelines and chatPrompt.")
    ] = False,
) -> ValidateResponse:
    """Report every problem of a suite (200 with `valid: false`), as `/evaluate` checks it.

    The body is JSON `{suite, files?}` (the suite as an object, as YAML text, or as a path
    under a workspace root) or the eval file itself as `application/yaml`. Every case is
    formatted and every referenced file resolved; no provider is called. YAML syntax errors
    are reported with their line and column. Only a body that is not a suite request at all
    gets a problem document. A provider (target) the suite names that is not configured
    here is an error naming it.
    """
    targets = services.providers.names() if services is not None else None
    embedders = embedding_targets(services.providers) if services is not None else ()
    moderators = moderation_targets(services.providers) if services is not None else ()
    classifiers = classifier_targets(services.providers) if services is not None else ()
    return await validate_suite(
        body,
        settings,
        prompts=prompts,
        targets=targets,
        embedding_targets=embedders,
        moderation_targets=moderators,
        classifier_targets=classifiers,
    )
