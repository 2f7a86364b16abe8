"""``/v1/imports``: the migration's far end (this service's extension, not OpenAI's API).

Evals, files and finished runs read from another Evals API are stored under their own ids;
importing an object again changes nothing (``created: false``). ``scripts/
migrate_openai_evals.py`` drives these routes.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request

from app.api.dependencies import ServicesDep
from app.api.middleware.auth import CallerDep
from app.api.openai_evals.routes import ERRORS, SAMPLE_SUMMARY
from app.schemas.openai_examples import (
    SAMPLE_EVAL_ID,
    SAMPLE_EVAL_RUN_ID,
    SAMPLE_FILE_CONTENT,
    SAMPLE_FILE_ID,
)
from app.services.openai_imports import (
    FileImport,
    Imported,
    ImportedEval,
    ImportedFile,
    ImportedRun,
    ItemsImport,
)

router = APIRouter(prefix="/v1/imports", tags=["openai-evals-imports"])


def _ident(value: str, what: str) -> Any:
    return Path(
        min_length=1,
        max_length=40,
        pattern=r"^[A-Za-z0-9_-]+$",
        description=f"The {what}'s id at the source (kept here).",
        openapi_examples={"sample": {"summary": SAMPLE_SUMMARY, "value": value}},
    )


EvalIdent = Annotated[str, _ident(SAMPLE_EVAL_ID, "eval")]
RunIdent = Annotated[str, _ident(SAMPLE_EVAL_RUN_ID, "run")]
FileIdent = Annotated[str, _ident(SAMPLE_FILE_ID, "file")]
SAMPLE_CONFIG = {"type": "custom", "schema": {"type": "object", "properties": {"item": {}}}}


def _source(summary: str, value: dict[str, Any]) -> Any:
    return Body(
        description="The object as the source API returned it.",
        openapi_examples={"sample": {"summary": summary, "value": value}},
    )


EvalSource = Annotated[
    dict[str, Any],
    _source(
        "The sample eval (here already: nothing changes)",
        {"id": SAMPLE_EVAL_ID, "name": "sample", "data_source_config": SAMPLE_CONFIG},
    ),
]
RunSource = Annotated[
    dict[str, Any],
    _source(
        "The sample run (here already: nothing changes)",
        {"id": SAMPLE_EVAL_RUN_ID, "status": "completed", "created_at": 1764201600},
    ),
]
FileSource = Annotated[
    FileImport,
    Body(
        openapi_examples={
            "sample": {
                "summary": "The sample file (here already: nothing changes)",
                "value": {
                    "filename": "sample.jsonl",
                    "purpose": "evals",
                    "content": SAMPLE_FILE_CONTENT,
                },
            }
        }
    ),
]
ItemsBatch = Annotated[
    ItemsImport,
    Body(openapi_examples={"empty": {"summary": "No items", "value": {"start": 0, "data": []}}}),
]


@router.put(
    "/evals/{eval_id}", operation_id="import_eval", summary="Import an eval", responses=ERRORS
)
async def import_eval(
    eval_id: EvalIdent, source: EvalSource, services: ServicesDep, caller: CallerDep
) -> ImportedEval:
    """Store the source's eval under its id, checked as a new eval (criteria ids kept)."""
    return await services.openai_imports.import_eval(eval_id, source, caller.id)


@router.put(
    "/files/{file_id}", operation_id="import_file", summary="Import a file", responses=ERRORS
)
async def import_file(
    file_id: FileIdent, source: FileSource, services: ServicesDep, caller: CallerDep
) -> ImportedFile:
    """Store the source's file (description and content) under its id."""
    return await services.openai_imports.import_file(file_id, source, caller.id)


@router.put(
    "/evals/{eval_id}/runs/{run_id}",
    operation_id="import_run",
    summary="Import a finished run",
    responses=ERRORS,
)
async def import_run(
    eval_id: EvalIdent,
    run_id: RunIdent,
    source: RunSource,
    request: Request,
    services: ServicesDep,
    caller: CallerDep,
) -> ImportedRun:
    """Store the source's finished run as a read-only historical run of the eval."""
    base = str(request.base_url)
    return await services.openai_imports.import_run(eval_id, run_id, source, caller.id, base)


@router.post(
    "/evals/{eval_id}/runs/{run_id}/output_items",
    operation_id="import_output_items",
    summary="Import output items of an imported run",
    responses=ERRORS,
)
async def import_output_items(
    eval_id: EvalIdent,
    run_id: RunIdent,
    batch: ItemsBatch,
    services: ServicesDep,
    caller: CallerDep,
) -> Imported:
    """Store a batch of the run's items, in the source's order (stored ones are skipped)."""
    return await services.openai_imports.import_items(eval_id, run_id, batch, caller.id)
