"""``/v1/files``: JSONL files (``purpose=evals``) that runs' ``file_id`` sources read."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Path, Query, UploadFile
from fastapi.responses import PlainTextResponse

from app.api.middleware.auth import CallerDep
from app.api.openai_evals.routes import ERRORS, SAMPLE_SUMMARY, EvalsDep
from app.schemas.openai_evals import FileDeleted, FileObject, ListPage
from app.schemas.openai_examples import SAMPLE_FILE_CONTENT, SAMPLE_FILE_ID

router = APIRouter(prefix="/v1/files", tags=["openai-evals"])
FileId = Annotated[
    str,
    Path(
        max_length=100,
        description="The file's id (`file-...`).",
        openapi_examples={"sample": {"summary": SAMPLE_SUMMARY, "value": SAMPLE_FILE_ID}},
    ),
]


@router.post("", operation_id="openai_upload_file", summary="Upload a file", responses=ERRORS)
async def upload_file(
    file: Annotated[
        UploadFile,
        File(description="JSONL: one `{item, sample?}` per line.", examples=[SAMPLE_FILE_CONTENT]),
    ],
    purpose: Annotated[str, Form(description="`evals`.", examples=["evals"])],
    evals: EvalsDep,
    caller: CallerDep,
) -> FileObject:
    """Store the file; every line is checked now."""
    content = await file.read()
    return await evals.files.upload(file.filename or "upload.jsonl", purpose, content, caller.id)


@router.get("", operation_id="openai_list_files", summary="List files", responses=ERRORS)
async def list_files(
    evals: EvalsDep,
    caller: CallerDep,
    purpose: Annotated[str | None, Query(max_length=100, description="Only this purpose.")] = None,
    after: Annotated[
        str | None, Query(max_length=200, description="`last_id` of the previous page.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="Page size.")] = 10_000,
    order: Annotated[Literal["asc", "desc"], Query(description="By creation time.")] = "desc",
) -> ListPage[FileObject]:
    """One page of the caller's files, newest first unless `order=asc`."""
    return await evals.files.list(caller.id, purpose=purpose, after=after, limit=limit, order=order)


@router.get("/{file_id}", operation_id="openai_get_file", summary="A file", responses=ERRORS)
async def get_file(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> FileObject:
    """The file's description."""
    return await evals.files.get(file_id, caller.id)


@router.get(
    "/{file_id}/content",
    operation_id="openai_get_file_content",
    summary="A file's content",
    response_class=PlainTextResponse,
    responses=ERRORS,
)
async def get_file_content(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> str:
    """The file as uploaded."""
    return await evals.files.content(file_id, caller.id)


@router.delete(
    "/{file_id}", operation_id="openai_delete_file", summary="Delete a file", responses=ERRORS
)
async def delete_file(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> FileDeleted:
    """Remove the file."""
    return await evals.files.delete(file_id, caller.id)
